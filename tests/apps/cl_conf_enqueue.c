/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): the errors OpenCL returns at enqueue, on every
 * device of the first platform. NDRanges against reqd_work_group_size, non-uniform work-groups,
 * the device's limits, bad dimensions, sizes and offsets; buffer commands out of bounds, with bad
 * patterns, overlaps, misaligned sub-buffers and bad wait lists; migrations. After each refused command a
 * valid one still runs and gives the right values (nothing of the refused one ran). Each line is
 * one call's code. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src = "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
                         "void fixed(__global int *v) { v[get_global_id(0)] += 1; }\n"
                         "__kernel void free_size(__global int *v) { v[get_global_id(0)] += 1; }\n"
                         "__kernel void two_args(__global int *v, int n) { v[0] = n; }\n";

#define N 64

static cl_context ctx;
static cl_command_queue q;
static cl_mem buf;

/* The buffer back to 0, then the sum of its elements after whatever ran. */
static void reset(void)
{
    cl_int zero = 0;
    CHECK(clEnqueueFillBuffer(q, buf, &zero, sizeof zero, 0, N * sizeof(cl_int), 0, NULL, NULL));
    CHECK(clFinish(q));
}

static long sum(void)
{
    cl_int v[N];
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
    long s = 0;
    for (int i = 0; i < N; i++)
        s += v[i];
    return s;
}

/* One NDRange: its code, and what it changed once the queue finished (0 when refused). */
static void nd(const char *what, cl_kernel k, cl_uint dims, const size_t *off, const size_t *g,
               const size_t *l)
{
    reset();
    cl_event ev = NULL;
    cl_int rc = clEnqueueNDRangeKernel(q, k, dims, off, g, l, 0, NULL, &ev);
    cl_int fin = clFinish(q);
    printf("  %s: rc=%d event=%s finish=%d sum=%ld\n", what, rc, ev ? "yes" : "no", fin, sum());
    if (ev != NULL)
        clReleaseEvent(ev);
}

static void device_cases(cl_device_id dev, cl_program p, cl_program p20, cl_program p20u)
{
    cl_int err;
    size_t maxwg = 0, maxitems[3] = {0};
    cl_uint maxdims = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof maxitems, maxitems, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof maxdims, &maxdims, NULL));
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_kernel fixed = clCreateKernel(p, "fixed", &err);
    CHECK(err);
    cl_kernel any = clCreateKernel(p, "free_size", &err);
    CHECK(err);
    CHECK(clSetKernelArg(fixed, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(any, 0, sizeof buf, &buf));
    size_t kwg = 0, cwg[3] = {0};
    CHECK(clGetKernelWorkGroupInfo(fixed, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL));
    CHECK(clGetKernelWorkGroupInfo(any, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL));
    printf("  limits: max work-group %zu, items %zux%zux%zu, dims %u; reqd %zux%zux%zu\n", maxwg, maxitems[0],
           maxitems[1], maxitems[2], maxdims, cwg[0], cwg[1], cwg[2]);

    size_t g16 = 16, g10 = 10, g0 = 0, l4 = 4, l8 = 8, l3 = 3;
    nd("reqd 4, local 4", fixed, 1, NULL, &g16, &l4);
    nd("reqd 4, local 8", fixed, 1, NULL, &g16, &l8);
    nd("reqd 4, no local size", fixed, 1, NULL, &g16, NULL);
    size_t g2[2] = {16, 2}, l2[2] = {4, 2};
    nd("reqd 4x1, local 4x2", fixed, 2, NULL, g2, l2);
    nd("non-uniform 10 / 4", any, 1, NULL, &g10, &l4);
    nd("non-uniform 16 / 3", any, 1, NULL, &g16, &l3);
    nd("uniform 16 / 8", any, 1, NULL, &g16, &l8);
    nd("no local size, global 10", any, 1, NULL, &g10, NULL);
    size_t big = maxwg * 2, gbig = maxwg * 2;
    nd("local over the device's work-group size", any, 1, NULL, &gbig, &big);
    size_t g3[3] = {maxitems[0] * 2, 1, 1}, l3d[3] = {maxitems[0] * 2 > maxwg ? maxitems[0] * 2 : 1, 1, 1};
    nd("local over max work-item size x", any, 3, NULL, g3, l3d);
    size_t gy[2] = {1, 2 * maxitems[1]}, ly[2] = {1, 2 * maxitems[1]};
    nd("local over max work-item size y", any, 2, NULL, gy, ly);
    nd("work_dim 0", any, 0, NULL, &g16, &l4);
    nd("work_dim 4", any, 4, NULL, (size_t[4]){16, 1, 1, 1}, (size_t[4]){4, 1, 1, 1});
    nd("null global size", any, 1, NULL, NULL, &l4);
    nd("global size 0", any, 1, NULL, &g0, NULL);
    size_t off8 = 8, g8 = 8;
    nd("offset 8, global 8", any, 1, &off8, &g8, &l4);
    cl_kernel two = clCreateKernel(p, "two_args", &err);
    CHECK(err);
    CHECK(clSetKernelArg(two, 0, sizeof buf, &buf));
    nd("an argument not set", two, 1, NULL, &g16, &l4);
    clReleaseKernel(two);

    /* Built with -cl-std=CL2.0 (non-uniform groups where the device has them), and with
     * -cl-uniform-work-group-size as well. */
    cl_kernel any20 = clCreateKernel(p20, "free_size", &err);
    CHECK(err);
    CHECK(clSetKernelArg(any20, 0, sizeof buf, &buf));
    nd("-cl-std=CL2.0, non-uniform 10 / 4", any20, 1, NULL, &g10, &l4);
    clReleaseKernel(any20);
    cl_kernel any20u = clCreateKernel(p20u, "free_size", &err);
    CHECK(err);
    CHECK(clSetKernelArg(any20u, 0, sizeof buf, &buf));
    nd("-cl-uniform-work-group-size, non-uniform 10 / 4", any20u, 1, NULL, &g10, &l4);
    clReleaseKernel(any20u);

    /* Buffer commands. */
    reset();
    cl_int host[N * 2] = {0}, pat = 5;
    printf("  read past the end: %d\n", clEnqueueReadBuffer(q, buf, CL_TRUE, 4, N * 4, host, 0, NULL, NULL));
    printf("  write past the end: %d\n",
           clEnqueueWriteBuffer(q, buf, CL_TRUE, N * 4, 4, host, 0, NULL, NULL));
    cl_event e0 = (cl_event)(uintptr_t)1;
    printf("  read of 0 bytes: %d", clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 0, host, 0, NULL, &e0));
    printf(" event %s\n", e0 == NULL ? "NULL" : e0 == (cl_event)(uintptr_t)1 ? "untouched" : "made");
    if (e0 != NULL && e0 != (cl_event)(uintptr_t)1)
        clReleaseEvent(e0);
    printf("  write of 0 bytes: %d\n", clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 0, host, 0, NULL, NULL));
    printf("  copy of 0 bytes: %d\n", clEnqueueCopyBuffer(q, buf, buf, 0, 128, 0, 0, NULL, NULL));
    printf("  fill of 0 bytes: %d\n", clEnqueueFillBuffer(q, buf, &pat, 4, 0, 0, 0, NULL, NULL));
    void *m0 = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, 0, 0, NULL, NULL, &err);
    printf("  map of 0 bytes: %d %s\n", err, m0 ? "pointer" : "NULL");
    if (m0 != NULL)
        CHECK(clEnqueueUnmapMemObject(q, buf, m0, 0, NULL, NULL));
    printf("  write from NULL: %d\n", clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 4, NULL, 0, NULL, NULL));
    printf("  copy overlapping: %d\n", clEnqueueCopyBuffer(q, buf, buf, 0, 8, 16, 0, NULL, NULL));
    printf("  copy past the end: %d\n", clEnqueueCopyBuffer(q, buf, buf, 0, N * 4 - 8, 16, 0, NULL, NULL));
    printf("  fill, pattern of 3 bytes: %d\n", clEnqueueFillBuffer(q, buf, &pat, 3, 0, 12, 0, NULL, NULL));
    printf("  fill, offset not a multiple: %d\n", clEnqueueFillBuffer(q, buf, &pat, 4, 2, 8, 0, NULL, NULL));
    printf("  fill past the end: %d\n", clEnqueueFillBuffer(q, buf, &pat, 4, 0, N * 8, 0, NULL, NULL));
    size_t bo[3] = {0, 0, 0}, ho[3] = {0, 0, 0}, region[3] = {16, 8, 1};
    printf("  rect read past the end: %d\n",
           clEnqueueReadBufferRect(q, buf, CL_TRUE, bo, ho, region, 64, 0, 16, 0, host, 0, NULL, NULL));
    cl_event none = NULL;
    printf("  wait list with a NULL event: %d\n", clEnqueueMarkerWithWaitList(q, 1, &none, NULL));
    printf("  wait list count without events: %d\n", clEnqueueMarkerWithWaitList(q, 1, NULL, NULL));
    cl_int err2;
    void *mp = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, N * 8, 0, NULL, NULL, &err2);
    printf("  map past the end: %d %s\n", err2, mp ? "pointer" : "NULL");
    /* A sub-buffer whose origin is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN, as a kernel's
     * argument: refused at enqueue. */
    cl_uint align_bits = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    cl_buffer_region reg = {4, 32};
    cl_mem sub = clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    printf("  misaligned sub-buffer (align %u bits): create %d\n", align_bits, err);
    if (sub != NULL) {
        CHECK(clSetKernelArg(any, 0, sizeof sub, &sub));
        size_t g4 = 4;
        nd("kernel on the misaligned sub-buffer", any, 1, NULL, &g4, &l4);
        CHECK(clSetKernelArg(any, 0, sizeof buf, &buf));
        clReleaseMemObject(sub);
    }
    cl_event mev = NULL;
    cl_command_type mtype = 0;
    err = clEnqueueMigrateMemObjects(q, 1, &buf, 0, 0, NULL, &mev);
    if (mev != NULL) {
        clGetEventInfo(mev, CL_EVENT_COMMAND_TYPE, sizeof mtype, &mtype, NULL);
        clReleaseEvent(mev);
    }
    printf("  migrate to the device: %d type %#x; none: %d; unknown flag: %d; to the host: %d; content "
           "undefined: "
           "%d\n",
           err, (unsigned)mtype, clEnqueueMigrateMemObjects(q, 0, NULL, 0, 0, NULL, NULL),
           clEnqueueMigrateMemObjects(q, 1, &buf, 0x100, 0, NULL, NULL),
           clEnqueueMigrateMemObjects(q, 1, &buf, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL),
           clEnqueueMigrateMemObjects(q, 1, &buf, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL));
    printf("  nothing refused changed the buffer: sum=%ld\n", sum());
    nd("and a valid kernel still runs", any, 1, NULL, &g16, &l4);
    clReleaseKernel(fixed);
    clReleaseKernel(any);
    clReleaseCommandQueue(q);
}

static cl_program build(cl_uint n, const cl_device_id *devs, const char *opts)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, n, devs, opts, NULL, NULL));
    return p;
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    first_platform_devices(&platform, 16, devs, &n);
    ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    CHECK(err);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(cl_int), NULL, &err);
    CHECK(err);
    cl_program p = build(n, devs, NULL);
    cl_program p20 = build(n, devs, "-cl-std=CL2.0");
    cl_program p20u = build(n, devs, "-cl-std=CL2.0 -cl-uniform-work-group-size");
    for (cl_uint d = 0; d < n; d++) {
        cl_bool nonuni = CL_FALSE;
        char ver[128] = "";
        CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_VERSION, sizeof ver, ver, NULL));
        clGetDeviceInfo(devs[d], CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof nonuni, &nonuni, NULL);
        printf("-- device %u (%.10s, non-uniform work-groups %s)\n", d, ver, nonuni ? "yes" : "no");
        device_cases(devs[d], p, p20, p20u);
    }
    clReleaseProgram(p);
    clReleaseProgram(p20);
    clReleaseProgram(p20u);
    clReleaseMemObject(buf);
    clReleaseContext(ctx);
    return 0;
}
