/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice or MPI): C = A x B for n x n float matrices,
 * split across every device of the first platform. A is cut in row blocks, one per device; B is
 * written whole to every device. Each device's writes are non-blocking and its kernel waits on
 * them through a wait list, its read waits on the kernel; every queue is finished at the end.
 *
 *   cl_matmul_split [n] [--time]      n defaults to 256
 *
 * Every element of C is one fixed-order loop over k (FP contraction off), so the result is
 * bit-identical whatever the number of devices. stdout: the size, "devices: N", three elements and
 * the FNV-1a hash of C. --time: the compute phase's wall time on stderr. Errors: the failing call
 * and its code on stderr, exit 1. */
#include "cl_sample_util.h"

static const char *src = "#pragma OPENCL FP_CONTRACT OFF\n"
                         "__kernel void matmul(__global const float *a, __global const float *b,\n"
                         "                     __global float *c, int n) {\n"
                         "  int j = get_global_id(0), i = get_global_id(1);\n"
                         "  float s = 0.0f;\n"
                         "  for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];\n"
                         "  c[i * n + j] = s;\n"
                         "}\n";

int main(int argc, char **argv)
{
    long arg[1] = {256};
    int timed;
    sample_args(argc, argv, arg, 1, &timed, "[n] [--time]");
    size_t n = (size_t)arg[0];
    printf("matmul n=%zu\n", n);

    struct sample_cl s;
    sample_cl_open(&s, src);
    sample_need_items(n, s.ndev, "rows");
    float *a = sample_alloc(n * n * sizeof *a), *b = sample_alloc(n * n * sizeof *b);
    float *c = sample_alloc(n * n * sizeof *c);
    /* Values that are not short binary fractions, so that a different summation order would show. */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < n; k++) {
            a[i * n + k] = (float)((i * 131 + k * 7) % 1009) / 1009.0f - 0.5f;
            b[i * n + k] = (float)((i * 17 + k * 5) % 997) / 997.0f - 0.25f;
        }
    }

    cl_mem *ab = sample_alloc(s.ndev * sizeof *ab), *bb = sample_alloc(s.ndev * sizeof *bb);
    cl_mem *cb = sample_alloc(s.ndev * sizeof *cb);
    cl_kernel *k = sample_alloc(s.ndev * sizeof *k);
    cl_event *ev = sample_alloc(s.ndev * 4 * sizeof *ev); /* per device: write A, write B, kernel, read */
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, rows;
        sample_split(n, s.ndev, d, &first, &rows);
        ab[d] = sample_buffer(&s, CL_MEM_READ_ONLY, rows * n * sizeof(float));
        bb[d] = sample_buffer(&s, CL_MEM_READ_ONLY, n * n * sizeof(float));
        cb[d] = sample_buffer(&s, CL_MEM_WRITE_ONLY, rows * n * sizeof(float));
        k[d] = sample_kernel(&s, "matmul");
        cl_int ni = (cl_int)n;
        CHECK(clSetKernelArg(k[d], 0, sizeof(cl_mem), &ab[d]));
        CHECK(clSetKernelArg(k[d], 1, sizeof(cl_mem), &bb[d]));
        CHECK(clSetKernelArg(k[d], 2, sizeof(cl_mem), &cb[d]));
        CHECK(clSetKernelArg(k[d], 3, sizeof ni, &ni));
    }

    double t0 = sample_now();
    /* Everything is enqueued on every device before any wait, so the devices work together. */
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, rows;
        sample_split(n, s.ndev, d, &first, &rows);
        cl_event *e = ev + 4 * d;
        CHECK(clEnqueueWriteBuffer(s.q[d], ab[d], CL_FALSE, 0, rows * n * sizeof(float), a + first * n, 0,
                                   NULL, &e[0]));
        CHECK(clEnqueueWriteBuffer(s.q[d], bb[d], CL_FALSE, 0, n * n * sizeof(float), b, 0, NULL, &e[1]));
        size_t global[2] = {n, rows};
        CHECK(clEnqueueNDRangeKernel(s.q[d], k[d], 2, NULL, global, NULL, 2, e, &e[2]));
        CHECK(clEnqueueReadBuffer(s.q[d], cb[d], CL_FALSE, 0, rows * n * sizeof(float), c + first * n, 1,
                                  &e[2], &e[3]));
        CHECK(clFlush(s.q[d]));
    }
    for (cl_uint d = 0; d < s.ndev; d++)
        CHECK(clFinish(s.q[d]));
    sample_report_time(timed, "matmul", &s, t0);

    printf("C[0][0]=%.9g C[%zu][%zu]=%.9g C[%zu][%zu]=%.9g\n", c[0], n / 2, n / 3, c[n / 2 * n + n / 3],
           n - 1, n - 1, c[n * n - 1]);
    printf("hash: %016llx\n", (unsigned long long)sample_fnv1a(SAMPLE_FNV_SEED, c, n * n * sizeof *c));

    sample_release_events(ev, s.ndev * 4);
    for (cl_uint d = 0; d < s.ndev; d++) {
        CHECK(clReleaseKernel(k[d]));
        CHECK(clReleaseMemObject(ab[d]));
        CHECK(clReleaseMemObject(bb[d]));
        CHECK(clReleaseMemObject(cb[d]));
    }
    sample_cl_close(&s);
    free(ev);
    free(k);
    free(cb);
    free(bb);
    free(ab);
    free(c);
    free(b);
    free(a);
    return 0;
}
