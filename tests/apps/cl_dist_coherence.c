/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): one input buffer (created read-write; the
 * kernel declares it const) is written once through the queue of device 1, then kernels on every
 * later device read it; each result is read back and checked, and finally the input is read back
 * through device 1's queue. Under distributed OpenCL with one device per rank, the input has to
 * move from rank 1 to the other ranks, and never back (tests/integration/cl/dist_coherence.sh).
 * Needs at least 3 devices. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void scale(__global const int *in, __global int *out, int k) {\n"
                         "  size_t i = get_global_id(0); out[i] = in[i] * k + (int)i;\n"
                         "}\n";

int main(void)
{
    enum { N = 300000 }; /* a little over one coherence chunk */
    cl_platform_id platform;
    cl_uint ndev = 0;
    cl_int err;
    first_platform_devices(&platform, 0, NULL, &ndev);
    if (ndev < 3) {
        fprintf(stderr, "needs at least 3 devices, found %u\n", ndev);
        return 2;
    }
    cl_device_id *dev = calloc(ndev, sizeof *dev);
    cl_command_queue *q = calloc(ndev, sizeof *q);
    cl_mem *out = calloc(ndev, sizeof *out);
    int *in = malloc(N * sizeof *in), *res = malloc(N * sizeof *res);
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndev, dev, NULL));
    cl_context ctx = clCreateContext(NULL, ndev, dev, NULL, NULL, &err);
    CHECK(err);
    for (cl_uint d = 0; d < ndev; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        out[d] = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof(int), NULL, &err);
        CHECK(err);
    }
    for (int i = 0; i < N; i++)
        in[i] = (int)(((long)i * 7919) % 100003);
    cl_mem input = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK(err);
    cl_event written;
    CHECK(clEnqueueWriteBuffer(q[1], input, CL_FALSE, 0, N * sizeof(int), in, 0, NULL, &written));
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK(err);
    size_t global = N;
    int bad = 0;
    long sum = 0;
    for (cl_uint d = 2; d < ndev; d++) {
        int factor = (int)d;
        cl_event done;
        CHECK(clSetKernelArg(k, 0, sizeof input, &input));
        CHECK(clSetKernelArg(k, 1, sizeof out[d], &out[d]));
        CHECK(clSetKernelArg(k, 2, sizeof factor, &factor));
        CHECK(clEnqueueNDRangeKernel(q[d], k, 1, NULL, &global, NULL, 1, &written, &done));
        CHECK(clWaitForEvents(1, &done));
        cl_int status = -1;
        CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        CHECK(clEnqueueReadBuffer(q[d], out[d], CL_TRUE, 0, N * sizeof(int), res, 0, NULL, NULL));
        int wrong = 0;
        for (int i = 0; i < N; i++) {
            if (res[i] != in[i] * factor + i)
                wrong++;
            sum += res[i];
        }
        printf("device %u: status=%d wrong=%d\n", d, status, wrong);
        bad += wrong;
        CHECK(clReleaseEvent(done));
    }
    printf("readers=%u sum=%ld\n", ndev - 2, sum);
    CHECK(clEnqueueReadBuffer(q[1], input, CL_TRUE, 0, N * sizeof(int), res, 0, NULL, NULL));
    int changed = 0;
    for (int i = 0; i < N; i++)
        changed += res[i] != in[i];
    printf("input unchanged: %d\n", changed == 0);
    bad += changed;
    CHECK(clReleaseEvent(written));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(input));
    for (cl_uint d = 0; d < ndev; d++) {
        CHECK(clReleaseMemObject(out[d]));
        CHECK(clReleaseCommandQueue(q[d]));
    }
    CHECK(clReleaseContext(ctx));
    free(dev);
    free(q);
    free(out);
    free(in);
    free(res);
    return bad != 0;
}
