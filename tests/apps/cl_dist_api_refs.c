/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): reference counts as objects are created,
 * retained and released in an unusual order, and the error codes of invalid handles, arguments
 * and queue properties, on every device of the first platform. Each line is one call's answer. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void k1(__global int *v, __local int *t, int n) { v[0] = n; }\n"
                         "__kernel void k2(__constant int *c) { }\n";

static cl_uint refs(cl_int (*info)(void *, cl_uint, size_t, void *, size_t *), void *obj, cl_uint param)
{
    cl_uint n = 0;
    CHECK(info(obj, param, sizeof n, &n, NULL));
    return n;
}
/* An object-returning call: whether it made one, and its error code. */
#define TRY(label, call)                                                                                     \
    do {                                                                                                     \
        err = 12345;                                                                                         \
        void *o_ = (void *)(call);                                                                           \
        printf("%s: %s %d\n", label, o_ ? "object" : "none", err);                                           \
    } while (0)
#define REFS(fn, obj, param) refs((cl_int(*)(void *, cl_uint, size_t, void *, size_t *))fn, obj, param)
#define CTX_REFS(c) REFS(clGetContextInfo, c, CL_CONTEXT_REFERENCE_COUNT)
#define MEM_REFS(m) REFS(clGetMemObjectInfo, m, CL_MEM_REFERENCE_COUNT)
#define PROG_REFS(p) REFS(clGetProgramInfo, p, CL_PROGRAM_REFERENCE_COUNT)

int main(void)
{
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    first_platform_devices(&platform, 16, devs, &n);

    printf("-- errors\n");
    TRY("clCreateContext no devices", clCreateContext(NULL, 0, NULL, NULL, NULL, &err));
    cl_device_id with_null[2] = {devs[0], NULL};
    TRY("clCreateContext NULL device", clCreateContext(NULL, 2, with_null, NULL, NULL, &err));
    printf("clRetainContext NULL: %d\n", clRetainContext(NULL));
    printf("clReleaseMemObject NULL: %d\n", clReleaseMemObject(NULL));
    printf("clGetContextInfo NULL: %d\n",
           clGetContextInfo(NULL, CL_CONTEXT_NUM_DEVICES, 0, NULL, &(size_t){0}));
    TRY("clCreateBuffer NULL context", clCreateBuffer(NULL, 0, 16, NULL, &err));
    char tmp[64];
    printf("clGetDeviceInfo unknown param: %d\n", clGetDeviceInfo(devs[0], 0xdead, sizeof tmp, tmp, NULL));
    printf("clGetDeviceInfo small buffer: %d\n", clGetDeviceInfo(devs[0], CL_DEVICE_NAME, 2, tmp, NULL));

    cl_context ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    CHECK(err);
    TRY("queue NULL device", clCreateCommandQueueWithProperties(ctx, NULL, NULL, &err));
    static const struct {
        const char *name;
        cl_queue_properties props[5];
    } qprops[] = {
        {"queue size alone", {CL_QUEUE_SIZE, 1024, 0}},
        {"device queue",
         {CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_SIZE,
          1024, 0}},
        {"unknown key", {0x9999, 1, 0}},
        {"unknown bit", {CL_QUEUE_PROPERTIES, (cl_queue_properties)1 << 20, 0}},
        {"key twice", {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, CL_QUEUE_PROPERTIES, 0, 0}},
    };
    for (size_t i = 0; i < sizeof qprops / sizeof qprops[0]; i++) {
        err = 12345;
        cl_command_queue qq = clCreateCommandQueueWithProperties(ctx, devs[0], qprops[i].props, &err);
        printf("queue, %s: %s %d\n", qprops[i].name, qq ? "queue" : "none", err);
        if (qq != NULL)
            CHECK(clReleaseCommandQueue(qq));
    }
    TRY("clCreateProgramWithSource no strings", clCreateProgramWithSource(ctx, 0, NULL, NULL, &err));
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    TRY("clCreateKernel before build", clCreateKernel(prog, "k1", &err));
    CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
    TRY("clCreateKernel unknown name", clCreateKernel(prog, "nope", &err));
    cl_kernel one[1];
    cl_uint nk = 0;
    printf("clCreateKernelsInProgram room for 1 of 2: %d\n", clCreateKernelsInProgram(prog, 1, one, &nk));
    cl_kernel k = clCreateKernel(prog, "k1", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CHECK(err);
    int three = 3;
    printf("clSetKernelArg index 9: %d\n", clSetKernelArg(k, 9, sizeof buf, &buf));
    printf("clSetKernelArg buffer of size 4: %d\n", clSetKernelArg(k, 0, 4, &three));
    printf("clSetKernelArg NULL buffer: %d\n", clSetKernelArg(k, 0, sizeof(cl_mem), NULL));
    printf("clSetKernelArg local with a value: %d\n", clSetKernelArg(k, 1, 64, &three));
    printf("clSetKernelArg local size 0: %d\n", clSetKernelArg(k, 1, 0, NULL));
    printf("clSetKernelArg int of size 8: %d\n", clSetKernelArg(k, 2, 8, &(long){3}));
    printf("clSetKernelArg int NULL: %d\n", clSetKernelArg(k, 2, sizeof three, NULL));
    printf("clSetKernelArg right: %d %d %d\n", clSetKernelArg(k, 0, sizeof buf, &buf),
           clSetKernelArg(k, 1, 64, NULL), clSetKernelArg(k, 2, sizeof three, &three));
    printf("clSetProgramSpecializationConstant, not from IL: %d\n",
           clSetProgramSpecializationConstant(prog, 1, 4, &three));
    cl_bool no = CL_FALSE;
    printf("clSetKernelExecInfo no fine-grain system SVM: %d\n",
           clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof no, &no));
    printf("clGetKernelArgInfo index 9: %d\n",
           clGetKernelArgInfo(k, 9, CL_KERNEL_ARG_NAME, sizeof tmp, tmp, NULL));
    size_t wg = 0;
    printf("clGetKernelWorkGroupInfo NULL device: %d\n",
           clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    cl_buffer_region out_of_range = {512, 1024};
    TRY("clCreateSubBuffer out of range",
        clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &out_of_range, &err));

    printf("-- reference counts\n");
    printf("context after program, kernel, buffer: %u\n", CTX_REFS(ctx));
    printf("program with one kernel: %u\n", PROG_REFS(prog));
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[n - 1], NULL, &err);
    CHECK(err);
    printf("context after a queue: %u\n", CTX_REFS(ctx));
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(devs[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    cl_buffer_region r = {align_bits / 8, 64};
    cl_mem sub = clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    CHECK(err);
    printf("buffer with a sub-buffer: %u, sub-buffer %u\n", MEM_REFS(buf), MEM_REFS(sub));
    CHECK(clRetainMemObject(buf));
    printf("buffer retained: %u\n", MEM_REFS(buf));
    CHECK(clReleaseMemObject(buf));
    CHECK(clRetainContext(ctx));
    printf("context retained: %u\n", CTX_REFS(ctx));
    CHECK(clReleaseContext(ctx));
    printf("root device retain/release: %d %d\n", clRetainDevice(devs[0]), clReleaseDevice(devs[0]));

    printf("-- release order\n");
    /* The program's own references go first; the objects that hold them keep them usable. */
    CHECK(clReleaseContext(ctx));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(buf));
    cl_context qctx = NULL;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL));
    printf("queue's context is the released one: %d, its count %u\n", qctx == ctx, CTX_REFS(qctx));
    cl_program kprog = NULL;
    CHECK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kprog, &kprog, NULL));
    printf("kernel's program is the released one: %d, its count %u\n", kprog == prog, PROG_REFS(kprog));
    cl_mem parent = NULL;
    CHECK(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL));
    printf("sub-buffer's parent is the released one: %d, its count %u\n", parent == buf, MEM_REFS(parent));
    CHECK(clSetKernelArg(k, 0, sizeof sub, &sub));
    size_t global = 1;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    int v = 0;
    CHECK(clEnqueueReadBuffer(q, sub, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
    printf("kernel of a released program into a sub-buffer of a released buffer: %d\n", v);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(sub));
    CHECK(clReleaseCommandQueue(q));
    return 0;
}
