/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): a burst of 1000 small kernels enqueued
 * without waiting, each adding to one counter, then one clFinish and a check. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void bump(__global int *c, int by) { c[get_global_id(0)] += by; }\n";

int main(void)
{
    enum { KERNELS = 1000, N = 4 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    first_platform_devices(&platform, 1, &device, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "bump", &err);
    CHECK(err);
    int zero[N] = {0};
    cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof c, &c));
    size_t n = N;
    for (int i = 1; i <= KERNELS; i++) {
        CHECK(clSetKernelArg(k, 1, sizeof i, &i));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    }
    CHECK(clFinish(q));
    int out[N];
    CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    printf("kernels=%d counter=%d expected=%d\n", KERNELS, out[0], KERNELS * (KERNELS + 1) / 2);
    CHECK(clReleaseMemObject(c));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return out[0] != KERNELS * (KERNELS + 1) / 2;
}
