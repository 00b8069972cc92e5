/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice) written against the OpenCL 1.0/1.1 command
 * API: clEnqueueTask, clEnqueueMarker, clEnqueueWaitForEvents and clEnqueueBarrier, over the
 * first two devices of the first platform (or one, twice). Device 0 increments a counter three
 * times; device 1 waits for device 0's marker, increments it once more and reads it back. The
 * wait is clWaitForEvents on the host, or with --wait-for-events the device-side
 * clEnqueueWaitForEvents (PoCL 3 does not implement that one: "unimplemented"). */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel void inc(__global int *a) { a[0] += 1; }\n";

int main(int argc, char **argv)
{
    int device_wait = argc > 1 && strcmp(argv[1], "--wait-for-events") == 0;
    cl_platform_id platform;
    cl_device_id dev[2];
    cl_uint nd = 0;
    cl_int err;
    first_platform_devices(&platform, 2, dev, &nd);
    if (nd < 2)
        dev[1] = dev[0];
    cl_context ctx = clCreateContext(NULL, nd < 2 ? 1 : 2, dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q0 = clCreateCommandQueue(ctx, dev[0], 0, &err);
    CHECK(err);
    cl_command_queue q1 = clCreateCommandQueue(ctx, dev[1], 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    int zero = 0, out = -1;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));

    for (int i = 0; i < 3; i++)
        CHECK(clEnqueueTask(q0, k, 0, NULL, NULL));
    cl_event done0;
    CHECK(clEnqueueMarker(q0, &done0));
    CHECK(clFlush(q0));
    if (device_wait)
        CHECK(clEnqueueWaitForEvents(q1, 1, &done0));
    else
        CHECK(clWaitForEvents(1, &done0));
    CHECK(clEnqueueTask(q1, k, 0, NULL, NULL));
    CHECK(clEnqueueBarrier(q1));
    CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL));
    cl_int st = 0;
    CHECK(clGetEventInfo(done0, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    cl_command_type type = 0;
    CHECK(clGetEventInfo(done0, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    printf("counter after 3 tasks on device 0 and 1 on device %d: %d\n", nd < 2 ? 0 : 1, out);
    printf("marker: status %d, command type %s\n", st,
           type == CL_COMMAND_MARKER ? "CL_COMMAND_MARKER" : "other");
    printf("clEnqueueMarker without an event: %d\n", clEnqueueMarker(q0, NULL));
    if (device_wait)
        printf("clEnqueueWaitForEvents with no events: %d\n", clEnqueueWaitForEvents(q0, 0, NULL));
    CHECK(clFinish(q0));
    CHECK(clFinish(q1));
    clReleaseEvent(done0);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q1);
    clReleaseCommandQueue(q0);
    clReleaseContext(ctx);
    return out == 4 ? 0 : 1;
}
