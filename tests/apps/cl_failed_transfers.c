/* SPDX-License-Identifier: MIT */
/* Transfers failed by their wait list, on every device of the first platform (run it on 3 local
 * devices and on 3 ranks under distributed OpenCL: the output is the same). For each device, each
 * kind of buffer (plain, CL_MEM_ALLOC_HOST_PTR, CL_MEM_USE_HOST_PTR), each size (4 KiB: one
 * message; 4 MiB: many pieces) and each pattern (a write; a read; a write then a read; a write, a
 * kernel and a read; a rect read) the commands wait for a user event that is then set to -44.
 * Each line prints what the program sees: the wait's return code, each event's status (negative
 * or complete), and that the program's memory was left as it was. A healthy write and read of the
 * same buffer then follows on the same queue. An alarm bounds the whole run: a transfer that never
 * ends is killed by SIGALRM instead of hanging. An argument names one device to test alone. */
#define _GNU_SOURCE
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src = "__kernel void inc(__global uchar *v) { v[get_global_id(0)] += 1; }\n";

static const char *status_word(cl_event e)
{
    cl_int st = 0;
    CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    return st < 0 ? "failed" : st == CL_COMPLETE ? "complete" : "not ended";
}

static int untouched(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* No blocking read: PoCL 3.1's own blocking read with a failed wait list never returns. */
enum { WRITE, READ, WRITE_READ, WRITE_KERNEL_READ, READ_RECT, PATTERNS };
static const char *pattern_name[] = {"write", "read", "write+read", "write+kernel+read", "rect read"};

/* One pattern on one buffer: the commands gated by a user event set to -44, then a healthy
 * write and read that must see the bytes written. */
static void one(cl_context ctx, cl_command_queue q, cl_kernel inc, cl_mem m, size_t n, int pattern,
                const char *label)
{
    unsigned char *src_bytes = malloc(n), *dst = malloc(n);
    memset(src_bytes, 0x5a, n);
    memset(dst, 0xa5, n);
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_event ev[3];
    int ne = 0;
    if (pattern == WRITE || pattern == WRITE_READ || pattern == WRITE_KERNEL_READ) {
        CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, n, src_bytes, 1, &gate, &ev[ne]));
        ne++;
    }
    if (pattern == WRITE_KERNEL_READ) {
        CHECK(clSetKernelArg(inc, 0, sizeof m, &m));
        CHECK(clEnqueueNDRangeKernel(q, inc, 1, NULL, &n, NULL, 1, &gate, &ev[ne]));
        ne++;
    }
    if (pattern == READ || pattern == WRITE_READ || pattern == WRITE_KERNEL_READ) {
        CHECK(clEnqueueReadBuffer(q, m, CL_FALSE, 0, n, dst, 1, &gate, &ev[ne]));
        ne++;
    }
    if (pattern == READ_RECT) { /* every other 256-byte row of the buffer, packed */
        size_t zero[3] = {0, 0, 0}, region[3] = {256, n / 512, 1};
        CHECK(clEnqueueReadBufferRect(q, m, CL_FALSE, zero, zero, region, 512, 0, 256, 0, dst, 1, &gate,
                                      &ev[ne]));
        ne++;
    }
    CHECK(clSetUserEventStatus(gate, -44));
    cl_int wait_rc = clWaitForEvents((cl_uint)ne, ev);
    printf("%s %s: wait %d,", label, pattern_name[pattern], wait_rc);
    for (int i = 0; i < ne; i++)
        printf(" %s", status_word(ev[i]));
    printf(", memory %s", untouched(dst, n, 0xa5) ? "untouched" : "CHANGED");
    for (int i = 0; i < ne; i++)
        CHECK(clReleaseEvent(ev[i]));
    CHECK(clReleaseEvent(gate));
    /* The queue still works: a write and a read of the same buffer. */
    memset(src_bytes, pattern + 1, n);
    CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, n, src_bytes, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n, dst, 0, NULL, NULL));
    printf(", then %s\n",
           untouched(dst, n, (unsigned char)(pattern + 1)) ? "a healthy round trip" : "WRONG DATA");
    free(src_bytes);
    free(dst);
}

/* Across devices, behind a user event set to -44: the same host range written to every device
 * (collective replacement makes it a broadcast), every device's buffer read into adjacent slices
 * of one host buffer (a gather), and a buffer one device's kernel wrote then used by a failed
 * kernel on the next device, and the other way round (coherence moves between devices). */
static void across(cl_context ctx, cl_uint nd, const cl_device_id *dev, cl_kernel inc, size_t n)
{
    cl_int err;
    cl_command_queue q[8];
    cl_mem b[8];
    unsigned char *host = malloc(n), *dst = malloc(n * nd);
    for (cl_uint d = 0; d < nd; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        b[d] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &err);
        CHECK(err);
    }
    for (int kind = 0; kind < 2; kind++) { /* 0: a broadcast of writes, 1: a gather of reads */
        memset(host, 0x33, n);
        memset(dst, 0xa5, n * nd);
        cl_event gate = clCreateUserEvent(ctx, &err), ev[8];
        CHECK(err);
        for (cl_uint d = 0; d < nd; d++)
            CHECK(kind == 0 ? clEnqueueWriteBuffer(q[d], b[d], CL_FALSE, 0, n, host, 1, &gate, &ev[d])
                            : clEnqueueReadBuffer(q[d], b[d], CL_FALSE, 0, n, dst + d * n, 1, &gate, &ev[d]));
        CHECK(clSetUserEventStatus(gate, -44));
        cl_int wait_rc = clWaitForEvents(nd, ev);
        printf("%zu bytes, %s on %u devices: wait %d,", n,
               kind ? "reads into one buffer" : "one range written", nd, wait_rc);
        for (cl_uint d = 0; d < nd; d++) {
            printf(" %s", status_word(ev[d]));
            CHECK(clReleaseEvent(ev[d]));
        }
        CHECK(clReleaseEvent(gate));
        printf(", memory %s", untouched(dst, n * nd, 0xa5) ? "untouched" : "CHANGED");
        memset(host, 0x40 + kind, n); /* then healthy: the same again without the gate */
        for (cl_uint d = 0; d < nd; d++)
            CHECK(clEnqueueWriteBuffer(q[d], b[d], CL_FALSE, 0, n, host, 0, NULL, NULL));
        for (cl_uint d = 0; d < nd; d++)
            CHECK(clEnqueueReadBuffer(q[d], b[d], CL_FALSE, 0, n, dst + d * n, 0, NULL, NULL));
        for (cl_uint d = 0; d < nd; d++)
            CHECK(clFinish(q[d]));
        printf(", then %s\n", untouched(dst, n * nd, 0x40 + kind) ? "every device's data" : "WRONG DATA");
    }
    for (cl_uint d = 0; d + 1 < nd; d++)
        for (int failed_first = 0; failed_first < 2; failed_first++) {
            /* Device d's kernel adds 1 to b[0], then device d+1's kernel another: the second
             * behind the gate, or the first behind it and the second behind the first. */
            unsigned char start = 0x50;
            memset(host, start, n);
            CHECK(clEnqueueWriteBuffer(q[d], b[0], CL_TRUE, 0, n, host, 0, NULL, NULL));
            cl_event gate = clCreateUserEvent(ctx, &err), k1, k2;
            CHECK(err);
            CHECK(clSetKernelArg(inc, 0, sizeof b[0], &b[0]));
            CHECK(clEnqueueNDRangeKernel(q[d], inc, 1, NULL, &n, NULL, failed_first,
                                         failed_first ? &gate : NULL, &k1));
            CHECK(
                clEnqueueNDRangeKernel(q[d + 1], inc, 1, NULL, &n, NULL, 1, failed_first ? &k1 : &gate, &k2));
            CHECK(clSetUserEventStatus(gate, -44));
            clWaitForEvents(1, &k1);
            clWaitForEvents(1, &k2);
            CHECK(clEnqueueReadBuffer(q[d + 1], b[0], CL_TRUE, 0, n, dst, 0, NULL, NULL));
            int value = -1;
            for (int v = 0; v < 3 && value < 0; v++)
                if (untouched(dst, n, (unsigned char)(start + v)))
                    value = v;
            printf("%zu bytes, kernel on device %u %s, kernel on device %u %s: read on device %u finds start "
                   "+ %d\n",
                   n, d, status_word(k1), d + 1, status_word(k2), d + 1, value);
            CHECK(clReleaseEvent(k1));
            CHECK(clReleaseEvent(k2));
            CHECK(clReleaseEvent(gate));
        }
    for (cl_uint d = 0; d < nd; d++) {
        CHECK(clReleaseMemObject(b[d]));
        CHECK(clReleaseCommandQueue(q[d]));
    }
    free(host);
    free(dst);
}

int main(int argc, char **argv)
{
    alarm(120);
    int only = argc > 1 ? atoi(argv[1]) : -1; /* a device index: that device only */
    cl_platform_id platform;
    cl_device_id dev[8];
    cl_uint nd = 0;
    cl_int err;
    first_platform_devices(&platform, 8, dev, &nd);
    cl_context ctx = clCreateContext(NULL, nd, dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, nd, dev, NULL, NULL, NULL));
    cl_kernel inc = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    static const size_t sizes[] = {4096, 4u << 20};
    static const cl_mem_flags kinds[] = {0, CL_MEM_ALLOC_HOST_PTR, CL_MEM_USE_HOST_PTR};
    static const char *kind_name[] = {"plain", "alloc_host_ptr", "use_host_ptr"};
    for (cl_uint d = 0; d < nd; d++) {
        if (only >= 0 && d != (cl_uint)only)
            continue;
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        for (int k = 0; k < 3; k++)
            for (int s = 0; s < 2; s++) {
                void *host = kinds[k] & CL_MEM_USE_HOST_PTR ? calloc(1, sizes[s]) : NULL;
                cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | kinds[k], sizes[s], host, &err);
                CHECK(err);
                for (int p = 0; p < PATTERNS; p++) {
                    char label[96];
                    snprintf(label, sizeof label, "device %u, %s, %zu bytes,", d, kind_name[k], sizes[s]);
                    one(ctx, q, inc, m, sizes[s], p, label);
                    fflush(stdout);
                }
                CHECK(clReleaseMemObject(m));
                free(host);
            }
        CHECK(clReleaseCommandQueue(q));
    }
    if (only < 0 && nd > 1)
        for (int s = 0; s < 2; s++)
            across(ctx, nd, dev, inc, sizes[s]);
    CHECK(clReleaseKernel(inc));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
