/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): four threads share one context and program;
 * each has its own queue, buffers and kernel, creates and releases objects and events in a loop
 * and checks its results. Exercises a layer's tables under concurrent creation and release. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, ROUNDS = 60, N = 256 };
static const char *src =
    "__kernel void fill(__global int *v, int x) { v[get_global_id(0)] = x + (int)get_global_id(0); }\n";
static cl_context ctx;
static cl_device_id device;
static cl_program prog;

static void *worker(void *arg)
{
    int id = (int)(long)arg, bad = 0;
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    for (int r = 0; r < ROUNDS; r++) {
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
        CHECK(err);
        cl_kernel k = clCreateKernel(prog, "fill", &err);
        CHECK(err);
        int x = id * 100000 + r;
        CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
        CHECK(clSetKernelArg(k, 1, sizeof x, &x));
        size_t n = N;
        cl_event ev;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev));
        int out[N];
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 1, &ev, NULL));
        cl_command_queue eq;
        CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL));
        bad += eq != q;
        for (int i = 0; i < N; i++)
            bad += out[i] != x + i;
        CHECK(clReleaseEvent(ev));
        CHECK(clReleaseKernel(k));
        CHECK(clReleaseMemObject(buf));
    }
    CHECK(clReleaseCommandQueue(q));
    return (void *)(long)bad;
}

int main(void)
{
    cl_platform_id platform;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    printf("threads=%d rounds=%d wrong=%ld\n", THREADS, ROUNDS, bad);
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return bad != 0;
}
