/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): contexts from a device type. For each type
 * (ALL, CPU, GPU, DEFAULT, ACCELERATOR, an invalid one), with the platform named and without
 * properties, it prints the error, the devices of the context (as positions in the platform's
 * device list), its properties, and runs a kernel on every device of the context. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void idx(__global int *v, int base) { v[get_global_id(0)] = base + "
                         "(int)get_global_id(0); }\n";

static cl_device_id all[64];
static cl_uint nall;

static int position(cl_device_id d)
{
    for (cl_uint i = 0; i < nall; i++)
        if (all[i] == d)
            return (int)i;
    return -1;
}

/* One kernel per device of the context, each writing its own values; checked on the host. */
static void run_on_each(cl_context ctx, cl_uint n, const cl_device_id *devs)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "idx", &err);
    CHECK(err);
    enum { N = 1024 };
    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[i], NULL, &err);
        CHECK(err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof(int), NULL, &err);
        CHECK(err);
        int base = 1000 * (int)(i + 1);
        CHECK(clSetKernelArg(k, 0, sizeof b, &b));
        CHECK(clSetKernelArg(k, 1, sizeof base, &base));
        size_t global = N;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        int out[N];
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        int wrong = 0;
        for (int j = 0; j < N; j++)
            wrong += out[j] != base + j;
        printf("    kernel on device %d: wrong=%d\n", position(devs[i]), wrong);
        CHECK(clReleaseMemObject(b));
        CHECK(clReleaseCommandQueue(q));
    }
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
}

static void try_type(cl_platform_id platform, const char *what, cl_device_type type, int named)
{
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_int err = 12345;
    cl_context ctx = clCreateContextFromType(named ? props : NULL, type, NULL, NULL, &err);
    printf("%s (%s): err=%d\n", what, named ? "platform named" : "no properties", err);
    if (err != CL_SUCCESS)
        return; /* PoCL 3.1 returns an empty context with CL_DEVICE_NOT_FOUND; releasing it can
                 * trip an assertion in PoCL, so it is left alone */
    cl_uint n = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL));
    cl_device_id devs[64];
    size_t bytes = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &bytes));
    printf("  devices: %u (%zu bytes):", n, bytes);
    for (cl_uint i = 0; i < n; i++)
        printf(" %d", position(devs[i]));
    printf("\n");
    cl_context_properties got[8] = {0};
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof got, got, &bytes));
    printf("  properties: %zu bytes%s\n", bytes,
           bytes >= 2 * sizeof got[0] && got[0] == CL_CONTEXT_PLATFORM
               ? (got[1] == (cl_context_properties)platform ? ", the platform" : ", ANOTHER platform")
               : "");
    cl_uint refs = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    printf("  reference count %u\n", refs);
    run_on_each(ctx, n, devs);
    CHECK(clReleaseContext(ctx));
}

int main(void)
{
    cl_platform_id platform;
    first_platform_devices(&platform, 64, all, &nall);
    printf("platform devices: %u\n", nall);
    static const struct {
        const char *name;
        cl_device_type type;
    } types[] = {
        {"ALL", CL_DEVICE_TYPE_ALL},
        {"CPU", CL_DEVICE_TYPE_CPU},
        {"GPU", CL_DEVICE_TYPE_GPU},
        {"DEFAULT", CL_DEVICE_TYPE_DEFAULT},
        {"ACCELERATOR", CL_DEVICE_TYPE_ACCELERATOR},
        {"CPU|GPU", CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU},
        {"invalid 0", 0},
        {"invalid 1<<20", 1u << 20},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        for (int named = 1; named >= 0; named--)
            try_type(platform, types[i].name, types[i].type, named);
    /* A platform property that names no platform. */
    static int not_a_platform[16];
    cl_context_properties bad[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)not_a_platform, 0};
    cl_int err = 0;
    cl_context c = clCreateContextFromType(bad, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
    printf("bad platform: err=%d %s\n", err, c ? "context" : "none");
    return 0;
}
