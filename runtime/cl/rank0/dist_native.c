/* SPDX-License-Identifier: MIT */
/* clEnqueueNativeKernel on any device of a merged platform (docs/DISTRIBUTED.md): the function
 * runs on the queue's rank, in that rank's process, which is the same program when the job runs
 * one executable. Rank 0 checks what the driver checks at enqueue (in PoCL's order), names the
 * function by its object and offset (cl/serve/remote_native.h), asks the rank once per object
 * whether it has that object loaded, and sends the arguments with the command. The memory
 * objects are made valid there first and are written by it (as a kernel's buffer arguments: all
 * but CL_MEM_READ_ONLY ones); the serving rank's driver puts its own storage of them in their
 * slots. Events, wait lists and queue order are those of every command (the DAG). */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_native.h"
#include "cl/serve/remote_objects.h"
#include "common/log.h"

/* Objects a rank was asked about: a job loads few, so a short list, searched linearly. */
#define KNOWN_MAX 64
struct known {
    int rank;
    int loaded;
    int said;                   /* its refusal was printed */
    struct sluice_native_fn fn; /* offset 0: the object, not a function of it */
};
static struct known known[KNOWN_MAX], overflow;
static int nknown;

static bool same_object(const struct sluice_native_fn *a, const struct sluice_native_fn *b)
{
    return a->id_len == b->id_len && memcmp(a->build_id, b->build_id, a->id_len) == 0 && a->dev == b->dev &&
           a->ino == b->ino && a->size == b->size;
}

/* Whether `rank` has fn's object loaded, asked once (OBJ NATIVE_FIND). Under dist_lock. */
static struct known *ask(int rank, const struct sluice_native_fn *fn)
{
    for (int i = 0; i < nknown; i++)
        if (known[i].rank == rank && same_object(&known[i].fn, fn))
            return &known[i];
    struct known *k = nknown < KNOWN_MAX ? &known[nknown++] : &overflow;
    *k = (struct known){rank, 0, 0, *fn};
    k->fn.offset = 0;
    struct sluice_robj_native_find in = {SLUICE_ROBJ_NATIVE_FIND};
    k->loaded = rank == 0 ||
                dist_call(rank, SLUICE_REMOTE_OBJ, DIST_WORDS(in), &k->fn, sizeof k->fn, NULL) == CL_SUCCESS;
    return k;
}

/* Rank 0's executable (NULL when it cannot be named). */
static const struct sluice_native_fn *program(void)
{
    static struct sluice_native_fn prog;
    static int have = -1;
    if (have < 0)
        have = sluice_native_program(&prog);
    return have ? &prog : NULL;
}

bool dist_native_program_there(int rank)
{
    pthread_mutex_lock(&dist_lock);
    const struct sluice_native_fn *prog = program();
    bool there = prog != NULL && ask(rank, prog)->loaded;
    pthread_mutex_unlock(&dist_lock);
    return there;
}

/* 1: the device runs native kernels; 0: its driver does not; -1: its driver does, but its rank's
 * process is another program than rank 0's, so it does not advertise them either. Under
 * dist_lock (asked once per device). */
static int device_native(struct dist_device *d)
{
    if (d->native == 0) {
        cl_device_exec_capabilities caps = 0;
        cl_int r = dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_EXECUTION_CAPABILITIES,
                             sizeof caps, &caps, NULL);
        d->native = r != CL_SUCCESS || !(caps & CL_EXEC_NATIVE_KERNEL) ? 2
                    : dist_native_program_there(d->rank)               ? 1
                                                                       : 3;
    }
    return d->native == 1 ? 1 : d->native == 2 ? 0 : -1;
}

/* A refusal of the rank's process, printed once per rank and object. Under dist_lock. */
static void say_missing(struct known *k, bool is_program)
{
    if (k->said)
        return;
    k->said = 1;
    if (is_program)
        sluice_log_error(
            "opencl: clEnqueueNativeKernel: the process serving rank %d is not rank 0's program %s, so "
            "its devices do not run native kernels (nor advertise them): CL_INVALID_OPERATION",
            k->rank, k->fn.name);
    else
        sluice_log_error(
            "opencl: clEnqueueNativeKernel: the function's object %s is not loaded in the process "
            "serving rank %d (a library the program loaded itself?): CL_INVALID_OPERATION",
            k->fn.name, k->rank);
}

/* The memory objects: live buffers of the queue's context whose slots lie inside args. */
static cl_int check_mems(const struct dist_queue *q, const void *args, size_t cb, cl_uint n,
                         const cl_mem *mems, const void **locs)
{
    for (cl_uint i = 0; i < n; i++) {
        const struct dist_mem *m = (const struct dist_mem *)mems[i];
        SLUICE_RETURN_ERROR_ON(m == NULL || !dist_mem_is_live(m) || m->image != NULL, CL_INVALID_MEM_OBJECT,
                               "m == NULL || !dist_mem_is_live(m) || m->image != NULL");
        SLUICE_RETURN_ERROR_ON(m->ctx != q->ctx, CL_INVALID_CONTEXT,
                               "objects of two contexts (m->ctx != q->ctx)");
        uintptr_t at = (uintptr_t)locs[i], base = (uintptr_t)args;
        SLUICE_RETURN_ERROR_ON(at < base || at - base > cb || cb - (at - base) < sizeof(cl_mem),
                               CL_INVALID_VALUE,
                               "at < base || at - base > cb || cb - (at - base) < sizeof(cl_mem) (the driver "
                               "would write the pointer outside the copy)");
    }
    return CL_SUCCESS;
}

/* The command's bytes: the function, each memory object's slot and rid there, the arguments. */
static unsigned char *payload(const struct sluice_native_fn *fn, const void *args, size_t cb, cl_uint n,
                              const cl_mem *mems, const void **locs, int rank, size_t *len)
{
    *len = sizeof *fn + n * sizeof(struct sluice_native_mem) + cb;
    unsigned char *p = malloc(*len);
    if (p == NULL)
        return NULL;
    memcpy(p, fn, sizeof *fn);
    for (cl_uint i = 0; i < n; i++) {
        const struct dist_mem *m = (const struct dist_mem *)mems[i];
        struct sluice_native_mem w = {(uint64_t)((uintptr_t)locs[i] - (uintptr_t)args), m->rid[rank]};
        memcpy(p + sizeof *fn + i * sizeof w, &w, sizeof w);
    }
    if (cb > 0)
        memcpy(p + sizeof *fn + n * sizeof(struct sluice_native_mem), args, cb);
    return p;
}

struct uses {
    size_t n;
    struct sluice_dag_access *dag;
    struct sluice_remote_access *wire;
};

/* Each memory object made valid on `rank` whole, and taken as written unless read-only. A
 * sub-buffer counts as its whole root buffer: PoCL 3.1 hands a sub-buffer's native kernel the
 * parent's start (seen without sluice), so the function may write anywhere in the parent. */
static cl_int use_all(struct uses *u, cl_uint n, const cl_mem *mems, int rank)
{
    u->dag = calloc(n ? n : 1, sizeof *u->dag);
    u->wire = calloc(n ? n : 1, sizeof *u->wire);
    if (u->dag == NULL || u->wire == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < n; i++) {
        struct dist_mem *m = (struct dist_mem *)mems[i], *root = m;
        while (root->parent != NULL)
            root = root->parent;
        bool write = (m->flags & CL_MEM_READ_ONLY) == 0;
        cl_int r = dist_coh_acquire(root, rank, 0, root->size, write, false);
        if (r != CL_SUCCESS)
            return r;
        if (write)
            dist_dhdcr_forget_range(root, 0, root->size); /* host copies of these bytes are stale now */
        u->dag[u->n] = (struct sluice_dag_access){root->coh_id, 0, root->size,
                                                  write ? SLUICE_DAG_WRITES : SLUICE_DAG_READS};
        u->wire[u->n] = (struct sluice_remote_access){root->rid[rank], write};
        u->n++;
    }
    return CL_SUCCESS;
}

static cl_int submit(struct dist_queue *q, const struct sluice_native_fn *fn, void *args, size_t cb,
                     cl_uint n, const cl_mem *mems, const void **locs, cl_uint nwait, const cl_event *wl,
                     struct dist_event **e)
{
    int rank = q->dev->rank;
    struct uses u = {0};
    size_t len = 0;
    unsigned char *bytes = payload(fn, args, cb, n, mems, locs, rank, &len);
    cl_int r = bytes == NULL ? CL_OUT_OF_HOST_MEMORY : use_all(&u, n, mems, rank);
    if (r == CL_SUCCESS) {
        struct dist_cmd c;
        memset(&c, 0, sizeof c);
        c.rank = rank;
        c.kind = DIST_CMD_NATIVE_KERNEL;
        c.queue = q;
        c.ctx = q->ctx;
        c.nwait = nwait;
        c.wait = wl;
        c.naccess = u.n;
        c.access = u.dag;
        c.raccess = u.wire;
        c.args.native.cb_args = cb;
        c.args.native.nmem = n;
        c.bytes = bytes;
        c.nbytes = len;
        r = dist_sched_submit(&c, e);
    }
    free(bytes);
    free(u.dag);
    free(u.wire);
    return r;
}

static cl_int CL_API_CALL native_kernel(cl_command_queue queue, void(CL_CALLBACK *user_func)(void *),
                                        void *args, size_t cb_args, cl_uint nmem, const cl_mem *mems,
                                        const void **locs, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(
        user_func == NULL || (args == NULL && (cb_args > 0 || nmem > 0)) || (args != NULL && cb_args == 0) ||
            (nmem > 0 && (mems == NULL || locs == NULL)) || (nmem == 0 && (mems != NULL || locs != NULL)),
        CL_INVALID_VALUE,
        "user_func == NULL || (args == NULL && (cb_args > 0 || nmem > 0)) || (args != NULL && cb_args == 0) "
        "|| (nmem > 0 && (mems == NULL || locs == NULL)) || (nmem == 0 && (mems != NULL || locs != NULL))");
    pthread_mutex_lock(&dist_lock);
    int native = device_native(q->dev);
    if (native < 0)
        say_missing(ask(q->dev->rank, program()), true);
    pthread_mutex_unlock(&dist_lock);
    SLUICE_RETURN_ERROR_ON(native <= 0, CL_INVALID_OPERATION, "native <= 0");
    cl_int r = dist_check_wait(nwait, wl);
    if (r == CL_SUCCESS)
        r = check_mems(q, args, cb_args, nmem, mems, locs);
    if (r != CL_SUCCESS)
        return r;
    struct sluice_native_fn fn;
    if (!sluice_native_identify((const void *)user_func, &fn)) {
        sluice_log_error(
            "opencl: clEnqueueNativeKernel: the function at %p is in no object file loaded by the "
            "program (another rank cannot find it): CL_INVALID_OPERATION",
            (void *)user_func);
        return CL_INVALID_OPERATION;
    }
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    struct known *k = ask(q->dev->rank, &fn);
    if (k->loaded) {
        r = submit(q, &fn, args, cb_args, nmem, mems, locs, nwait, wl, &e);
    } else {
        say_missing(k, false);
        r = CL_INVALID_OPERATION;
    }
    pthread_mutex_unlock(&dist_lock);
    if (e != NULL) {
        if (event != NULL && r == CL_SUCCESS)
            *event = (cl_event)e;
        else
            dist_sched_release(e);
    }
    return r;
}

void dist_native_install(struct sluice_cl_api *api)
{
    api->clEnqueueNativeKernel = native_kernel;
}
