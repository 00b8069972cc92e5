/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): object queries whose answers the Khronos
 * conformance suite checks, on every device of the first platform. CL_MEM_PROPERTIES and
 * CL_QUEUE_PROPERTIES_ARRAY after no, an empty and a full property list (size and values);
 * CL_QUEUE_DEVICE_DEFAULT of a host queue; the build status, log and options of a device of the
 * program before any build and while another device alone was built. Each line is one answer. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel void k(__global int *v) { v[get_global_id(0)] = 7; }\n";

/* Prints the answer to a query of 64-bit values: code, size and the values. */
static void print_u64s(const char *what, cl_int rc, size_t size, const cl_ulong *v)
{
    printf("%s: rc=%d size=%zu [", what, rc, size);
    for (size_t i = 0; rc == CL_SUCCESS && i < size / sizeof *v && i < 8; i++)
        printf("%s%#llx", i ? " " : "", (unsigned long long)v[i]);
    printf("]\n");
}

static void mem_props(cl_context ctx, const char *what, int how)
{
    cl_int err;
    cl_mem_properties empty[1] = {0};
    cl_mem m = how == 0   ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err)
               : how == 1 ? clCreateBufferWithProperties(ctx, NULL, CL_MEM_READ_WRITE, 64, NULL, &err)
                          : clCreateBufferWithProperties(ctx, empty, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    size_t size = 12345;
    cl_ulong v[8] = {0};
    cl_int rc = clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, NULL, &size);
    if (rc == CL_SUCCESS && size <= sizeof v)
        rc = clGetMemObjectInfo(m, CL_MEM_PROPERTIES, size, v, NULL);
    print_u64s(what, rc, size, v);
    /* A sub-buffer has no property list of its own. */
    cl_buffer_region reg = {0, 32};
    cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
    size = 12345;
    rc = clGetMemObjectInfo(sub, CL_MEM_PROPERTIES, 0, NULL, &size);
    printf("  its sub-buffer: rc=%d size=%zu\n", rc, size);
    clReleaseMemObject(sub);
    clReleaseMemObject(m);
}

static void queue_props(cl_context ctx, cl_device_id dev, const char *what, const cl_queue_properties *props,
                        int old_api)
{
    cl_int err;
#ifdef CL_USE_DEPRECATED_OPENCL_1_2_APIS
    cl_command_queue q = old_api ? clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err)
                                 : clCreateCommandQueueWithProperties(ctx, dev, props, &err);
#else
    (void)old_api;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
#endif
    CHECK(err);
    size_t size = 12345;
    cl_ulong v[8] = {0};
    cl_int rc = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &size);
    if (rc == CL_SUCCESS && size <= sizeof v)
        rc = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, size, v, NULL);
    print_u64s(what, rc, size, v);
    cl_command_queue dq = (cl_command_queue)(uintptr_t)1;
    size = 12345;
    rc = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof dq, &dq, &size);
    printf("  CL_QUEUE_DEVICE_DEFAULT: rc=%d size=%zu value=%s\n", rc, size,
           rc != CL_SUCCESS ? "-"
           : dq == NULL     ? "NULL"
           : dq == q        ? "this queue"
                            : "other");
    cl_command_queue_properties bits = 0;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof bits, &bits, NULL));
    printf("  CL_QUEUE_PROPERTIES: %#llx\n", (unsigned long long)bits);
    clReleaseCommandQueue(q);
}

/* built: the device that was built alone, or ndev (all or none). PoCL keeps one status for the
 * whole program, so the others of a partial build say what the built one says; distributed, a
 * device of another rank is truly not built (CL_BUILD_NONE): only their log is printed. */
static void build_info(cl_program p, cl_uint ndev, const cl_device_id *devs, const char *when, cl_uint built)
{
    for (cl_uint d = 0; d < ndev; d++) {
        cl_build_status st = 12345;
        size_t ssize = 0, lsize = 12345, osize = 12345;
        cl_int rs = clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_STATUS, sizeof st, &st, &ssize);
        cl_int rl = clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_LOG, 0, NULL, &lsize);
        char log[4096] = "";
        if (rl == CL_SUCCESS && lsize <= sizeof log)
            rl = clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_LOG, lsize, log, NULL);
        cl_int ro = clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_OPTIONS, 0, NULL, &osize);
        cl_program_binary_type bt = 12345;
        cl_int rb = clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL);
        if (built < ndev && d != built) {
            printf("%s, device %u (not built): log rc=%d size=%zu empty=%d\n", when, d, rl, lsize,
                   log[0] == 0);
            continue;
        }
        printf("%s, device %u: status rc=%d size=%zu value=%d; log rc=%d size=%zu empty=%d; options rc=%d "
               "size=%zu; binary type rc=%d value=%#llx\n",
               when, d, rs, ssize, (int)st, rl, lsize, log[0] == 0, ro, osize, rb, (unsigned long long)bt);
    }
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    first_platform_devices(&platform, 16, devs, &n);
    cl_context ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    CHECK(err);

    mem_props(ctx, "CL_MEM_PROPERTIES, clCreateBuffer", 0);
    mem_props(ctx, "CL_MEM_PROPERTIES, NULL list", 1);
    mem_props(ctx, "CL_MEM_PROPERTIES, empty list", 2);

    for (cl_uint d = 0; d < n; d++) {
        printf("-- device %u\n", d);
        cl_queue_properties empty[1] = {0};
        cl_queue_properties prof[3] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        cl_queue_properties ooo[3] = {CL_QUEUE_PROPERTIES,
                                      CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE, 0};
        queue_props(ctx, devs[d], "CL_QUEUE_PROPERTIES_ARRAY, NULL list", NULL, 0);
        queue_props(ctx, devs[d], "CL_QUEUE_PROPERTIES_ARRAY, empty list", empty, 0);
        queue_props(ctx, devs[d], "CL_QUEUE_PROPERTIES_ARRAY, profiling", prof, 0);
        queue_props(ctx, devs[d], "CL_QUEUE_PROPERTIES_ARRAY, out of order", ooo, 0);
#ifdef CL_USE_DEPRECATED_OPENCL_1_2_APIS
        queue_props(ctx, devs[d], "CL_QUEUE_PROPERTIES_ARRAY, clCreateCommandQueue", NULL, 1);
#endif
    }

    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    build_info(p, n, devs, "before any build", n);
    /* Only the last device: the others of the program are not built. */
    CHECK(clBuildProgram(p, 1, &devs[n - 1], "-DONE_DEVICE", NULL, NULL));
    build_info(p, n, devs, "last device built", n - 1);
    CHECK(clBuildProgram(p, n, devs, NULL, NULL, NULL));
    build_info(p, n, devs, "all built", n);
    /* A kernel of the program runs on every device once all are built. */
    cl_kernel k = clCreateKernel(p, "k", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(cl_int), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    for (cl_uint d = 0; d < n; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        CHECK(err);
        size_t g = 4;
        cl_int out[4] = {0};
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        printf("kernel on device %u: %d %d %d %d\n", d, out[0], out[1], out[2], out[3]);
        clReleaseCommandQueue(q);
    }
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseContext(ctx);
    return 0;
}
