/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): extension entry points obtained through
 * clGetExtensionFunctionAddressForPlatform and clGetExtensionFunctionAddress: the ICD's
 * platform enumeration (cl_khr_icd) and, where the device offers cl_khr_command_buffer, a
 * recorded command buffer with a kernel and a copy, replayed twice. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clGetExtensionFunctionAddress, still used by old code */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel void inc(__global int *v) { v[get_global_id(0)] += 1; }\n";

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    first_platform_devices(&platform, 1, &device, NULL);

    clIcdGetPlatformIDsKHR_fn icd_ids = (clIcdGetPlatformIDsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clIcdGetPlatformIDsKHR");
    printf("clIcdGetPlatformIDsKHR: %s\n", icd_ids ? "found" : "absent");
    void *bogus = clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionEXT");
    printf("bogus name: %s\n", bogus ? "found" : "absent");
    void *loader_info = clGetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD");
    printf("clGetICDLoaderInfoOCLICD: %s\n", loader_info ? "found" : "absent");

    char ext[4096] = "";
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL));
    if (strstr(ext, "cl_khr_command_buffer") == NULL) {
        printf("cl_khr_command_buffer: not offered\n");
        return 0;
    }
#define GET(fn) fn##_fn p_##fn = (fn##_fn)clGetExtensionFunctionAddressForPlatform(platform, #fn)
    GET(clCreateCommandBufferKHR);
    GET(clCommandNDRangeKernelKHR);
    GET(clCommandCopyBufferKHR);
    GET(clFinalizeCommandBufferKHR);
    GET(clEnqueueCommandBufferKHR);
    GET(clReleaseCommandBufferKHR);
    if (!p_clCreateCommandBufferKHR || !p_clCommandNDRangeKernelKHR || !p_clCommandCopyBufferKHR ||
        !p_clFinalizeCommandBufferKHR || !p_clEnqueueCommandBufferKHR || !p_clReleaseCommandBufferKHR) {
        printf("cl_khr_command_buffer: functions missing\n");
        return 1;
    }
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    int init[64];
    for (int i = 0; i < 64; i++)
        init[i] = i;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof init, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    cl_command_buffer_khr cb = p_clCreateCommandBufferKHR(1, &q, NULL, &err);
    CHECK(err);
    size_t n = 64;
    cl_sync_point_khr s1;
    CHECK(p_clCommandNDRangeKernelKHR(cb, NULL, NULL, k, 1, NULL, &n, NULL, 0, NULL, &s1, NULL));
    CHECK(p_clCommandCopyBufferKHR(cb, NULL, a, b, 0, 0, sizeof init, 1, &s1, NULL, NULL));
    CHECK(p_clFinalizeCommandBufferKHR(cb));
    CHECK(p_clEnqueueCommandBufferKHR(0, NULL, cb, 0, NULL, NULL));
    CHECK(clFinish(q)); /* without simultaneous use, a pending buffer cannot be enqueued again */
    CHECK(p_clEnqueueCommandBufferKHR(0, NULL, cb, 0, NULL, NULL));
    int out[64];
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    printf("command buffer replayed twice: b[0]=%d b[63]=%d\n", out[0], out[63]);
    CHECK(p_clReleaseCommandBufferKHR(cb));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return 0;
}
