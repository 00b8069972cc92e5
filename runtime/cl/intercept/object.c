/* SPDX-License-Identifier: MIT */
/* Handle tables of the OpenCL object model (see object.h for the lifetime invariant).
 *
 * Two uthash tables share one mutex: real object -> handle (queries and callbacks hand sluice
 * backend objects it must turn back into the program's handles) and the set of live handles
 * (to recognise a handle among 8-byte kernel arguments). Handle -> real is a field load and
 * takes no lock, so the per-call fast path never touches the tables. */
#include "cl/intercept/object.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/backend.h"
#include "common/init_order.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sluice_cl_obj *by_real; /* hh_real, keyed by `real` */
static struct sluice_cl_obj *live;    /* hh_self, keyed by `self` */
static size_t live_count;

static struct sluice_cl_obj *obj_alloc(int kind, void *real, struct sluice_cl_obj *parent,
                                       const struct sluice_cl_backend *be, uint16_t flags)
{
    struct sluice_cl_obj *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->dispatch = &sluice_cl_icd_dispatch; /* weak: NULL in unit tests, which link no wrappers */
    o->magic = SLUICE_CL_MAGIC(kind);
    o->kind = (uint16_t)kind;
    o->flags = flags;
    o->real = real;
    o->backend = be;
    o->parent = parent;
    o->self = o;
    if (parent != NULL)
        sluice_cl_obj_retain(parent);
    o->refs = 1;
    return o;
}

/* Caller holds table_lock. Whatever stood for the same real object can only be a handle whose
 * real object died while a callback still pinned it: the new object takes the address. */
static void table_insert(struct sluice_cl_obj *o)
{
    struct sluice_cl_obj *old = NULL;
    HASH_FIND(hh_real, by_real, &o->real, sizeof o->real, old);
    if (old != NULL)
        HASH_DELETE(hh_real, by_real, old);
    HASH_ADD(hh_real, by_real, real, sizeof o->real, o);
    HASH_ADD(hh_self, live, self, sizeof o->self, o);
    live_count++;
}

static struct sluice_cl_obj *find_locked(void *real)
{
    struct sluice_cl_obj *o = NULL;
    HASH_FIND(hh_real, by_real, &real, sizeof real, o);
    return o;
}

struct sluice_cl_obj *sluice_cl_wrap_new(int kind, void *real, struct sluice_cl_obj *parent,
                                         const struct sluice_cl_backend *be)
{
    if (real == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    struct sluice_cl_obj *old = find_locked(real);
    if (old != NULL && old->kind == kind && (old->flags & SLUICE_CL_F_PROVISIONAL)) {
        /* Seen first through a callback fired inside the create call (clLinkProgram's notify):
         * the program now owns the reference the table held. */
        old->flags &= (uint16_t)~SLUICE_CL_F_PROVISIONAL;
        if (old->parent == NULL && parent != NULL) {
            old->parent = parent;
            sluice_cl_obj_retain(parent);
        }
        pthread_mutex_unlock(&table_lock);
        return old;
    }
    pthread_mutex_unlock(&table_lock);
    struct sluice_cl_obj *o = obj_alloc(kind, real, parent, be, 0);
    if (o == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    table_insert(o);
    pthread_mutex_unlock(&table_lock);
    return o;
}

struct sluice_cl_obj *sluice_cl_wrap_persistent(int kind, void *real, struct sluice_cl_obj *parent,
                                                const struct sluice_cl_backend *be)
{
    if (real == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    struct sluice_cl_obj *o = find_locked(real);
    if (o != NULL && o->kind == kind) {
        if (o->flags & SLUICE_CL_F_PROVISIONAL) {
            o->flags = SLUICE_CL_F_PERSISTENT;
            if (o->parent == NULL && parent != NULL) {
                o->parent = parent;
                sluice_cl_obj_retain(parent);
            }
            o->backend = be;
        }
        pthread_mutex_unlock(&table_lock);
        return o;
    }
    o = obj_alloc(kind, real, parent, be, SLUICE_CL_F_PERSISTENT);
    if (o != NULL)
        table_insert(o);
    pthread_mutex_unlock(&table_lock);
    return o;
}

struct sluice_cl_obj *sluice_cl_find(void *real)
{
    if (real == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    struct sluice_cl_obj *o = find_locked(real);
    pthread_mutex_unlock(&table_lock);
    return o;
}

struct sluice_cl_obj *sluice_cl_lookup(int kind, void *real, const struct sluice_cl_backend *be)
{
    if (real == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    struct sluice_cl_obj *o = find_locked(real);
    if (o == NULL || o->kind != kind) {
        o = obj_alloc(kind, real, NULL, be, SLUICE_CL_F_PROVISIONAL);
        if (o != NULL)
            table_insert(o);
    }
    pthread_mutex_unlock(&table_lock);
    return o;
}

bool sluice_cl_is_live(const void *h, unsigned kind_mask)
{
    if (h == NULL)
        return false;
    struct sluice_cl_obj *o = NULL;
    pthread_mutex_lock(&table_lock);
    HASH_FIND(hh_self, live, &h, sizeof h, o);
    bool yes = o != NULL && (kind_mask & (1u << o->kind));
    pthread_mutex_unlock(&table_lock);
    return yes;
}

void sluice_cl_obj_retain(struct sluice_cl_obj *o)
{
    if (o != NULL && !(o->flags & SLUICE_CL_F_PERSISTENT))
        __atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
}

void sluice_cl_obj_release(struct sluice_cl_obj *o)
{
    while (o != NULL && !(o->flags & SLUICE_CL_F_PERSISTENT)) {
        if (__atomic_fetch_sub(&o->refs, 1, __ATOMIC_ACQ_REL) != 1)
            return;
        pthread_mutex_lock(&table_lock);
        if (find_locked(o->real) == o)
            HASH_DELETE(hh_real, by_real, o);
        HASH_DELETE(hh_self, live, o);
        live_count--;
        pthread_mutex_unlock(&table_lock);
        struct sluice_cl_obj *parent = o->parent;
        if (o->kind == SLUICE_CL_QUEUE) {
            sluice_cl_queue_timing_close(o);
            free(o->u.queue.app_props_array);
        }
        if (o->kind == SLUICE_CL_KERNEL)
            free(o->u.kernel.arg_class);
        o->magic = 0; /* a stale use now reaches the backend as an invalid object */
        free(o);
        o = parent; /* iterate rather than recurse: chains can be long (sub-buffers) */
    }
}

void sluice_cl_for_each(int kind, void (*fn)(struct sluice_cl_obj *o, void *ctx), void *ctx)
{
    pthread_mutex_lock(&table_lock);
    size_t n = 0, cap = live_count;
    struct sluice_cl_obj **objs = malloc((cap + 1) * sizeof *objs);
    for (struct sluice_cl_obj *o = live; objs != NULL && o != NULL && n < cap; o = o->hh_self.next)
        if (o->kind == kind && o->refs > 0) {
            sluice_cl_obj_retain(o);
            objs[n++] = o;
        }
    pthread_mutex_unlock(&table_lock);
    for (size_t i = 0; i < n; i++) {
        fn(objs[i], ctx);
        sluice_cl_obj_release(objs[i]);
    }
    free(objs);
}

size_t sluice_cl_live_count(void)
{
    pthread_mutex_lock(&table_lock);
    size_t n = live_count;
    pthread_mutex_unlock(&table_lock);
    return n;
}

/* fork() while another thread holds the table lock would leave the child's copy locked
 * forever; the handles themselves stay valid in the child (its OpenCL state is the parent's
 * copy, usable or not as the implementation decides). */
static void lock_tables(void)
{
    pthread_mutex_lock(&table_lock);
}
static void unlock_tables(void)
{
    pthread_mutex_unlock(&table_lock);
}

__attribute__((constructor(SLUICE_PRIO_OPENCL))) static void object_tables_init(void)
{
    pthread_atfork(lock_tables, unlock_tables, unlock_tables);
}
