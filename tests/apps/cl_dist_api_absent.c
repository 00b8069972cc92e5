/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): what a device says of images, samplers, pipes
 * and SVM, and what each class of their entry points returns, on the first device. A well-written
 * program checks CL_DEVICE_IMAGE_SUPPORT and CL_DEVICE_SVM_CAPABILITIES and takes its fallback
 * path (plain buffers) when they are absent: it prints which path it took and its result. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void twice(__global int *v) { v[get_global_id(0)] *= 2; }\n";

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    first_platform_devices(&platform, 1, &dev, NULL);
    cl_bool images = CL_TRUE, pipes = CL_TRUE;
    cl_device_svm_capabilities svm = 0;
    cl_uint read_args = 0, samplers = 0;
    size_t w2d = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_PIPE_SUPPORT, sizeof pipes, &pipes, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_READ_IMAGE_ARGS, sizeof read_args, &read_args, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_SAMPLERS, sizeof samplers, &samplers, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof w2d, &w2d, NULL));
    printf("image support %u, read image args %u, samplers %u, 2D width %zu\n", images, read_args, samplers,
           w2d);
    printf("SVM capabilities 0x%llx, pipe support %u\n", (unsigned long long)svm, pipes);

    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);

    /* images */
    cl_uint nformats = 12345;
    err = clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &nformats);
    printf("clGetSupportedImageFormats: %d, %u formats\n", err, nformats);
    cl_image_format fmt = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 16};
    err = 12345;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    printf("clCreateImage: %d %s\n", err, img ? "image" : "none");
    err = 12345;
    img = clCreateImageWithProperties(ctx, NULL, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    printf("clCreateImageWithProperties: %d %s\n", err, img ? "image" : "none");
    cl_image_format got;
    printf("clGetImageInfo of a buffer: %d\n", clGetImageInfo(buf, CL_IMAGE_FORMAT, sizeof got, &got, NULL));
    size_t origin[3] = {0, 0, 0}, region[3] = {1, 1, 1};
    char px[4];
    printf("clEnqueueReadImage of a buffer: %d\n",
           clEnqueueReadImage(q, buf, CL_TRUE, origin, region, 0, 0, px, 0, NULL, NULL));
    /* samplers */
    err = 12345;
    cl_sampler s = clCreateSamplerWithProperties(ctx, NULL, &err);
    printf("clCreateSamplerWithProperties: %d %s\n", err, s ? "sampler" : "none");
    /* pipes */
    err = 12345;
    cl_mem pipe = clCreatePipe(ctx, CL_MEM_READ_WRITE, 16, 4, NULL, &err);
    printf("clCreatePipe: %d %s\n", err, pipe ? "pipe" : "none");
    cl_uint packet = 0;
    printf("clGetPipeInfo of a buffer: %d\n",
           clGetPipeInfo(buf, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, NULL));
    /* SVM */
    void *p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0);
    printf("clSVMAlloc: %s\n", p ? "memory" : "NULL");
    clSVMFree(ctx, p);
    int a[4] = {1, 2, 3, 4}, b[4] = {0};
    printf("clEnqueueSVMMemcpy: %d\n", clEnqueueSVMMemcpy(q, CL_TRUE, b, a, sizeof a, 0, NULL, NULL));
    printf("clEnqueueSVMMemFill: %d\n", clEnqueueSVMMemFill(q, b, a, sizeof a[0], sizeof b, 0, NULL, NULL));
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK(err);
    if (svm == 0) {
        printf("clSetKernelArgSVMPointer: %d\n", clSetKernelArgSVMPointer(k, 0, b));
    }
    if (p != NULL)
        clSVMFree(ctx, NULL);

    /* The fallback path of a program that checks: a plain buffer. */
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = i;
    cl_mem vb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof vb, &vb));
    size_t global = 64;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, vb, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < 64; i++)
        wrong += v[i] != 2 * i;
    printf("%s path: wrong=%d\n", images && svm ? "image and SVM" : "buffer fallback", wrong);
    CHECK(clReleaseMemObject(vb));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return 0;
}
