/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): buffer creation flags on every device. It
 * prints the error of clCreateBuffer for valid and invalid flag combinations, what the queries
 * say of the buffers made, and the host access rules of reads, writes and maps
 * (CL_MEM_HOST_*_ACCESS). A USE_HOST_PTR and an ALLOC_HOST_PTR buffer go through a kernel on
 * every device and are read back. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel void inc(__global int *v) { v[get_global_id(0)] += 1; }\n";

enum { N = 256 };
static int host[N];

static const struct {
    const char *name;
    cl_mem_flags flags;
    int ptr;
} cases[] = {
    {"READ_WRITE", CL_MEM_READ_WRITE, 0},
    {"default (0)", 0, 0},
    {"READ_ONLY|COPY_HOST_PTR", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 1},
    {"USE_HOST_PTR", CL_MEM_USE_HOST_PTR, 1},
    {"ALLOC_HOST_PTR", CL_MEM_ALLOC_HOST_PTR, 0},
    {"ALLOC_HOST_PTR|COPY_HOST_PTR", CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, 1},
    {"HOST_WRITE_ONLY", CL_MEM_HOST_WRITE_ONLY, 0},
    {"HOST_READ_ONLY", CL_MEM_HOST_READ_ONLY, 0},
    {"HOST_NO_ACCESS", CL_MEM_HOST_NO_ACCESS, 0},
    {"READ_WRITE|READ_ONLY", CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 0},
    {"READ_ONLY|WRITE_ONLY", CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 0},
    {"USE_HOST_PTR|ALLOC_HOST_PTR", CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 1},
    {"USE_HOST_PTR|COPY_HOST_PTR", CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 1},
    {"HOST_WRITE_ONLY|HOST_READ_ONLY", CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY, 0},
    {"HOST_NO_ACCESS|HOST_READ_ONLY", CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY, 0},
    {"unknown bit 1<<40", (cl_mem_flags)1 << 40, 0},
    {"COPY_HOST_PTR without pointer", CL_MEM_COPY_HOST_PTR, 0},
    {"pointer without COPY/USE", CL_MEM_READ_WRITE, 1},
};

static void creation(cl_context ctx)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cl_int err = 12345;
        cl_mem m = clCreateBuffer(ctx, cases[i].flags, sizeof host, cases[i].ptr ? host : NULL, &err);
        printf("create %s: err=%d", cases[i].name, err);
        if (m != NULL) {
            cl_mem_flags f = 0;
            void *hp = (void *)1;
            size_t size = 0;
            CHECK(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, NULL));
            CHECK(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL));
            CHECK(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL));
            printf(" flags=0x%llx host_ptr=%s size=%zu", (unsigned long long)f,
                   hp == NULL           ? "NULL"
                   : hp == (void *)host ? "the program's"
                                        : "OTHER",
                   size);
            CHECK(clReleaseMemObject(m));
        }
        printf("\n");
    }
    cl_int err = 12345;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
    printf("create size 0: err=%d %s\n", err, m ? "buffer" : "none");
}

/* Sub-buffers inherit the host pointer flags and the access flags they do not set. */
static void sub_buffers(cl_context ctx, size_t align)
{
    static const struct {
        const char *name;
        cl_mem_flags parent, sub;
    } subs[] = {
        {"of USE_HOST_PTR, no flags", CL_MEM_USE_HOST_PTR, 0},
        {"of READ_ONLY|HOST_WRITE_ONLY, no flags", CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY, 0},
        {"READ_WRITE of READ_ONLY", CL_MEM_READ_ONLY, CL_MEM_READ_WRITE},
        {"WRITE_ONLY of READ_WRITE", CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY},
        {"HOST_READ_ONLY of HOST_WRITE_ONLY", CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY},
        {"HOST_READ_ONLY of HOST_NO_ACCESS", CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY},
        {"COPY_HOST_PTR", CL_MEM_READ_WRITE, CL_MEM_COPY_HOST_PTR},
    };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        cl_int err;
        cl_mem p = clCreateBuffer(ctx, subs[i].parent, sizeof host,
                                  (subs[i].parent & CL_MEM_USE_HOST_PTR) ? host : NULL, &err);
        CHECK(err);
        cl_buffer_region region = {align, align};
        err = 12345;
        cl_mem s = clCreateSubBuffer(p, subs[i].sub, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        printf("sub-buffer %s: err=%d", subs[i].name, err);
        if (s != NULL) {
            cl_mem_flags f = 0;
            void *hp = (void *)1;
            CHECK(clGetMemObjectInfo(s, CL_MEM_FLAGS, sizeof f, &f, NULL));
            CHECK(clGetMemObjectInfo(s, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL));
            printf(" flags=0x%llx host_ptr=%s", (unsigned long long)f,
                   hp == NULL                             ? "NULL"
                   : hp == (void *)((char *)host + align) ? "the program's + origin"
                                                          : "OTHER");
            CHECK(clReleaseMemObject(s));
        }
        printf("\n");
        CHECK(clReleaseMemObject(p));
    }
}

/* Reads, writes and maps of buffers the host may only write, only read, or not touch. */
static void host_access(cl_context ctx, cl_command_queue q)
{
    static const struct {
        const char *name;
        cl_mem_flags flags;
    } acc[] = {{"HOST_WRITE_ONLY", CL_MEM_HOST_WRITE_ONLY},
               {"HOST_READ_ONLY", CL_MEM_HOST_READ_ONLY},
               {"HOST_NO_ACCESS", CL_MEM_HOST_NO_ACCESS}};
    for (size_t i = 0; i < sizeof acc / sizeof acc[0]; i++) {
        cl_int err;
        cl_mem m = clCreateBuffer(ctx, acc[i].flags, sizeof host, NULL, &err);
        CHECK(err);
        int tmp[N] = {0};
        cl_int w = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof tmp, tmp, 0, NULL, NULL);
        cl_int r = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof tmp, tmp, 0, NULL, NULL);
        cl_int mr = 0, mw = 0;
        void *p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, sizeof tmp, 0, NULL, NULL, &mr);
        if (p != NULL)
            CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
        p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE, 0, sizeof tmp, 0, NULL, NULL, &mw);
        if (p != NULL)
            CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
        CHECK(clFinish(q));
        printf("%s: write=%d read=%d map read=%d map write=%d\n", acc[i].name, w, r, mr, mw);
        CHECK(clReleaseMemObject(m));
    }
}

/* A kernel increments a host-pointer buffer on the device; the result is read back. */
static void through_kernel(cl_context ctx, cl_command_queue q, cl_kernel k, cl_mem_flags flags, int d)
{
    for (int i = 0; i < N; i++)
        host[i] = i * (d + 1);
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, sizeof host, (flags & CL_MEM_USE_HOST_PTR) ? host : NULL, &err);
    CHECK(err);
    if (!(flags & CL_MEM_USE_HOST_PTR))
        CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    int out[N];
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += out[i] != i * (d + 1) + 1;
    printf("device %d, %s: wrong=%d\n", d, (flags & CL_MEM_USE_HOST_PTR) ? "USE_HOST_PTR" : "ALLOC_HOST_PTR",
           wrong);
    CHECK(clReleaseMemObject(m));
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
    creation(ctx);
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(devs[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    sub_buffers(ctx, align_bits / 8);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    for (cl_uint d = 0; d < n; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        CHECK(err);
        if (d == 0)
            host_access(ctx, q);
        through_kernel(ctx, q, k, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, (int)d);
        through_kernel(ctx, q, k, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, (int)d);
        CHECK(clReleaseCommandQueue(q));
    }
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
