/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice or MPI): one input vector broadcast to every
 * device of the first platform, each device computing different things with it. There are
 * `tasks` fixed transformations of the input (even tasks: a strided, weighted window sum; odd
 * tasks: a polynomial), shared out in blocks over the devices; each task is one kernel launch.
 * By default the host writes the input to a buffer on every device (non-blocking) and each
 * device's kernels wait on its write. With --shared there is one input buffer, written once
 * through the first device's queue, and every device's kernels wait on that one write event
 * (so the implementation moves the data to the other devices). With --inloop each device is set
 * up as many programs do it, inside the loop that writes the input: create its queue, buffers and
 * kernels, write the input, ask the write's status and the buffer's size, set a kernel argument, flush;
 * next device.
 *
 *   cl_broadcast [elements] [tasks] [--shared | --inloop] [--time]   defaults: 262144 elements, 8 tasks
 *
 * Every output element is one fixed-order loop (FP contraction off), so the result is
 * bit-identical whatever the number of devices and in both modes. stdout: the sizes, "devices:
 * N", a few outputs and the FNV-1a hash of all outputs. --time: the compute phase's wall time on
 * stderr. Errors: the failing call and its code on stderr, exit 1. */
#include "cl_sample_util.h"

static const char *src =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void window(__global const float *x, __global float *y, int n, int t, int yoff) {\n"
    "  int i = get_global_id(0);\n"
    "  float s = 0.0f;\n"
    "  for (int k = 0; k < 4 + t; k++) s += x[(i + k * (t + 1)) % n] / (float)(k + 1 + t);\n"
    "  y[yoff + i] = s;\n"
    "}\n"
    "__kernel void poly(__global const float *x, __global float *y, int n, int t, int yoff) {\n"
    "  int i = get_global_id(0);\n"
    "  float v = x[i], s = 0.0f;\n"
    "  for (int k = 3 + t; k >= 0; k--) s = s * v + (float)((k * 7 + t) % 11 - 5) * 0.37f;\n"
    "  y[yoff + i] = s;\n"
    "}\n";

/* Device d's input and output buffers and its two kernels. */
static void setup_device(const struct sample_cl *s, cl_uint d, int shared, size_t tasks, size_t n, cl_mem *xb,
                         cl_mem *yb, cl_kernel (*k)[2])
{
    if (!shared || d == 0)
        xb[d] = sample_buffer(s, CL_MEM_READ_ONLY, n * sizeof(float));
    else
        xb[d] = xb[0];
    size_t first, count;
    sample_split(tasks, s->ndev, d, &first, &count);
    if (count > 0)
        yb[d] = sample_buffer(s, CL_MEM_WRITE_ONLY, count * n * sizeof(float));
    k[d][0] = sample_kernel(s, "window");
    k[d][1] = sample_kernel(s, "poly");
}

int main(int argc, char **argv)
{
    /* --shared is this program's own flag; the rest is the samples' common convention. */
    int shared = 0, inloop = 0, nargs = 0;
    char **args = sample_alloc((size_t)argc * sizeof *args);
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--shared") == 0)
            shared = 1;
        else if (i > 0 && strcmp(argv[i], "--inloop") == 0)
            inloop = 1;
        else
            args[nargs++] = argv[i];
    }
    long arg[2] = {262144, 8};
    int timed;
    sample_args(nargs, args, arg, 2, &timed, "[elements] [tasks] [--shared | --inloop] [--time]");
    shared = shared && !inloop;
    free(args);
    size_t n = (size_t)arg[0], tasks = (size_t)arg[1];
    printf("broadcast elements=%zu tasks=%zu\n", n, tasks);

    struct sample_cl s;
    sample_cl_open(&s, src);
    float *x = sample_alloc(n * sizeof *x), *y = sample_alloc(tasks * n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i * 40503) % 10007) / 10007.0f - 0.5f;

    cl_mem *xb = sample_alloc(s.ndev * sizeof *xb), *yb = sample_alloc(s.ndev * sizeof *yb);
    cl_kernel(*k)[2] = sample_alloc(s.ndev * sizeof *k); /* window, poly */
    cl_event *wev = sample_alloc(s.ndev * sizeof *wev);
    cl_command_queue *helper_q = sample_alloc(s.ndev * sizeof *helper_q);
    memcpy(helper_q, s.q, s.ndev * sizeof *helper_q);
    for (cl_uint d = 0; d < s.ndev && !inloop; d++)
        setup_device(&s, d, shared, tasks, n, xb, yb, k);

    double t0 = sample_now();
    for (cl_uint d = 0; d < (shared ? 1 : s.ndev); d++) {
        if (inloop) {
            cl_int err;
            s.q[d] = clCreateCommandQueueWithProperties(s.ctx, s.dev[d], NULL, &err);
            CHECK_ERR("clCreateCommandQueueWithProperties", err);
            setup_device(&s, d, shared, tasks, n, xb, yb, k);
        }
        CHECK(clEnqueueWriteBuffer(s.q[d], xb[d], CL_FALSE, 0, n * sizeof(float), x, 0, NULL, &wev[d]));
        if (inloop) {
            cl_int status;
            size_t bytes;
            CHECK(clGetEventInfo(wev[d], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
            CHECK(clGetMemObjectInfo(xb[d], CL_MEM_SIZE, sizeof bytes, &bytes, NULL));
            cl_int elements = (cl_int)n;
            CHECK(clSetKernelArg(k[d][0], 2, sizeof elements, &elements));
            CHECK(clFlush(s.q[d]));
        }
    }
    cl_int ni = (cl_int)n;
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(tasks, s.ndev, d, &first, &count);
        cl_event *input = &wev[shared ? 0 : d];
        for (size_t t = first; t < first + count; t++) {
            cl_kernel kt = k[d][t % 2];
            cl_int ti = (cl_int)t, yoff = (cl_int)((t - first) * n);
            CHECK(clSetKernelArg(kt, 0, sizeof(cl_mem), &xb[d]));
            CHECK(clSetKernelArg(kt, 1, sizeof(cl_mem), &yb[d]));
            CHECK(clSetKernelArg(kt, 2, sizeof ni, &ni));
            CHECK(clSetKernelArg(kt, 3, sizeof ti, &ti));
            CHECK(clSetKernelArg(kt, 4, sizeof yoff, &yoff));
            CHECK(clEnqueueNDRangeKernel(s.q[d], kt, 1, NULL, &n, NULL, 1, input, NULL));
        }
        if (count > 0)
            CHECK(clEnqueueReadBuffer(s.q[d], yb[d], CL_FALSE, 0, count * n * sizeof(float), y + first * n, 0,
                                      NULL, NULL));
        CHECK(clFlush(s.q[d]));
    }
    for (cl_uint d = 0; d < s.ndev; d++)
        CHECK(clFinish(s.q[d]));
    sample_report_time(timed, "broadcast", &s, t0);

    size_t show[3] = {0, tasks / 2, tasks - 1};
    for (int i = 0; i < 3; i++) {
        size_t t = show[i];
        printf("task %zu: y[0]=%.9g y[%zu]=%.9g y[%zu]=%.9g\n", t, y[t * n], n / 2, y[t * n + n / 2], n - 1,
               y[t * n + n - 1]);
    }
    printf("hash: %016llx\n", (unsigned long long)sample_fnv1a(SAMPLE_FNV_SEED, y, tasks * n * sizeof *y));

    sample_release_events(wev, shared ? 1 : s.ndev);
    for (cl_uint d = 0; d < s.ndev; d++) {
        size_t first, count;
        sample_split(tasks, s.ndev, d, &first, &count);
        CHECK(clReleaseKernel(k[d][0]));
        CHECK(clReleaseKernel(k[d][1]));
        if (count > 0)
            CHECK(clReleaseMemObject(yb[d]));
        if (!shared || d == 0)
            CHECK(clReleaseMemObject(xb[d]));
        if (s.q[d] != helper_q[d]) {
            CHECK(clReleaseCommandQueue(s.q[d]));
            s.q[d] = helper_q[d];
        }
    }
    sample_cl_close(&s);
    free(helper_q);
    free(wev);
    free(k);
    free(yb);
    free(xb);
    free(y);
    free(x);
    return 0;
}
