/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): the rect variants across devices. Device 1
 * gets a 3-D block written with host pitches into a bigger buffer, device 2 reads a sub-block
 * back with other pitches (blocking and non-blocking), device 0 copies a rect to another
 * buffer, and a blocking rect read checks it. Prints sums and a few values (the same with 3 local
 * devices or 3 ranks). */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 64, H = 32, D = 4 }; /* the buffer: W x H x D bytes */

static long sum(const unsigned char *p, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i++)
        s += (long)p[i] * (long)(i % 7 + 1);
    return s;
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev[3];
    cl_uint nd = 0;
    cl_int err;
    first_platform_devices(&platform, 3, dev, &nd);
    if (nd < 2) {
        fprintf(stderr, "needs 2 devices\n");
        return 1;
    }
    cl_command_queue q[3];
    cl_context ctx = context_with_queues(nd, dev, q);
    cl_uint a = 1 % nd, b = 2 % nd, c = 0;
    unsigned char zero[W * H * D];
    memset(zero, 0, sizeof zero);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    CHECK(err);
    cl_mem other = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    CHECK(err);

    /* Host block 40 x 20 x 3 in a host array with row pitch 50 and slice pitch 50 * 24. */
    enum { HR = 50, HS = 50 * 24 };
    unsigned char *host = malloc(HS * 4);
    for (int i = 0; i < HS * 4; i++)
        host[i] = (unsigned char)(i * 31 + 7);
    size_t bo[3] = {5, 3, 1}, ho[3] = {2, 1, 0}, region[3] = {40, 20, 3};
    CHECK(
        clEnqueueWriteBufferRect(q[a], buf, CL_TRUE, bo, ho, region, W, W * H, HR, HS, host, 0, NULL, NULL));

    /* Device b reads a sub-block 30 x 10 x 2 packed (pitches 0), blocking. */
    unsigned char back[30 * 10 * 2];
    size_t bo2[3] = {10, 8, 2}, ho0[3] = {0, 0, 0}, region2[3] = {30, 10, 2};
    CHECK(
        clEnqueueReadBufferRect(q[b], buf, CL_TRUE, bo2, ho0, region2, W, W * H, 0, 0, back, 0, NULL, NULL));
    printf("read rect on device %u: sum %ld first %d last %d\n", b, sum(back, sizeof back), back[0],
           back[sizeof back - 1]);

    /* Non-blocking, into a host array with pitches 32 and 32 * 12, origin (1, 1, 0). */
    unsigned char *wide = calloc(32 * 12 * 2, 1);
    cl_event ev;
    size_t ho1[3] = {1, 1, 0}, region3[3] = {30, 10, 2};
    CHECK(clEnqueueReadBufferRect(q[b], buf, CL_FALSE, bo2, ho1, region3, W, W * H, 32, 32 * 12, wide, 0,
                                  NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    printf("non-blocking read rect: sum %ld corner %d inside %d\n", sum(wide, 32 * 12 * 2), wide[0],
           wide[32 + 1]);

    /* Device c copies a 16 x 8 x 2 rect of buf into other, then reads it back whole. */
    size_t so[3] = {6, 4, 1}, dor[3] = {0, 2, 0}, region4[3] = {16, 8, 2};
    CHECK(clEnqueueCopyBufferRect(q[c], buf, other, so, dor, region4, W, W * H, W, W * H, 0, NULL, NULL));
    unsigned char *all = malloc(W * H * D);
    CHECK(clEnqueueReadBuffer(q[c], other, CL_TRUE, 0, W * H * D, all, 0, NULL, NULL));
    printf("copy rect on device %u: sum %ld at (0,2,0) %d at (15,9,1) %d\n", c, sum(all, W * H * D),
           all[2 * W], all[W * H + 9 * W + 15]);
    CHECK(clEnqueueReadBuffer(q[a], buf, CL_TRUE, 0, W * H * D, all, 0, NULL, NULL));
    printf("whole buffer: sum %ld\n", sum(all, W * H * D));

    CHECK(clReleaseEvent(ev));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseMemObject(other));
    release_queues_context(ctx, nd, q);
    free(host);
    free(wide);
    free(all);
    return 0;
}
