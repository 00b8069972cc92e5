/* SPDX-License-Identifier: MIT */
/* Events of the distributed backend, as the program sees them: all answered on rank 0 from the
 * scheduler's records (dist_sched.c), which the DONE records of each rank keep up to date. So a
 * status query, a wait or a callback costs no message; profiling times are on rank 0's clock.
 * User events live on rank 0 only: commands of any rank that wait for one are released by a
 * NOTIFY when it is set, and a negative status fails them. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_internal.h"

struct dist_event *dist_sched_user_event(struct dist_context *ctx);
cl_int dist_sched_set_user(struct dist_event *e, cl_int status);
cl_int dist_sched_status(struct dist_event *e);
cl_int dist_sched_times(struct dist_event *e, uint64_t t[4]);
cl_int dist_sched_callback(struct dist_event *e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                           void *user_data);

static cl_int CL_API_CALL event_info(cl_event event, cl_event_info param, size_t size, void *value,
                                     size_t *size_ret)
{
    struct dist_event *e = (struct dist_event *)event;
    SLUICE_RETURN_ERROR_ON(e == NULL, CL_INVALID_EVENT, "no event (NULL)");
    switch (param) {
    case CL_EVENT_COMMAND_QUEUE:
        return dist_answer(&e->queue, sizeof e->queue, size, value, size_ret);
    case CL_EVENT_CONTEXT:
        return dist_answer(&e->ctx, sizeof e->ctx, size, value, size_ret);
    case CL_EVENT_COMMAND_TYPE:
        return dist_answer(&e->type, sizeof e->type, size, value, size_ret);
    case CL_EVENT_REFERENCE_COUNT: {
        /* the program's references: the scheduler's own (in flight) do not count */
        long n = __atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) - (dist_sched_status(e) > CL_COMPLETE ? 1 : 0);
        cl_uint v = (cl_uint)(n > 0 ? n : 1);
        return dist_answer(&v, sizeof v, size, value, size_ret);
    }
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
        cl_int st = dist_sched_status(e);
        return dist_answer(&st, sizeof st, size, value, size_ret);
    }
    default:
        return CL_INVALID_VALUE;
    }
}

static cl_int CL_API_CALL profiling_info(cl_event event, cl_profiling_info param, size_t size, void *value,
                                         size_t *size_ret)
{
    struct dist_event *e = (struct dist_event *)event;
    SLUICE_RETURN_ERROR_ON(e == NULL, CL_INVALID_EVENT, "no event (NULL)");
    if (e->user)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    uint64_t t[4];
    cl_int r = dist_sched_times(e, t);
    if (r != CL_SUCCESS)
        return r;
    cl_ulong v;
    switch (param) {
    case CL_PROFILING_COMMAND_QUEUED:
        v = t[0];
        break;
    case CL_PROFILING_COMMAND_SUBMIT:
        v = t[1];
        break;
    case CL_PROFILING_COMMAND_START:
        v = t[2];
        break;
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE:
        v = t[3];
        break;
    default:
        return CL_INVALID_VALUE;
    }
    return dist_answer(&v, sizeof v, size, value, size_ret);
}

static cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event *evs)
{
    SLUICE_RETURN_ERROR_ON(n == 0 || evs == NULL, CL_INVALID_VALUE, "n == 0 || evs == NULL");
    for (cl_uint i = 0; i < n; i++)
        SLUICE_RETURN_ERROR_ON(evs[i] == NULL, CL_INVALID_EVENT, "evs[i] == NULL");
    cl_int r = CL_SUCCESS;
    for (cl_uint i = 0; i < n; i++)
        if (dist_sched_wait_event((struct dist_event *)evs[i]) < 0)
            r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return r;
}

static cl_int CL_API_CALL set_event_callback(cl_event event, cl_int type,
                                             void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *user_data)
{
    struct dist_event *e = (struct dist_event *)event;
    SLUICE_RETURN_ERROR_ON(e == NULL, CL_INVALID_EVENT, "no event (NULL)");
    SLUICE_RETURN_ERROR_ON(
        fn == NULL || (type != CL_COMPLETE && type != CL_SUBMITTED && type != CL_RUNNING), CL_INVALID_VALUE,
        "fn == NULL || (type != CL_COMPLETE && type != CL_SUBMITTED && type != CL_RUNNING)");
    return dist_sched_callback(e, type, fn, user_data);
}

DIST_RETAIN_RELEASE(event, cl_event, struct dist_event, dist_sched_release, CL_INVALID_EVENT)

static cl_event CL_API_CALL create_user_event(cl_context context, cl_int *err)
{
    struct dist_context *c = (struct dist_context *)context;
    struct dist_event *e = c != NULL ? dist_sched_user_event(c) : NULL;
    if (err != NULL)
        *err = c == NULL ? CL_INVALID_CONTEXT : e == NULL ? CL_OUT_OF_HOST_MEMORY : CL_SUCCESS;
    return (cl_event)e;
}

static cl_int CL_API_CALL set_user_event_status(cl_event event, cl_int status)
{
    SLUICE_RETURN_ERROR_ON(event == NULL, CL_INVALID_EVENT, "no event (NULL)");
    return dist_sched_set_user((struct dist_event *)event, status);
}

void dist_event_install(struct sluice_cl_api *api)
{
    api->clWaitForEvents = wait_for_events;
    api->clGetEventInfo = event_info;
    api->clGetEventProfilingInfo = profiling_info;
    api->clRetainEvent = retain_event;
    api->clReleaseEvent = release_event;
    api->clSetEventCallback = set_event_callback;
    api->clCreateUserEvent = create_user_event;
    api->clSetUserEventStatus = set_user_event_status;
}
