/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice or MPI): an n-body simulation split across every
 * device of the first platform, with an all-to-all exchange through the host at every step. Each
 * device owns a block of bodies (their velocities stay on it) and holds a copy of all positions.
 * A step: every device computes the new positions of its block from all positions; the host reads
 * every block (non-blocking, waiting on the kernel), gathers them, and writes the full array to
 * every device (non-blocking); the next kernel waits on that write.
 *
 *   cl_nbody [bodies] [steps] [--time]      defaults: 1024 bodies, 10 steps
 *
 * Each body's acceleration is one fixed-order loop over all bodies (FP contraction off), so the
 * result is bit-identical whatever the number of devices. stdout: the sizes, "devices: N", three
 * bodies and the FNV-1a hash of the final positions and velocities. --time: the compute phase's
 * wall time on stderr. Errors: the failing call and its code on stderr, exit 1. */
#include "cl_sample_util.h"

static const char *src =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void nbody_step(__global const float4 *pos, __global float4 *vel, __global float4 *out,\n"
    "                   int first, int n, float dt) {\n"
    "  int l = get_global_id(0);\n"
    "  float4 p = pos[first + l];\n"
    "  float ax = 0.0f, ay = 0.0f, az = 0.0f;\n"
    "  for (int j = 0; j < n; j++) {\n"
    "    float4 q = pos[j];\n"
    "    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;\n"
    "    float d2 = dx * dx + dy * dy + dz * dz + 0.01f;\n"
    "    float inv = 1.0f / sqrt(d2);\n"
    "    float f = q.w * inv * inv * inv;\n"
    "    ax += dx * f; ay += dy * f; az += dz * f;\n"
    "  }\n"
    "  float4 v = vel[l];\n"
    "  v.x += ax * dt; v.y += ay * dt; v.z += az * dt;\n"
    "  vel[l] = v;\n"
    "  out[l] = (float4)(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);\n"
    "}\n";

int main(int argc, char **argv)
{
    long arg[2] = {1024, 10};
    int timed;
    sample_args(argc, argv, arg, 2, &timed, "[bodies] [steps] [--time]");
    size_t n = (size_t)arg[0];
    long steps = arg[1];
    printf("nbody bodies=%zu steps=%ld\n", n, steps);

    struct sample_cl s;
    sample_cl_open(&s, src);
    sample_need_items(n, s.ndev, "bodies");
    /* Two host copies of the positions: a step gathers into one while the writes of the previous
     * step may still read the other. */
    cl_float4 *host[2] = {sample_alloc(n * sizeof(cl_float4)), sample_alloc(n * sizeof(cl_float4))};
    cl_float4 *vel = sample_alloc(n * sizeof(cl_float4));
    for (size_t i = 0; i < n; i++) {
        host[0][i].s[0] = (float)((i * 37) % 101) / 101.0f - 0.5f;
        host[0][i].s[1] = (float)((i * 53) % 103) / 103.0f - 0.5f;
        host[0][i].s[2] = (float)((i * 71) % 107) / 107.0f - 0.5f;
        host[0][i].s[3] = (float)(1 + i % 3) / (float)n;
    }

    cl_mem *pos = sample_alloc(s.ndev * sizeof *pos), *vb = sample_alloc(s.ndev * sizeof *vb);
    cl_mem *out = sample_alloc(s.ndev * sizeof *out);
    cl_kernel *k = sample_alloc(s.ndev * sizeof *k);
    cl_event *wev = sample_alloc(s.ndev * sizeof *wev), *kev = sample_alloc(s.ndev * sizeof *kev);
    cl_event *rev = sample_alloc(s.ndev * sizeof *rev);
    cl_float dt = 0.01f;
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(n, s.ndev, d, &first, &count);
        pos[d] = sample_buffer(&s, CL_MEM_READ_ONLY, n * sizeof(cl_float4));
        vb[d] = sample_buffer(&s, CL_MEM_READ_WRITE, count * sizeof(cl_float4));
        out[d] = sample_buffer(&s, CL_MEM_WRITE_ONLY, count * sizeof(cl_float4));
        k[d] = sample_kernel(&s, "nbody_step");
        cl_int fi = (cl_int)first, ni = (cl_int)n;
        CHECK(clSetKernelArg(k[d], 0, sizeof(cl_mem), &pos[d]));
        CHECK(clSetKernelArg(k[d], 1, sizeof(cl_mem), &vb[d]));
        CHECK(clSetKernelArg(k[d], 2, sizeof(cl_mem), &out[d]));
        CHECK(clSetKernelArg(k[d], 3, sizeof fi, &fi));
        CHECK(clSetKernelArg(k[d], 4, sizeof ni, &ni));
        CHECK(clSetKernelArg(k[d], 5, sizeof dt, &dt));
    }

    double t0 = sample_now();
    cl_float zero = 0.0f;
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(n, s.ndev, d, &first, &count);
        CHECK(clEnqueueFillBuffer(s.q[d], vb[d], &zero, sizeof zero, 0, count * sizeof(cl_float4), 0, NULL,
                                  NULL));
        CHECK(clEnqueueWriteBuffer(s.q[d], pos[d], CL_FALSE, 0, n * sizeof(cl_float4), host[0], 0, NULL,
                                   &wev[d]));
    }
    int cur = 0;
    for (long t = 0; t < steps; t++) {
        for (cl_uint d = 0; d < s.ndev; d++) {
            size_t first, count;
            sample_split(n, s.ndev, d, &first, &count);
            CHECK(clEnqueueNDRangeKernel(s.q[d], k[d], 1, NULL, &count, NULL, 1, &wev[d], &kev[d]));
            CHECK(clEnqueueReadBuffer(s.q[d], out[d], CL_FALSE, 0, count * sizeof(cl_float4),
                                      host[1 - cur] + first, 1, &kev[d], &rev[d]));
            CHECK(clFlush(s.q[d]));
        }
        CHECK(clWaitForEvents(s.ndev, rev));
        sample_release_events(wev, s.ndev);
        sample_release_events(kev, s.ndev);
        sample_release_events(rev, s.ndev);
        cur = 1 - cur;
        if (t + 1 == steps)
            break;
        /* All to all: every device gets every block. */
        for (cl_uint d = 0; d < s.ndev; d++)
            CHECK(clEnqueueWriteBuffer(s.q[d], pos[d], CL_FALSE, 0, n * sizeof(cl_float4), host[cur], 0, NULL,
                                       &wev[d]));
    }
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(n, s.ndev, d, &first, &count);
        CHECK(clEnqueueReadBuffer(s.q[d], vb[d], CL_FALSE, 0, count * sizeof(cl_float4), vel + first, 0, NULL,
                                  NULL));
    }
    for (cl_uint d = 0; d < s.ndev; d++)
        CHECK(clFinish(s.q[d]));
    sample_release_events(wev, s.ndev);
    sample_report_time(timed, "nbody", &s, t0);

    size_t show[3] = {0, n / 2, n - 1};
    for (int i = 0; i < 3; i++) {
        size_t b = show[i];
        printf("body %zu: pos %.9g %.9g %.9g vel %.9g %.9g %.9g\n", b, host[cur][b].s[0], host[cur][b].s[1],
               host[cur][b].s[2], vel[b].s[0], vel[b].s[1], vel[b].s[2]);
    }
    uint64_t h = sample_fnv1a(SAMPLE_FNV_SEED, host[cur], n * sizeof(cl_float4));
    h = sample_fnv1a(h, vel, n * sizeof(cl_float4));
    printf("hash: %016llx\n", (unsigned long long)h);

    for (cl_uint d = 0; d < s.ndev; d++) {
        CHECK(clReleaseKernel(k[d]));
        CHECK(clReleaseMemObject(pos[d]));
        CHECK(clReleaseMemObject(vb[d]));
        CHECK(clReleaseMemObject(out[d]));
    }
    sample_cl_close(&s);
    free(rev);
    free(kev);
    free(wev);
    free(k);
    free(out);
    free(vb);
    free(pos);
    free(vel);
    free(host[1]);
    free(host[0]);
    return 0;
}
