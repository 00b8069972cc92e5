/* SPDX-License-Identifier: MIT */
/* Tracing of OpenCL calls (only reached with the trace on, except enqueue_done's handle work).
 *
 * Every call: CL_CALL (function, return code, first object). Every enqueue: CL_ENQUEUE with a
 * command id, CL_DEP per dependency (wait-list events, the previous command of an in-order
 * queue), CL_TRANSFER for bytes between host and device, and CL_DEVICE_EXEC from the event's
 * profiling times once the command completes (read back lazily, see below). Device times are moved onto
 * sluice's clock by the offset between the host time of the enqueue and the device's QUEUED time. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "cl/intercept/info_text.h"
#include "cl/intercept/names.h"
#include "cl/intercept/wrap.h"

static _Atomic uint64_t next_cmd = 1;
static _Atomic uint32_t fn_string[SLUICE_CL_FN_COUNT];

static uint32_t fn_id(sluice_cl_fn_id fn)
{
    uint32_t id = atomic_load_explicit(&fn_string[fn], memory_order_relaxed);
    if (id == 0) {
        id = sluice_trace_string(sluice_cl_fn_name(fn));
        atomic_store_explicit(&fn_string[fn], id, memory_order_relaxed);
    }
    return id;
}

void sluice_cl_trace_call(sluice_cl_fn_id fn, uint64_t t0, cl_int code, const struct sluice_cl_obj *obj)
{
    uint64_t t1 = sluice_now_ns();
    sluice_trace_record(SLUICE_EV_CL_CALL, code != CL_SUCCESS ? SLUICE_EVF_ERROR : 0, t0, t1 - t0, fn_id(fn),
                        (uint64_t)(int64_t)code, (uint64_t)(uintptr_t)obj);
}

/* Device times. A command's event is kept in its queue's ring until it completes, and its
 * profiling times are read then, from the program's own thread, at the next enqueue on that
 * queue, when the queue dies, or at exit. Reading them later costs a status query; an event
 * callback per command cost several microseconds more on NVIDIA's driver (measured). A full
 * ring falls back to a completion callback, so no command goes untimed. */
struct exec_probe {
    cl_event ev;
    uint64_t cmd;
    uint64_t host_enqueue_ns;
    uint64_t bytes;
    const struct sluice_cl_obj *device;
    const struct sluice_cl_backend *be;
};

#define TIMING_RING 256
struct sluice_cl_timing {
    pthread_mutex_t lock;
    unsigned head, count;
    struct exec_probe ring[TIMING_RING];
};

static void record_exec(const struct exec_probe *p)
{
    cl_ulong queued = 0, start = 0, end = 0;
    sluice_cl_pfn_clGetEventProfilingInfo prof = p->be->api.clGetEventProfilingInfo;
    if (prof != NULL &&
        prof(p->ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL) == CL_SUCCESS &&
        prof(p->ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
        prof(p->ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS && end >= start &&
        start >= queued) {
        uint64_t t = p->host_enqueue_ns + (start - queued);
        sluice_trace_record(SLUICE_EV_CL_DEVICE_EXEC, 0, t, end - start, p->cmd,
                            (uint64_t)(uintptr_t)p->device, p->bytes);
    }
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    struct exec_probe *p = arg;
    if (status == CL_COMPLETE)
        record_exec(p);
    free(p);
}

/* Settles the oldest pending commands of a queue that have finished (all of them with
 * `all`, which hands the unfinished ones to completion callbacks). Caller holds t->lock. */
static void harvest_locked(struct sluice_cl_timing *t, bool all)
{
    while (t->count > 0) {
        struct exec_probe *p = &t->ring[t->head];
        cl_int st = CL_QUEUED;
        if (p->be->api.clGetEventInfo == NULL ||
            p->be->api.clGetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                CL_SUCCESS)
            st = -1;
        if (st > CL_COMPLETE) {
            if (!all)
                break; /* in order: later ones are not done either, most likely */
            struct exec_probe *cb = malloc(sizeof *cb);
            if (cb != NULL) {
                *cb = *p;
                if (p->be->api.clSetEventCallback(p->ev, CL_COMPLETE, on_complete, cb) != CL_SUCCESS)
                    free(cb);
            }
        } else if (st == CL_COMPLETE) {
            record_exec(p);
        }
        p->be->api.clReleaseEvent(p->ev);
        t->head = (t->head + 1) % TIMING_RING;
        t->count--;
    }
}

static void harvest_queue(struct sluice_cl_obj *q, void *all)
{
    struct sluice_cl_timing *t = __atomic_load_n(&q->u.queue.timing, __ATOMIC_ACQUIRE);
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    harvest_locked(t, all != NULL);
    pthread_mutex_unlock(&t->lock);
}

/* At exit, before any library's destructors (atexit runs first): what completed is recorded
 * while the trace still takes events and the OpenCL implementation is still loaded. */
static pid_t exit_hook_pid;
static void harvest_all_at_exit(void)
{
    /* A fork child that calls exit() inherits the hook but not the implementation's threads:
     * calling into OpenCL there could hang, so only the process that timed commands harvests. */
    if (getpid() == exit_hook_pid)
        sluice_cl_for_each(SLUICE_CL_QUEUE, harvest_queue, NULL);
}
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;
static void install_exit_hook(void)
{
    exit_hook_pid = getpid();
    atexit(harvest_all_at_exit);
}

void sluice_cl_queue_timing_close(struct sluice_cl_obj *queue)
{
    struct sluice_cl_timing *t = queue->u.queue.timing;
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    harvest_locked(t, true);
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_destroy(&t->lock);
    free(t);
    queue->u.queue.timing = NULL;
}

static struct sluice_cl_timing *timing_of(struct sluice_cl_obj *q)
{
    struct sluice_cl_timing *t = __atomic_load_n(&q->u.queue.timing, __ATOMIC_ACQUIRE);
    if (t != NULL)
        return t;
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    struct sluice_cl_timing *expected = NULL;
    if (!__atomic_compare_exchange_n(&q->u.queue.timing, &expected, t, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        pthread_mutex_destroy(&t->lock);
        free(t);
        return expected;
    }
    pthread_once(&exit_hook_once, install_exit_hook);
    return t;
}

/* Takes over one reference to `ev`. */
static void time_command(struct sluice_cl_obj *queue, cl_event ev, const struct exec_probe *probe)
{
    struct sluice_cl_timing *t = timing_of(queue);
    if (t == NULL) {
        queue->backend->api.clReleaseEvent(ev);
        return;
    }
    pthread_mutex_lock(&t->lock);
    harvest_locked(t, false);
    if (t->count == TIMING_RING) {
        pthread_mutex_unlock(&t->lock);
        struct exec_probe *cb = malloc(sizeof *cb);
        if (cb != NULL) {
            *cb = *probe;
            cb->ev = ev;
            if (queue->backend->api.clSetEventCallback(ev, CL_COMPLETE, on_complete, cb) != CL_SUCCESS)
                free(cb);
        }
        queue->backend->api.clReleaseEvent(ev);
        return;
    }
    struct exec_probe *slot = &t->ring[(t->head + t->count) % TIMING_RING];
    *slot = *probe;
    slot->ev = ev;
    t->count++;
    pthread_mutex_unlock(&t->lock);
}

/* Records the enqueue. Takes over the caller's reference to `real_event` when `give_event`
 * (an event only the trace asked for: no retain/release pair per command). */
static void record_enqueue(sluice_cl_fn_id fn, struct sluice_cl_obj *queue, cl_int code, cl_event real_event,
                           bool give_event, uint64_t t0, uint64_t cmd, cl_uint nwait,
                           struct sluice_cl_obj *const *wait_list, int direction, uint64_t bytes)
{
    uint64_t t1 = sluice_now_ns();
    if (code != CL_SUCCESS) {
        sluice_trace_record(SLUICE_EV_CL_CALL, SLUICE_EVF_ERROR, t0, t1 - t0, fn_id(fn),
                            (uint64_t)(int64_t)code, (uint64_t)(uintptr_t)queue);
        return; /* no event was created */
    }
    sluice_trace_record(SLUICE_EV_CL_ENQUEUE, 0, t0, t1 - t0, fn_id(fn), cmd, (uint64_t)(uintptr_t)queue);
    for (cl_uint i = 0; wait_list != NULL && i < nwait; i++) {
        struct sluice_cl_obj *e = sluice_cl_valid(wait_list[i], SLUICE_CL_EVENT);
        if (e != NULL && e->cmd != 0)
            sluice_trace_record(SLUICE_EV_CL_DEP, 0, t1, 0, cmd, e->cmd, 0);
    }
    struct sluice_cl_obj *device = NULL;
    if (queue != NULL) {
        uint64_t prev = __atomic_exchange_n(&queue->u.queue.last_cmd, cmd, __ATOMIC_ACQ_REL);
        if (prev != 0 && !(queue->u.queue.app_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
            sluice_trace_record(SLUICE_EV_CL_DEP, 0, t1, 0, cmd, prev, 1);
        device = queue->u.queue.device;
    }
    if (direction != SLUICE_CL_NONE && bytes != 0)
        sluice_trace_record(SLUICE_EV_CL_TRANSFER, 0, t0, t1 - t0, (uint64_t)direction, bytes,
                            (uint64_t)(uintptr_t)device);
    if (real_event == NULL)
        return;
    if (queue == NULL) {
        if (give_event)
            sluice_cl_loader_backend()->api.clReleaseEvent(real_event);
        return;
    }
    if (give_event || (queue->backend->api.clRetainEvent != NULL &&
                       queue->backend->api.clRetainEvent(real_event) == CL_SUCCESS)) {
        struct exec_probe p = {NULL,   cmd,           t0, direction != SLUICE_CL_NONE ? bytes : 0,
                               device, queue->backend};
        time_command(queue, real_event, &p);
    }
}

void sluice_cl_enqueue_done(sluice_cl_fn_id fn, struct sluice_cl_obj *queue, cl_int code, cl_event real_event,
                            cl_event *app_event, bool traced, uint64_t t0, cl_uint nwait,
                            struct sluice_cl_obj *const *wait_list, int direction, uint64_t bytes)
{
    uint64_t cmd = traced ? atomic_fetch_add_explicit(&next_cmd, 1, memory_order_relaxed) : 0;
    bool ok = real_event != NULL && code == CL_SUCCESS;
    if (traced)
        record_enqueue(fn, queue, code, ok ? real_event : NULL, app_event == NULL, t0, cmd, nwait, wait_list,
                       direction, bytes);
    if (!ok)
        return;
    if (app_event != NULL) {
        struct sluice_cl_obj *e =
            sluice_cl_wrap_new(SLUICE_CL_EVENT, real_event, queue, sluice_cl_backend_of(queue));
        if (e != NULL)
            e->cmd = cmd;
        *app_event = (cl_event)e;
    }
    /* else: an event only the trace wanted (never requested with the trace off); the timing
     * ring owns it now. */
}

uint64_t sluice_cl_image_bytes(cl_mem image, const size_t *region)
{
    struct sluice_cl_obj *o = sluice_cl_valid(image, SLUICE_CL_MEM);
    size_t elem = 0;
    if (o == NULL || region == NULL || o->backend->api.clGetImageInfo == NULL ||
        o->backend->api.clGetImageInfo(o->real, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) !=
            CL_SUCCESS)
        return 0;
    return (uint64_t)elem * region[0] * region[1] * region[2];
}

void sluice_cl_trace_device(const struct sluice_cl_obj *dev)
{
    const struct sluice_cl_api *api = &dev->backend->api;
    char *name = sluice_cl_device_text(api->clGetDeviceInfo, dev->real, CL_DEVICE_NAME);
    const struct sluice_cl_obj *p = dev->parent;
    while (p != NULL && p->kind == SLUICE_CL_DEVICE) /* sub-device: up to the root */
        p = p->parent;
    char *platform =
        p != NULL ? sluice_cl_platform_text(api->clGetPlatformInfo, p->real, CL_PLATFORM_NAME) : NULL;
    sluice_trace_record(SLUICE_EV_CL_DEVICE, 0, sluice_now_ns(), 0, (uint64_t)(uintptr_t)dev,
                        sluice_trace_string(name ? name : ""), sluice_trace_string(platform ? platform : ""));
    free(name);
    free(platform);
}
