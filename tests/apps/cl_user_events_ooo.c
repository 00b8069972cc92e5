/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): an out-of-order queue whose commands wait
 * on a user event and on each other, markers and barriers with wait lists, a failed user
 * event propagating to its dependents. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void add(__global int *v, int x) { v[get_global_id(0)] += x; }\n";

static cl_int status_of(cl_event e)
{
    cl_int st = 0;
    CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    return st;
}

int main(void)
{
    enum { N = 1024 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k1 = clCreateKernel(prog, "add", &err);
    CHECK(err);
    cl_kernel k2 = clCreateKernel(prog, "add", &err);
    CHECK(err);
    int zero[N] = {0};
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    CHECK(err);

    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_context gc;
    CHECK(clGetEventInfo(gate, CL_EVENT_CONTEXT, sizeof gc, &gc, NULL));
    printf("user event context %s\n", gc == ctx ? "same" : "DIFFERENT");
    int x1 = 5, x2 = 100;
    size_t n = N;
    cl_event e1, e2, marker, barrier;
    CHECK(clSetKernelArg(k1, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k1, 1, sizeof x1, &x1));
    CHECK(clEnqueueNDRangeKernel(q, k1, 1, NULL, &n, NULL, 1, &gate, &e1));
    CHECK(clSetKernelArg(k2, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k2, 1, sizeof x2, &x2));
    CHECK(clEnqueueNDRangeKernel(q, k2, 1, NULL, &n, NULL, 1, &e1, &e2));
    CHECK(clEnqueueMarkerWithWaitList(q, 1, &e2, &marker));
    CHECK(clFlush(q));
    printf("before gate: k1 queued-or-submitted %d, k2 not complete %d\n", status_of(e1) > CL_RUNNING,
           status_of(e2) != CL_COMPLETE);
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &marker));
    printf("after gate: k1 %d k2 %d marker %d\n", status_of(e1), status_of(e2), status_of(marker));
    int out[N];
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, &barrier));
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 1, &barrier, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += out[i] != 105;
    printf("values wrong: %d (out[0]=%d)\n", bad, out[0]);

    /* A user event set to an error: the command waiting on it does not run. */
    cl_event gate2 = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_event e3;
    CHECK(clEnqueueNDRangeKernel(q, k1, 1, NULL, &n, NULL, 1, &gate2, &e3));
    CHECK(clFlush(q));
    CHECK(clSetUserEventStatus(gate2, -42));
    cl_int wait_ret = clWaitForEvents(1, &e3);
    printf("failed gate: wait returned %s, status negative %d\n",
           wait_ret == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
               ? "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"
               : "other",
           status_of(e3) < 0);
    CHECK(clFinish(q));
    cl_event evs[] = {gate, e1, e2, marker, barrier, gate2, e3};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        CHECK(clReleaseEvent(evs[i]));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseKernel(k1));
    CHECK(clReleaseKernel(k2));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return 0;
}
