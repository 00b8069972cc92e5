/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice or MPI): one host array split in slices over
 * every device of the first platform. A step: the host writes each slice to its device
 * (non-blocking: a scatter), each device transforms its slice, the host reads every result slice
 * back into one array (non-blocking: a gather) and, without waiting, writes each result slice to
 * the next device, the write waiting on the read (a device-host-device copy), where a kernel adds
 * it to that slice's running sum. Then the host waits and derives the next step's input from the
 * results. At the end the host reads the running sums back, slice by slice, into a second array.
 *
 *   cl_scatter_gather [elements] [steps] [--rect] [--time]      defaults: 100003 elements, 6 steps
 *
 * --rect: the device-host-device copy is a clEnqueueWriteBufferRect of one row.
 *
 * Every element is one fixed-order expression (FP contraction off), so the result is
 * bit-identical whatever the number of devices. stdout: the sizes, "devices: N", a few results
 * and the FNV-1a hash of the final array and of the sums. --time: the compute phase's wall time on stderr.
 * Errors: the failing call and its code on stderr, exit 1. */
#include "cl_sample_util.h"

static const char *src = "#pragma OPENCL FP_CONTRACT OFF\n"
                         "__kernel void advance(__global const float *x, __global float *y, int t) {\n"
                         "  int i = get_global_id(0);\n"
                         "  y[i] = x[i] * 1.5f + (float)t;\n"
                         "}\n"
                         "__kernel void fold(__global float *sum, __global const float *z) {\n"
                         "  int i = get_global_id(0);\n"
                         "  sum[i] = sum[i] + z[i];\n"
                         "}\n";

int main(int argc, char **argv)
{
    /* --rect is this program's own flag; the rest is the samples' common convention. */
    int rect = 0, nargs = 0;
    char **args = sample_alloc((size_t)argc * sizeof *args);
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--rect") == 0)
            rect = 1;
        else
            args[nargs++] = argv[i];
    }
    long arg[2] = {100003, 6};
    int timed;
    sample_args(nargs, args, arg, 2, &timed, "[elements] [steps] [--rect] [--time]");
    free(args);
    size_t n = (size_t)arg[0];
    long steps = arg[1];
    printf("scatter_gather n=%zu steps=%ld\n", n, steps);

    struct sample_cl s;
    sample_cl_open(&s, src);
    sample_need_items(n, s.ndev, "elements");
    float *x = sample_alloc(n * sizeof *x), *y = sample_alloc(n * sizeof *y),
          *sums = sample_alloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i * 31 + 7) % 1009) / 1009.0f;
    size_t cap = n / s.ndev + 1; /* the largest slice */
    /* Per device: its input and result slices, the slice of the device before it and its sum. */
    cl_mem *xb = sample_alloc(s.ndev * sizeof *xb), *yb = sample_alloc(s.ndev * sizeof *yb),
           *zb = sample_alloc(s.ndev * sizeof *zb), *sb = sample_alloc(s.ndev * sizeof *sb);
    cl_kernel *ks = sample_alloc(s.ndev * sizeof *ks), *kf = sample_alloc(s.ndev * sizeof *kf);
    cl_event *wev = sample_alloc(s.ndev * sizeof *wev), *kev = sample_alloc(s.ndev * sizeof *kev),
             *rev = sample_alloc(s.ndev * sizeof *rev), *fev = sample_alloc(s.ndev * sizeof *fev);
    float zero = 0.0f;
    for (cl_uint d = 0; d < s.ndev; d++) {
        xb[d] = sample_buffer(&s, CL_MEM_READ_ONLY, cap * sizeof(float));
        yb[d] = sample_buffer(&s, CL_MEM_WRITE_ONLY, cap * sizeof(float));
        zb[d] = sample_buffer(&s, CL_MEM_READ_ONLY, cap * sizeof(float));
        sb[d] = sample_buffer(&s, CL_MEM_READ_WRITE, cap * sizeof(float));
        ks[d] = sample_kernel(&s, "advance");
        kf[d] = sample_kernel(&s, "fold");
        CHECK(clSetKernelArg(ks[d], 0, sizeof(cl_mem), &xb[d]));
        CHECK(clSetKernelArg(ks[d], 1, sizeof(cl_mem), &yb[d]));
        CHECK(clSetKernelArg(kf[d], 0, sizeof(cl_mem), &sb[d]));
        CHECK(clSetKernelArg(kf[d], 1, sizeof(cl_mem), &zb[d]));
        CHECK(clEnqueueFillBuffer(s.q[d], sb[d], &zero, sizeof zero, 0, cap * sizeof(float), 0, NULL, NULL));
    }
    double t0 = sample_now();
    for (long t = 0; t < steps; t++) {
        for (cl_uint d = 0; d < s.ndev; d++) { /* scatter */
            size_t first, count;
            sample_split(n, s.ndev, d, &first, &count);
            CHECK(clEnqueueWriteBuffer(s.q[d], xb[d], CL_FALSE, 0, count * sizeof(float), x + first, 0, NULL,
                                       &wev[d]));
        }
        for (cl_uint d = 0; d < s.ndev; d++) {
            size_t first, count;
            sample_split(n, s.ndev, d, &first, &count);
            cl_int tt = (cl_int)t;
            CHECK(clSetKernelArg(ks[d], 2, sizeof tt, &tt));
            CHECK(clEnqueueNDRangeKernel(s.q[d], ks[d], 1, NULL, &count, NULL, 1, &wev[d], &kev[d]));
        }
        for (cl_uint d = 0; d < s.ndev; d++) { /* gather */
            size_t first, count;
            sample_split(n, s.ndev, d, &first, &count);
            CHECK(clEnqueueReadBuffer(s.q[d], yb[d], CL_FALSE, 0, count * sizeof(float), y + first, 1,
                                      &kev[d], &rev[d]));
            CHECK(clFlush(s.q[d]));
        }
        for (cl_uint d = 0; d < s.ndev; d++) { /* device -> host -> next device, no wait on the host */
            size_t first, count;
            cl_uint e = (d + 1) % s.ndev;
            sample_split(n, s.ndev, d, &first, &count);
            if (rect) {
                size_t bo[3] = {0, 0, 0}, ho[3] = {first * sizeof(float), 0, 0},
                       region[3] = {count * sizeof(float), 1, 1};
                CHECK(clEnqueueWriteBufferRect(s.q[e], zb[e], CL_FALSE, bo, ho, region, 0, 0, 0, 0, y, 1,
                                               &rev[d], NULL));
            } else {
                CHECK(clEnqueueWriteBuffer(s.q[e], zb[e], CL_FALSE, 0, count * sizeof(float), y + first, 1,
                                           &rev[d], NULL));
            }
            CHECK(clEnqueueNDRangeKernel(s.q[e], kf[e], 1, NULL, &count, NULL, 0, NULL, &fev[e]));
            CHECK(clFlush(s.q[e]));
        }
        CHECK(clWaitForEvents(s.ndev, rev));
        CHECK(clWaitForEvents(s.ndev, fev));
        for (size_t i = 0; i < n; i++)
            x[i] = y[i] * 0.25f - (float)(i % 3) * 0.125f;
        sample_release_events(wev, s.ndev);
        sample_release_events(kev, s.ndev);
        sample_release_events(rev, s.ndev);
        sample_release_events(fev, s.ndev);
    }
    for (cl_uint d = 0; d < s.ndev; d++) { /* slice d's sum is on the device after it */
        size_t first, count;
        cl_uint e = (d + 1) % s.ndev;
        sample_split(n, s.ndev, d, &first, &count);
        CHECK(clEnqueueReadBuffer(s.q[e], sb[e], CL_FALSE, 0, count * sizeof(float), sums + first, 0, NULL,
                                  NULL));
    }
    for (cl_uint d = 0; d < s.ndev; d++)
        CHECK(clFinish(s.q[d]));
    sample_report_time(timed, "scatter_gather", &s, t0);

    printf("y[0]=%.6f y[n/2]=%.6f y[n-1]=%.6f sum[n-1]=%.6f\n", y[0], y[n / 2], y[n - 1], sums[n - 1]);
    uint64_t h = sample_fnv1a(SAMPLE_FNV_SEED, y, n * sizeof *y);
    printf("hash: %016llx\n", (unsigned long long)sample_fnv1a(h, sums, n * sizeof *sums));
    for (cl_uint d = 0; d < s.ndev; d++) {
        CHECK(clReleaseKernel(ks[d]));
        CHECK(clReleaseKernel(kf[d]));
        CHECK(clReleaseMemObject(xb[d]));
        CHECK(clReleaseMemObject(yb[d]));
        CHECK(clReleaseMemObject(zb[d]));
        CHECK(clReleaseMemObject(sb[d]));
    }
    sample_cl_close(&s);
    free(x);
    free(y);
    free(sums);
    free(xb);
    free(yb);
    free(zb);
    free(sb);
    free(ks);
    free(kf);
    free(wev);
    free(kev);
    free(rev);
    free(fev);
    return 0;
}
