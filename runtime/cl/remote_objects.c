/* The serving side of the OBJ request (remote_objects.h): programs from IL or built-in kernels,
 * separate compilation and linking, and unloading the compiler, against this process's real
 * OpenCL loader. Called by remote_server.c's handler, under its lock, on serving ranks and
 * in-process for rank 0's own devices. */
#include <stdlib.h>
#include <string.h>

#include "cl/backend.h"
#include "cl/remote_objects.h"

#define MAX_IDS 64

#define RID(p) ((uint64_t)(uintptr_t)(p))
#define PTR(t, v) ((t)(uintptr_t)(v))

static const struct sluice_cl_api *api(void)
{
    return &sluice_cl_loader_backend()->api;
}

/* n object addresses from the payload; false if they do not fit. */
static bool ids(const unsigned char *p, size_t len, size_t *off, uint64_t n, void **out)
{
    if (n > MAX_IDS || n * sizeof(uint64_t) > len - *off)
        return false;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, p + *off, sizeof v);
        out[i] = PTR(void *, v);
        *off += sizeof v;
    }
    return true;
}

/* A string of `n` payload bytes, NUL-terminated (malloc'd; NULL when out of memory or short). */
static char *text(const unsigned char *p, size_t len, size_t *off, size_t n)
{
    if (n > len - *off)
        return NULL;
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p + *off, n);
        s[n] = '\0';
        *off += n;
    }
    return s;
}

/* -cl-kernel-arg-info is appended, as at clBuildProgram (remote_server.c): rank 0 learns which
 * buffer arguments a kernel only reads. Rank 0 hides it from CL_PROGRAM_BUILD_OPTIONS. */
static char *with_arg_info(const char *opts)
{
    static const char arg_info[] = " -cl-kernel-arg-info";
    size_t n = strlen(opts);
    char *s = malloc(n + sizeof arg_info);
    if (s != NULL) {
        memcpy(s, opts, n);
        memcpy(s + n, arg_info, sizeof arg_info);
    }
    return s;
}

static void compile(const uint64_t *a, const unsigned char *p, size_t len, struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS], *headers[MAX_IDS];
    size_t off = 0;
    if (!ids(p, len, &off, a[2], devs) || !ids(p, len, &off, a[3], headers)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    char *opts = text(p, len, &off, (size_t)a[4]);
    char *full = opts ? with_arg_info(opts) : NULL;
    const char *names[MAX_IDS];
    for (uint64_t i = 0; i < a[3]; i++) {
        const unsigned char *nul = off < len ? memchr(p + off, '\0', len - off) : NULL;
        names[i] = nul ? (const char *)p + off : ""; /* rank 0 ends each name with a NUL */
        off = nul ? (size_t)(nul - p) + 1 : len;
    }
    out->rep.ret = full == NULL
                       ? CL_OUT_OF_HOST_MEMORY
                       : api()->clCompileProgram(PTR(cl_program, a[1]), (cl_uint)a[2],
                                                 a[2] ? (const cl_device_id *)devs : NULL, full,
                                                 (cl_uint)a[3], a[3] ? (const cl_program *)headers : NULL,
                                                 a[3] ? names : NULL, NULL, NULL);
    free(full);
    free(opts);
}

static void link_programs(const uint64_t *a, const unsigned char *p, size_t len,
                          struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS], *inputs[MAX_IDS];
    size_t off = 0;
    if (!ids(p, len, &off, a[2], devs) || !ids(p, len, &off, a[3], inputs)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    char *opts = text(p, len, &off, (size_t)a[4]);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    cl_program prog = NULL;
    if (opts != NULL)
        prog = api()->clLinkProgram(PTR(cl_context, a[1]), (cl_uint)a[2],
                                    a[2] ? (const cl_device_id *)devs : NULL, opts, (cl_uint)a[3],
                                    (const cl_program *)inputs, NULL, NULL, &err);
    free(opts);
    out->rep.ret = err;
    out->rep.v[0] = RID(prog);
}

static void builtin(const uint64_t *a, const unsigned char *p, size_t len, struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS];
    size_t off = 0;
    if (!ids(p, len, &off, a[2], devs)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    char *names = text(p, len, &off, len - off);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    cl_program prog = NULL;
    if (names != NULL)
        prog = api()->clCreateProgramWithBuiltInKernels(PTR(cl_context, a[1]), (cl_uint)a[2],
                                                        (const cl_device_id *)devs, names, &err);
    free(names);
    out->rep.ret = err;
    out->rep.v[0] = RID(prog);
}

void sluice_remote_objects(const uint64_t *a, const unsigned char *p, size_t len,
                           struct sluice_remote_msg *out)
{
    const struct sluice_cl_api *A = api();
    cl_int err = CL_INVALID_OPERATION;
    switch ((int)a[0]) {
    case SLUICE_ROBJ_PROG_IL: {
        cl_program prog =
            A->clCreateProgramWithIL ? A->clCreateProgramWithIL(PTR(cl_context, a[1]), p, len, &err) : NULL;
        out->rep.ret = err;
        out->rep.v[0] = RID(prog);
        break;
    }
    case SLUICE_ROBJ_PROG_BUILTIN:
        builtin(a, p, len, out);
        break;
    case SLUICE_ROBJ_PROG_COMPILE:
        compile(a, p, len, out);
        break;
    case SLUICE_ROBJ_PROG_LINK:
        link_programs(a, p, len, out);
        break;
    case SLUICE_ROBJ_UNLOAD_COMPILER:
        out->rep.ret = A->clUnloadPlatformCompiler ? A->clUnloadPlatformCompiler(PTR(cl_platform_id, a[1]))
                                                   : CL_INVALID_OPERATION;
        break;
    default:
        out->rep.ret = CL_INVALID_OPERATION;
        break;
    }
}
