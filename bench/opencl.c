/* SPDX-License-Identifier: MIT */
/* Benchmark: what sluice's OpenCL layer adds to a call, per call, as medians over many calls.
 *
 * The binary links libOpenCL like any program. The parent re-runs itself as a child in four
 * configurations -- without sluice, with LD_PRELOAD=libsluice.so (trace off), without sluice but
 * timing every command itself the way sluice does, and with the trace on (SLUICE_TRACE_DIR) --
 * once per platform, and prints one table per platform. Each child
 * times batches of calls with CLOCK_MONOTONIC and reports the median per-call time of the
 * batches, so the clock's own cost is amortised. Never passes or fails: it prints figures.
 *
 *   sluice-bench-opencl [--platform N] [--lib path/to/libsluice.so] [--reps R]
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SLUICE_LIB_PATH
#define SLUICE_LIB_PATH "libsluice.so"
#endif

enum { OP_DEVICE_INFO, OP_SET_ARG, OP_WRITE_SMALL, OP_NDRANGE_FINISH, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"clGetDeviceInfo", "clSetKernelArg (cl_mem)",
                                               "clEnqueueWriteBuffer 64 B, blocking",
                                               "clEnqueueNDRangeKernel + clFinish"};
/* Calls per timed batch and batches per operation (the median is over batches). */
static const int batch[OP_COUNT] = {256, 256, 16, 4};
static int batches[OP_COUNT] = {400, 400, 300, 300};

#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        cl_int e_ = (x);                                                                                     \
        if (e_ != CL_SUCCESS) {                                                                              \
            fprintf(stderr, "sluice-bench-opencl: %s failed: %d\n", #x, e_);                                 \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The child: time every operation on the first device of platform `pidx`; print
 * "op median_ns" lines on stdout. `profiled` makes the child do itself what sluice does with
 * the trace on (a profiling queue, an event per command whose times are read back), so that
 * the driver's own cost of device timing can be told from sluice's. */
static cl_event *want_event(int profiled, cl_event *ev)
{
    return profiled ? ev : NULL;
}

static void read_back(int profiled, cl_event ev)
{
    if (!profiled)
        return;
    cl_int st;
    cl_ulong t[3];
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof t[0], &t[0], NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t[1], &t[1], NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t[2], &t[2], NULL);
    clReleaseEvent(ev);
}

static int child(unsigned pidx, int profiled)
{
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(0, NULL, &np));
    if (pidx >= np) {
        fprintf(stderr, "sluice-bench-opencl: no platform %u (%u found)\n", pidx, np);
        return 1;
    }
    cl_platform_id *ps = calloc(np, sizeof *ps);
    CHECK(clGetPlatformIDs(np, ps, NULL));
    cl_device_id dev;
    CHECK(clGetDeviceIDs(ps[pidx], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, profiled ? prof : NULL, &err);
    CHECK(err);
    const char *src = "__kernel void empty(__global int *p) { }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "empty", &err);
    CHECK(err);
    char small[64] = {0};
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof small, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t one = 1;

    for (int op = 0; op < OP_COUNT; op++) {
        double *per_call = calloc((size_t)batches[op], sizeof *per_call);
        for (int b = -batches[op] / 10; b < batches[op]; b++) { /* negative b: warm-up */
            uint64_t t0 = now_ns();
            for (int i = 0; i < batch[op]; i++) {
                switch (op) {
                case OP_DEVICE_INFO: {
                    cl_uint cu;
                    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
                    break;
                }
                case OP_SET_ARG:
                    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
                    break;
                case OP_WRITE_SMALL: {
                    cl_event ev;
                    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof small, small, 0, NULL,
                                               want_event(profiled, &ev)));
                    read_back(profiled, ev);
                    break;
                }
                case OP_NDRANGE_FINISH: {
                    cl_event ev;
                    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL,
                                                 want_event(profiled, &ev)));
                    CHECK(clFinish(q));
                    read_back(profiled, ev);
                    break;
                }
                }
            }
            if (b >= 0)
                per_call[b] = (double)(now_ns() - t0) / batch[op];
        }
        qsort(per_call, (size_t)batches[op], sizeof *per_call, cmp_double);
        printf("%d %.1f\n", op, per_call[batches[op] / 2]);
        free(per_call);
    }
    char name[256] = "", pname[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetPlatformInfo(ps[pidx], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    printf("device %s / %s\n", pname, name);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(ps);
    return 0;
}

struct config {
    const char *label;
    int preload;
    int trace;
    int profiled; /* the child times its own commands (no sluice) */
};

/* Runs the child for one configuration; fills med[] (ns) and the device line. */
static int run_child(const char *self, unsigned pidx, const char *lib, const struct config *c,
                     const char *trace_dir, double med[OP_COUNT], char *device, size_t devlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        unsetenv("LD_PRELOAD");
        unsetenv("SLUICE_TRACE_DIR");
        unsetenv("SLUICE_DEBUG");
        if (c->preload)
            setenv("LD_PRELOAD", lib, 1);
        if (c->trace)
            setenv("SLUICE_TRACE_DIR", trace_dir, 1);
        char idx[16];
        snprintf(idx, sizeof idx, "%u", pidx);
        execl(self, self, c->profiled ? "--child-profiled" : "--child", idx, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[512];
    while (fgets(line, sizeof line, in) != NULL) {
        int op;
        double v;
        if (strncmp(line, "device ", 7) == 0) {
            line[strcspn(line, "\n")] = 0;
            snprintf(device, devlen, "%s", line + 7);
        } else if (sscanf(line, "%d %lf", &op, &v) == 2 && op >= 0 && op < OP_COUNT) {
            med[op] = v;
        }
    }
    fclose(in);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child((unsigned)atoi(argv[2]), 0);
    if (argc == 3 && strcmp(argv[1], "--child-profiled") == 0)
        return child((unsigned)atoi(argv[2]), 1);
    if (argc == 2 && strcmp(argv[1], "--count") == 0) {
        cl_uint np = 0;
        if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS)
            np = 0;
        printf("%u\n", np);
        return 0;
    }
    const char *lib = SLUICE_LIB_PATH;
    int only = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--platform") == 0 && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
            lib = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            int r = atoi(argv[++i]);
            for (int op = 0; op < OP_COUNT; op++)
                batches[op] = r > 10 ? r : 10;
        } else {
            fprintf(stderr, "usage: %s [--platform N] [--lib libsluice.so] [--reps BATCHES]\n", argv[0]);
            return 2;
        }
    }
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "sluice-bench-opencl: cannot read %s: %s (use --lib)\n", lib, strerror(errno));
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 2;
    self[n] = 0;
    /* The parent never touches OpenCL itself: a GPU in exclusive-process mode would then be
     * unusable, even invisible, in the children. A child counts the platforms. */
    unsigned np = 0;
    {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' --count", self);
        FILE *c = popen(cmd, "r");
        if (c == NULL || fscanf(c, "%u", &np) != 1)
            np = 0;
        if (c != NULL)
            pclose(c);
    }
    if (np == 0) {
        fprintf(stderr, "sluice-bench-opencl: no OpenCL platform\n");
        return 1;
    }
    char trace_dir[] = "/tmp/sluice-bench-opencl-XXXXXX";
    if (mkdtemp(trace_dir) == NULL)
        return 1;
    static const struct config configs[] = {{"without sluice", 0, 0, 0},
                                            {"sluice, trace off", 1, 0, 0},
                                            {"without sluice, timing its own commands", 0, 0, 1},
                                            {"sluice, trace on", 1, 1, 0}};
    enum { NCONF = sizeof configs / sizeof configs[0] };
    for (unsigned p = 0; p < np; p++) {
        if (only >= 0 && (unsigned)only != p)
            continue;
        double med[NCONF][OP_COUNT] = {{0}};
        char device[600] = "?";
        int ok = 1;
        for (int c = 0; c < NCONF; c++)
            if (run_child(self, p, lib, &configs[c], trace_dir, med[c], device, sizeof device) != 0)
                ok = 0;
        printf("\nplatform %u: %s\n", p, device);
        if (!ok)
            printf("  (a child run failed; figures incomplete)\n");
        printf("  %-36s %10s %10s %9s | %10s %10s %9s %9s\n", "median ns per call", "native", "trace off",
               "added", "profiled", "trace on", "added", "by sluice");
        for (int op = 0; op < OP_COUNT; op++)
            printf("  %-36s %10.1f %10.1f %+9.1f | %10.1f %10.1f %+9.1f %+9.1f\n", op_names[op], med[0][op],
                   med[1][op], med[1][op] - med[0][op], med[2][op], med[3][op], med[3][op] - med[0][op],
                   med[3][op] - med[2][op]);
        printf("  (profiled: the program itself times every command as sluice does with the trace on, a\n"
               "   profiling queue and one event per command; \"by sluice\" is trace on minus that)\n");
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", trace_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "sluice-bench-opencl: could not remove %s\n", trace_dir);
    return 0;
}
