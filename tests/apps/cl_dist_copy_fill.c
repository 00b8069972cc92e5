/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): fills a buffer through the queue of device 1,
 * copies half of it into a second buffer through the queue of the last device, reads the copy
 * back through device 0's queue after a marker, and checks every element. Under distributed
 * OpenCL the buffers move between ranks (tests/integration/cl/dist_coherence.sh). Needs 3 devices. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    enum { N = 1 << 19 }; /* ints: 2 MiB, two coherence chunks */
    cl_platform_id platform;
    cl_uint ndev = 0;
    cl_int err;
    first_platform_devices(&platform, 0, NULL, &ndev);
    if (ndev < 3) {
        fprintf(stderr, "needs at least 3 devices, found %u\n", ndev);
        return 2;
    }
    cl_device_id dev[3];
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 3, dev, NULL));
    cl_context ctx = clCreateContext(NULL, 3, dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q[3];
    for (int d = 0; d < 3; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
    }
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK(err);
    int pattern = 0x5a5a1234, zero = 0;
    cl_event filled, copied, mark;
    CHECK(clEnqueueFillBuffer(q[1], a, &pattern, sizeof pattern, 0, N * sizeof(int), 0, NULL, &filled));
    CHECK(clEnqueueFillBuffer(q[2], b, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, NULL));
    CHECK(clEnqueueCopyBuffer(q[2], a, b, 0, N / 2 * sizeof(int), N / 2 * sizeof(int), 1, &filled, &copied));
    CHECK(clEnqueueMarkerWithWaitList(q[2], 1, &copied, &mark));
    CHECK(clWaitForEvents(1, &mark));
    cl_command_type type = 0;
    CHECK(clGetEventInfo(mark, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    int *out = malloc(N * sizeof *out);
    CHECK(clEnqueueReadBuffer(q[0], b, CL_TRUE, 0, N * sizeof(int), out, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += out[i] != (i < N / 2 ? 0 : pattern);
    printf("marker type ok: %d\n", type == CL_COMMAND_MARKER);
    printf("elements=%d wrong=%d first=%d last=%d\n", N, wrong, out[0], out[N - 1]);
    CHECK(clReleaseEvent(filled));
    CHECK(clReleaseEvent(copied));
    CHECK(clReleaseEvent(mark));
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    for (int d = 0; d < 3; d++)
        CHECK(clReleaseCommandQueue(q[d]));
    CHECK(clReleaseContext(ctx));
    free(out);
    return wrong != 0;
}
