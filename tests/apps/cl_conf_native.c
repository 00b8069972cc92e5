/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): on every device of the first platform, whether
 * CL_DEVICE_EXECUTION_CAPABILITIES advertises native kernels and whether clEnqueueNativeKernel
 * then does what the advert says: runs the function (on a buffer it is given) where advertised,
 * CL_INVALID_OPERATION where not. One line per device; exit status 1 if they disagree. */
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

struct native_args {
    cl_mem buf; /* replaced by the buffer's host address before the call */
    int value;
};

static void CL_CALLBACK fill(void *p)
{
    struct native_args *a = p;
    int *v = (int *)(void *)a->buf;
    for (int i = 0; i < 16; i++)
        v[i] = a->value;
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 16, devs, &n) != CL_SUCCESS)
        return 2;
    cl_context ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    int disagree = 0;
    for (cl_uint d = 0; d < n; d++) {
        cl_device_exec_capabilities caps = 0;
        clGetDeviceInfo(devs[d], CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
        int advertised = (caps & CL_EXEC_NATIVE_KERNEL) != 0;
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16 * sizeof(int), NULL, &err);
        struct native_args a = {buf, 40 + (int)d};
        const void *loc = &a.buf;
        cl_int rc = clEnqueueNativeKernel(q, fill, &a, sizeof a, 1, &buf, &loc, 0, NULL, NULL);
        int out[16] = {0};
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        int ran = out[0] == a.value && out[15] == a.value;
        int agrees = advertised ? rc == CL_SUCCESS && ran : rc == CL_INVALID_OPERATION && !ran;
        printf("device %u: native kernels advertised=%d enqueue=%d ran=%d agree=%d\n", d, advertised, rc, ran,
               agrees);
        disagree |= !agrees;
        clReleaseMemObject(buf);
        clReleaseCommandQueue(q);
    }
    clReleaseContext(ctx);
    return disagree;
}
