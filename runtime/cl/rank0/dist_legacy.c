/* SPDX-License-Identifier: MIT */
/* The OpenCL 1.0 commands that OpenCL 1.2 replaced, for distributed OpenCL: each is its 1.2
 * equivalent on the command slots below (installed after them), as the specification defines
 * it, so old programs take the same asynchronous path as new ones.
 *   clEnqueueTask(q, k)            = clEnqueueNDRangeKernel of one work-item
 *   clEnqueueMarker(q, e)          = clEnqueueMarkerWithWaitList(q, 0, NULL, e)
 *   clEnqueueBarrier(q)            = clEnqueueBarrierWithWaitList(q, 0, NULL, NULL)
 *   clEnqueueWaitForEvents(q, n, l) = clEnqueueBarrierWithWaitList(q, n, l, NULL) */
#include "cl/rank0/dist_internal.h"

static struct sluice_cl_api below;

static cl_int CL_API_CALL task(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event *wl,
                               cl_event *ev)
{
    static const size_t one = 1;
    return below.clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, nwait, wl, ev);
}

static cl_int CL_API_CALL marker(cl_command_queue q, cl_event *ev)
{
    SLUICE_RETURN_ERROR_ON(ev == NULL, CL_INVALID_VALUE, "no event (NULL)");
    return below.clEnqueueMarkerWithWaitList(q, 0, NULL, ev);
}

static cl_int CL_API_CALL barrier(cl_command_queue q)
{
    return below.clEnqueueBarrierWithWaitList(q, 0, NULL, NULL);
}

static cl_int CL_API_CALL wait_for_events(cl_command_queue q, cl_uint n, const cl_event *list)
{
    SLUICE_RETURN_ERROR_ON(n == 0 || list == NULL, CL_INVALID_VALUE, "n == 0 || list == NULL");
    return below.clEnqueueBarrierWithWaitList(q, n, list, NULL);
}

void dist_legacy_install(struct sluice_cl_api *api)
{
    below = *api;
    if (below.clEnqueueNDRangeKernel != NULL)
        api->clEnqueueTask = task;
    if (below.clEnqueueMarkerWithWaitList != NULL)
        api->clEnqueueMarker = marker;
    if (below.clEnqueueBarrierWithWaitList != NULL) {
        api->clEnqueueBarrier = barrier;
        api->clEnqueueWaitForEvents = wait_for_events;
    }
}
