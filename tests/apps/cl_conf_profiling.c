/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): event profiling times as a program reads
 * them, on every device of the first platform, for a write, a kernel, a read, and a kernel and a
 * write held back by a user event for 200 ms. Checks QUEUED <= SUBMIT <= START <= END, that QUEUED lies
 * between the host's clock just before and just after the enqueue call (within 2 ms; the host's
 * clock is CLOCK_MONOTONIC or CLOCK_MONOTONIC_RAW, which PoCL profiles on), and that START comes
 * after the user event was set. Prints one verdict line per command (never the times, which
 * vary); `-v` adds them on stderr. */
#define _GNU_SOURCE /* CLOCK_MONOTONIC_RAW */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLACK_NS 2000000ull

static int verbose;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The host's two monotonic clocks at one moment. */
struct when {
    uint64_t mono, raw;
};

static struct when now(void)
{
    struct when w = {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_MONOTONIC_RAW)};
    return w;
}

static int between(uint64_t t, uint64_t before, uint64_t after)
{
    return t + SLACK_NS >= before && t <= after + SLACK_NS;
}

static void verdict(const char *what, cl_event ev, struct when b, struct when a, const struct when *set)
{
    static const cl_profiling_info p[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                           CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    cl_ulong t[4] = {0};
    for (int i = 0; i < 4; i++)
        CHECK(clGetEventProfilingInfo(ev, p[i], sizeof t[i], &t[i], NULL));
    int ordered = t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3];
    int on_mono = between(t[0], b.mono, a.mono), on_raw = between(t[0], b.raw, a.raw);
    int queued_at_enqueue = on_mono || on_raw;
    uint64_t before = on_raw ? b.raw : b.mono, after = on_raw ? a.raw : a.mono;
    int started_late = set == NULL || t[2] + SLACK_NS >= (on_raw ? set->raw : set->mono);
    printf("  %s: ordered=%d queued at the enqueue=%d start after the user event=%d\n", what, ordered,
           queued_at_enqueue, started_late);
    if (verbose)
        fprintf(stderr,
                "  %s (%s): queued-before %+.1f us, after-queued %+.1f us, submit %+.1f, start %+.1f, end "
                "%+.1f us\n",
                what, on_raw ? "RAW" : "MONOTONIC", ((double)t[0] - (double)before) / 1e3,
                ((double)after - (double)t[0]) / 1e3, ((double)t[1] - (double)t[0]) / 1e3,
                ((double)t[2] - (double)t[0]) / 1e3, ((double)t[3] - (double)t[0]) / 1e3);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    first_platform_devices(&platform, 16, devs, &n);
    cl_context ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    CHECK(err);
    const char *src = "__kernel void k(__global int *v) { v[get_global_id(0)] += 1; }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, n, devs, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "k", &err);
    CHECK(err);
    enum { N = 1 << 16 };
    static cl_int host[N];
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    for (cl_uint d = 0; d < n; d++) {
        printf("-- device %u\n", d);
        cl_queue_properties props[3] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], props, &err);
        CHECK(err);
        size_t g = N;
        cl_event ev;
        struct when b = now();
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &ev));
        struct when a = now();
        CHECK(clFinish(q));
        verdict("write", ev, b, a, NULL);
        clReleaseEvent(ev);
        b = now();
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &ev));
        a = now();
        CHECK(clFinish(q));
        verdict("kernel", ev, b, a, NULL);
        clReleaseEvent(ev);
        b = now();
        CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &ev));
        a = now();
        CHECK(clFinish(q));
        verdict("read", ev, b, a, NULL);
        clReleaseEvent(ev);
        /* Held back by a user event: queued at once, started only once it is set. */
        cl_event user = clCreateUserEvent(ctx, &err);
        CHECK(err);
        b = now();
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 1, &user, &ev));
        a = now();
        struct timespec pause = {0, 200000000};
        nanosleep(&pause, NULL);
        struct when set = now();
        CHECK(clSetUserEventStatus(user, CL_COMPLETE));
        CHECK(clFinish(q));
        verdict("kernel after a user event", ev, b, a, &set);
        clReleaseEvent(ev);
        clReleaseEvent(user);
        /* A write held back the same way: its data may change until the event is set. */
        user = clCreateUserEvent(ctx, &err);
        CHECK(err);
        b = now();
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 1, &user, &ev));
        a = now();
        nanosleep(&pause, NULL);
        set = now();
        CHECK(clSetUserEventStatus(user, CL_COMPLETE));
        CHECK(clFinish(q));
        verdict("write after a user event", ev, b, a, &set);
        clReleaseEvent(ev);
        clReleaseEvent(user);
        clReleaseCommandQueue(q);
    }
    /* Each device adds 2 and writes back what it read after the first: device d leaves d + 1. */
    CHECK(clEnqueueReadBuffer(clCreateCommandQueueWithProperties(ctx, devs[0], NULL, &err), buf, CL_TRUE, 0,
                              sizeof host, host, 0, NULL, NULL));
    printf("every kernel ran: %s\n", host[0] == (cl_int)n && host[N - 1] == (cl_int)n ? "yes" : "no");
    return 0;
}
