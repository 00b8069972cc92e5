/* SPDX-License-Identifier: MIT */
/* CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY and CL_MEM_HOST_NO_ACCESS in distributed OpenCL.
 * The real buffers on the ranks are created without them (their own transfers must still read
 * and write them), so rank 0 enforces them: a layer over the command slots of the distributed
 * backend, installed after them, that refuses a host read or write the flags forbid with
 * CL_INVALID_OPERATION (as PoCL does locally) and otherwise calls the slot below. */
#include "cl/rank0/dist_internal.h"

static struct sluice_cl_api below;

static cl_int CL_API_CALL read_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off, size_t size,
                                      void *ptr, cl_uint nwait, const cl_event *wl, cl_event *ev)
{
    SLUICE_RETURN_ERROR_ON(
        m != NULL && dist_mem_host_access((struct dist_mem *)m, true, false) != CL_SUCCESS,
        CL_INVALID_OPERATION,
        "m != NULL && dist_mem_host_access((struct dist_mem *)m, true, false) != CL_SUCCESS");
    return below.clEnqueueReadBuffer(q, m, blocking, off, size, ptr, nwait, wl, ev);
}

static cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off,
                                       size_t size, const void *ptr, cl_uint nwait, const cl_event *wl,
                                       cl_event *ev)
{
    SLUICE_RETURN_ERROR_ON(
        m != NULL && dist_mem_host_access((struct dist_mem *)m, false, true) != CL_SUCCESS,
        CL_INVALID_OPERATION,
        "m != NULL && dist_mem_host_access((struct dist_mem *)m, false, true) != CL_SUCCESS");
    return below.clEnqueueWriteBuffer(q, m, blocking, off, size, ptr, nwait, wl, ev);
}

static cl_int CL_API_CALL read_rect(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t *bo,
                                    const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                    size_t hrp, size_t hsp, void *ptr, cl_uint nwait, const cl_event *wl,
                                    cl_event *ev)
{
    SLUICE_RETURN_ERROR_ON(
        m != NULL && dist_mem_host_access((struct dist_mem *)m, true, false) != CL_SUCCESS,
        CL_INVALID_OPERATION,
        "m != NULL && dist_mem_host_access((struct dist_mem *)m, true, false) != CL_SUCCESS");
    return below.clEnqueueReadBufferRect(q, m, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait, wl,
                                         ev);
}

static cl_int CL_API_CALL write_rect(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t *bo,
                                     const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                     size_t hrp, size_t hsp, const void *ptr, cl_uint nwait,
                                     const cl_event *wl, cl_event *ev)
{
    SLUICE_RETURN_ERROR_ON(
        m != NULL && dist_mem_host_access((struct dist_mem *)m, false, true) != CL_SUCCESS,
        CL_INVALID_OPERATION,
        "m != NULL && dist_mem_host_access((struct dist_mem *)m, false, true) != CL_SUCCESS");
    return below.clEnqueueWriteBufferRect(q, m, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait, wl,
                                          ev);
}

static void *CL_API_CALL map_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags,
                                    size_t off, size_t size, cl_uint nwait, const cl_event *wl, cl_event *ev,
                                    cl_int *errcode_ret)
{
    bool rd = (flags & CL_MAP_READ) != 0, wr = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
    if (m != NULL && dist_mem_host_access((struct dist_mem *)m, rd, wr) != CL_SUCCESS) {
        dist_set_err(errcode_ret, CL_INVALID_OPERATION);
        return NULL;
    }
    return below.clEnqueueMapBuffer(q, m, blocking, flags, off, size, nwait, wl, ev, errcode_ret);
}

void dist_host_access_install(struct sluice_cl_api *api)
{
    below = *api;
#define LAYER(slot, fn)                                                                                      \
    if (api->slot != NULL)                                                                                   \
        api->slot = fn;
    LAYER(clEnqueueReadBuffer, read_buffer)
    LAYER(clEnqueueWriteBuffer, write_buffer)
    LAYER(clEnqueueReadBufferRect, read_rect)
    LAYER(clEnqueueWriteBufferRect, write_rect)
    LAYER(clEnqueueMapBuffer, map_buffer)
#undef LAYER
}
