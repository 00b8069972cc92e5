/* Contexts, queues, buffers, programs and kernels of the distributed backend. An object of a
 * context has one real object on every rank the context's devices live on (created eagerly:
 * a buffer is created on each of them, its contents move only when a command needs them).
 * Dist objects hold a reference on their parent dist object, as the real ones do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/dist_internal.h"
#include "cl/object.h"

#define for_ranks(ctx, r) for (int r = 0; r < dist_size(); r++) if ((ctx)->rid[r] != 0)

static void set_err(cl_int *errcode_ret, cl_int e)
{
    if (errcode_ret != NULL)
        *errcode_ret = e;
}

static void release_everywhere(const uint64_t *rid, int kind)
{
    for (int r = 0; r < dist_size(); r++)
        if (rid[r] != 0) {
            uint64_t a[2] = {(uint64_t)kind, rid[r]};
            dist_call(r, SLUICE_REMOTE_RELEASE, a, 2, NULL, 0, NULL);
        }
}

/* ---- contexts ----------------------------------------------------------------------------- */

static cl_int add_dtor(struct dist_dtor **list, void (*fn)(void *, void *), void *user_data)
{
    if (fn == NULL)
        return CL_INVALID_VALUE;
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

static void ctx_unref(struct dist_context *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    run_dtors(c->dtors, c);
    release_everywhere(c->rid, SLUICE_CL_CONTEXT);
    free(c->devs);
    free(c);
}

static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint ndev,
                                             const cl_device_id *devices, void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                             void *user_data, cl_int *errcode_ret)
{
    (void)notify;
    (void)user_data;
    if (ndev == 0 || devices == NULL || ndev > DIST_MAX_DEVICES) {
        set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    struct dist_context *c = calloc(1, sizeof *c);
    if (c == NULL || (c->devs = calloc(ndev, sizeof *c->devs)) == NULL) {
        free(c);
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    c->refs = 1;
    c->ndev = (int)ndev;
    for (cl_uint i = 0; i < ndev; i++) {
        if (devices[i] == NULL) {
            free(c->devs);
            free(c);
            set_err(errcode_ret, CL_INVALID_DEVICE);
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
        ctx_unref(c);
        set_err(errcode_ret, err);
        return NULL;
    }
    set_err(errcode_ret, CL_SUCCESS);
    return (cl_context)c;
}

static cl_int CL_API_CALL retain_context(cl_context context)
{
    if (context == NULL)
        return CL_INVALID_CONTEXT;
    __atomic_add_fetch(&((struct dist_context *)context)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_context(cl_context context)
{
    if (context == NULL)
        return CL_INVALID_CONTEXT;
    ctx_unref((struct dist_context *)context);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL context_info(cl_context context, cl_context_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL)
        return CL_INVALID_CONTEXT;
    switch (param) {
    case CL_CONTEXT_DEVICES: return dist_answer(c->devs, c->ndev * sizeof *c->devs, size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES: {
        cl_uint n = (cl_uint)c->ndev;
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_CONTEXT_PROPERTIES: return dist_answer(c->props, c->nprops * sizeof c->props[0], size, value, size_ret);
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
                                   cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    struct dist_device *d = (struct dist_device *)device;
    if (c == NULL) {
        set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    bool member = false;
    for (int i = 0; i < c->ndev; i++)
        member |= c->devs[i] == d;
    if (d == NULL || !member) {
        set_err(errcode_ret, CL_INVALID_DEVICE);
        return NULL;
    }
    struct dist_queue *q = calloc(1, sizeof *q);
    if (q == NULL) {
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    uint64_t a[3] = {c->rid[d->rank], d->rid, props};
    cl_int err = dist_call_v(d->rank, SLUICE_REMOTE_QUEUE_CREATE, a, 3, NULL, 0, &q->rid);
    if (err != CL_SUCCESS) {
        free(q);
        set_err(errcode_ret, err);
        return NULL;
    }
    q->refs = 1;
    q->ctx = c;
    q->dev = d;
    retain_context(context);
    set_err(errcode_ret, CL_SUCCESS);
    return (cl_command_queue)q;
}

static cl_command_queue CL_API_CALL create_queue(cl_context context, cl_device_id device,
                                                 cl_command_queue_properties props, cl_int *errcode_ret)
{
    return make_queue(context, device, props, errcode_ret);
}

static cl_command_queue CL_API_CALL create_queue_props(cl_context context, cl_device_id device,
                                                       const cl_queue_properties *props, cl_int *errcode_ret)
{
    cl_command_queue_properties bits = 0;
    for (int i = 0; props != NULL && props[i] != 0; i += 2) {
        if (props[i] != CL_QUEUE_PROPERTIES) {
            set_err(errcode_ret, CL_INVALID_OPERATION); /* sizes, priorities: not remote yet */
            return NULL;
        }
        bits = (cl_command_queue_properties)props[i + 1];
    }
    return make_queue(context, device, bits, errcode_ret);
}

static cl_int CL_API_CALL retain_queue(cl_command_queue queue)
{
    if (queue == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    __atomic_add_fetch(&((struct dist_queue *)queue)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

void dist_queue_unref(struct dist_queue *q)
{
    if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    uint64_t a[2] = {SLUICE_CL_QUEUE, q->rid};
    dist_call(q->dev->rank, SLUICE_REMOTE_RELEASE, a, 2, NULL, 0, NULL);
    ctx_unref(q->ctx);
    free(q);
}

static cl_int CL_API_CALL release_queue(cl_command_queue queue)
{
    if (queue == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    dist_queue_unref((struct dist_queue *)queue);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL queue_info(cl_command_queue queue, cl_command_queue_info param, size_t size, void *value,
                                     size_t *size_ret)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    switch (param) {
    case CL_QUEUE_CONTEXT: return dist_answer(&q->ctx, sizeof q->ctx, size, value, size_ret);
    case CL_QUEUE_DEVICE: return dist_answer(&q->dev, sizeof q->dev, size, value, size_ret);
    case CL_QUEUE_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&q->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_QUEUE_DEVICE_DEFAULT: return CL_INVALID_OPERATION;
    default: return dist_info(q->dev->rank, SLUICE_RG_QUEUE, q->rid, 0, param, size, value, size_ret);
    }
}

/* ---- buffers ------------------------------------------------------------------------------ */

static struct dist_mem *live_mems;
static uint64_t next_coh_id = 1;

bool dist_mem_is_live(const void *p)
{
    for (struct dist_mem *m = live_mems; m != NULL; m = m->next_live)
        if (m == p)
            return true;
    return false;
}

static void mem_unref(struct dist_mem *m)
{
    if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    pthread_mutex_lock(&dist_lock);
    for (struct dist_mem **p = &live_mems; *p != NULL; p = &(*p)->next_live)
        if (*p == m) {
            *p = m->next_live;
            break;
        }
    if (m->parent == NULL)
        dist_coh_remove(m);
    pthread_mutex_unlock(&dist_lock);
    run_dtors(m->dtors, m);
    release_everywhere(m->rid, SLUICE_CL_MEM);
    if (m->parent != NULL)
        mem_unref(m->parent);
    ctx_unref(m->ctx);
    free(m->shadow);
    free(m);
}

void dist_mem_unref(struct dist_mem *m)
{
    mem_unref(m);
}

/* A sub-buffer: a real sub-buffer on every rank of the context; coherence is the parent's. */
static cl_mem CL_API_CALL create_sub_buffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                            const void *info, cl_int *errcode_ret)
{
    struct dist_mem *p = (struct dist_mem *)buffer;
    if (p == NULL) {
        set_err(errcode_ret, CL_INVALID_MEM_OBJECT);
        return NULL;
    }
    const cl_buffer_region *region = info;
    if (type != CL_BUFFER_CREATE_TYPE_REGION || region == NULL || region->size == 0 ||
        region->origin > p->size || region->size > p->size - region->origin || p->parent != NULL) {
        set_err(errcode_ret, p->parent != NULL ? CL_INVALID_MEM_OBJECT
                             : (region != NULL && region->size == 0) ? CL_INVALID_BUFFER_SIZE : CL_INVALID_VALUE);
        return NULL;
    }
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
        set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    if ((flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)) == 0)
        flags |= p->flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
    struct dist_mem *m = calloc(1, sizeof *m);
    if (m == NULL) {
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    m->refs = 1;
    m->ctx = p->ctx;
    m->flags = flags;
    m->size = region->size;
    m->parent = p;
    m->origin = region->origin;
    retain_context((cl_context)p->ctx);
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
    cl_int err = CL_SUCCESS;
    for_ranks(p->ctx, r) {
        uint64_t a[4] = {p->rid[r], flags, region->origin, region->size};
        if ((err = dist_call_v(r, SLUICE_REMOTE_SUBBUF, a, 4, NULL, 0, &m->rid[r])) != CL_SUCCESS)
            break;
    }
    pthread_mutex_lock(&dist_lock);
    m->next_live = live_mems;
    live_mems = m;
    pthread_mutex_unlock(&dist_lock);
    if (err != CL_SUCCESS) {
        mem_unref(m);
        set_err(errcode_ret, err);
        return NULL;
    }
    set_err(errcode_ret, CL_SUCCESS);
    return (cl_mem)m;
}

static cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                        cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    bool wants_ptr = (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) != 0;
    if (size == 0) {
        set_err(errcode_ret, CL_INVALID_BUFFER_SIZE);
        return NULL;
    }
    if (wants_ptr != (host_ptr != NULL)) {
        set_err(errcode_ret, CL_INVALID_HOST_PTR);
        return NULL;
    }
    if (flags & CL_MEM_USE_HOST_PTR) {
        set_err(errcode_ret, CL_INVALID_OPERATION); /* the host pointer cannot alias remote memory */
        return NULL;
    }
    struct dist_mem *m = calloc(1, sizeof *m);
    if (m == NULL || (host_ptr != NULL && (m->shadow = malloc(size)) == NULL)) {
        free(m);
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    if (host_ptr != NULL)
        memcpy(m->shadow, host_ptr, size);
    m->refs = 1;
    m->ctx = c;
    m->flags = flags;
    m->size = size;
    retain_context(context);
    cl_mem_flags remote_flags = flags & ~(cl_mem_flags)(CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR);
    cl_int err = CL_SUCCESS;
    for_ranks(c, r) {
        uint64_t a[3] = {c->rid[r], remote_flags, size};
        if ((err = dist_call_v(r, SLUICE_REMOTE_BUF_CREATE, a, 3, NULL, 0, &m->rid[r])) != CL_SUCCESS)
            break;
    }
    pthread_mutex_lock(&dist_lock);
    m->coh_id = next_coh_id++;
    if (err == CL_SUCCESS)
        err = dist_coh_add(m);
    m->next_live = live_mems;
    live_mems = m;
    pthread_mutex_unlock(&dist_lock);
    if (err != CL_SUCCESS) {
        mem_unref(m);
        set_err(errcode_ret, err);
        return NULL;
    }
    set_err(errcode_ret, CL_SUCCESS);
    return (cl_mem)m;
}

static cl_int CL_API_CALL retain_mem(cl_mem mem)
{
    if (mem == NULL)
        return CL_INVALID_MEM_OBJECT;
    __atomic_add_fetch(&((struct dist_mem *)mem)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_mem(cl_mem mem)
{
    if (mem == NULL)
        return CL_INVALID_MEM_OBJECT;
    mem_unref((struct dist_mem *)mem);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL mem_info(cl_mem mem, cl_mem_info param, size_t size, void *value, size_t *size_ret)
{
    struct dist_mem *m = (struct dist_mem *)mem;
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
    switch (param) {
    case CL_MEM_CONTEXT: return dist_answer(&m->ctx, sizeof m->ctx, size, value, size_ret);
    case CL_MEM_SIZE: return dist_answer(&m->size, sizeof m->size, size, value, size_ret);
    case CL_MEM_FLAGS: return dist_answer(&m->flags, sizeof m->flags, size, value, size_ret);
    case CL_MEM_HOST_PTR: return dist_answer(&m->host_ptr, sizeof m->host_ptr, size, value, size_ret);
    case CL_MEM_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&m->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_MEM_ASSOCIATED_MEMOBJECT: return dist_answer(&m->parent, sizeof m->parent, size, value, size_ret);
    case CL_MEM_OFFSET: return dist_answer(&m->origin, sizeof m->origin, size, value, size_ret);
    default:
        for_ranks(m->ctx, r) return dist_info(r, SLUICE_RG_MEM, m->rid[r], 0, param, size, value, size_ret);
        return CL_INVALID_MEM_OBJECT;
    }
}

/* ---- programs ----------------------------------------------------------------------------- */

static void prog_unref(struct dist_program *p)
{
    if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    release_everywhere(p->rid, SLUICE_CL_PROGRAM);
    ctx_unref(p->ctx);
    free(p->devs);
    free(p);
}

static int prog_ndev(const struct dist_program *p)
{
    return p->devs ? p->ndev : p->ctx->ndev;
}

static struct dist_device *prog_dev(const struct dist_program *p, int i)
{
    return p->devs ? p->devs[i] : p->ctx->devs[i];
}

/* The position of the program's i-th device among the program's devices on the same rank: the
 * order the rank's real program lists them in. */
static int rank_index(const struct dist_program *p, int i)
{
    int j = 0;
    for (int k = 0; k < i; k++)
        j += prog_dev(p, k)->rank == prog_dev(p, i)->rank;
    return j;
}

/* CL_PROGRAM_BINARY_SIZES and CL_PROGRAM_BINARIES: per device, from the device's rank. */
static cl_int program_binaries(struct dist_program *p, cl_program_info param, size_t size, void *value,
                               size_t *size_ret)
{
    int n = prog_ndev(p);
    size_t need = (size_t)n * (param == CL_PROGRAM_BINARIES ? sizeof(unsigned char *) : sizeof(size_t));
    if (size_ret != NULL)
        *size_ret = need;
    if (value == NULL)
        return CL_SUCCESS;
    if (size < need)
        return CL_INVALID_VALUE;
    for (int i = 0; i < n; i++) {
        struct dist_device *d = prog_dev(p, i);
        if (param == CL_PROGRAM_BINARY_SIZES) {
            size_t sizes[DIST_MAX_DEVICES];
            int j = rank_index(p, i);
            cl_int r = dist_info(d->rank, SLUICE_RG_PROGRAM, p->rid[d->rank], 0, CL_PROGRAM_BINARY_SIZES, sizeof sizes,
                                 sizes, NULL);
            if (r != CL_SUCCESS)
                return r;
            ((size_t *)value)[i] = sizes[j];
        } else {
            unsigned char *dst = ((unsigned char **)value)[i];
            if (dst == NULL)
                continue;
            uint64_t a[2] = {p->rid[d->rank], (uint64_t)rank_index(p, i)};
            struct sluice_remote_msg m;
            cl_int r = dist_call(d->rank, SLUICE_REMOTE_PROG_BINARY, a, 2, NULL, 0, &m);
            if (r == CL_SUCCESS && m.bytes != NULL)
                memcpy(dst, m.bytes, (size_t)m.rep.nbytes);
            free(m.bytes);
            if (r != CL_SUCCESS)
                return r;
        }
    }
    return CL_SUCCESS;
}

static cl_program CL_API_CALL create_program_binary(cl_context context, cl_uint ndev, const cl_device_id *devices,
                                                    const size_t *lengths, const unsigned char **binaries,
                                                    cl_int *binary_status, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    if (ndev == 0 || devices == NULL || lengths == NULL || binaries == NULL || ndev > DIST_MAX_DEVICES) {
        set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    for (cl_uint i = 0; i < ndev; i++) {
        bool member = false;
        for (int k = 0; k < c->ndev; k++)
            member |= c->devs[k] == (struct dist_device *)devices[i];
        if (!member) {
            set_err(errcode_ret, CL_INVALID_DEVICE);
            return NULL;
        }
        if (lengths[i] == 0 || binaries[i] == NULL) {
            if (binary_status != NULL)
                binary_status[i] = CL_INVALID_VALUE;
            set_err(errcode_ret, CL_INVALID_VALUE);
            return NULL;
        }
    }
    struct dist_program *p = calloc(1, sizeof *p);
    if (p == NULL || (p->devs = calloc(ndev, sizeof *p->devs)) == NULL) {
        free(p);
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    p->refs = 1;
    p->ctx = c;
    p->ndev = (int)ndev;
    for (cl_uint i = 0; i < ndev; i++)
        p->devs[i] = (struct dist_device *)devices[i];
    retain_context(context);
    cl_int err = CL_SUCCESS;
    for (int r = 0; r < dist_size() && err == CL_SUCCESS; r++) {
        size_t n = 0, bytes = 0;
        for (cl_uint i = 0; i < ndev; i++)
            if (p->devs[i]->rank == r) {
                n++;
                bytes += lengths[i];
            }
        if (n == 0)
            continue;
        unsigned char *buf = malloc(n * 2 * sizeof(uint64_t) + bytes);
        if (buf == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        size_t k = 0, off = n * 2 * sizeof(uint64_t);
        for (cl_uint i = 0; i < ndev; i++)
            if (p->devs[i]->rank == r) {
                uint64_t rec[2] = {p->devs[i]->rid, lengths[i]};
                memcpy(buf + k++ * sizeof rec, rec, sizeof rec);
                memcpy(buf + off, binaries[i], lengths[i]);
                off += lengths[i];
            }
        uint64_t a[2] = {c->rid[r], n};
        struct sluice_remote_msg m;
        err = dist_call(r, SLUICE_REMOTE_PROG_FROM_BINARY, a, 2, buf, off, &m);
        free(buf);
        p->rid[r] = m.rep.v[0];
        k = 0;
        for (cl_uint i = 0; i < ndev && binary_status != NULL; i++)
            if (p->devs[i]->rank == r && (k + 1) * sizeof(cl_int) <= m.rep.nbytes) {
                memcpy(&binary_status[i], m.bytes + k * sizeof(cl_int), sizeof(cl_int));
                k++;
            }
        free(m.bytes);
    }
    if (err != CL_SUCCESS) {
        prog_unref(p);
        p = NULL;
    }
    set_err(errcode_ret, err);
    return (cl_program)p;
}

static cl_program CL_API_CALL create_program_source(cl_context context, cl_uint count, const char **strings,
                                                    const size_t *lengths, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    if (count == 0 || strings == NULL) {
        set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    size_t total = 0;
    for (cl_uint i = 0; i < count; i++) {
        if (strings[i] == NULL) {
            set_err(errcode_ret, CL_INVALID_VALUE);
            return NULL;
        }
        total += (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
    }
    char *src = malloc(total + 1);
    struct dist_program *p = calloc(1, sizeof *p);
    if (src == NULL || p == NULL) {
        free(src);
        free(p);
        set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    size_t off = 0;
    for (cl_uint i = 0; i < count; i++) {
        size_t n = (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
        memcpy(src + off, strings[i], n);
        off += n;
    }
    p->refs = 1;
    p->ctx = c;
    retain_context(context);
    cl_int err = CL_SUCCESS;
    for_ranks(c, r) {
        uint64_t a[1] = {c->rid[r]};
        if ((err = dist_call_v(r, SLUICE_REMOTE_PROG_CREATE, a, 1, src, total, &p->rid[r])) != CL_SUCCESS)
            break;
    }
    free(src);
    if (err != CL_SUCCESS) {
        prog_unref(p);
        p = NULL;
    }
    set_err(errcode_ret, err);
    return (cl_program)p;
}

/* Builds on every rank involved, each with its own devices of the list (or of the context). */
static cl_int CL_API_CALL build_program(cl_program program, cl_uint ndev, const cl_device_id *devices,
                                        const char *options, void(CL_CALLBACK *notify)(cl_program, void *),
                                        void *user_data)
{
    struct dist_program *p = (struct dist_program *)program;
    if (p == NULL)
        return CL_INVALID_PROGRAM;
    if ((ndev == 0) != (devices == NULL))
        return CL_INVALID_VALUE;
    size_t olen = options ? strlen(options) : 0;
    cl_int first_err = CL_SUCCESS;
    for (int r = 0; r < dist_size(); r++) {
        if (p->rid[r] == 0)
            continue;
        size_t cap = (DIST_MAX_DEVICES * sizeof(uint64_t)) + olen;
        unsigned char *buf = malloc(cap);
        if (buf == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        uint64_t n = 0;
        for (int i = 0; i < (devices ? (int)ndev : prog_ndev(p)); i++) {
            struct dist_device *d = devices ? (struct dist_device *)devices[i] : prog_dev(p, i);
            if (d == NULL) {
                free(buf);
                return CL_INVALID_DEVICE;
            }
            if (d->rank == r && n < DIST_MAX_DEVICES) {
                memcpy(buf + n * sizeof(uint64_t), &d->rid, sizeof(uint64_t));
                n++;
            }
        }
        if (n > 0) {
            memcpy(buf + n * sizeof(uint64_t), options ? options : "", olen);
            uint64_t a[2] = {p->rid[r], n};
            cl_int e = dist_call(r, SLUICE_REMOTE_PROG_BUILD, a, 2, buf, n * sizeof(uint64_t) + olen, NULL);
            if (e != CL_SUCCESS && first_err == CL_SUCCESS)
                first_err = e;
        }
        free(buf);
    }
    if (notify != NULL)
        notify(program, user_data); /* the build is complete when clBuildProgram returns */
    return first_err;
}

static cl_int CL_API_CALL retain_program(cl_program program)
{
    if (program == NULL)
        return CL_INVALID_PROGRAM;
    __atomic_add_fetch(&((struct dist_program *)program)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_program(cl_program program)
{
    if (program == NULL)
        return CL_INVALID_PROGRAM;
    prog_unref((struct dist_program *)program);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL program_info(cl_program program, cl_program_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    if (p == NULL)
        return CL_INVALID_PROGRAM;
    switch (param) {
    case CL_PROGRAM_CONTEXT: return dist_answer(&p->ctx, sizeof p->ctx, size, value, size_ret);
    case CL_PROGRAM_DEVICES:
        return dist_answer(p->devs ? p->devs : p->ctx->devs, prog_ndev(p) * sizeof(void *), size, value, size_ret);
    case CL_PROGRAM_NUM_DEVICES: {
        cl_uint n = (cl_uint)prog_ndev(p);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_PROGRAM_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&p->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_PROGRAM_BINARY_SIZES:
    case CL_PROGRAM_BINARIES: return program_binaries(p, param, size, value, size_ret);
    default:
        for (int r = 0; r < dist_size(); r++)
            if (p->rid[r] != 0)
                return dist_info(r, SLUICE_RG_PROGRAM, p->rid[r], 0, param, size, value, size_ret);
        return CL_INVALID_PROGRAM;
    }
}

static cl_int CL_API_CALL build_info(cl_program program, cl_device_id device, cl_program_build_info param,
                                     size_t size, void *value, size_t *size_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    struct dist_device *d = (struct dist_device *)device;
    if (p == NULL)
        return CL_INVALID_PROGRAM;
    if (d == NULL || p->rid[d->rank] == 0)
        return CL_INVALID_DEVICE;
    return dist_info(d->rank, SLUICE_RG_BUILD, p->rid[d->rank], d->rid, param, size, value, size_ret);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static void kernel_unref(struct dist_kernel *k)
{
    if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    release_everywhere(k->rid, SLUICE_CL_KERNEL);
    for (cl_uint i = 0; i < k->nargs; i++)
        free(k->args[i].bytes);
    free(k->args);
    prog_unref(k->prog);
    free(k);
}

static struct dist_kernel *make_kernel(struct dist_program *p, const char *name, cl_int *err)
{
    struct dist_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    k->refs = 1;
    k->prog = p;
    snprintf(k->name, sizeof k->name, "%s", name);
    retain_program((cl_program)p);
    *err = CL_SUCCESS;
    int first = -1;
    for (int r = 0; r < dist_size(); r++) {
        if (p->rid[r] == 0)
            continue; /* a program from binaries lives only on the ranks of its devices */
        uint64_t a[1] = {p->rid[r]};
        if ((*err = dist_call_v(r, SLUICE_REMOTE_KERNEL_CREATE, a, 1, name, strlen(name), &k->rid[r])) != CL_SUCCESS)
            break;
        if (first < 0)
            first = r;
    }
    if (*err == CL_SUCCESS && first >= 0)
        *err = dist_info(first, SLUICE_RG_KERNEL, k->rid[first], 0, CL_KERNEL_NUM_ARGS, sizeof k->nargs, &k->nargs, NULL);
    if (*err == CL_SUCCESS && k->nargs > 0 && (k->args = calloc(k->nargs, sizeof *k->args)) == NULL)
        *err = CL_OUT_OF_HOST_MEMORY;
    /* Which buffer arguments the kernel only reads (servers build with -cl-kernel-arg-info). If
     * the information is missing, the argument counts as read-write. */
    for (cl_uint i = 0; *err == CL_SUCCESS && i < k->nargs; i++) {
        cl_kernel_arg_address_qualifier aq = 0;
        cl_kernel_arg_type_qualifier tq = 0;
        if (dist_info(first, SLUICE_RG_KERNEL_ARG, k->rid[first], i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq,
                      NULL) != CL_SUCCESS ||
            dist_info(first, SLUICE_RG_KERNEL_ARG, k->rid[first], i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq,
                      NULL) != CL_SUCCESS)
            continue;
        k->args[i].read_only = aq == CL_KERNEL_ARG_ADDRESS_CONSTANT || (tq & CL_KERNEL_ARG_TYPE_CONST) != 0;
    }
    if (*err != CL_SUCCESS) {
        kernel_unref(k);
        return NULL;
    }
    return k;
}

static cl_kernel CL_API_CALL create_kernel(cl_program program, const char *name, cl_int *errcode_ret)
{
    cl_int err = CL_INVALID_PROGRAM;
    struct dist_kernel *k = NULL;
    if (program != NULL && name == NULL)
        err = CL_INVALID_VALUE;
    else if (program != NULL)
        k = make_kernel((struct dist_program *)program, name, &err);
    set_err(errcode_ret, err);
    return (cl_kernel)k;
}

static cl_int CL_API_CALL create_kernels(cl_program program, cl_uint num, cl_kernel *kernels, cl_uint *num_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    if (p == NULL)
        return CL_INVALID_PROGRAM;
    char names[4096];
    cl_int err = program_info(program, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL);
    if (err != CL_SUCCESS)
        return err;
    cl_uint n = 0;
    for (char *save = NULL, *s = strtok_r(names, ";", &save); s != NULL; s = strtok_r(NULL, ";", &save)) {
        if (kernels != NULL && n < num) {
            kernels[n] = (cl_kernel)make_kernel(p, s, &err);
            if (err != CL_SUCCESS) {
                while (n-- > 0)
                    kernel_unref((struct dist_kernel *)kernels[n]);
                return err;
            }
        }
        n++;
    }
    if (kernels != NULL && num < n) {
        for (cl_uint i = 0; i < num; i++)
            kernel_unref((struct dist_kernel *)kernels[i]);
        return CL_INVALID_VALUE;
    }
    if (num_ret != NULL)
        *num_ret = n;
    return CL_SUCCESS;
}

static cl_kernel CL_API_CALL clone_kernel(cl_kernel source, cl_int *errcode_ret)
{
    struct dist_kernel *s = (struct dist_kernel *)source;
    if (s == NULL) {
        set_err(errcode_ret, CL_INVALID_KERNEL);
        return NULL;
    }
    cl_int err;
    struct dist_kernel *k = make_kernel(s->prog, s->name, &err);
    for (cl_uint i = 0; k != NULL && i < k->nargs && i < s->nargs; i++) {
        k->args[i] = s->args[i];
        if (s->args[i].bytes != NULL && (k->args[i].bytes = malloc(s->args[i].size)) != NULL)
            memcpy(k->args[i].bytes, s->args[i].bytes, s->args[i].size);
    }
    set_err(errcode_ret, err);
    return (cl_kernel)k;
}

/* Arguments are kept here and sent to the rank of the queue at each launch. */
static cl_int CL_API_CALL set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    if (index >= k->nargs)
        return CL_INVALID_ARG_INDEX;
    struct dist_arg a = {.set = 1, .size = size};
    if (value == NULL) {
        if (size == 0)
            return CL_INVALID_ARG_SIZE;
        a.kind = 2;
    } else {
        void *p = NULL;
        if (size == sizeof(cl_mem))
            memcpy(&p, value, sizeof p);
        pthread_mutex_lock(&dist_lock);
        bool mem = p != NULL && dist_mem_is_live(p);
        pthread_mutex_unlock(&dist_lock);
        if (mem) {
            a.kind = 1;
            a.mem = p;
            if (((struct dist_mem *)p)->ctx != k->prog->ctx)
                return CL_INVALID_MEM_OBJECT;
        } else {
            if ((a.bytes = malloc(size ? size : 1)) == NULL)
                return CL_OUT_OF_HOST_MEMORY;
            memcpy(a.bytes, value, size);
        }
    }
    pthread_mutex_lock(&dist_lock);
    free(k->args[index].bytes);
    a.read_only = k->args[index].read_only;
    k->args[index] = a;
    pthread_mutex_unlock(&dist_lock);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL retain_kernel(cl_kernel kernel)
{
    if (kernel == NULL)
        return CL_INVALID_KERNEL;
    __atomic_add_fetch(&((struct dist_kernel *)kernel)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_kernel(cl_kernel kernel)
{
    if (kernel == NULL)
        return CL_INVALID_KERNEL;
    kernel_unref((struct dist_kernel *)kernel);
    return CL_SUCCESS;
}

static int first_rank(const uint64_t *rid)
{
    for (int r = 0; r < dist_size(); r++)
        if (rid[r] != 0)
            return r;
    return -1;
}

static cl_int CL_API_CALL kernel_info(cl_kernel kernel, cl_kernel_info param, size_t size, void *value,
                                      size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    switch (param) {
    case CL_KERNEL_PROGRAM: return dist_answer(&k->prog, sizeof k->prog, size, value, size_ret);
    case CL_KERNEL_CONTEXT: return dist_answer(&k->prog->ctx, sizeof k->prog->ctx, size, value, size_ret);
    case CL_KERNEL_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&k->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    default: {
        int r = first_rank(k->rid);
        return r < 0 ? CL_INVALID_KERNEL : dist_info(r, SLUICE_RG_KERNEL, k->rid[r], 0, param, size, value, size_ret);
    }
    }
}

static cl_int CL_API_CALL kernel_wg_info(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param,
                                         size_t size, void *value, size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    struct dist_device *d = (struct dist_device *)device;
    if (d == NULL && k->prog->ctx->ndev == 1)
        d = k->prog->ctx->devs[0];
    if (d == NULL || k->rid[d->rank] == 0)
        return CL_INVALID_DEVICE;
    return dist_info(d->rank, SLUICE_RG_KERNEL_WG, k->rid[d->rank], d->rid, param, size, value, size_ret);
}

static cl_int CL_API_CALL kernel_arg_info(cl_kernel kernel, cl_uint index, cl_kernel_arg_info param, size_t size,
                                          void *value, size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    int r = first_rank(k->rid);
    return r < 0 ? CL_INVALID_KERNEL : dist_info(r, SLUICE_RG_KERNEL_ARG, k->rid[r], index, param, size, value, size_ret);
}

static cl_int CL_API_CALL context_dtor(cl_context context, void(CL_CALLBACK *fn)(cl_context, void *), void *user_data)
{
    if (context == NULL)
        return CL_INVALID_CONTEXT;
    return add_dtor(&((struct dist_context *)context)->dtors, (void (*)(void *, void *))fn, user_data);
}

static cl_int CL_API_CALL mem_dtor(cl_mem mem, void(CL_CALLBACK *fn)(cl_mem, void *), void *user_data)
{
    if (mem == NULL)
        return CL_INVALID_MEM_OBJECT;
    return add_dtor(&((struct dist_mem *)mem)->dtors, (void (*)(void *, void *))fn, user_data);
}

void dist_objects_install(struct sluice_cl_api *api)
{
    api->clSetContextDestructorCallback = context_dtor;
    api->clSetMemObjectDestructorCallback = mem_dtor;
    api->clCreateContext = create_context;
    api->clRetainContext = retain_context;
    api->clReleaseContext = release_context;
    api->clGetContextInfo = context_info;
    api->clCreateCommandQueue = create_queue;
    api->clCreateCommandQueueWithProperties = create_queue_props;
    api->clRetainCommandQueue = retain_queue;
    api->clReleaseCommandQueue = release_queue;
    api->clGetCommandQueueInfo = queue_info;
    api->clCreateBuffer = create_buffer;
    api->clCreateSubBuffer = create_sub_buffer;
    api->clRetainMemObject = retain_mem;
    api->clReleaseMemObject = release_mem;
    api->clGetMemObjectInfo = mem_info;
    api->clCreateProgramWithSource = create_program_source;
    api->clCreateProgramWithBinary = create_program_binary;
    api->clBuildProgram = build_program;
    api->clRetainProgram = retain_program;
    api->clReleaseProgram = release_program;
    api->clGetProgramInfo = program_info;
    api->clGetProgramBuildInfo = build_info;
    api->clCreateKernel = create_kernel;
    api->clCreateKernelsInProgram = create_kernels;
    api->clCloneKernel = clone_kernel;
    api->clSetKernelArg = set_kernel_arg;
    api->clRetainKernel = retain_kernel;
    api->clReleaseKernel = release_kernel;
    api->clGetKernelInfo = kernel_info;
    api->clGetKernelWorkGroupInfo = kernel_wg_info;
    api->clGetKernelArgInfo = kernel_arg_info;
}
