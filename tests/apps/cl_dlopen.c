/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice) that does not call the loader through the
 * dynamic linker: it dlopen()s libOpenCL.so.1 and looks every entry point up with dlsym, as
 * plugin-style applications and language bindings do. Vector addition, checked on the host. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlvsym */
#endif
#include "cl_test_util.h"
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define ENTRY_POINTS(X)                                                                                      \
    X(clGetPlatformIDs)                                                                                      \
    X(clGetDeviceIDs)                                                                                        \
    X(clCreateContext)                                                                                       \
    X(clCreateCommandQueueWithProperties)                                                                    \
    X(clCreateBuffer)                                                                                        \
    X(clCreateProgramWithSource)                                                                             \
    X(clBuildProgram)                                                                                        \
    X(clCreateKernel)                                                                                        \
    X(clSetKernelArg)                                                                                        \
    X(clEnqueueNDRangeKernel)                                                                                \
    X(clEnqueueReadBuffer)                                                                                   \
    X(clReleaseMemObject)                                                                                    \
    X(clReleaseKernel)                                                                                       \
    X(clReleaseProgram)                                                                                      \
    X(clReleaseCommandQueue)                                                                                 \
    X(clReleaseContext)                                                                                      \
    X(clGetContextInfo)

#define DECLARE(fn) static __typeof__(&fn) p_##fn;
ENTRY_POINTS(DECLARE)

static const char *src = "__kernel void twice(__global const int *a, __global int *b) {\n"
                         "  b[get_global_id(0)] = 2 * a[get_global_id(0)];\n}\n";

int main(void)
{
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
#define LOOKUP(fn)                                                                                           \
    if ((p_##fn = (__typeof__(&fn))dlsym(lib, #fn)) == NULL) {                                               \
        fprintf(stderr, "dlsym %s failed\n", #fn);                                                           \
        return 1;                                                                                            \
    }
    ENTRY_POINTS(LOOKUP)
    printf("resolved all entry points\n");
    enum { N = 2048 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(p_clGetPlatformIDs(1, &platform, NULL));
    CHECK(p_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context ctx = p_clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_device_id cd;
    CHECK(p_clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof cd, &cd, NULL));
    printf("context device %s\n", cd == device ? "same" : "DIFFERENT");
    /* The loader's own versioned symbol (ocl-icd versions them OPENCL_1.0): the call dispatches
     * through the object's ICD table. */
    __typeof__(&clGetDeviceInfo) v_info =
        (__typeof__(&clGetDeviceInfo))dlvsym(lib, "clGetDeviceInfo", "OPENCL_1.0");
    if (v_info != NULL) {
        cl_uint units = 0;
        cl_int r = v_info(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
        printf("versioned loader symbol: ret %d, units > 0: %d\n", r, units > 0);
    } else {
        printf("versioned loader symbol: absent\n");
    }
    cl_command_queue q = p_clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    int a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = i - 1000;
    cl_mem da = p_clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    CHECK(err);
    cl_mem db = p_clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof b, NULL, &err);
    CHECK(err);
    cl_program prog = p_clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(p_clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k = p_clCreateKernel(prog, "twice", &err);
    CHECK(err);
    CHECK(p_clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(p_clSetKernelArg(k, 1, sizeof db, &db));
    size_t n = N;
    CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(p_clEnqueueReadBuffer(q, db, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL));
    int bad = 0;
    long sum = 0;
    for (int i = 0; i < N; i++) {
        bad += b[i] != 2 * a[i];
        sum += b[i];
    }
    printf("wrong=%d sum=%ld\n", bad, sum);
    p_clReleaseKernel(k);
    p_clReleaseProgram(prog);
    p_clReleaseMemObject(da);
    p_clReleaseMemObject(db);
    p_clReleaseCommandQueue(q);
    p_clReleaseContext(ctx);
    dlclose(lib);
    return bad != 0;
}
