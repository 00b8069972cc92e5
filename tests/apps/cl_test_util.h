/* SPDX-License-Identifier: MIT */
/* The error check, the platform/device picking, the context with a queue per device, size_t object queries
 * and the FNV-1a hash that the sample, conformance and distributed test programs (cl_conf_*, cl_dist_*,
 * cl_burst, cl_multi_device, cl_sample_util.h's users, ...) each had a copy of. Header-only because
 * tests/apps builds every .c file as a program of its own; it includes nothing beyond what the check needs,
 * so each program keeps its own feature macros (_GNU_SOURCE, CL_USE_DEPRECATED_*) ahead of <CL/cl.h>. Nothing
 * here knows of sluice or MPI. */
#ifndef SLUICE_TESTS_CL_TEST_UTIL_H
#define SLUICE_TESTS_CL_TEST_UTIL_H

#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Every failure is the failing call and its code on stderr, exit status 1. */
#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        cl_int e_ = (x);                                                                                     \
        if (e_ != CL_SUCCESS) {                                                                              \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, e_);                           \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* The first platform into *platform, then at most max of its devices of every type into devs and
 * their number into *n (devs or n may be NULL, as clGetDeviceIDs allows): the two calls these
 * programs start with, made exactly so. */
static inline void first_platform_devices(cl_platform_id *platform, cl_uint max, cl_device_id *devs,
                                          cl_uint *n)
{
    CHECK(clGetPlatformIDs(1, platform, NULL));
    CHECK(clGetDeviceIDs(*platform, CL_DEVICE_TYPE_ALL, max, devs, n));
}

/* One context over the nd devices and one default queue for each of them into q: how the
 * multi-device programs open. */
static inline cl_context context_with_queues(cl_uint nd, const cl_device_id *dev, cl_command_queue *q)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, nd, dev, NULL, NULL, &err);
    CHECK(err);
    for (cl_uint i = 0; i < nd; i++) {
        q[i] = clCreateCommandQueueWithProperties(ctx, dev[i], NULL, &err);
        CHECK(err);
    }
    return ctx;
}

/* The nd queues, then the context, each release checked. */
static inline void release_queues_context(cl_context ctx, cl_uint nd, const cl_command_queue *q)
{
    for (cl_uint i = 0; i < nd; i++)
        CHECK(clReleaseCommandQueue(q[i]));
    CHECK(clReleaseContext(ctx));
}

/* A size_t property of an image or of any memory object, the query checked. */
static inline size_t image_info_size(cl_mem img, cl_image_info what)
{
    size_t v = 0;
    CHECK(clGetImageInfo(img, what, sizeof v, &v, NULL));
    return v;
}

static inline size_t mem_info_size(cl_mem mem, cl_mem_info what)
{
    size_t v = 0;
    CHECK(clGetMemObjectInfo(mem, what, sizeof v, &v, NULL));
    return v;
}

/* FNV-1a of n bytes: results printed as one line each, compared between runs. */
static inline uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
