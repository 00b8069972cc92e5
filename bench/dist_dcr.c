/* SPDX-License-Identifier: MIT */
/* Broadcast benchmark of collective replacement (bench/dist_dcr.sh drives it): a plain OpenCL
 * program that writes one host array to a buffer on every device it sees, non-blocking, then
 * clFinish on every queue, `reps` times, and prints the median time of one such broadcast. Run
 * under distributed OpenCL with SLUICE_DEVICES selecting the serving ranks' devices, rank 0 sends
 * the array once per device (SLUICE_DCR=off) or roots one MPI broadcast (on).
 *
 *   sluice-bench-dist_dcr SIZE REPS      (SIZE in bytes, K/M/G suffixes)
 * Output: "bcast bytes=N devices=K reps=R median_s=T p10_s=A p90_s=B" on stdout. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "dist_bench.h"

#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        cl_int e_ = (x);                                                                                     \
        if (e_ != CL_SUCCESS) {                                                                              \
            fprintf(stderr, "dist_dcr: %s failed: %d\n", #x, e_);                                            \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SIZE REPS\n", argv[0]);
        return 2;
    }
    size_t size = dist_parse_size(argv[1]);
    int reps = atoi(argv[2]);
    if (size == 0 || reps < 1) {
        fprintf(stderr, "dist_dcr: bad SIZE or REPS\n");
        return 2;
    }
    cl_platform_id plat;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    cl_uint ndev = 0;
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &ndev));
    cl_device_id *dev = malloc(ndev * sizeof *dev);
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, ndev, dev, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, ndev, dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue *q = malloc(ndev * sizeof *q);
    cl_mem *buf = malloc(ndev * sizeof *buf);
    unsigned char *host = malloc(size);
    for (size_t i = 0; i < size; i++)
        host[i] = (unsigned char)(i * 131u + 7u);
    for (cl_uint d = 0; d < ndev; d++) {
        q[d] = clCreateCommandQueue(ctx, dev[d], 0, &err);
        CHECK(err);
        buf[d] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
        CHECK(err);
    }
    double *t = malloc((size_t)(reps + 1) * sizeof *t);
    for (int r = -1; r < reps; r++) { /* one warm-up round (communicators, staging buffers) */
        double t0 = dist_now();
        for (cl_uint d = 0; d < ndev; d++)
            CHECK(clEnqueueWriteBuffer(q[d], buf[d], CL_FALSE, 0, size, host, 0, NULL, NULL));
        for (cl_uint d = 0; d < ndev; d++)
            CHECK(clFinish(q[d]));
        if (r >= 0)
            t[r] = dist_now() - t0;
    }
    /* What arrived is what was sent (the last device's copy, checked once). */
    unsigned char *back = malloc(size);
    CHECK(clEnqueueReadBuffer(q[ndev - 1], buf[ndev - 1], CL_TRUE, 0, size, back, 0, NULL, NULL));
    if (memcmp(back, host, size) != 0) {
        fprintf(stderr, "dist_dcr: device %u holds other bytes\n", ndev - 1);
        return 1;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    printf("bcast bytes=%zu devices=%u reps=%d median_s=%.6f p10_s=%.6f p90_s=%.6f\n", size, ndev, reps,
           t[reps / 2], t[reps / 10], t[(reps * 9) / 10]);
    for (cl_uint d = 0; d < ndev; d++) {
        clReleaseMemObject(buf[d]);
        clReleaseCommandQueue(q[d]);
    }
    clReleaseContext(ctx);
    free(back);
    free(t);
    free(host);
    free(buf);
    free(q);
    free(dev);
    return 0;
}
