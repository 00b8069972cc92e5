/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): vector addition on the first device of the
 * first platform, results checked on the host and summarised on stdout. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void add(__global const float *a, __global const float *b, __global float *c, float s) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + s * b[i];\n"
    "}\n";

int main(void)
{
    enum { N = 1 << 16 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    char name[256];
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL));
    printf("platform: %s\n", name);
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(N - i);
    }
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *a, a, &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, N * sizeof *b, NULL, &err);
    CHECK(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof *c, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, db, CL_TRUE, 0, N * sizeof *b, b, 0, NULL, NULL));
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "add", &err);
    CHECK(err);
    float s = 2.0f;
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(k, 3, sizeof s, &s));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, N * sizeof *c, c, 0, NULL, NULL));
    CHECK(clFinish(q));
    int bad = 0;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        if (c[i] != a[i] + s * b[i])
            bad++;
        sum += c[i];
    }
    printf("n=%d wrong=%d sum=%.1f c[1]=%.1f c[N-1]=%.1f\n", N, bad, sum, c[1], c[N - 1]);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(a);
    free(b);
    free(c);
    return bad != 0;
}
