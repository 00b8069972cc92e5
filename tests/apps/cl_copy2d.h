/* SPDX-License-Identifier: MIT */
/* The loop of the conformance suite's copy_2D, shared by the distributed image test programs
 * (cl_dist_creations, cl_dist_image_answers): per iteration and device a source image of changing
 * size written, a destination image, a copy between them and a blocking read checked against the
 * source, both released. Nothing here knows of sluice or MPI. */
#ifndef SLUICE_TESTS_CL_COPY2D_H
#define SLUICE_TESTS_CL_COPY2D_H

#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The conformance suite's copy_2D loop: images of changing size made, written, copied, read back
 * and released, one pair per iteration and device. */
static inline int copy2d(cl_context ctx, cl_uint nd, const cl_device_id *dev, int iters, int timed)
{
    cl_int err;
    cl_command_queue q[8];
    for (cl_uint d = 0; d < nd; d++) {
        q[d] = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
    }
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    int bad = 0;
    double t0 = now_s();
    unsigned char *src = malloc(64 * 32 * 4), *dst = malloc(64 * 32 * 4);
    for (int it = 0; it < iters; it++)
        for (cl_uint d = 0; d < nd; d++) {
            size_t w = 17 + (size_t)(it * 7 % 41), h = 5 + (size_t)(it * 3 % 23);
            cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = h};
            cl_mem a = clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
            CHECK(err);
            cl_mem b = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &fmt, &desc, NULL, &err);
            CHECK(err);
            for (size_t k = 0; k < w * h * 4; k++)
                src[k] = (unsigned char)(k * 5 + (size_t)it + d);
            size_t o[3] = {0, 0, 0}, reg[3] = {w, h, 1};
            CHECK(clEnqueueWriteImage(q[d], a, CL_FALSE, o, reg, 0, 0, src, 0, NULL, NULL));
            CHECK(clEnqueueCopyImage(q[d], a, b, o, o, reg, 0, NULL, NULL));
            CHECK(clEnqueueReadImage(q[d], b, CL_TRUE, o, reg, 0, 0, dst, 0, NULL, NULL));
            bad += memcmp(src, dst, w * h * 4) != 0;
            CHECK(clReleaseMemObject(a));
            CHECK(clReleaseMemObject(b));
        }
    double t = now_s() - t0;
    printf("copy2d: %d iterations on %u devices, %d mismatches\n", iters, nd, bad);
    if (timed)
        printf("copy2d seconds: %.4f (%.1f us per image pair)\n", t, t * 1e6 / (iters * (double)nd));
    free(src), free(dst);
    for (cl_uint d = 0; d < nd; d++)
        CHECK(clReleaseCommandQueue(q[d]));
    return bad != 0;
}

#endif
