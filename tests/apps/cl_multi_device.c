/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): one context over every device of the first
 * platform (run with POCL_DEVICES="pthread pthread pthread"), one queue per device, the work
 * split between them; then every query that returns an object is checked against the object
 * the program already holds. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: old code uses it */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void square(__global int *v, int base) {\n"
                         "  size_t i = get_global_id(0); v[i] = (int)(i + base) * (int)(i + base) % 9973;\n"
                         "}\n";

static void same(const char *what, const void *a, const void *b)
{
    printf("%-32s %s\n", what, a == b ? "same" : "DIFFERENT");
}

/* Sub-devices when the device can be partitioned. */
static void sub_devices(cl_device_id dev)
{
    cl_device_partition_property part[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[4];
    cl_uint nsub = 0;
    cl_int err = clCreateSubDevices(dev, part, 4, sub, &nsub);
    printf("clCreateSubDevices: %d\n", err);
    if (err == CL_SUCCESS) {
        cl_device_id parent;
        CHECK(clGetDeviceInfo(sub[0], CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
        same("CL_DEVICE_PARENT_DEVICE", parent, dev);
        for (cl_uint i = 0; i < nsub && i < 4; i++)
            CHECK(clReleaseDevice(sub[i]));
    }
}

int main(void)
{
    enum { N = 3000 };
    cl_platform_id platform;
    cl_uint ndev = 0;
    cl_int err;
    first_platform_devices(&platform, 0, NULL, &ndev);
    cl_device_id *dev = calloc(ndev, sizeof *dev);
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndev, dev, NULL));
    printf("devices: %u\n", ndev);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context ctx = clCreateContext(props, ndev, dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
    cl_kernel kernels[4];
    cl_uint nk = 0;
    CHECK(clCreateKernelsInProgram(prog, 4, kernels, &nk));
    printf("kernels in program: %u\n", nk);
    cl_command_queue *q = calloc(ndev, sizeof *q);
    cl_mem *buf = calloc(ndev, sizeof *buf);
    cl_kernel *k = calloc(ndev, sizeof *k);
    size_t chunk = N / ndev;
    for (cl_uint d = 0; d < ndev; d++) {
        q[d] = clCreateCommandQueue(ctx, dev[d], 0, &err);
        CHECK(err);
        buf[d] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, chunk * sizeof(int), NULL, &err);
        CHECK(err);
        k[d] = d == 0 ? kernels[0] : clCloneKernel(kernels[0], &err);
        CHECK(err);
        int base = (int)(d * chunk);
        CHECK(clSetKernelArg(k[d], 0, sizeof(cl_mem), &buf[d]));
        CHECK(clSetKernelArg(k[d], 1, sizeof base, &base));
        CHECK(clEnqueueNDRangeKernel(q[d], k[d], 1, NULL, &chunk, NULL, 0, NULL, NULL));
        CHECK(clFlush(q[d]));
    }
    int *out = calloc(N, sizeof *out);
    for (cl_uint d = 0; d < ndev; d++)
        CHECK(clEnqueueReadBuffer(q[d], buf[d], CL_TRUE, 0, chunk * sizeof(int), out + d * chunk, 0, NULL,
                                  NULL));
    long sum = 0;
    int bad = 0;
    for (size_t i = 0; i < chunk * ndev; i++) {
        sum += out[i];
        if (out[i] != (int)(i * i % 9973))
            bad++;
    }
    printf("elements=%zu wrong=%d sum=%ld\n", chunk * ndev, bad, sum);

    /* Queries that return objects give back the program's own objects. */
    cl_device_id cdev[8];
    size_t sz = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof cdev, cdev, &sz));
    printf("context devices: %zu\n", sz / sizeof(cl_device_id));
    for (cl_uint d = 0; d < ndev; d++) {
        char what[64];
        snprintf(what, sizeof what, "CL_CONTEXT_DEVICES[%u]", d);
        same(what, cdev[d], dev[d]);
        cl_device_id qd;
        cl_context qc;
        cl_platform_id dp;
        CHECK(clGetCommandQueueInfo(q[d], CL_QUEUE_DEVICE, sizeof qd, &qd, NULL));
        CHECK(clGetCommandQueueInfo(q[d], CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL));
        CHECK(clGetDeviceInfo(dev[d], CL_DEVICE_PLATFORM, sizeof dp, &dp, NULL));
        snprintf(what, sizeof what, "CL_QUEUE_DEVICE[%u]", d);
        same(what, qd, dev[d]);
        snprintf(what, sizeof what, "CL_QUEUE_CONTEXT[%u]", d);
        same(what, qc, ctx);
        snprintf(what, sizeof what, "CL_DEVICE_PLATFORM[%u]", d);
        same(what, dp, platform);
    }
    cl_context mc;
    cl_program kp;
    cl_context kc;
    CHECK(clGetMemObjectInfo(buf[0], CL_MEM_CONTEXT, sizeof mc, &mc, NULL));
    same("CL_MEM_CONTEXT", mc, ctx);
    CHECK(clGetKernelInfo(k[ndev - 1], CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL));
    same("CL_KERNEL_PROGRAM (clone)", kp, prog);
    CHECK(clGetKernelInfo(k[0], CL_KERNEL_CONTEXT, sizeof kc, &kc, NULL));
    same("CL_KERNEL_CONTEXT", kc, ctx);
    cl_device_id pd[8];
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_DEVICES, sizeof pd, pd, &sz));
    same("CL_PROGRAM_DEVICES[0]", pd[0], dev[0]);
    cl_context_properties cp[8];
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof cp, cp, &sz));
    same("CL_CONTEXT_PROPERTIES platform", (void *)cp[1], platform);
    cl_uint refs = 0;
    CHECK(clRetainContext(ctx));
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(clReleaseContext(ctx));
    printf("context refcount after retain: %s\n", refs >= 2 ? ">=2" : "WRONG");

    sub_devices(dev[0]);

    for (cl_uint d = 0; d < ndev; d++) {
        CHECK(clReleaseKernel(k[d]));
        CHECK(clReleaseMemObject(buf[d]));
        CHECK(clReleaseCommandQueue(q[d]));
    }
    for (cl_uint i = 1; i < nk; i++)
        CHECK(clReleaseKernel(kernels[i]));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    free(out);
    free(q);
    free(buf);
    free(k);
    free(dev);
    return bad != 0;
}
