/* Commands of the distributed backend: buffer reads and writes, kernel launches, queue
 * synchronisation and events. A command runs on the rank of its queue's device. Before it runs,
 * the coherence directory brings every buffer it uses up to date on that rank, and events of its
 * wait list are waited for (on their own rank). This slice dispatches in program order and
 * synchronously per command (the remote enqueue returns when the serving rank accepted it; a
 * read or write returns when the data moved): correct, not yet the asynchronous DAG. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/dist_internal.h"
#include "cl/object.h"

static cl_int wait_list(cl_uint n, const cl_event *evs)
{
    if ((n == 0) != (evs == NULL))
        return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < n; i++) {
        const struct dist_event *e = (const struct dist_event *)evs[i];
        if (e == NULL)
            return CL_INVALID_EVENT_WAIT_LIST;
        if (e->rid == 0)
            continue;
        cl_int r = dist_call(e->rank, SLUICE_REMOTE_WAIT, NULL, 0, &e->rid, sizeof e->rid, NULL);
        if (r != CL_SUCCESS)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    return CL_SUCCESS;
}

/* Hands the program an event for a command that ran as `rid` on the queue's rank. */
static cl_int give_event(struct dist_queue *q, uint64_t rid, cl_command_type type, cl_event *event)
{
    if (event == NULL)
        return CL_SUCCESS;
    struct dist_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    e->refs = 1;
    e->queue = q;
    e->rank = q->dev->rank;
    e->rid = rid;
    e->type = type;
    __atomic_add_fetch(&q->refs, 1, __ATOMIC_ACQ_REL);
    *event = (cl_event)e;
    return CL_SUCCESS;
}

static cl_int check_range(const struct dist_mem *m, size_t off, size_t size, const void *ptr)
{
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
    if (ptr == NULL || size == 0 || off > m->size || size > m->size - off)
        return CL_INVALID_VALUE;
    return CL_SUCCESS;
}

/* What a host<->device transfer checks and waits for before it moves data: a valid range of a
 * buffer of the queue's context, the wait list, and a coherent copy on the queue's rank (a write
 * covers its whole range, so it fetches nothing and takes the range Modified). */
static cl_int transfer_prepare(struct dist_queue *q, struct dist_mem *m, size_t off, size_t size,
                               const void *ptr, cl_uint nwait, const cl_event *wl, bool write)
{
    cl_int r = check_range(m, off, size, ptr);
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS)
        r = wait_list(nwait, wl);
    if (r == CL_SUCCESS)
        r = dist_coh_acquire(m, q->dev->rank, off, size, write, write);
    return r;
}

static cl_int CL_API_CALL write_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t off,
                                       size_t size, const void *ptr, cl_uint nwait, const cl_event *wl,
                                       cl_event *event)
{
    (void)blocking; /* the data is sent before the call returns, so the host copy is free at once */
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    int rank = q->dev->rank;
    cl_int r = transfer_prepare(q, m, off, size, ptr, nwait, wl, true);
    uint64_t rid = 0;
    if (r == CL_SUCCESS) {
        uint64_t a[6] = {q->rid, m->rid[rank], off, q->ctx->rid[rank], 0, event != NULL};
        r = dist_call_v(rank, SLUICE_REMOTE_BUF_WRITE, a, 6, ptr, size, &rid);
    }
    if (r == CL_SUCCESS)
        r = give_event(q, rid, CL_COMMAND_WRITE_BUFFER, event);
    return r;
}

static cl_int CL_API_CALL read_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t off,
                                      size_t size, void *ptr, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    (void)blocking; /* the data has arrived when the call returns */
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    int rank = q->dev->rank;
    cl_int r = transfer_prepare(q, m, off, size, ptr, nwait, wl, false);
    struct sluice_remote_msg msg = {0};
    if (r == CL_SUCCESS) {
        uint64_t a[6] = {q->rid, m->rid[rank], off, size, q->ctx->rid[rank], event != NULL};
        r = dist_call(rank, SLUICE_REMOTE_BUF_READ, a, 6, NULL, 0, &msg);
        if (r == CL_SUCCESS && msg.rep.nbytes == size)
            memcpy(ptr, msg.bytes, size);
        else if (r == CL_SUCCESS)
            r = CL_OUT_OF_RESOURCES;
    }
    free(msg.bytes);
    if (r == CL_SUCCESS)
        r = give_event(q, msg.rep.v[0], CL_COMMAND_READ_BUFFER, event);
    return r;
}

/* Sends the kernel's arguments to `rank`'s copy of the kernel, buffers made valid there first:
 * a buffer the kernel declares const or __constant, or one created CL_MEM_READ_ONLY, is read;
 * every other one is taken as written. */
static cl_int send_args(struct dist_kernel *k, int rank)
{
    for (cl_uint i = 0; i < k->nargs; i++) {
        struct dist_arg *a = &k->args[i];
        if (!a->set)
            return CL_INVALID_KERNEL_ARGS;
        uint64_t args[5] = {k->rid[rank], i, a->size, (uint64_t)a->kind, 0};
        if (a->kind == 1) {
            bool ro = a->read_only || (a->mem->flags & CL_MEM_READ_ONLY) != 0;
            cl_int r = dist_coh_acquire(a->mem, rank, 0, a->mem->size, !ro, false);
            if (r != CL_SUCCESS)
                return r;
            args[4] = a->mem->rid[rank];
        }
        cl_int r = dist_call(rank, SLUICE_REMOTE_KERNEL_ARG, args, 5, a->bytes, a->kind == 0 ? a->size : 0, NULL);
        if (r != CL_SUCCESS)
            return r;
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t *offset,
                                  const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wl,
                                  cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    if (k->prog->ctx != q->ctx)
        return CL_INVALID_CONTEXT;
    if (dims < 1 || dims > 3)
        return CL_INVALID_WORK_DIMENSION;
    if (global == NULL)
        return CL_INVALID_GLOBAL_WORK_SIZE;
    int rank = q->dev->rank;
    pthread_mutex_lock(&dist_lock);
    cl_int r = wait_list(nwait, wl);
    if (r == CL_SUCCESS)
        r = send_args(k, rank);
    uint64_t rid = 0;
    if (r == CL_SUCCESS) {
        size_t v[9] = {0};
        for (cl_uint i = 0; i < dims; i++) {
            v[i] = offset ? offset[i] : 0;
            v[dims + i] = global[i];
            v[2 * dims + i] = local ? local[i] : 0;
        }
        uint64_t a[4] = {q->rid, k->rid[rank], dims,
                         (offset ? 0u : 1u) | (local ? 0u : 4u) | (event != NULL ? 8u : 0u)};
        r = dist_call_v(rank, SLUICE_REMOTE_NDRANGE, a, 4, v, 3 * dims * sizeof(size_t), &rid);
    }
    pthread_mutex_unlock(&dist_lock);
    if (r == CL_SUCCESS)
        r = give_event(q, rid, CL_COMMAND_NDRANGE_KERNEL, event);
    return r;
}

/* Copy: the source is read and the destination written on the queue's rank. */
static cl_int CL_API_CALL copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_off, size_t dst_off,
                                      size_t size, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    static const char any = 0;
    cl_int r = check_range(s, src_off, size, &any);
    if (r == CL_SUCCESS)
        r = check_range(d, dst_off, size, &any);
    if (r == CL_SUCCESS && (s->ctx != q->ctx || d->ctx != q->ctx))
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS && s == d && (src_off < dst_off ? dst_off - src_off : src_off - dst_off) < size)
        r = CL_MEM_COPY_OVERLAP;
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    pthread_mutex_lock(&dist_lock);
    r = wait_list(nwait, wl);
    if (r == CL_SUCCESS)
        r = dist_coh_acquire(s, rank, src_off, size, false, false);
    if (r == CL_SUCCESS)
        r = dist_coh_acquire(d, rank, dst_off, size, true, true);
    uint64_t rid = 0;
    if (r == CL_SUCCESS) {
        uint64_t a[7] = {q->rid, s->rid[rank], d->rid[rank], src_off, dst_off, size, event != NULL};
        r = dist_call_v(rank, SLUICE_REMOTE_COPY, a, 7, NULL, 0, &rid);
    }
    pthread_mutex_unlock(&dist_lock);
    if (r == CL_SUCCESS)
        r = give_event(q, rid, CL_COMMAND_COPY_BUFFER, event);
    return r;
}

static cl_int CL_API_CALL fill_buffer(cl_command_queue queue, cl_mem buffer, const void *pattern, size_t pattern_size,
                                      size_t off, size_t size, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (pattern == NULL || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) != 0 ||
        off % pattern_size != 0 || size % pattern_size != 0)
        return CL_INVALID_VALUE;
    cl_int r = check_range(m, off, size, pattern);
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    pthread_mutex_lock(&dist_lock);
    r = wait_list(nwait, wl);
    if (r == CL_SUCCESS)
        r = dist_coh_acquire(m, rank, off, size, true, true);
    uint64_t rid = 0;
    if (r == CL_SUCCESS) {
        uint64_t a[5] = {q->rid, m->rid[rank], off, size, event != NULL};
        r = dist_call_v(rank, SLUICE_REMOTE_FILL, a, 5, pattern, pattern_size, &rid);
    }
    pthread_mutex_unlock(&dist_lock);
    if (r == CL_SUCCESS)
        r = give_event(q, rid, CL_COMMAND_FILL_BUFFER, event);
    return r;
}

/* Markers and barriers: the wait list is waited for first (on its ranks), then the marker is
 * enqueued on the queue's rank, where it completes after the queue's earlier commands. */
static cl_int marker(cl_command_queue queue, int barrier, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    cl_int r = nwait ? wait_list(nwait, wl) : (wl ? CL_INVALID_EVENT_WAIT_LIST : CL_SUCCESS);
    uint64_t rid = 0;
    if (r == CL_SUCCESS) {
        uint64_t a[3] = {q->rid, (uint64_t)barrier, event != NULL};
        r = dist_call_v(q->dev->rank, SLUICE_REMOTE_MARKER, a, 3, NULL, 0, &rid);
    }
    if (r == CL_SUCCESS)
        r = give_event(q, rid, barrier ? CL_COMMAND_BARRIER : CL_COMMAND_MARKER, event);
    return r;
}

static cl_int CL_API_CALL marker_wl(cl_command_queue queue, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    return marker(queue, 0, nwait, wl, event);
}

static cl_int CL_API_CALL barrier_wl(cl_command_queue queue, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    return marker(queue, 1, nwait, wl, event);
}

/* Maps are served from rank 0 memory: the region is read from the queue's rank at map time
 * (unless the program will overwrite it) and written back at unmap if the map allowed writes.
 * Rank 0 is the host, so a mapped pointer is ordinary memory of the program's process. */
static struct dist_map *maps;

static void *CL_API_CALL map_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, cl_map_flags flags,
                                    size_t off, size_t size, cl_uint nwait, const cl_event *wl, cl_event *event,
                                    cl_int *errcode_ret)
{
    (void)blocking; /* the data is there when the call returns */
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    static const char any = 0;
    cl_int r = q == NULL ? CL_INVALID_COMMAND_QUEUE : check_range(m, off, size, &any);
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
    struct dist_map *mp = NULL;
    if (r == CL_SUCCESS && ((mp = calloc(1, sizeof *mp)) == NULL || (mp->ptr = malloc(size)) == NULL))
        r = CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&dist_lock);
    if (r == CL_SUCCESS)
        r = wait_list(nwait, wl);
    if (r == CL_SUCCESS && !(flags & CL_MAP_WRITE_INVALIDATE_REGION)) {
        int rank = q->dev->rank;
        r = dist_coh_acquire(m, rank, off, size, false, false);
        struct sluice_remote_msg msg = {0};
        if (r == CL_SUCCESS) {
            uint64_t a[6] = {q->rid, m->rid[rank], off, size, q->ctx->rid[rank], 0};
            r = dist_call(rank, SLUICE_REMOTE_BUF_READ, a, 6, NULL, 0, &msg);
            if (r == CL_SUCCESS && msg.rep.nbytes == size)
                memcpy(mp->ptr, msg.bytes, size);
            else if (r == CL_SUCCESS)
                r = CL_OUT_OF_RESOURCES;
        }
        free(msg.bytes);
    }
    if (r == CL_SUCCESS) {
        mp->mem = m;
        mp->off = off;
        mp->size = size;
        mp->flags = flags;
        mp->next = maps;
        maps = mp;
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL); /* a mapped object stays alive */
    }
    pthread_mutex_unlock(&dist_lock);
    if (r == CL_SUCCESS)
        r = give_event(q, 0, CL_COMMAND_MAP_BUFFER, event);
    if (errcode_ret != NULL)
        *errcode_ret = r;
    if (r != CL_SUCCESS) {
        if (mp != NULL && mp->mem == NULL) {
            free(mp->ptr);
            free(mp);
        }
        return NULL;
    }
    return mp->ptr;
}

static cl_int CL_API_CALL unmap(cl_command_queue queue, cl_mem memobj, void *ptr, cl_uint nwait, const cl_event *wl,
                                cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)memobj;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
    pthread_mutex_lock(&dist_lock);
    struct dist_map **pp = &maps;
    while (*pp != NULL && !((*pp)->mem == m && (*pp)->ptr == ptr))
        pp = &(*pp)->next;
    struct dist_map *mp = *pp;
    cl_int r = mp == NULL ? CL_INVALID_VALUE : wait_list(nwait, wl);
    if (r == CL_SUCCESS && (mp->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))) {
        int rank = q->dev->rank;
        r = dist_coh_acquire(m, rank, mp->off, mp->size, true, true);
        if (r == CL_SUCCESS) {
            uint64_t a[6] = {q->rid, m->rid[rank], mp->off, q->ctx->rid[rank], 0, 0};
            r = dist_call(rank, SLUICE_REMOTE_BUF_WRITE, a, 6, mp->ptr, mp->size, NULL);
        }
    }
    if (mp != NULL && r == CL_SUCCESS)
        *pp = mp->next;
    pthread_mutex_unlock(&dist_lock);
    if (mp == NULL || r != CL_SUCCESS)
        return r;
    free(mp->ptr);
    free(mp);
    dist_mem_unref(m);
    return give_event(q, 0, CL_COMMAND_UNMAP_MEM_OBJECT, event);
}

static cl_int queue_op(cl_command_queue queue, int op)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    uint64_t a[1] = {q->rid};
    return dist_call(q->dev->rank, op, a, 1, NULL, 0, NULL);
}

static cl_int CL_API_CALL finish(cl_command_queue queue)
{
    return queue_op(queue, SLUICE_REMOTE_FINISH);
}

static cl_int CL_API_CALL flush(cl_command_queue queue)
{
    return queue_op(queue, SLUICE_REMOTE_FLUSH);
}

static cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event *evs)
{
    if (n == 0 || evs == NULL)
        return CL_INVALID_VALUE;
    return wait_list(n, evs);
}

static cl_int CL_API_CALL event_info(cl_event event, cl_event_info param, size_t size, void *value, size_t *size_ret)
{
    struct dist_event *e = (struct dist_event *)event;
    if (e == NULL)
        return CL_INVALID_EVENT;
    switch (param) {
    case CL_EVENT_COMMAND_QUEUE: return dist_answer(&e->queue, sizeof e->queue, size, value, size_ret);
    case CL_EVENT_CONTEXT: return dist_answer(&e->queue->ctx, sizeof e->queue->ctx, size, value, size_ret);
    case CL_EVENT_COMMAND_TYPE: return dist_answer(&e->type, sizeof e->type, size, value, size_ret);
    case CL_EVENT_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&e->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_EVENT_COMMAND_EXECUTION_STATUS:
        if (e->rid == 0) {
            cl_int st = CL_COMPLETE;
            return dist_answer(&st, sizeof st, size, value, size_ret);
        }
        /* fall through */
    default: return dist_info(e->rank, SLUICE_RG_EVENT, e->rid, 0, param, size, value, size_ret);
    }
}

static cl_int CL_API_CALL profiling_info(cl_event event, cl_profiling_info param, size_t size, void *value,
                                         size_t *size_ret)
{
    struct dist_event *e = (struct dist_event *)event;
    if (e == NULL)
        return CL_INVALID_EVENT;
    if (e->rid == 0)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    /* Device clocks of different nodes are not corrected yet (docs/DISTRIBUTED.md). */
    return dist_info(e->rank, SLUICE_RG_PROFILING, e->rid, 0, param, size, value, size_ret);
}

/* Event callbacks: a detached thread polls the event's status on its rank (sleeping between
 * polls, never holding the call lock while it waits) and calls the program's function once the
 * status reaches the one asked for, or an error. */
struct event_cb {
    struct dist_event *e;
    cl_int type;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *user_data;
};

static cl_int CL_API_CALL release_event(cl_event event);

static void *event_cb_thread(void *arg)
{
    struct event_cb *cb = arg;
    cl_int st = CL_COMPLETE;
    uint64_t ns = 20000;
    while (cb->e->rid != 0) {
        if (dist_info(cb->e->rank, SLUICE_RG_EVENT, cb->e->rid, 0, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                      NULL) != CL_SUCCESS)
            st = CL_DEVICE_NOT_AVAILABLE;
        if (st <= cb->type)
            break;
        struct timespec ts = {0, (long)ns};
        nanosleep(&ts, NULL);
        ns = ns < 10000000 ? ns * 2 : ns;
    }
    cb->fn((cl_event)cb->e, st < 0 ? st : cb->type, cb->user_data);
    release_event((cl_event)cb->e);
    free(cb);
    return NULL;
}

static cl_int CL_API_CALL set_event_callback(cl_event event, cl_int type,
                                             void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *user_data)
{
    struct dist_event *e = (struct dist_event *)event;
    if (e == NULL)
        return CL_INVALID_EVENT;
    if (fn == NULL || (type != CL_COMPLETE && type != CL_SUBMITTED && type != CL_RUNNING))
        return CL_INVALID_VALUE;
    struct event_cb *cb = malloc(sizeof *cb);
    if (cb == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    *cb = (struct event_cb){e, type, fn, user_data};
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, event_cb_thread, cb);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        free(cb);
        return CL_OUT_OF_HOST_MEMORY;
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL retain_event(cl_event event)
{
    if (event == NULL)
        return CL_INVALID_EVENT;
    __atomic_add_fetch(&((struct dist_event *)event)->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_event(cl_event event)
{
    struct dist_event *e = (struct dist_event *)event;
    if (e == NULL)
        return CL_INVALID_EVENT;
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return CL_SUCCESS;
    if (e->rid != 0) {
        uint64_t a[2] = {SLUICE_CL_EVENT, e->rid};
        dist_call(e->rank, SLUICE_REMOTE_RELEASE, a, 2, NULL, 0, NULL);
    }
    dist_queue_unref(e->queue);
    free(e);
    return CL_SUCCESS;
}

void dist_exec_install(struct sluice_cl_api *api)
{
    api->clEnqueueWriteBuffer = write_buffer;
    api->clEnqueueReadBuffer = read_buffer;
    api->clEnqueueNDRangeKernel = ndrange;
    api->clEnqueueCopyBuffer = copy_buffer;
    api->clEnqueueMapBuffer = map_buffer;
    api->clEnqueueUnmapMemObject = unmap;
    api->clEnqueueFillBuffer = fill_buffer;
    api->clEnqueueMarkerWithWaitList = marker_wl;
    api->clEnqueueBarrierWithWaitList = barrier_wl;
    api->clFinish = finish;
    api->clFlush = flush;
    api->clWaitForEvents = wait_for_events;
    api->clGetEventInfo = event_info;
    api->clGetEventProfilingInfo = profiling_info;
    api->clRetainEvent = retain_event;
    api->clSetEventCallback = set_event_callback;
    api->clReleaseEvent = release_event;
}
