/* SPDX-License-Identifier: MIT */
/* Contexts, queues and buffers of the distributed backend (programs and kernels are in
 * dist_program.c). An object of a context has one real object on every rank the context's
 * devices live on (created eagerly: a buffer is created on each of them, its contents move only
 * when a command needs them).
 * Dist objects hold a reference on their parent dist object, as the real ones do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_internal.h"

#define for_ranks(ctx, r)                                                                                    \
    for (int r = 0; r < dist_size(); r++)                                                                    \
        if ((ctx)->rid[r] != 0)

/* Releases answer nothing the program needs (a release's code is rank 0's), so they go without
 * a round trip: the conformance suite's image tests release two images per copy or fill. */
void dist_release_everywhere(const uint64_t *rid, int kind)
{
    for (int r = 0; r < dist_size(); r++)
        if (rid[r] != 0) {
            struct sluice_req_release in = {(uint64_t)kind, rid[r], 1};
            dist_post(r, SLUICE_REMOTE_RELEASE, DIST_WORDS(in));
        }
}

/* ---- contexts ----------------------------------------------------------------------------- */

static cl_int add_dtor(struct dist_dtor **list, void (*fn)(void *, void *), void *user_data)
{
    SLUICE_RETURN_ERROR_ON(fn == NULL, CL_INVALID_VALUE, "no value (NULL)");
    struct dist_dtor *d = calloc(1, sizeof *d);
    if (d == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    d->fn = fn;
    d->user_data = user_data;
    pthread_mutex_lock(&dist_lock);
    d->next = *list;
    *list = d;
    pthread_mutex_unlock(&dist_lock);
    return CL_SUCCESS;
}

static void run_dtors(struct dist_dtor *d, void *obj)
{
    while (d != NULL) {
        struct dist_dtor *next = d->next;
        d->fn(obj, d->user_data);
        free(d);
        d = next;
    }
}

void dist_ctx_unref(struct dist_context *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    run_dtors(c->dtors, c);
    dist_release_everywhere(c->rid, SLUICE_CL_CONTEXT);
    dist_image_forget_formats(c);
    dist_image_forget_accepted(c);
    free(c->devs);
    free(c);
}

static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint ndev,
                                             const cl_device_id *devices,
                                             void(CL_CALLBACK *notify)(const char *, const void *, size_t,
                                                                       void *),
                                             void *user_data, cl_int *errcode_ret)
{
    (void)notify;
    (void)user_data;
    if (ndev == 0 || devices == NULL || ndev > DIST_MAX_DEVICES) {
        dist_set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    struct dist_context *c = calloc(1, sizeof *c);
    if (c == NULL || (c->devs = calloc(ndev, sizeof *c->devs)) == NULL) {
        free(c);
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    c->refs = 1;
    c->ndev = (int)ndev;
    for (cl_uint i = 0; i < ndev; i++) {
        if (devices[i] == NULL) {
            free(c->devs);
            free(c);
            dist_set_err(errcode_ret, CL_INVALID_DEVICE);
            return NULL;
        }
        c->devs[i] = (struct dist_device *)devices[i];
    }
    for (int i = 0; props != NULL && props[i] != 0; i += 2)
        if (props[i] == CL_CONTEXT_PLATFORM) {
            c->props[0] = CL_CONTEXT_PLATFORM;
            c->props[1] = props[i + 1];
            c->nprops = 3;
        }
    cl_int err = CL_SUCCESS;
    for (int r = 0; r < dist_size() && err == CL_SUCCESS; r++) {
        uint64_t rids[DIST_MAX_DEVICES];
        int n = 0;
        for (cl_uint i = 0; i < ndev; i++)
            if (c->devs[i]->rank == r)
                rids[n++] = c->devs[i]->rid;
        if (n > 0)
            err = dist_call_v(r, SLUICE_REMOTE_CTX_CREATE, NULL, 0, rids, n * sizeof rids[0], &c->rid[r]);
    }
    if (err != CL_SUCCESS) {
        dist_ctx_unref(c);
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    dist_set_err(errcode_ret, CL_SUCCESS);
    return (cl_context)c;
}

/* The devices of the platform (named in the properties, else the default one) that have the
 * type, in platform order, as clGetDeviceIDs would list them; CL_DEVICE_TYPE_DEFAULT is the first.
 * A type no device has, even an invalid one, is CL_DEVICE_NOT_FOUND, as PoCL says locally. */
static cl_context CL_API_CALL create_context_from_type(const cl_context_properties *props,
                                                       cl_device_type type,
                                                       void(CL_CALLBACK *notify)(const char *, const void *,
                                                                                 size_t, void *),
                                                       void *user_data, cl_int *errcode_ret)
{
    struct dist_platform *p = NULL;
    for (int i = 0; props != NULL && props[i] != 0; i += 2)
        if (props[i] == CL_CONTEXT_PLATFORM)
            p = (struct dist_platform *)props[i + 1];
    if (props == NULL || p == NULL)
        p = dist_default_platform();
    if (p == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_PLATFORM);
        return NULL;
    }
    cl_device_id devs[DIST_MAX_DEVICES];
    cl_uint n = 0;
    for (int i = 0; i < p->ndev && n < DIST_MAX_DEVICES; i++) {
        if (type == CL_DEVICE_TYPE_DEFAULT && n == 0)
            devs[n++] = (cl_device_id)p->devs[i];
        else if (type != CL_DEVICE_TYPE_DEFAULT &&
                 (type == CL_DEVICE_TYPE_ALL || (p->devs[i]->type & type) != 0))
            devs[n++] = (cl_device_id)p->devs[i];
    }
    if (n == 0) {
        dist_set_err(errcode_ret, CL_DEVICE_NOT_FOUND);
        return NULL;
    }
    return create_context(props, n, devs, notify, user_data, errcode_ret);
}

void dist_ctx_retain(struct dist_context *c)
{
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
}

DIST_RETAIN_RELEASE(context, cl_context, struct dist_context, dist_ctx_unref, CL_INVALID_CONTEXT)

static cl_int CL_API_CALL context_info(cl_context context, cl_context_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    SLUICE_RETURN_ERROR_ON(c == NULL, CL_INVALID_CONTEXT, "no context (NULL)");
    switch (param) {
    case CL_CONTEXT_DEVICES:
        return dist_answer(c->devs, c->ndev * sizeof *c->devs, size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES: {
        cl_uint n = (cl_uint)c->ndev;
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_CONTEXT_PROPERTIES:
        return dist_answer(c->props, c->nprops * sizeof c->props[0], size, value, size_ret);
    case CL_CONTEXT_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&c->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    default:
        for_ranks(c, r) return dist_info(r, SLUICE_RG_CONTEXT, c->rid[r], 0, param, size, value, size_ret);
        return CL_INVALID_CONTEXT;
    }
}

/* ---- queues ------------------------------------------------------------------------------- */

static cl_command_queue make_queue(cl_context context, cl_device_id device, cl_command_queue_properties props,
                                   const cl_queue_properties *list, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    struct dist_device *d = (struct dist_device *)device;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    bool member = false;
    for (int i = 0; i < c->ndev; i++)
        member |= c->devs[i] == d;
    if (d == NULL || !member) {
        dist_set_err(errcode_ret, CL_INVALID_DEVICE);
        return NULL;
    }
    if (props & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT)) {
        /* PoCL has no device-side queues (it aborts on some of these requests): refused here */
        dist_set_err(errcode_ret, CL_INVALID_QUEUE_PROPERTIES);
        return NULL;
    }
    cl_int err = d->rank != 0 ? dist_validate_queue(d, props) : CL_SUCCESS;
    struct dist_queue *q = err == CL_SUCCESS ? calloc(1, sizeof *q) : NULL;
    if (q == NULL) {
        dist_set_err(errcode_ret, err != CL_SUCCESS ? err : CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    struct sluice_req_queue_create in = {c->rid[d->rank], d->rid, props, 0};
    err = dist_create(d->rank, SLUICE_REMOTE_QUEUE_CREATE, DIST_WORDS_ID(in), NULL, 0, &q->rid);
    if (err != CL_SUCCESS) {
        free(q);
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    q->refs = 1;
    q->ctx = c;
    q->dev = d;
    /* CL_QUEUE_PROPERTIES_ARRAY is the list as the program gave it (none: nothing). */
    for (int i = 0; list != NULL && i < 5; i += 2) { /* create_queue_props let two keys at most */
        q->parray[q->nparray++] = list[i];
        if (list[i] == 0 || i + 1 >= 5)
            break;
        q->parray[q->nparray++] = list[i + 1];
    }
    /* Known now, not asked at the first command: a round trip there would split the window of
     * collective replacement (dist_sched_window.c). */
    q->props = props;
    q->props_known = 1;
    dist_device_limits(d);
    retain_context(context);
    dist_set_err(errcode_ret, CL_SUCCESS);
    return (cl_command_queue)q;
}

static cl_command_queue CL_API_CALL create_queue(cl_context context, cl_device_id device,
                                                 cl_command_queue_properties props, cl_int *errcode_ret)
{
    return make_queue(context, device, props, NULL, errcode_ret);
}

static cl_command_queue CL_API_CALL create_queue_props(cl_context context, cl_device_id device,
                                                       const cl_queue_properties *props, cl_int *errcode_ret)
{
    /* The keys PoCL knows: CL_QUEUE_PROPERTIES once (its bits go to the real queue, which checks
     * them), CL_QUEUE_SIZE (meaningful for device queues only, which the real queue refuses);
     * any other key, or a repeated one, is CL_INVALID_VALUE, as PoCL says locally. */
    cl_command_queue_properties bits = 0;
    bool seen_bits = false, seen_size = false;
    for (int i = 0; props != NULL && props[i] != 0; i += 2) {
        bool *seen = props[i] == CL_QUEUE_PROPERTIES ? &seen_bits
                     : props[i] == CL_QUEUE_SIZE     ? &seen_size
                                                     : NULL;
        if (seen == NULL || *seen) {
            dist_set_err(errcode_ret, CL_INVALID_VALUE);
            return NULL;
        }
        *seen = true;
        if (props[i] == CL_QUEUE_PROPERTIES)
            bits = (cl_command_queue_properties)props[i + 1];
    }
    return make_queue(context, device, bits, props, errcode_ret);
}

DIST_RETAIN_RELEASE(queue, cl_command_queue, struct dist_queue, dist_queue_unref, CL_INVALID_COMMAND_QUEUE)

void dist_queue_unref(struct dist_queue *q)
{
    if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    struct sluice_req_release in = {SLUICE_CL_QUEUE, q->rid, 0};
    dist_call(q->dev->rank, SLUICE_REMOTE_RELEASE, DIST_WORDS(in), NULL, 0, NULL);
    dist_ctx_unref(q->ctx);
    free(q);
}

static cl_int CL_API_CALL queue_info(cl_command_queue queue, cl_command_queue_info param, size_t size,
                                     void *value, size_t *size_ret)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    switch (param) {
    case CL_QUEUE_CONTEXT:
        return dist_answer(&q->ctx, sizeof q->ctx, size, value, size_ret);
    case CL_QUEUE_DEVICE:
        return dist_answer(&q->dev, sizeof q->dev, size, value, size_ret);
    case CL_QUEUE_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&q->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_QUEUE_DEVICE_DEFAULT: {
        /* Device queues are refused (make_queue): there is no default one, as PoCL answers. */
        cl_command_queue none = NULL;
        return dist_answer(&none, sizeof none, size, value, size_ret);
    }
    case CL_QUEUE_PROPERTIES_ARRAY:
        return dist_answer(q->parray, (size_t)q->nparray * sizeof q->parray[0], size, value, size_ret);
    default:
        return dist_info(q->dev->rank, SLUICE_RG_QUEUE, q->rid, 0, param, size, value, size_ret);
    }
}

/* ---- buffers ------------------------------------------------------------------------------ */

DIST_LIVE_LIST(mem, struct dist_mem)
static uint64_t next_coh_id = 1; /* under dist_lock */

static void mem_unref(struct dist_mem *m)
{
    if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    pthread_mutex_lock(&dist_lock); /* recursive: the list and the directory change together */
    mem_live_remove(m);
    if (m->parent == NULL)
        dist_coh_remove(m);
    pthread_mutex_unlock(&dist_lock);
    run_dtors(m->dtors, m);
    dist_release_everywhere(m->rid, SLUICE_CL_MEM);
    if (m->parent != NULL)
        mem_unref(m->parent);
    dist_ctx_unref(m->ctx);
    if (!m->shadow_borrowed)
        free(m->shadow);
    free(m->image);
    free(m);
}

void dist_mem_unref(struct dist_mem *m)
{
    mem_unref(m);
}

/* Flags that stay on rank 0: the host pointer flags (rank 0 holds the host copy) and the host
 * access flags (the servers' own transfers must still read and write the real buffers). */
#define RANK0_FLAGS                                                                                          \
    (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY |           \
     CL_MEM_HOST_NO_ACCESS)
#define DEVICE_ACCESS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define HOST_ACCESS (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

static int bits(cl_mem_flags f)
{
    return __builtin_popcountll((unsigned long long)f);
}

/* A sub-buffer's flags: its own access flags, which may not grant what the parent's deny, else
 * the parent's; the host pointer flags always come from the parent. */
static cl_int sub_buffer_flags(cl_mem_flags parent, cl_mem_flags *flags)
{
    cl_mem_flags f = *flags;
    SLUICE_RETURN_ERROR_ON((f & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0 ||
                               (f & ~(cl_mem_flags)(DEVICE_ACCESS | HOST_ACCESS)) != 0 ||
                               bits(f & DEVICE_ACCESS) > 1 || bits(f & HOST_ACCESS) > 1,
                           CL_INVALID_VALUE,
                           "(f & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0 "
                           "|| (f & ~(cl_mem_flags)(DEVICE_ACCESS | HOST_ACCESS)) != 0 || bits(f & "
                           "DEVICE_ACCESS) > 1 || bits(f & HOST_ACCESS) > 1");
    SLUICE_RETURN_ERROR_ON(
        ((parent & CL_MEM_WRITE_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
            ((parent & CL_MEM_READ_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
            ((parent & CL_MEM_HOST_WRITE_ONLY) && (f & CL_MEM_HOST_READ_ONLY)) ||
            ((parent & CL_MEM_HOST_READ_ONLY) && (f & CL_MEM_HOST_WRITE_ONLY)) ||
            ((parent & CL_MEM_HOST_NO_ACCESS) && (f & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
        CL_INVALID_VALUE,
        "((parent & CL_MEM_WRITE_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) || ((parent & "
        "CL_MEM_READ_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) || ((parent & "
        "CL_MEM_HOST_WRITE_ONLY) && (f & CL_MEM_HOST_READ_ONLY)) || ((parent & CL_MEM_HOST_READ_ONLY) && (f "
        "& CL_MEM_HOST_WRITE_ONLY)) || ((parent & CL_MEM_HOST_NO_ACCESS) && (f & (CL_MEM_HOST_READ_ONLY | "
        "CL_MEM_HOST_WRITE_ONLY)))");
    if ((f & DEVICE_ACCESS) == 0)
        f |= parent & DEVICE_ACCESS;
    if ((f & HOST_ACCESS) == 0)
        f |= parent & HOST_ACCESS;
    *flags = f | (parent & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR));
    return CL_SUCCESS;
}

/* A new memory object joins the live list (mem_unref takes it out again); on error its last
 * reference goes, releasing what the ranks created for it. */
cl_mem dist_mem_publish(struct dist_mem *m, cl_int err, cl_int *errcode_ret)
{
    mem_live_add(m);
    if (err != CL_SUCCESS) {
        mem_unref(m);
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    dist_set_err(errcode_ret, CL_SUCCESS);
    return (cl_mem)m;
}

cl_mem dist_mem_publish_root(struct dist_mem *m, cl_int err, cl_int *errcode_ret)
{
    pthread_mutex_lock(&dist_lock);
    m->coh_id = next_coh_id++;
    if (err == CL_SUCCESS)
        err = dist_coh_add(m);
    pthread_mutex_unlock(&dist_lock);
    return dist_mem_publish(m, err, errcode_ret);
}

bool dist_mem_props_ok(cl_context context, const cl_mem_properties *props, cl_int *errcode_ret)
{
    if (props == NULL || props[0] == 0)
        return true;
    dist_set_err(errcode_ret, context == NULL ? CL_INVALID_CONTEXT : CL_INVALID_PROPERTY);
    return false;
}

cl_mem dist_mem_props_given(cl_mem mem, const cl_mem_properties *props)
{
    if (mem != NULL && props != NULL)
        ((struct dist_mem *)mem)->props_given = true;
    return mem;
}

/* A sub-buffer: a real sub-buffer on every rank of the context; coherence is the parent's. */
static cl_mem CL_API_CALL create_sub_buffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                            const void *info, cl_int *errcode_ret)
{
    struct dist_mem *p = (struct dist_mem *)buffer;
    if (p == NULL || p->image != NULL) {
        dist_set_err(errcode_ret, CL_INVALID_MEM_OBJECT);
        return NULL;
    }
    const cl_buffer_region *region = info;
    if (type != CL_BUFFER_CREATE_TYPE_REGION || region == NULL || region->size == 0 ||
        region->origin > p->size || region->size > p->size - region->origin || p->parent != NULL) {
        dist_set_err(errcode_ret, p->parent != NULL                       ? CL_INVALID_MEM_OBJECT
                                  : (region != NULL && region->size == 0) ? CL_INVALID_BUFFER_SIZE
                                                                          : CL_INVALID_VALUE);
        return NULL;
    }
    if (sub_buffer_flags(p->flags, &flags) != CL_SUCCESS) {
        dist_set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    cl_int err = dist_validate_sub_origin(p->ctx, region->origin);
    if (err != CL_SUCCESS) {
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    struct dist_mem *m = calloc(1, sizeof *m);
    if (m == NULL) {
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    m->refs = 1;
    m->ctx = p->ctx;
    m->flags = flags;
    m->size = region->size;
    m->parent = p;
    m->origin = region->origin;
    m->host_ptr = p->host_ptr ? (unsigned char *)p->host_ptr + region->origin : NULL;
    retain_context((cl_context)p->ctx);
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
    for_ranks(p->ctx, r)
    {
        struct sluice_req_subbuf in = {p->rid[r],
                                       flags & ~(cl_mem_flags)(RANK0_FLAGS | CL_MEM_ALLOC_HOST_PTR),
                                       region->origin, region->size, 0};
        if ((err = dist_create(r, SLUICE_REMOTE_SUBBUF, DIST_WORDS_ID(in), NULL, 0, &m->rid[r])) !=
            CL_SUCCESS)
            break;
    }
    return dist_mem_publish(m, err, errcode_ret);
}

/* clCreateBuffer's flag rules, with the codes PoCL gives locally: the real buffers do not see
 * every flag, so they cannot check them. */
static cl_int check_buffer_flags(cl_mem_flags flags, const void *host_ptr)
{
    const cl_mem_flags known =
        DEVICE_ACCESS | HOST_ACCESS | CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
    SLUICE_RETURN_ERROR_ON(
        (flags & ~known) != 0 || bits(flags & DEVICE_ACCESS) > 1 || bits(flags & HOST_ACCESS) > 1 ||
            ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))),
        CL_INVALID_VALUE,
        "(flags & ~known) != 0 || bits(flags & DEVICE_ACCESS) > 1 || bits(flags & HOST_ACCESS) > 1 || "
        "((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))");
    SLUICE_RETURN_ERROR_ON(
        ((flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) != 0) != (host_ptr != NULL),
        CL_INVALID_HOST_PTR,
        "((flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) != 0) != (host_ptr != NULL)");
    return CL_SUCCESS;
}

cl_int dist_mem_host_access(const struct dist_mem *m, bool read, bool write)
{
    cl_mem_flags f = m->flags;
    SLUICE_RETURN_ERROR_ON((f & CL_MEM_HOST_NO_ACCESS) || (read && (f & CL_MEM_HOST_WRITE_ONLY)) ||
                               (write && (f & CL_MEM_HOST_READ_ONLY)),
                           CL_INVALID_OPERATION,
                           "(f & CL_MEM_HOST_NO_ACCESS) || (read && (f & CL_MEM_HOST_WRITE_ONLY)) || (write "
                           "&& (f & CL_MEM_HOST_READ_ONLY))");
    return CL_SUCCESS;
}

void *dist_mem_host_ptr(const struct dist_mem *m)
{
    return m->host_ptr;
}

/* CL_MEM_USE_HOST_PTR: rank 0's host copy *is* the program's memory (location 0 of the
 * directory), so maps can hand out host_ptr + offset as OpenCL requires; it is never freed here.
 * CL_MEM_COPY_HOST_PTR: a private copy, until every byte was moved to a device. */
static cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                        cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    cl_int err = size == 0 ? CL_INVALID_BUFFER_SIZE : check_buffer_flags(flags, host_ptr);
    if (err == CL_SUCCESS)
        err = dist_validate_buffer_size(c, size);
    if (err != CL_SUCCESS) {
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    if (flags == 0)
        flags = CL_MEM_READ_WRITE; /* the default, and what CL_MEM_FLAGS then reports (as PoCL) */
    bool use = (flags & CL_MEM_USE_HOST_PTR) != 0;
    struct dist_mem *m = calloc(1, sizeof *m);
    if (m == NULL || (host_ptr != NULL && !use && (m->shadow = malloc(size)) == NULL)) {
        free(m);
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    if (use) {
        m->shadow = host_ptr;
        m->host_ptr = host_ptr;
        m->shadow_borrowed = true;
    } else if (host_ptr != NULL) {
        memcpy(m->shadow, host_ptr, size);
    }
    m->refs = 1;
    m->ctx = c;
    m->flags = flags;
    m->size = size;
    retain_context(context);
    cl_mem_flags remote_flags = flags & ~(cl_mem_flags)RANK0_FLAGS;
    for_ranks(c, r)
    {
        struct sluice_req_buf_create in = {c->rid[r], remote_flags, size, 0};
        if ((err = dist_create(r, SLUICE_REMOTE_BUF_CREATE, DIST_WORDS_ID(in), NULL, 0, &m->rid[r])) !=
            CL_SUCCESS)
            break;
    }
    return dist_mem_publish_root(m, err, errcode_ret);
}

/* OpenCL 3.0's buffer creation: no buffer property is defined, so only an empty list is valid. */
static cl_mem CL_API_CALL create_buffer_props(cl_context context, const cl_mem_properties *props,
                                              cl_mem_flags flags, size_t size, void *host_ptr,
                                              cl_int *errcode_ret)
{
    if (!dist_mem_props_ok(context, props, errcode_ret))
        return NULL;
    return dist_mem_props_given(create_buffer(context, flags, size, host_ptr, errcode_ret), props);
}

/* No memory object of a distributed context is a pipe. */
static cl_int CL_API_CALL pipe_info(cl_mem mem, cl_pipe_info param, size_t size, void *value,
                                    size_t *size_ret)
{
    (void)mem, (void)param, (void)size, (void)value, (void)size_ret;
    return CL_INVALID_MEM_OBJECT;
}

DIST_RETAIN_RELEASE(mem, cl_mem, struct dist_mem, mem_unref, CL_INVALID_MEM_OBJECT)

static cl_int CL_API_CALL mem_info(cl_mem mem, cl_mem_info param, size_t size, void *value, size_t *size_ret)
{
    struct dist_mem *m = (struct dist_mem *)mem;
    SLUICE_RETURN_ERROR_ON(m == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
    switch (param) {
    case CL_MEM_CONTEXT:
        return dist_answer(&m->ctx, sizeof m->ctx, size, value, size_ret);
    case CL_MEM_SIZE: {
        /* an image: the driver's size of it (dist_image_answers), not the packed one */
        cl_int err = CL_SUCCESS;
        const struct sluice_remote_image_info *info = m->image != NULL ? dist_image_answers(m, &err) : NULL;
        size_t n = info != NULL ? info->mem_size : m->size;
        return err != CL_SUCCESS ? err : dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_MEM_TYPE: {
        cl_mem_object_type t = m->image != NULL ? m->image->desc.image_type : CL_MEM_OBJECT_BUFFER;
        return dist_answer(&t, sizeof t, size, value, size_ret);
    }
    case CL_MEM_FLAGS:
        return dist_answer(&m->flags, sizeof m->flags, size, value, size_ret);
    case CL_MEM_HOST_PTR:
        return dist_answer(&m->host_ptr, sizeof m->host_ptr, size, value, size_ret);
    case CL_MEM_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&m->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_MEM_ASSOCIATED_MEMOBJECT:
        return dist_answer(&m->parent, sizeof m->parent, size, value, size_ret);
    case CL_MEM_OFFSET:
        return dist_answer(&m->origin, sizeof m->origin, size, value, size_ret);
    case CL_MEM_PROPERTIES: {
        /* The program's list: only the empty one is valid, so its terminating 0 or nothing. */
        static const cl_mem_properties end = 0;
        return dist_answer(&end, m->props_given ? sizeof end : 0, size, value, size_ret);
    }
    default:
        break;
    }
    for_ranks(m->ctx, r) return dist_info(r, SLUICE_RG_MEM, m->rid[r], 0, param, size, value, size_ret);
    return CL_INVALID_MEM_OBJECT;
}

static cl_int CL_API_CALL context_dtor(cl_context context, void(CL_CALLBACK *fn)(cl_context, void *),
                                       void *user_data)
{
    SLUICE_RETURN_ERROR_ON(context == NULL, CL_INVALID_CONTEXT, "no context (NULL)");
    return add_dtor(&((struct dist_context *)context)->dtors, (void (*)(void *, void *))fn, user_data);
}

static cl_int CL_API_CALL mem_dtor(cl_mem mem, void(CL_CALLBACK *fn)(cl_mem, void *), void *user_data)
{
    SLUICE_RETURN_ERROR_ON(mem == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
    return add_dtor(&((struct dist_mem *)mem)->dtors, (void (*)(void *, void *))fn, user_data);
}

void dist_objects_install(struct sluice_cl_api *api)
{
    api->clSetContextDestructorCallback = context_dtor;
    api->clSetMemObjectDestructorCallback = mem_dtor;
    api->clCreateContext = create_context;
    api->clCreateContextFromType = create_context_from_type;
    api->clRetainContext = retain_context;
    api->clReleaseContext = release_context;
    api->clGetContextInfo = context_info;
    api->clCreateCommandQueue = create_queue;
    api->clCreateCommandQueueWithProperties = create_queue_props;
    api->clCreateCommandQueueWithPropertiesKHR = create_queue_props;
    api->clRetainCommandQueue = retain_queue;
    api->clReleaseCommandQueue = release_queue;
    api->clGetCommandQueueInfo = queue_info;
    api->clCreateBuffer = create_buffer;
    api->clCreateBufferWithProperties = create_buffer_props;
    api->clGetPipeInfo = pipe_info;
    api->clCreateSubBuffer = create_sub_buffer;
    api->clRetainMemObject = retain_mem;
    api->clReleaseMemObject = release_mem;
    api->clGetMemObjectInfo = mem_info;
}
