/* SPDX-License-Identifier: MIT */
/* A kernel with 70 buffer arguments (69 inputs, one output), an ordinary OpenCL program: the
 * inputs are written through the last device's queue, the kernel runs on the second device (the
 * first with one device), so each input has to reach the kernel's device before it runs. Prints
 * the number of wrong results and the hash of the output: the same on any devices. Under
 * distributed OpenCL on 3 ranks every input moves rank 2 -> rank 1, and the kernel must wait for
 * all 69 moves (docs/DISTRIBUTED.md: uses past the 64th were once dropped). */
#include "cl_sample_util.h"

#define NIN 69
#define N 65536 /* ints per buffer */

int main(void)
{
    static char src[16384];
    size_t at = (size_t)snprintf(src, sizeof src, "__kernel void sum70(");
    for (int k = 0; k < NIN; k++)
        at += (size_t)snprintf(src + at, sizeof src - at, "__global const int *b%d, ", k);
    at += (size_t)snprintf(src + at, sizeof src - at,
                           "__global int *out) {\n size_t i = get_global_id(0);\n int s = 0;\n");
    for (int k = 0; k < NIN; k++)
        at += (size_t)snprintf(src + at, sizeof src - at, " s += %d * b%d[i];\n", k + 1, k);
    snprintf(src + at, sizeof src - at, " out[i] = s;\n}\n");

    struct sample_cl s;
    sample_cl_open(&s, src);
    cl_uint wdev = s.ndev - 1, kdev = s.ndev > 1 ? 1 : 0;
    cl_kernel k = sample_kernel(&s, "sum70");
    cl_mem in[NIN], out = sample_buffer(&s, CL_MEM_WRITE_ONLY, N * sizeof(cl_int));
    cl_int *host = sample_alloc((size_t)NIN * N * sizeof(cl_int));
    for (int b = 0; b < NIN; b++) {
        for (int i = 0; i < N; i++)
            host[(size_t)b * N + (size_t)i] = b * 1000 + i % 997;
        in[b] = sample_buffer(&s, CL_MEM_READ_WRITE, N * sizeof(cl_int));
        CHECK(clEnqueueWriteBuffer(s.q[wdev], in[b], CL_FALSE, 0, N * sizeof(cl_int), host + (size_t)b * N, 0,
                                   NULL, NULL));
        CHECK(clSetKernelArg(k, (cl_uint)b, sizeof(cl_mem), &in[b]));
    }
    CHECK(clSetKernelArg(k, NIN, sizeof(cl_mem), &out));
    cl_event written;
    CHECK(clEnqueueMarkerWithWaitList(s.q[wdev], 0, NULL, &written));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(s.q[kdev], k, 1, NULL, &global, NULL, 1, &written, NULL));
    cl_int *res = sample_alloc(N * sizeof(cl_int));
    CHECK(clEnqueueReadBuffer(s.q[kdev], out, CL_TRUE, 0, N * sizeof(cl_int), res, 0, NULL, NULL));
    long wrong = 0;
    for (int i = 0; i < N; i++) {
        long want = 0;
        for (int b = 0; b < NIN; b++)
            want += (long)(b + 1) * (b * 1000 + i % 997);
        wrong += res[i] != (cl_int)want;
    }
    printf("arguments: %d\n", NIN + 1);
    printf("wrong=%ld\n", wrong);
    printf("hash: %016llx\n", (unsigned long long)sample_fnv1a(SAMPLE_FNV_SEED, res, N * sizeof(cl_int)));
    CHECK(clReleaseEvent(written));
    for (int b = 0; b < NIN; b++)
        CHECK(clReleaseMemObject(in[b]));
    CHECK(clReleaseMemObject(out));
    CHECK(clReleaseKernel(k));
    sample_cl_close(&s);
    free(host);
    free(res);
    return wrong != 0;
}
