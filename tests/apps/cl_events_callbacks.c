/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): event, build, memory-destructor and
 * context-destructor callbacks, event queries, and profiling on a queue that asked for it
 * and on one that did not. Prints what each callback received, never addresses or times. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *src = "__kernel void inc(__global int *v) { v[get_global_id(0)] += 1; }\n";

static cl_program the_program;
static cl_mem the_buffer;
static cl_context the_context;
static cl_event the_event;
static atomic_int build_cb, mem_cb, ctx_cb, event_cb, event_cb_status = 99;

static void CL_CALLBACK on_build(cl_program p, void *ud)
{
    atomic_store(&build_cb, (p == the_program && ud == &build_cb) ? 1 : -1);
}
static void CL_CALLBACK on_mem_destroyed(cl_mem m, void *ud)
{
    atomic_store(&mem_cb, (m == the_buffer && ud == &mem_cb) ? 1 : -1);
}
static void CL_CALLBACK on_ctx_destroyed(cl_context c, void *ud)
{
    atomic_store(&ctx_cb, (c == the_context && ud == &ctx_cb) ? 1 : -1);
}
static void CL_CALLBACK on_event(cl_event e, cl_int status, void *ud)
{
    cl_int st = 0;
    /* A callback may query the event it receives. */
    int ok = e == the_event && ud == &event_cb &&
             clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS;
    atomic_store(&event_cb_status, status);
    atomic_store(&event_cb, ok ? 1 : -1);
}

static void wait_for(atomic_int *flag)
{
    for (int i = 0; i < 5000 && atomic_load(flag) == 0; i++)
        usleep(1000);
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    first_platform_devices(&platform, 1, &device, NULL);
    the_context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    CHECK(clSetContextDestructorCallback(the_context, on_ctx_destroyed, &ctx_cb));
    cl_queue_properties prof_props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue qp = clCreateCommandQueueWithProperties(the_context, device, prof_props, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(the_context, device, NULL, &err);
    CHECK(err);
    cl_command_queue_properties p1 = 99, p2 = 99;
    size_t arr_size = 99;
    CHECK(clGetCommandQueueInfo(qp, CL_QUEUE_PROPERTIES, sizeof p1, &p1, NULL));
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p2, &p2, NULL));
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &arr_size));
    printf("queue properties: profiled=%#llx plain=%#llx plain-array-bytes=%zu\n", (unsigned long long)p1,
           (unsigned long long)p2, arr_size);

    the_program = clCreateProgramWithSource(the_context, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(the_program, 1, &device, NULL, on_build, &build_cb));
    wait_for(&build_cb);
    printf("build callback: %d\n", atomic_load(&build_cb));
    cl_kernel k = clCreateKernel(the_program, "inc", &err);
    CHECK(err);

    int host[256] = {0};
    the_buffer =
        clCreateBuffer(the_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    CHECK(err);
    CHECK(clSetMemObjectDestructorCallback(the_buffer, on_mem_destroyed, &mem_cb));
    CHECK(clSetKernelArg(k, 0, sizeof the_buffer, &the_buffer));
    size_t n = 256;
    cl_event kev;
    CHECK(clEnqueueNDRangeKernel(qp, k, 1, NULL, &n, NULL, 0, NULL, &kev));
    the_event = kev;
    CHECK(clSetEventCallback(kev, CL_COMPLETE, on_event, &event_cb));
    cl_event wev;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &kev, &wev));
    CHECK(clWaitForEvents(1, &wev));
    wait_for(&event_cb);
    printf("event callback: %d status=%d\n", atomic_load(&event_cb), atomic_load(&event_cb_status));

    cl_command_queue eq;
    cl_context ec;
    cl_command_type ct;
    cl_int st;
    CHECK(clGetEventInfo(wev, CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL));
    CHECK(clGetEventInfo(wev, CL_EVENT_CONTEXT, sizeof ec, &ec, NULL));
    CHECK(clGetEventInfo(wev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL));
    CHECK(clGetEventInfo(wev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    printf("event queue %s, context %s, type %#x, status %d\n", eq == q ? "same" : "DIFFERENT",
           ec == the_context ? "same" : "DIFFERENT", ct, st);

    cl_ulong t_start = 0, t_end = 0;
    cl_int r1 = clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_START, sizeof t_start, &t_start, NULL);
    cl_int r2 = clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_END, sizeof t_end, &t_end, NULL);
    printf("profiling on profiled queue: %d %d ordered=%d\n", r1, r2, t_end >= t_start);
    cl_int r3 = clGetEventProfilingInfo(wev, CL_PROFILING_COMMAND_START, sizeof t_start, &t_start, NULL);
    printf("profiling on plain queue: %d\n", r3);

    CHECK(clEnqueueReadBuffer(q, the_buffer, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    printf("host[0]=%d host[255]=%d\n", host[0], host[255]);

    CHECK(clReleaseEvent(kev));
    CHECK(clReleaseEvent(wev));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(the_buffer));
    CHECK(clReleaseProgram(the_program));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseCommandQueue(qp));
    wait_for(&mem_cb);
    printf("memory destructor callback: %d\n", atomic_load(&mem_cb));
    CHECK(clReleaseContext(the_context));
    wait_for(&ctx_cb);
    printf("context destructor callback: %d\n", atomic_load(&ctx_cb));
    return 0;
}
