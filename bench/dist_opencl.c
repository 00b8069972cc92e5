/* SPDX-License-Identifier: MIT */
/* Benchmark: one OpenCL device's command round trip and transfer bandwidth, as a plain OpenCL
 * program (no MPI, no sluice in it). The same binary measures a local device (run alone) and a
 * remote one (run on rank 0 under sluice's distributed OpenCL, the device picked with
 * SLUICE_DEVICES or --device), so the two differ only in where the device is.
 * bench/dist_opencl.sh runs it both ways beside raw MPI and prints the tables.
 *
 *   sluice-bench-dist_opencl [--device N] [--no-latency] [--no-bandwidth] [common options]
 *   sluice-bench-dist_opencl --list      (one "device" line per device, then exits)
 *
 * --device N is the device's position in the list of every device of every platform, platform
 * by platform (default 0). Measures, on one in-order queue of a context over that device alone:
 *   latency: an empty kernel (global size 1) enqueued and clFinish'ed, --lat-reps times after 10
 *            warm-ups; median, p10 and p90 of one round trip;
 *   write / read: blocking clEnqueueWriteBuffer / clEnqueueReadBuffer of each size at offset 0
 *            of one buffer of the largest size (written whole once first, so that the device
 *            holds valid data), one warm-up and then dist_reps_for() repetitions per size;
 *            GB/s (10^9 bytes per second) from the median time.
 * Output on stdout, one fact per line, for the driver script (and readable as is):
 *   device <N> <platform name> | <device name> | <type>
 *   latency_us <median> <p10> <p90> <reps>
 *   write <bytes> <reps> <GB/s> <median us>     (and read ...)
 * Never passes or fails on timing: exit 1 only when an OpenCL call fails. */
#define CL_TARGET_OPENCL_VERSION 300
#include "dist_bench.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "sluice-bench-dist_opencl"
#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        cl_int e_ = (x);                                                                                     \
        if (e_ != CL_SUCCESS) {                                                                              \
            fprintf(stderr, PROG ": %s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, e_);                    \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

struct target {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
};

static void print_device(unsigned idx, const struct target *t)
{
    char pname[256] = "", dname[256] = "";
    cl_device_type type = 0;
    CHECK(clGetPlatformInfo(t->platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    CHECK(clGetDeviceInfo(t->device, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    CHECK(clGetDeviceInfo(t->device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    const char *ts = (type & CL_DEVICE_TYPE_GPU)           ? "gpu"
                     : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
                     : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                           : "other";
    printf("device %u %s | %s | %s\n", idx, pname, dname, ts);
    fflush(stdout);
}

/* Finds the `want`-th device over all platforms, in platform order; with `list`, prints every
 * device instead and exits. */
static void pick_device(unsigned want, int list, struct target *t)
{
    cl_platform_id plats[64];
    cl_uint np = 0, seen = 0;
    CHECK(clGetPlatformIDs(64, plats, &np));
    for (cl_uint p = 0; p < np && p < 64; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *d = calloc(nd, sizeof *d);
        CHECK(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, d, NULL));
        for (cl_uint i = 0; i < nd; i++, seen++) {
            t->platform = plats[p];
            t->device = d[i];
            if (list)
                print_device(seen, t);
            else if (seen == want) {
                free(d);
                return;
            }
        }
        free(d);
    }
    if (list)
        exit(0);
    fprintf(stderr, PROG ": no device %u (there are %u)\n", want, seen);
    exit(1);
}

static void measure_latency(const struct target *t, int reps)
{
    static const char *src = "__kernel void empty(void) {}\n";
    cl_int err;
    cl_program prog = clCreateProgramWithSource(t->ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &t->device, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "empty", &err);
    CHECK(err);
    size_t gws = 1;
    double *dt = malloc((size_t)reps * sizeof *dt);
    for (int i = -10; i < reps; i++) {
        double t0 = dist_now();
        CHECK(clEnqueueNDRangeKernel(t->q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CHECK(clFinish(t->q));
        if (i >= 0)
            dt[i] = dist_now() - t0;
    }
    struct dist_stats s = dist_stats_of(dt, reps);
    printf("latency_us %.1f %.1f %.1f %d\n", s.median * 1e6, s.p10 * 1e6, s.p90 * 1e6, reps);
    fflush(stdout);
    free(dt);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

/* One direction of the sweep: blocking transfers of each size between `host` and `buf`. */
static void sweep(const struct target *t, const struct dist_opts *o, cl_mem buf, char *host, int write)
{
    for (int s = 0; s < o->nsizes; s++) {
        size_t size = o->sizes[s];
        int reps = dist_reps_for(o, size);
        double *dt = malloc((size_t)reps * sizeof *dt);
        for (int i = -1; i < reps; i++) {
            double t0 = dist_now();
            if (write)
                CHECK(clEnqueueWriteBuffer(t->q, buf, CL_TRUE, 0, size, host, 0, NULL, NULL));
            else
                CHECK(clEnqueueReadBuffer(t->q, buf, CL_TRUE, 0, size, host, 0, NULL, NULL));
            if (i >= 0)
                dt[i] = dist_now() - t0;
        }
        struct dist_stats st = dist_stats_of(dt, reps);
        printf("%s %zu %d %.3f %.1f\n", write ? "write" : "read", size, reps, (double)size / st.median / 1e9,
               st.median * 1e6);
        fflush(stdout);
        free(dt);
    }
}

static void measure_bandwidth(const struct target *t, const struct dist_opts *o)
{
    size_t max = 0;
    for (int s = 0; s < o->nsizes; s++)
        max = o->sizes[s] > max ? o->sizes[s] : max;
    char *host = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
    if (!host) {
        fprintf(stderr, PROG ": no memory for %zu bytes\n", max);
        exit(1);
    }
    memset(host, 0x5a, max); /* touch every page before timing */
    cl_int err;
    cl_mem buf = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, max, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(t->q, buf, CL_TRUE, 0, max, host, 0, NULL, NULL));
    sweep(t, o, buf, host, 1);
    sweep(t, o, buf, host, 0);
    clReleaseMemObject(buf);
    free(host);
}

static void usage(void)
{
    fprintf(stderr, "usage: " PROG " [--device N | --list] [--no-latency] [--no-bandwidth] [options]\n%s",
            dist_common_usage);
}

int main(int argc, char **argv)
{
    struct dist_opts o;
    dist_default_opts(&o);
    unsigned device = 0;
    int latency = 1, bandwidth = 1, list = 0;
    for (int i = 1; i < argc; i++) {
        int r = dist_common_opt(&o, argc, argv, &i, PROG);
        if (r == 1)
            continue;
        if (r == 0 && strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = (unsigned)atoi(argv[++i]);
        else if (r == 0 && strcmp(argv[i], "--list") == 0)
            list = 1;
        else if (r == 0 && strcmp(argv[i], "--no-latency") == 0)
            latency = 0;
        else if (r == 0 && strcmp(argv[i], "--no-bandwidth") == 0)
            bandwidth = 0;
        else {
            usage();
            return 2;
        }
    }
    struct target t;
    pick_device(device, list, &t);
    print_device(device, &t);
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)t.platform, 0};
    t.ctx = clCreateContext(props, 1, &t.device, NULL, NULL, &err);
    CHECK(err);
    t.q = clCreateCommandQueueWithProperties(t.ctx, t.device, NULL, &err);
    CHECK(err);
    if (latency)
        measure_latency(&t, o.lat_reps);
    if (bandwidth)
        measure_bandwidth(&t, &o);
    clReleaseCommandQueue(t.q);
    clReleaseContext(t.ctx);
    return 0;
}
