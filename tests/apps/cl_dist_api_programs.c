/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): every way to make a program on all devices of
 * the first platform. Build options as the program sees them, kernel names, separate
 * compilation with an embedded header and linking (a library, then an executable, with and
 * without a notify callback), built-in kernels, IL, unloading the compiler, and the error codes
 * of invalid uses. Every executable runs a kernel on every device and checks the result. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context ctx;
static cl_device_id devs[16];
static cl_uint ndev;
static cl_command_queue queues[16];

static const char *header_src = "#define OFFSET 7\nint twice(int x);\n";
static const char *lib_src = "int twice(int x) { return 2 * x; }\n";
static const char *main_src =
    "#include \"consts.h\"\n"
    "__kernel void calc(__global int *v) { int i = get_global_id(0); v[i] = twice(i) + OFFSET "
    "+ SCALE; }\n"
    "__kernel void other(__global const int *a) { }\n";
static const char *plain_src =
    "__kernel void calc(__global int *v) { int i = get_global_id(0); v[i] = 2 * i + 7 + "
    "SCALE; }\n";

static cl_program from_source(const char *src)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    return p;
}

static void print_build_info(const char *what, cl_program p)
{
    for (cl_uint d = 0; d < ndev; d++) {
        char opts[512] = "";
        size_t n = 0;
        cl_build_status st = 0;
        cl_program_binary_type bt = 0;
        CHECK(clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, &n));
        CHECK(clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL));
        CHECK(clGetProgramBuildInfo(p, devs[d], CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL));
        printf("  %s, device %u: status %d, binary type 0x%x, options [%s] (%zu bytes)\n", what, d, st,
               (unsigned)bt, opts, n);
    }
}

static void print_kernel_names(const char *what, cl_program p)
{
    char names[256] = "";
    size_t num = 0;
    cl_int e1 = clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL);
    cl_int e2 = clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof num, &num, NULL);
    printf("  %s: kernel names err=%d [%s], number err=%d %zu\n", what, e1, e1 == CL_SUCCESS ? names : "", e2,
           e2 == CL_SUCCESS ? num : 0);
}

/* Runs `calc` of an executable program on every device: v[i] = 2i + 7 + scale. */
static void run_calc(const char *what, cl_program p, int scale)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, "calc", &err);
    CHECK(err);
    enum { N = 512 };
    for (cl_uint d = 0; d < ndev; d++) {
        cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof(int), NULL, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof b, &b));
        size_t global = N;
        CHECK(clEnqueueNDRangeKernel(queues[d], k, 1, NULL, &global, NULL, 0, NULL, NULL));
        int out[N];
        CHECK(clEnqueueReadBuffer(queues[d], b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        int wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += out[i] != 2 * i + 7 + scale;
        printf("  %s: calc on device %u wrong=%d\n", what, d, wrong);
        CHECK(clReleaseMemObject(b));
    }
    CHECK(clReleaseKernel(k));
}

static int notified;
static void CL_CALLBACK on_done(cl_program p, void *user)
{
    (void)user;
    cl_build_status st = 0;
    clGetProgramBuildInfo(p, devs[0], CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
    notified = st == CL_BUILD_SUCCESS ? 1 : -1;
}

static void build_options(void)
{
    printf("build options:\n");
    cl_program p = from_source(plain_src);
    print_kernel_names("before build", p);
    CHECK(clBuildProgram(p, 0, NULL, "-DSCALE=1 -cl-mad-enable", NULL, NULL));
    print_build_info("with options", p);
    print_kernel_names("after build", p);
    run_calc("with options", p, 1);
    CHECK(clReleaseProgram(p));
    p = from_source("__kernel void k1(__global int *v) { } __kernel void k2(__global int *v) { }\n");
    CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
    print_build_info("NULL options", p);
    print_kernel_names("two kernels", p);
    CHECK(clReleaseProgram(p));
    p = from_source(plain_src);
    cl_int err = clBuildProgram(p, 0, NULL, "-DSCALE=", NULL, NULL);
    printf("  a build that fails: err=%d\n", err);
    print_kernel_names("failed build", p);
    CHECK(clReleaseProgram(p));
}

static void compile_and_link(void)
{
    printf("compile and link:\n");
    cl_int err;
    cl_program header = from_source(header_src);
    cl_program mainp = from_source(main_src);
    const char *name = "consts.h";
    err = clCompileProgram(mainp, 0, NULL, "-DSCALE=4", 1, &header, &name, NULL, NULL);
    printf("  compile with header: err=%d\n", err);
    print_build_info("compiled", mainp);
    err = clCompileProgram(from_source(main_src), 0, NULL, "-DSCALE=4", 0, NULL, NULL, NULL, NULL);
    printf("  compile without the header: err=%d\n", err);
    cl_program lib = from_source(lib_src);
    notified = 0;
    CHECK(clCompileProgram(lib, ndev, devs, "", 0, NULL, NULL, on_done, NULL));
    printf("  compile notified: %d\n", notified);
    cl_program library = clLinkProgram(ctx, 0, NULL, "-create-library", 1, &lib, NULL, NULL, &err);
    printf("  link a library: err=%d\n", err);
    print_build_info("library", library);
    cl_program inputs[2] = {mainp, library};
    notified = 0;
    cl_program exe = clLinkProgram(ctx, 0, NULL, "", 2, inputs, on_done, NULL, &err);
    printf("  link an executable: err=%d notified=%d\n", err, notified);
    print_build_info("executable", exe);
    print_kernel_names("executable", exe);
    /* Read before its kernels run: a driver drops what a command held (the kernel, and through it
     * the program) after the blocking call that waited for it returned, so a count read after
     * them is stale, as the specification warns. */
    cl_uint refs = 0;
    CHECK(clGetProgramInfo(exe, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    run_calc("linked", exe, 4);
    printf("  executable reference count %u\n", refs);
    cl_program bad = clLinkProgram(ctx, 0, NULL, "", 1, &lib, NULL, NULL, &err);
    printf("  link with an unresolved kernel-less input: err=%d %s\n", err, bad ? "program" : "none");
    if (bad != NULL)
        clReleaseProgram(bad);
    bad = clLinkProgram(ctx, 0, NULL, "", 0, NULL, NULL, NULL, &err);
    printf("  link of nothing: err=%d %s\n", err, bad ? "program" : "none");
    CHECK(clReleaseProgram(exe));
    CHECK(clReleaseProgram(library));
    CHECK(clReleaseProgram(lib));
    CHECK(clReleaseProgram(mainp));
    CHECK(clReleaseProgram(header));
}

static void other_sources(cl_platform_id platform)
{
    printf("other sources:\n");
    cl_int err = 12345;
    static const unsigned char il[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00};
    cl_program p = clCreateProgramWithIL(ctx, il, sizeof il, &err);
    printf("  IL: err=%d %s\n", err, p ? "program" : "none");
    if (p != NULL)
        clReleaseProgram(p);
    char builtins[1024] = "";
    CHECK(clGetDeviceInfo(devs[0], CL_DEVICE_BUILT_IN_KERNELS, sizeof builtins, builtins, NULL));
    char *semi = strchr(builtins, ';');
    if (semi != NULL)
        *semi = '\0';
    err = 12345;
    p = clCreateProgramWithBuiltInKernels(ctx, ndev, devs, builtins, &err);
    printf("  built-in kernels (first of the device's): err=%d\n", err);
    if (p != NULL) {
        print_kernel_names("built-in", p);
        cl_kernel k = clCreateKernel(p, builtins, &err);
        cl_uint nargs = 0;
        if (k != NULL)
            CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
        printf("  built-in kernel: err=%d args=%u\n", err, nargs);
        if (k != NULL)
            CHECK(clReleaseKernel(k));
        CHECK(clReleaseProgram(p));
    }
    err = 12345;
    p = clCreateProgramWithBuiltInKernels(ctx, ndev, devs, "no.such.kernel", &err);
    printf("  unknown built-in kernel: err=%d %s\n", err, p ? "program" : "none");
    printf("  unload the compiler: err=%d\n", clUnloadPlatformCompiler(platform));
    /* The compiler comes back when needed. */
    p = from_source(plain_src);
    CHECK(clBuildProgram(p, 0, NULL, "-DSCALE=9", NULL, NULL));
    run_calc("after unloading", p, 9);
    CHECK(clReleaseProgram(p));
}

int main(void)
{
    cl_platform_id platform;
    first_platform_devices(&platform, 16, devs, &ndev);
    ctx = context_with_queues(ndev, devs, queues);
    printf("devices: %u\n", ndev);
    build_options();
    compile_and_link();
    other_sources(platform);
    release_queues_context(ctx, ndev, queues);
    return 0;
}
