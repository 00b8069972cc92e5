/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): map/unmap for reading and writing, a
 * USE_HOST_PTR buffer, sub-buffers used as kernel arguments, copies and fills, rect reads. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel void scale(__global int *v, int f) { v[get_global_id(0)] *= f; }\n";

int main(void)
{
    enum { N = 4096 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    first_platform_devices(&platform, 1, &device, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    size_t align = align_bits / 8;

    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, N * sizeof(int), NULL, &err);
    CHECK(err);
    int *m = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, N * sizeof(int), 0, NULL,
                                NULL, &err);
    CHECK(err);
    for (int i = 0; i < N; i++)
        m[i] = i;
    CHECK(clEnqueueUnmapMemObject(q, buf, m, 0, NULL, NULL));

    /* Two sub-buffers, each scaled by its own kernel launch. */
    size_t half = (N * sizeof(int) / 2 / align) * align;
    cl_buffer_region r0 = {0, half}, r1 = {half, N * sizeof(int) - half};
    cl_mem s0 = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r0, &err);
    CHECK(err);
    cl_mem s1 = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
    CHECK(err);
    cl_mem assoc;
    size_t off = 99;
    CHECK(clGetMemObjectInfo(s1, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
    CHECK(clGetMemObjectInfo(s1, CL_MEM_OFFSET, sizeof off, &off, NULL));
    printf("sub-buffer parent %s, offset matches %d\n", assoc == buf ? "same" : "DIFFERENT", off == half);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK(err);
    int f0 = 2, f1 = 3;
    size_t n0 = half / sizeof(int), n1 = N - n0;
    CHECK(clSetKernelArg(k, 0, sizeof s0, &s0));
    CHECK(clSetKernelArg(k, 1, sizeof f0, &f0));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n0, NULL, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof s1, &s1));
    CHECK(clSetKernelArg(k, 1, sizeof f1, &f1));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n1, NULL, 0, NULL, NULL));

    /* Release the parent first: the sub-buffers keep it alive. */
    CHECK(clReleaseMemObject(buf));
    int *r = clEnqueueMapBuffer(q, s1, CL_TRUE, CL_MAP_READ, 0, 16 * sizeof(int), 0, NULL, NULL, &err);
    CHECK(err);
    printf("s1 first: %d %d\n", r[0], r[15]);
    CHECK(clEnqueueUnmapMemObject(q, s1, r, 0, NULL, NULL));
    CHECK(clGetMemObjectInfo(s1, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
    printf("parent after release: %s\n", assoc == buf ? "same" : "DIFFERENT");

    /* USE_HOST_PTR, copies, fills and a rect read. */
    static int host[N];
    cl_mem hb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof host, host, &err);
    CHECK(err);
    int pattern = 7;
    CHECK(clEnqueueFillBuffer(q, hb, &pattern, sizeof pattern, 0, sizeof host, 0, NULL, NULL));
    CHECK(clEnqueueCopyBuffer(q, s0, hb, 0, 0, 64 * sizeof(int), 0, NULL, NULL));
    int *hm = clEnqueueMapBuffer(q, hb, CL_TRUE, CL_MAP_READ, 0, sizeof host, 0, NULL, NULL, &err);
    CHECK(err);
    printf("use-host-ptr map is host+0: %d, values %d %d %d\n", hm == host, hm[0], hm[63], hm[64]);
    CHECK(clEnqueueUnmapMemObject(q, hb, hm, 0, NULL, NULL));
    int rect[4 * 4];
    size_t bo[3] = {0, 1, 0}, ho[3] = {0, 0, 0}, reg[3] = {4 * sizeof(int), 4, 1};
    CHECK(clEnqueueReadBufferRect(q, s1, CL_TRUE, bo, ho, reg, 16 * sizeof(int), 0, 4 * sizeof(int), 0, rect,
                                  0, NULL, NULL));
    long sum = 0;
    for (int i = 0; i < 16; i++)
        sum += rect[i];
    printf("rect sum %ld\n", sum);
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(hb));
    CHECK(clReleaseMemObject(s0));
    CHECK(clReleaseMemObject(s1));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return 0;
}
