/* SPDX-License-Identifier: MIT */
/* Callbacks: the program registers a function that expects its own handles; the backend calls
 * a trampoline with its objects, which calls the program's function with the handles.
 *
 * A trampoline holds a reference on the handle it was registered on, so that the handle (and
 * the real -> handle entry) outlives the backend object exactly until the callback has run:
 * a memory-object destructor callback receives the very cl_mem value the program knew. */
#include <stdlib.h>

#include "cl/intercept/wrap.h"

struct sluice_cl_tramp {
    void (*fn)(void);
    void *user_data;
    struct sluice_cl_obj *owner; /* retained; may be NULL (clLinkProgram names no program) */
};

struct sluice_cl_tramp *sluice_cl_tramp_new(void (*fn)(void), void *user_data, struct sluice_cl_obj *owner)
{
    struct sluice_cl_tramp *t = malloc(sizeof *t);
    if (t == NULL)
        return NULL;
    t->fn = fn;
    t->user_data = user_data;
    /* The registering call's first argument; a raw backend object (not a handle) is ignored. */
    t->owner = (owner != NULL && owner->magic == SLUICE_CL_MAGIC(owner->kind)) ? owner : NULL;
    sluice_cl_obj_retain(t->owner);
    return t;
}

static void tramp_done(struct sluice_cl_tramp *t)
{
    sluice_cl_obj_release(t->owner);
    free(t);
}

/* The handle for `real`: the owner when it stands for it, else the table's. */
static void *handle_for(struct sluice_cl_tramp *t, int kind, void *real)
{
    if (t->owner != NULL && t->owner->kind == kind && t->owner->real == real)
        return t->owner;
    return sluice_cl_lookup(kind, real, t->owner ? t->owner->backend : sluice_cl_loader_backend());
}

void CL_CALLBACK sluice_cl_tramp_program(cl_program program, void *tramp)
{
    struct sluice_cl_tramp *t = tramp;
    if (t == NULL)
        return; /* registration ran out of memory; nothing to call */
    ((void(CL_CALLBACK *)(cl_program, void *))t->fn)(handle_for(t, SLUICE_CL_PROGRAM, program), t->user_data);
    tramp_done(t);
}

void CL_CALLBACK sluice_cl_tramp_mem(cl_mem mem, void *tramp)
{
    struct sluice_cl_tramp *t = tramp;
    if (t == NULL)
        return; /* registration ran out of memory; nothing to call */
    ((void(CL_CALLBACK *)(cl_mem, void *))t->fn)(handle_for(t, SLUICE_CL_MEM, mem), t->user_data);
    tramp_done(t);
}

void CL_CALLBACK sluice_cl_tramp_context(cl_context context, void *tramp)
{
    struct sluice_cl_tramp *t = tramp;
    if (t == NULL)
        return; /* registration ran out of memory; nothing to call */
    ((void(CL_CALLBACK *)(cl_context, void *))t->fn)(handle_for(t, SLUICE_CL_CONTEXT, context), t->user_data);
    tramp_done(t);
}

void CL_CALLBACK sluice_cl_tramp_event(cl_event event, cl_int status, void *tramp)
{
    struct sluice_cl_tramp *t = tramp;
    if (t == NULL)
        return; /* registration ran out of memory; nothing to call */
    ((void(CL_CALLBACK *)(cl_event, cl_int, void *))t->fn)(handle_for(t, SLUICE_CL_EVENT, event), status,
                                                           t->user_data);
    tramp_done(t);
}

void CL_CALLBACK sluice_cl_tramp_svm_free(cl_command_queue queue, cl_uint n, void *ptrs[], void *tramp)
{
    struct sluice_cl_tramp *t = tramp;
    if (t == NULL)
        return; /* registration ran out of memory; nothing to call */
    ((void(CL_CALLBACK *)(cl_command_queue, cl_uint, void *[], void *))t->fn)(
        handle_for(t, SLUICE_CL_QUEUE, queue), n, ptrs, t->user_data);
    tramp_done(t);
}
