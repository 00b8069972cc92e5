/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice) that hands a kernel the SVM pointers it may
 * reach (clSetKernelExecInfo, CL_KERNEL_EXEC_INFO_SVM_PTRS) without asking the device whether it
 * has SVM: where the call fails, CHECK says so on stderr and the program exits 1. It prints
 * "svm pointers set" otherwise. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void touch(__global int *v) { v[get_global_id(0)] += 1; }\n";

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    first_platform_devices(&platform, 1, &dev, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "touch", &err);
    CHECK(err);
    static int data[16];
    void *ptrs[1] = {data};
    CHECK(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof ptrs, ptrs));
    printf("svm pointers set\n");
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
