/* SPDX-License-Identifier: MIT */
/* Host code shared by the sample programs of docs/DISTRIBUTED.md (cl_matmul_split, cl_nbody, cl_stencil2d,
 * cl_broadcast): what any program written for several local GPUs has once. Error checks that name
 * the failing call, one context over every device of the first platform with one in-order queue
 * per device, the argv convention ("[numbers...] [--time]"), the partition of n items over the
 * devices, the FNV-1a hash of a result and the compute-phase timer. Header-only (static functions)
 * because tests/apps builds every .c file as a program of its own. Nothing here knows of sluice or
 * MPI. */
#ifndef SLUICE_TESTS_CL_SAMPLE_UTIL_H
#define SLUICE_TESTS_CL_SAMPLE_UTIL_H

#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */

#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: OpenCL 1.2 programs use it */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_test_util.h" /* CHECK */

/* For calls that return an object and give their code through the last argument. */
#define CHECK_ERR(what, err)                                                                                 \
    do {                                                                                                     \
        if ((err) != CL_SUCCESS) {                                                                           \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, what, err);                        \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

struct sample_cl {
    cl_platform_id platform;
    cl_uint ndev;
    cl_device_id *dev;
    cl_context ctx;
    cl_command_queue *q; /* one in-order queue per device */
    cl_program prog;
};

/* Positional numbers into vals (defaults kept where absent), "--time" into *timed. Anything else
 * prints the usage on stderr and exits 2. */
static inline void sample_args(int argc, char **argv, long *vals, int nvals, int *timed, const char *usage)
{
    int pos = 0;
    *timed = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = strtol(argv[i], &end, 10);
        if (strcmp(argv[i], "--time") == 0) {
            *timed = 1;
        } else if (pos < nvals && end != argv[i] && *end == '\0' && v > 0) {
            vals[pos++] = v;
        } else {
            fprintf(stderr, "usage: %s %s\n", argv[0], usage);
            exit(2);
        }
    }
}

/* Every device of the first platform, one context, one in-order queue each, the program built for
 * all of them. Prints "devices: N" (the only line that depends on the device count). */
static inline void sample_cl_open(struct sample_cl *s, const char *src)
{
    cl_int err;
    CHECK(clGetPlatformIDs(1, &s->platform, NULL));
    CHECK(clGetDeviceIDs(s->platform, CL_DEVICE_TYPE_ALL, 0, NULL, &s->ndev));
    s->dev = calloc(s->ndev, sizeof *s->dev);
    s->q = calloc(s->ndev, sizeof *s->q);
    if (!s->dev || !s->q) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    CHECK(clGetDeviceIDs(s->platform, CL_DEVICE_TYPE_ALL, s->ndev, s->dev, NULL));
    printf("devices: %u\n", s->ndev);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, 0};
    s->ctx = clCreateContext(props, s->ndev, s->dev, NULL, NULL, &err);
    CHECK_ERR("clCreateContext", err);
    for (cl_uint d = 0; d < s->ndev; d++) {
        s->q[d] = clCreateCommandQueue(s->ctx, s->dev[d], 0, &err);
        CHECK_ERR("clCreateCommandQueue", err);
    }
    s->prog = clCreateProgramWithSource(s->ctx, 1, &src, NULL, &err);
    CHECK_ERR("clCreateProgramWithSource", err);
    err = clBuildProgram(s->prog, s->ndev, s->dev, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(s->prog, s->dev[0], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "clBuildProgram failed: %d\n%s\n", err, log);
        exit(1);
    }
}

static inline void sample_cl_close(struct sample_cl *s)
{
    for (cl_uint d = 0; d < s->ndev; d++)
        CHECK(clReleaseCommandQueue(s->q[d]));
    CHECK(clReleaseProgram(s->prog));
    CHECK(clReleaseContext(s->ctx));
    free(s->q);
    free(s->dev);
}

static inline cl_kernel sample_kernel(const struct sample_cl *s, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(s->prog, name, &err);
    CHECK_ERR("clCreateKernel", err);
    return k;
}

static inline cl_mem sample_buffer(const struct sample_cl *s, cl_mem_flags flags, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(s->ctx, flags, bytes, NULL, &err);
    CHECK_ERR("clCreateBuffer", err);
    return m;
}

static inline void *sample_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Device d of ndev gets items [*first, *first + *count) of n: contiguous blocks in device order,
 * sizes differing by at most one. */
static inline void sample_split(size_t n, cl_uint ndev, cl_uint d, size_t *first, size_t *count)
{
    *first = n * d / ndev;
    *count = n * (d + 1) / ndev - *first;
}

/* A partition into blocks needs at least one item per device. */
static inline void sample_need_items(size_t n, cl_uint ndev, const char *what)
{
    if (n < ndev) {
        fprintf(stderr, "%s: %zu is fewer than the %u devices\n", what, n, ndev);
        exit(1);
    }
}

/* FNV-1a, 64 bits, over the bytes of the result: equal hashes mean bit-identical results. */
static inline uint64_t sample_fnv1a(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define SAMPLE_FNV_SEED 0xcbf29ce484222325ull

static inline double sample_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* With --time: the wall time of the compute phase (first transfer to last result) on stderr, so
 * that stdout stays the same whatever the timing. */
static inline void sample_report_time(int timed, const char *name, const struct sample_cl *s, double t0)
{
    if (timed)
        fprintf(stderr, "%s: compute %.6f s on %u devices\n", name, sample_now() - t0, s->ndev);
}

static inline void sample_release_events(cl_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ev[i]) {
            CHECK(clReleaseEvent(ev[i]));
            ev[i] = NULL;
        }
    }
}

#endif
