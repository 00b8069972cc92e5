/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice or MPI): a 5-point Jacobi stencil on a rows x
 * cols float grid, split in row bands across every device of the first platform, with a halo
 * exchange through the host at every step. Each device holds its band plus one halo row above and
 * below, twice (ping-pong). A step: every device updates its band; the host reads the first and
 * last rows of each band (non-blocking, waiting on the kernel) and writes them as the halo rows of
 * the neighbouring bands (non-blocking); the next kernel waits on those writes. The grid's outer
 * rows and columns are fixed.
 *
 *   cl_stencil2d [rows] [cols] [steps] [--time]      defaults: 256 x 256, 40 steps
 *
 * Every cell is the same fixed-order sum at every step (FP contraction off), so the result is
 * bit-identical whatever the number of devices. stdout: the sizes, "devices: N", three cells and
 * the FNV-1a hash of the final grid. --time: the compute phase's wall time on stderr. Errors: the
 * failing call and its code on stderr, exit 1. */
#include "cl_sample_util.h"

static const char *src =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "/* in and out: the band with a halo row above and below; row r of the band is global row\n"
    "   first + r - 1. */\n"
    "__kernel void jacobi(__global const float *in, __global float *out, int first, int rows, int cols) {\n"
    "  int j = get_global_id(0), r = get_global_id(1) + 1;\n"
    "  int g = first + r - 1, c = r * cols + j;\n"
    "  if (g == 0 || g == rows - 1 || j == 0 || j == cols - 1) { out[c] = in[c]; return; }\n"
    "  float s = in[c] + in[c - cols];\n"
    "  s = s + in[c + cols];\n"
    "  s = s + in[c - 1];\n"
    "  s = s + in[c + 1];\n"
    "  out[c] = s * 0.2f;\n"
    "}\n";

/* The events that are set among a and b, as a wait list; returns how many. */
static cl_uint wait_list(cl_event *list, cl_event a, cl_event b)
{
    cl_uint n = 0;
    if (a)
        list[n++] = a;
    if (b)
        list[n++] = b;
    return n;
}

int main(int argc, char **argv)
{
    long arg[3] = {256, 256, 40};
    int timed;
    sample_args(argc, argv, arg, 3, &timed, "[rows] [cols] [steps] [--time]");
    size_t rows = (size_t)arg[0], cols = (size_t)arg[1];
    long steps = arg[2];
    if (rows < 3 || cols < 3) {
        fprintf(stderr, "stencil2d: the grid needs at least 3 x 3 cells\n");
        return 1;
    }
    printf("stencil2d rows=%zu cols=%zu steps=%ld\n", rows, cols, steps);

    struct sample_cl s;
    sample_cl_open(&s, src);
    sample_need_items(rows, s.ndev, "rows");
    size_t row_bytes = cols * sizeof(float);
    /* The grid with one zero row above and below, so that every band's first contents, halos
     * included, are one contiguous range. */
    float *grid = sample_alloc((rows + 2) * row_bytes);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            grid[(i + 1) * cols + j] = i == 0 ? 1.0f : (float)((i * 7 + j * 13) % 97) / 97.0f;

    cl_mem(*band)[2] = sample_alloc(s.ndev * sizeof *band);
    cl_kernel *k = sample_alloc(s.ndev * sizeof *k);
    float *top = sample_alloc(s.ndev * row_bytes),
          *bottom = sample_alloc(s.ndev * row_bytes); /* staged rows */
    cl_event *kev = sample_alloc(s.ndev * sizeof *kev), *rev = sample_alloc(2 * s.ndev * sizeof *rev);
    /* Per device, the last write into its top halo (or of its whole band) and into its bottom halo. */
    cl_event *up = sample_alloc(s.ndev * sizeof *up), *down = sample_alloc(s.ndev * sizeof *down);
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(rows, s.ndev, d, &first, &count);
        for (int b = 0; b < 2; b++)
            band[d][b] = sample_buffer(&s, CL_MEM_READ_WRITE, (count + 2) * row_bytes);
        k[d] = sample_kernel(&s, "jacobi");
        cl_int fi = (cl_int)first, ri = (cl_int)rows, ci = (cl_int)cols;
        CHECK(clSetKernelArg(k[d], 2, sizeof fi, &fi));
        CHECK(clSetKernelArg(k[d], 3, sizeof ri, &ri));
        CHECK(clSetKernelArg(k[d], 4, sizeof ci, &ci));
    }

    double t0 = sample_now();
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(rows, s.ndev, d, &first, &count);
        CHECK(clEnqueueWriteBuffer(s.q[d], band[d][0], CL_FALSE, 0, (count + 2) * row_bytes,
                                   grid + first * cols, 0, NULL, &up[d]));
    }
    int cur = 0;
    for (long t = 0; t < steps; t++) {
        for (cl_uint d = 0; d < s.ndev; d++) {
            size_t first, count;
            sample_split(rows, s.ndev, d, &first, &count);
            CHECK(clSetKernelArg(k[d], 0, sizeof(cl_mem), &band[d][cur]));
            CHECK(clSetKernelArg(k[d], 1, sizeof(cl_mem), &band[d][1 - cur]));
            size_t global[2] = {cols, count};
            cl_event wait[2];
            cl_uint nw = wait_list(wait, up[d], down[d]);
            CHECK(clEnqueueNDRangeKernel(s.q[d], k[d], 2, NULL, global, NULL, nw, nw ? wait : NULL, &kev[d]));
            CHECK(clFlush(s.q[d]));
        }
        cur = 1 - cur;
        if (s.ndev > 1 && t + 1 < steps) {
            /* The band's first row goes to the device above, its last row to the device below. A
             * staging row is overwritten only once the previous step's write from it is done. */
            cl_uint nr = 0;
            for (cl_uint d = 0; d < s.ndev; d++) {
                size_t first, count;
                sample_split(rows, s.ndev, d, &first, &count);
                cl_event wait[2];
                cl_uint nw;
                if (d > 0) {
                    nw = wait_list(wait, kev[d], down[d - 1]);
                    CHECK(clEnqueueReadBuffer(s.q[d], band[d][cur], CL_FALSE, row_bytes, row_bytes,
                                              top + d * cols, nw, wait, &rev[nr++]));
                }
                if (d + 1 < s.ndev) {
                    nw = wait_list(wait, kev[d], up[d + 1]);
                    CHECK(clEnqueueReadBuffer(s.q[d], band[d][cur], CL_FALSE, count * row_bytes, row_bytes,
                                              bottom + d * cols, nw, wait, &rev[nr++]));
                }
                CHECK(clFlush(s.q[d]));
            }
            CHECK(clWaitForEvents(nr, rev));
            sample_release_events(rev, nr);
            sample_release_events(up, s.ndev);
            sample_release_events(down, s.ndev);
            for (cl_uint d = 0; d < s.ndev; d++) {
                size_t first, count;
                sample_split(rows, s.ndev, d, &first, &count);
                if (d > 0)
                    CHECK(clEnqueueWriteBuffer(s.q[d], band[d][cur], CL_FALSE, 0, row_bytes,
                                               bottom + (d - 1) * cols, 0, NULL, &up[d]));
                if (d + 1 < s.ndev)
                    CHECK(clEnqueueWriteBuffer(s.q[d], band[d][cur], CL_FALSE, (count + 1) * row_bytes,
                                               row_bytes, top + (d + 1) * cols, 0, NULL, &down[d]));
            }
        } else {
            /* Nothing to exchange (one device, or the last step): the in-order queues order the rest. */
            sample_release_events(up, s.ndev);
            sample_release_events(down, s.ndev);
        }
        sample_release_events(kev, s.ndev);
    }
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(rows, s.ndev, d, &first, &count);
        CHECK(clEnqueueReadBuffer(s.q[d], band[d][cur], CL_FALSE, row_bytes, count * row_bytes,
                                  grid + (first + 1) * cols, 0, NULL, NULL));
    }
    for (cl_uint d = 0; d < s.ndev; d++)
        CHECK(clFinish(s.q[d]));
    sample_report_time(timed, "stencil2d", &s, t0);

    const float *g = grid + cols; /* without the padding row */
    printf("cell[1][1]=%.9g cell[%zu][%zu]=%.9g cell[%zu][%zu]=%.9g\n", g[cols + 1], rows / 2, cols / 2,
           g[rows / 2 * cols + cols / 2], rows - 2, cols - 2, g[(rows - 2) * cols + cols - 2]);
    printf("hash: %016llx\n", (unsigned long long)sample_fnv1a(SAMPLE_FNV_SEED, g, rows * row_bytes));

    for (cl_uint d = 0; d < s.ndev; d++) {
        CHECK(clReleaseKernel(k[d]));
        CHECK(clReleaseMemObject(band[d][0]));
        CHECK(clReleaseMemObject(band[d][1]));
    }
    sample_cl_close(&s);
    free(down);
    free(up);
    free(rev);
    free(kev);
    free(bottom);
    free(top);
    free(k);
    free(band);
    free(grid);
    return 0;
}
