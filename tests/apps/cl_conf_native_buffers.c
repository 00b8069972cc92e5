/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): native kernels (clEnqueueNativeKernel) on every
 * device of the first platform that advertises them. A host function reads one buffer and writes
 * another, with its scale, offset and count passed by value; it waits for a write through its
 * wait list, for a user event, and for an earlier native kernel through the queue's order; a
 * buffer one device's native kernel wrote is read by the next device's. Then the errors the
 * driver returns at enqueue. Prints what it sees; exits 1 on a wrong result.
 * With --each-device: only one native kernel per device, its code printed (a run where some
 * devices' processes are another program); with --plugin LIB, the same with the function
 * cl_conf_native_plugin_add of a library it loads itself. */
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cl_test_util.h"

#define N 1024

/* What the native kernel gets: two buffers' pointers (the driver puts them in place of the
 * cl_mem handles) and values. */
struct affine_args {
    cl_mem in;  /* const int * when it runs */
    cl_mem out; /* int * when it runs */
    int scale, offset, n;
};

static void CL_CALLBACK affine(void *p)
{
    struct affine_args *a = p;
    const int *in = (const int *)(void *)a->in;
    int *out = (int *)(void *)a->out;
    for (int i = 0; i < a->n; i++)
        out[i] = in[i] * a->scale + a->offset;
}

struct inc_args {
    cl_mem buf;
    int by;
};

static void CL_CALLBACK increment(void *p)
{
    struct inc_args *a = p;
    int *v = (int *)(void *)a->buf;
    for (int i = 0; i < N; i++)
        v[i] += a->by;
}

/* The first half of a buffer: run on a sub-buffer of half the size. */
static void CL_CALLBACK increment_half(void *p)
{
    struct inc_args *a = p;
    int *v = (int *)(void *)a->buf;
    for (int i = 0; i < N / 2; i++)
        v[i] += a->by;
}

static long long sum(const int *v)
{
    long long s = 0;
    for (int i = 0; i < N; i++)
        s += v[i];
    return s;
}

static cl_int affine_on(cl_command_queue q, cl_mem in, cl_mem out, int scale, int offset, cl_uint nwait,
                        const cl_event *wl, cl_event *ev)
{
    struct affine_args a = {in, out, scale, offset, N};
    cl_mem mems[2] = {in, out};
    const void *locs[2] = {&a.in, &a.out};
    cl_int rc = clEnqueueNativeKernel(q, affine, &a, sizeof a, 2, mems, locs, nwait, wl, ev);
    memset(&a, 0xff, sizeof a); /* the driver copied the arguments */
    return rc;
}

static int check(const char *what, const int *v, int scale, int offset, int base)
{
    for (int i = 0; i < N; i++)
        if (v[i] != (base + i) * scale + offset) {
            printf("  %s: WRONG at %d: %d, expected %d\n", what, i, v[i], (base + i) * scale + offset);
            return 1;
        }
    printf("  %s: right, sum %lld\n", what, sum(v));
    return 0;
}

static void errors(cl_context ctx, cl_command_queue q, cl_mem buf)
{
    struct inc_args a = {buf, 1};
    cl_mem mems[1] = {buf}, nomem[1] = {NULL};
    const void *locs[1] = {&a.buf};
    cl_event ev = NULL;
    cl_int err;
    cl_event user = clCreateUserEvent(ctx, &err);
    struct {
        const char *what;
        cl_int rc;
    } cases[] = {
        {"NULL queue", clEnqueueNativeKernel(NULL, increment, &a, sizeof a, 1, mems, locs, 0, NULL, &ev)},
        {"NULL function", clEnqueueNativeKernel(q, NULL, &a, sizeof a, 1, mems, locs, 0, NULL, &ev)},
        {"NULL args, cb_args > 0",
         clEnqueueNativeKernel(q, increment, NULL, sizeof a, 0, NULL, NULL, 0, NULL, &ev)},
        {"NULL args, memory objects",
         clEnqueueNativeKernel(q, increment, NULL, 0, 1, mems, locs, 0, NULL, &ev)},
        {"args, cb_args 0", clEnqueueNativeKernel(q, increment, &a, 0, 0, NULL, NULL, 0, NULL, &ev)},
        {"memory objects, NULL mem_list",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 1, NULL, locs, 0, NULL, &ev)},
        {"memory objects, NULL args_mem_loc",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 1, mems, NULL, 0, NULL, &ev)},
        {"no memory objects, a mem_list",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 0, mems, NULL, 0, NULL, &ev)},
        {"no memory objects, args_mem_loc",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 0, NULL, locs, 0, NULL, &ev)},
        {"a NULL memory object",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 1, nomem, locs, 0, NULL, &ev)},
        {"wait count without a list",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 1, mems, locs, 1, NULL, &ev)},
        {"a list with count 0",
         clEnqueueNativeKernel(q, increment, &a, sizeof a, 1, mems, locs, 0, &user, &ev)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        printf("  %s: %d\n", cases[i].what, cases[i].rc);
    printf("  refused calls made no event: %s\n", ev == NULL ? "yes" : "no");
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user);
}

static int one_device(cl_context ctx, cl_device_id dev, cl_device_id next, cl_uint d)
{
    cl_int err;
    int bad = 0;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_command_queue qn = clCreateCommandQueueWithProperties(ctx, next, NULL, &err);
    CHECK(err);
    static int host[N], got[N];
    for (int i = 0; i < N; i++)
        host[i] = (int)d * 1000 + i;
    cl_mem in = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    cl_mem out2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);

    /* A write, then the native kernel through its wait list. */
    cl_event w, k;
    CHECK(clEnqueueWriteBuffer(q, in, CL_FALSE, 0, sizeof host, host, 0, NULL, &w));
    CHECK(affine_on(q, in, out, 3, 7, 1, &w, &k));
    CHECK(clWaitForEvents(1, &k));
    cl_command_type type = 0;
    cl_int status = 0;
    CHECK(clGetEventInfo(k, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    CHECK(clGetEventInfo(k, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("  event: type 0x%x, status %d\n", (unsigned)type, status);
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("in * 3 + 7 after a write", got, 3, 7, (int)d * 1000);
    clReleaseEvent(w);
    clReleaseEvent(k);

    /* Queue order: a second native kernel on the same buffer, no wait list. */
    struct inc_args ia = {out, 5};
    cl_mem m1[1] = {out};
    const void *l1[1] = {&ia.buf};
    CHECK(clEnqueueNativeKernel(q, increment, &ia, sizeof ia, 1, m1, l1, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("then + 5 in queue order", got, 3, 12, (int)d * 1000);

    /* A user event holds it back. */
    cl_event user = clCreateUserEvent(ctx, &err);
    CHECK(err);
    CHECK(affine_on(q, in, out, 2, 1, 1, &user, &k));
    CHECK(clGetEventInfo(k, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("  held by a user event: complete %s\n", status == CL_COMPLETE ? "yes" : "no");
    CHECK(clSetUserEventStatus(user, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &k));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("in * 2 + 1 after the user event", got, 2, 1, (int)d * 1000);
    clReleaseEvent(user);
    clReleaseEvent(k);

    /* What this device's native kernel wrote, read by the next device's. */
    CHECK(affine_on(qn, out, out2, 1, -1, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(qn, out2, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("read by the next device's native kernel", got, 2, 0, (int)d * 1000);

    /* A sub-buffer of the middle half. PoCL 3.1 hands the function the parent's start (a driver
     * quirk, printed as it is: distributed mode must do what the driver does); the next device
     * reads the whole parent. */
    cl_buffer_region reg = {N / 4 * sizeof(int), N / 2 * sizeof(int)};
    cl_mem sub = clCreateSubBuffer(out2, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
    struct inc_args sa = {sub, 100};
    const void *sl[1] = {&sa.buf};
    CHECK(clEnqueueNativeKernel(q, increment_half, &sa, sizeof sa, 1, &sub, sl, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(qn, out2, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    printf("  a sub-buffer [%d, %d): at 0 %+d, %d %+d, %d %+d, %d %+d; sum %lld\n", N / 4, 3 * N / 4,
           got[0] - 2 * (int)d * 1000, N / 4 - 1, got[N / 4 - 1] - 2 * ((int)d * 1000 + N / 4 - 1), N / 4,
           got[N / 4] - 2 * ((int)d * 1000 + N / 4), 3 * N / 4,
           got[3 * N / 4] - 2 * ((int)d * 1000 + 3 * N / 4), sum(got));
    clReleaseMemObject(sub);

    errors(ctx, q, out);
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("refused calls changed nothing", got, 2, 1, (int)d * 1000);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(out2);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(qn);
    return bad;
}

/* One native kernel per device: its enqueue code, and whether it ran. */
static int each_device(cl_context ctx, const cl_device_id *devs, cl_uint n, void(CL_CALLBACK *fn)(void *))
{
    cl_int err;
    for (cl_uint d = 0; d < n; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[d], NULL, &err);
        CHECK(err);
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
        CHECK(err);
        static int got[N];
        CHECK(clEnqueueFillBuffer(q, buf, &(int){0}, sizeof(int), 0, sizeof got, 0, NULL, NULL));
        struct inc_args a = {buf, 9};
        const void *loc = &a.buf;
        cl_int rc = clEnqueueNativeKernel(q, fn, &a, sizeof a, 1, &buf, &loc, 0, NULL, NULL);
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        printf("device %u: enqueue %d, sum %lld\n", d, rc, sum(got));
        clReleaseMemObject(buf);
        clReleaseCommandQueue(q);
    }
    return 0;
}

int main(int argc, char **argv)
{
    cl_platform_id platform;
    cl_device_id devs[16];
    cl_uint n = 0;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 16, devs, &n) != CL_SUCCESS)
        return 2;
    cl_context ctx = clCreateContext(NULL, n, devs, NULL, NULL, &err);
    CHECK(err);
    int bad = 0;
    if (argc > 1 && strcmp(argv[1], "--each-device") == 0) {
        bad = each_device(ctx, devs, n, increment);
    } else if (argc > 2 && strcmp(argv[1], "--plugin") == 0) {
        void *lib = dlopen(argv[2], RTLD_NOW);
        void *fn = lib != NULL ? dlsym(lib, "cl_conf_native_plugin_add") : NULL;
        if (fn == NULL) {
            fprintf(stderr, "cannot load %s: %s\n", argv[2], dlerror());
            return 2;
        }
        void(CL_CALLBACK * user_func)(void *);
        memcpy(&user_func, &fn, sizeof fn);
        bad = each_device(ctx, devs, n, user_func);
    } else {
        for (cl_uint d = 0; d < n; d++) {
            cl_device_exec_capabilities caps = 0;
            CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL));
            printf("device %u: native kernels %s\n", d,
                   (caps & CL_EXEC_NATIVE_KERNEL) ? "advertised" : "not advertised");
            if (caps & CL_EXEC_NATIVE_KERNEL)
                bad |= one_device(ctx, devs[d], devs[(d + 1) % n], d);
        }
    }
    clReleaseContext(ctx);
    return bad;
}
