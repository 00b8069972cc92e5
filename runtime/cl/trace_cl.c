/* Tracing of OpenCL calls (only reached with the trace on, except enqueue_done's handle work).
 *
 * Every call: CL_CALL (function, return code, first object). Every enqueue: CL_ENQUEUE with a
 * command id, CL_DEP per dependency (wait-list events, the previous command of an in-order
 * queue), CL_TRANSFER for bytes between host and device, and CL_DEVICE_EXEC from the event's
 * profiling times once the command completes. Device times are moved onto sluice's clock by
 * the offset between the host time of the enqueue and the device's QUEUED time. */
#include <stdatomic.h>
#include <stdlib.h>

#include "cl/names.h"
#include "cl/wrap.h"

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
    sluice_trace_record(SLUICE_EV_CL_CALL, code != CL_SUCCESS ? SLUICE_EVF_ERROR : 0, t0, t1 - t0,
                        fn_id(fn), (uint64_t)(int64_t)code, (uint64_t)(uintptr_t)obj);
}

struct exec_probe {
    uint64_t cmd;
    uint64_t host_enqueue_ns;
    uint64_t bytes;
    const struct sluice_cl_obj *device;
    const struct sluice_cl_backend *be;
};

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    struct exec_probe *p = arg;
    cl_ulong queued = 0, start = 0, end = 0;
    sluice_cl_pfn_clGetEventProfilingInfo prof = p->be->api.clGetEventProfilingInfo;
    if (status == CL_COMPLETE && prof != NULL &&
        prof(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL) == CL_SUCCESS &&
        prof(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
        prof(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS && end >= start &&
        start >= queued) {
        uint64_t t = p->host_enqueue_ns + (start - queued);
        sluice_trace_record(SLUICE_EV_CL_DEVICE_EXEC, 0, t, end - start, p->cmd,
                            (uint64_t)(uintptr_t)p->device, p->bytes);
    }
    free(p);
}

static void record_enqueue(sluice_cl_fn_id fn, struct sluice_cl_obj *queue, cl_int code,
                           cl_event real_event, uint64_t t0, uint64_t cmd, cl_uint nwait,
                           struct sluice_cl_obj *const *wait_list, int direction, uint64_t bytes)
{
    uint64_t t1 = sluice_now_ns();
    if (code != CL_SUCCESS) {
        sluice_trace_record(SLUICE_EV_CL_CALL, SLUICE_EVF_ERROR, t0, t1 - t0, fn_id(fn),
                            (uint64_t)(int64_t)code, (uint64_t)(uintptr_t)queue);
        return;
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
    if (real_event != NULL && queue != NULL && queue->backend->api.clSetEventCallback != NULL) {
        struct exec_probe *p = malloc(sizeof *p);
        if (p != NULL) {
            *p = (struct exec_probe){cmd, t0, direction != SLUICE_CL_NONE ? bytes : 0, device, queue->backend};
            if (queue->backend->api.clSetEventCallback(real_event, CL_COMPLETE, on_complete, p) != CL_SUCCESS)
                free(p);
        }
    }
}

void sluice_cl_enqueue_done(sluice_cl_fn_id fn, struct sluice_cl_obj *queue, cl_int code,
                            cl_event real_event, cl_event *app_event, bool traced, uint64_t t0,
                            cl_uint nwait, struct sluice_cl_obj *const *wait_list, int direction,
                            uint64_t bytes)
{
    uint64_t cmd = traced ? atomic_fetch_add_explicit(&next_cmd, 1, memory_order_relaxed) : 0;
    if (traced)
        record_enqueue(fn, queue, code, real_event, t0, cmd, nwait, wait_list, direction, bytes);
    if (real_event == NULL || code != CL_SUCCESS)
        return;
    if (app_event != NULL) {
        struct sluice_cl_obj *e = sluice_cl_wrap_new(SLUICE_CL_EVENT, real_event, queue, sluice_cl_backend_of(queue));
        if (e != NULL)
            e->cmd = cmd;
        *app_event = (cl_event)e;
    } else {
        /* An event only the trace wanted: its completion callback keeps what it needs. */
        sluice_cl_backend_of(queue)->api.clReleaseEvent(real_event);
    }
}

uint64_t sluice_cl_image_bytes(cl_mem image, const size_t *region)
{
    struct sluice_cl_obj *o = sluice_cl_valid(image, SLUICE_CL_MEM);
    size_t elem = 0;
    if (o == NULL || region == NULL || o->backend->api.clGetImageInfo == NULL ||
        o->backend->api.clGetImageInfo(o->real, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS)
        return 0;
    return (uint64_t)elem * region[0] * region[1] * region[2];
}

void sluice_cl_trace_device(const struct sluice_cl_obj *dev)
{
    char name[256] = "", platform[256] = "";
    const struct sluice_cl_api *api = &dev->backend->api;
    if (api->clGetDeviceInfo != NULL)
        api->clGetDeviceInfo(dev->real, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    const struct sluice_cl_obj *p = dev->parent;
    while (p != NULL && p->kind == SLUICE_CL_DEVICE) /* sub-device: up to the root */
        p = p->parent;
    if (p != NULL && api->clGetPlatformInfo != NULL)
        api->clGetPlatformInfo(p->real, CL_PLATFORM_NAME, sizeof platform - 1, platform, NULL);
    sluice_trace_record(SLUICE_EV_CL_DEVICE, 0, sluice_now_ns(), 0, (uint64_t)(uintptr_t)dev,
                        sluice_trace_string(name), sluice_trace_string(platform));
}
