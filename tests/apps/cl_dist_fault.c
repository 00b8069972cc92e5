/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice) for the fault tests of distributed OpenCL
 * (tests/integration/cl/dist_faults.sh). One context over every device, one queue and one buffer
 * per device, a kernel that adds 1 to each element.
 *   cl_dist_fault loop SECONDS   runs the kernel on every device, round after round, for at most
 *                                SECONDS; prints "running" after the first round (the test then
 *                                kills a rank) and "rounds=N" at the end.
 *   cl_dist_fault end HOW        one round, then ends: "exit3" (exit(3)), "exit0", "_exit0",
 *                                "_exit5", "segv" (raise SIGSEGV), "return" (from main), "fork"
 *                                (a child leaves through _exit(0), then a second round, return).
 *   cl_dist_fault crash D HOW    one round, then a kernel on device D that crashes the driver's
 *                                process: "segv" (writes 1 GiB past its buffer), "trap"
 *                                (__builtin_trap: SIGILL); prints "crashing" first.
 *   cl_dist_fault badlocal       on device 1, a launch with a local size larger than the device's
 *                                maximum: the error is the enqueue's or the event's; then every
 *                                other device still runs the kernel right. Needs 3 devices. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXDEV 16
#define N 4096

static const char *source =
    "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
    "__kernel void segv(__global int *a) { a[(get_global_id(0) + 1) * 0x10000000ul] = 1; }\n"
    "__kernel void trap(__global int *a) { if (a[0] == 1) __builtin_trap(); }\n";

static cl_uint ndev;
static cl_device_id dev[MAXDEV];
static cl_command_queue q[MAXDEV];
static cl_mem buf[MAXDEV];
static cl_kernel kern;
static cl_program prog;

static void setup(void)
{
    cl_platform_id platform;
    cl_int err;
    first_platform_devices(&platform, MAXDEV, dev, &ndev);
    if (ndev > MAXDEV)
        ndev = MAXDEV;
    cl_context ctx = clCreateContext(NULL, ndev, dev, NULL, NULL, &err);
    CHECK(err);
    prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, ndev, dev, NULL, NULL, NULL));
    kern = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    static int zero[N];
    for (cl_uint d = 0; d < ndev; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        buf[d] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
        CHECK(err);
    }
}

/* One kernel on device d; returns the value of the first and last elements after it. */
static void run_on(cl_uint d, int *first, int *last)
{
    size_t global = N;
    static int out[N];
    CHECK(clSetKernelArg(kern, 0, sizeof(cl_mem), &buf[d]));
    CHECK(clEnqueueNDRangeKernel(q[d], kern, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q[d], buf[d], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    *first = out[0];
    *last = out[N - 1];
}

static void round_all(int expect)
{
    for (cl_uint d = 0; d < ndev; d++) {
        int first, last;
        run_on(d, &first, &last);
        if (first != expect || last != expect) {
            fprintf(stderr, "device %u: elements %d..%d, expected %d\n", d, first, last, expect);
            exit(1);
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int loop(double seconds)
{
    double end = now_s() + seconds;
    int rounds = 0;
    while (now_s() < end) {
        round_all(++rounds);
        if (rounds == 1) {
            printf("running devices=%u\n", ndev);
            fflush(stdout);
        }
        usleep(2000);
    }
    printf("rounds=%d\n", rounds);
    return 0;
}

static int end_after_round(const char *how)
{
    round_all(1);
    printf("ending: %s\n", how);
    fflush(stdout);
    if (strcmp(how, "exit3") == 0)
        exit(3);
    if (strcmp(how, "exit0") == 0)
        exit(0);
    if (strcmp(how, "_exit0") == 0)
        _exit(0);
    if (strcmp(how, "_exit5") == 0)
        _exit(5);
    if (strcmp(how, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(how, "return") == 0)
        return 0;
    if (strcmp(how, "fork") == 0) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        int st = -1;
        waitpid(child, &st, 0);
        round_all(2);
        printf("child status %d, second round ok\n", st);
        return 0;
    }
    fprintf(stderr, "unknown ending %s\n", how);
    return 2;
}

/* A kernel that takes the process running it down: on a remote device, the serving rank. */
static int crash(cl_uint d, const char *how)
{
    if (d >= ndev) {
        fprintf(stderr, "no device %u\n", d);
        return 2;
    }
    round_all(1);
    cl_int err;
    cl_kernel k = clCreateKernel(prog, how, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf[d]));
    printf("crashing device %u: %s\n", d, how);
    fflush(stdout);
    size_t global = 4;
    err = clEnqueueNDRangeKernel(q[d], k, 1, NULL, &global, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(q[d]);
    printf("survived the crash: %d\n", err);
    return 1;
}

/* A local size above the device's maximum fails on device 1, as the enqueue's error or, where
 * the launch is asynchronous, as the event's (negative) status. The other devices go on. */
static int bad_local(void)
{
    if (ndev < 3) {
        fprintf(stderr, "needs at least 3 devices, found %u\n", ndev);
        return 2;
    }
    size_t maxwg = 0;
    CHECK(clGetDeviceInfo(dev[1], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL));
    size_t local = maxwg * 2, global = maxwg * 2;
    cl_event ev = NULL;
    CHECK(clSetKernelArg(kern, 0, sizeof(cl_mem), &buf[1]));
    cl_int err = clEnqueueNDRangeKernel(q[1], kern, 1, NULL, &global, &local, 0, NULL, &ev);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS) {
        cl_int werr = clWaitForEvents(1, &ev);
        CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        printf("device 1: enqueue ok, wait %d, event status %d\n", werr, status);
        clReleaseEvent(ev);
    } else {
        printf("device 1: enqueue error %d\n", err);
    }
    int failed = err != CL_SUCCESS ? err : status;
    printf("device 1 bad local size: %s (%d)\n",
           failed == CL_INVALID_WORK_GROUP_SIZE ? "CL_INVALID_WORK_GROUP_SIZE" : "other", failed);
    for (cl_uint d = 0; d < ndev; d++) {
        int first, last;
        run_on(d, &first, &last);
        printf("device %u after the fault: %d..%d\n", d, first, last);
    }
    return failed < 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s loop SECONDS | end HOW | crash D HOW | badlocal\n", argv[0]);
        return 2;
    }
    setup();
    if (strcmp(argv[1], "loop") == 0)
        return loop(argc > 2 ? atof(argv[2]) : 20.0);
    if (strcmp(argv[1], "end") == 0 && argc > 2)
        return end_after_round(argv[2]);
    if (strcmp(argv[1], "crash") == 0 && argc > 3)
        return crash((cl_uint)atoi(argv[2]), argv[3]);
    if (strcmp(argv[1], "badlocal") == 0)
        return bad_local();
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
