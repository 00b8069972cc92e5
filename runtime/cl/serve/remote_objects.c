/* SPDX-License-Identifier: MIT */
/* The serving side of the OBJ request (remote_objects.h): programs from IL or built-in kernels,
 * separate compilation and linking, unloading the compiler, and kernel argument declarations,
 * against this process's real OpenCL loader. Called by remote_server.c's handler, under its
 * lock, on serving ranks and in-process for rank 0's own devices. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/backend.h"
#include "cl/intercept/info_text.h"
#include "cl/serve/remote_ids.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_native.h"
#include "cl/serve/remote_objects.h"

#define MAX_IDS 64

#define RID(p) ((uint64_t)(uintptr_t)(p))
#define PTR(t, v) ((t)(uintptr_t)sluice_rid_real(v))

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

/* The lists of a compile or a link: ndev devices, then nprogs programs (headers, inputs), then
 * opts_len bytes of options (*opts, malloc'd; NULL when out of memory or short); *off is past
 * them. False, with the reply's error set, when the lists do not fit. */
static bool program_lists(uint64_t ndev, uint64_t nprogs, uint64_t opts_len, const unsigned char *p,
                          size_t len, size_t *off, void **devs, void **progs, char **opts,
                          struct sluice_remote_msg *out)
{
    *off = 0;
    if (!ids(p, len, off, ndev, devs) || !ids(p, len, off, nprogs, progs)) {
        out->rep.ret = CL_INVALID_VALUE;
        return false;
    }
    *opts = text(p, len, off, (size_t)opts_len);
    return true;
}

static void compile(const struct sluice_robj_compile *in, const unsigned char *p, size_t len,
                    struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS], *headers[MAX_IDS];
    size_t off;
    char *opts;
    if (!program_lists(in->ndev, in->nheaders, in->options_len, p, len, &off, devs, headers, &opts, out))
        return;
    char *full = opts ? with_arg_info(opts) : NULL;
    const char *names[MAX_IDS];
    for (uint64_t i = 0; i < in->nheaders; i++) {
        const unsigned char *nul = off < len ? memchr(p + off, '\0', len - off) : NULL;
        names[i] = nul ? (const char *)p + off : ""; /* rank 0 ends each name with a NUL */
        off = nul ? (size_t)(nul - p) + 1 : len;
    }
    cl_program prog = PTR(cl_program, in->program);
    cl_uint nd = (cl_uint)in->ndev, nh = (cl_uint)in->nheaders;
    const cl_device_id *dl = nd ? (const cl_device_id *)devs : NULL;
    const cl_program *hl = nh ? (const cl_program *)headers : NULL;
    out->rep.ret = full == NULL
                       ? CL_OUT_OF_HOST_MEMORY
                       : api()->clCompileProgram(prog, nd, dl, full, nh, hl, nh ? names : NULL, NULL, NULL);
    if (out->rep.ret == CL_COMPILE_PROGRAM_FAILURE) /* the added option alone can fail it (remote_server.c) */
        out->rep.ret = api()->clCompileProgram(prog, nd, dl, opts, nh, hl, nh ? names : NULL, NULL, NULL);
    free(full);
    free(opts);
}

static void link_programs(const struct sluice_robj_link *in, const unsigned char *p, size_t len,
                          struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS], *inputs[MAX_IDS];
    size_t off;
    char *opts;
    if (!program_lists(in->ndev, in->ninputs, in->options_len, p, len, &off, devs, inputs, &opts, out))
        return;
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    cl_program prog = NULL;
    if (opts != NULL)
        prog = api()->clLinkProgram(PTR(cl_context, in->ctx), (cl_uint)in->ndev,
                                    in->ndev ? (const cl_device_id *)devs : NULL, opts, (cl_uint)in->ninputs,
                                    (const cl_program *)inputs, NULL, NULL, &err);
    free(opts);
    out->rep.ret = err;
    out->rep.v[0] = RID(prog);
}

static void builtin(const struct sluice_robj_builtin *in, const unsigned char *p, size_t len,
                    struct sluice_remote_msg *out)
{
    void *devs[MAX_IDS];
    size_t off = 0;
    if (!ids(p, len, &off, in->ndev, devs)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    char *names = text(p, len, &off, len - off);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    cl_program prog = NULL;
    if (names != NULL)
        prog = api()->clCreateProgramWithBuiltInKernels(PTR(cl_context, in->ctx), (cl_uint)in->ndev,
                                                        (const cl_device_id *)devs, names, &err);
    free(names);
    out->rep.ret = err;
    out->rep.v[0] = RID(prog);
}

/* The size of an OpenCL C scalar or vector type by name (a 3-vector takes 4), 0 if not one. */
static size_t type_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } scalars[] = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"int", 4},   {"uint", 4},
                   {"long", 8}, {"ulong", 8}, {"half", 2},  {"float", 4},  {"double", 8}};
    size_t n = strcspn(name, "0123456789");
    unsigned width = name[n] ? (unsigned)atoi(name + n) : 1;
    if (width != 1 && width != 2 && width != 3 && width != 4 && width != 8 && width != 16)
        return 0;
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        if (strlen(scalars[i].name) == n && strncmp(name, scalars[i].name, n) == 0)
            return scalars[i].size * (width == 3 ? 4 : width);
    return 0;
}

/* Every argument's declaration, so that rank 0 needs one request per kernel. */
static void kernel_args(const struct sluice_robj_kernel_args *in, struct sluice_remote_msg *out)
{
    cl_kernel k = PTR(cl_kernel, in->kernel);
    cl_uint n = 0;
    out->rep.ret = api()->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL);
    if (out->rep.ret != CL_SUCCESS)
        return;
    struct sluice_remote_kernel_arg *v = calloc(n ? n : 1, sizeof *v);
    if (v == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    for (cl_uint i = 0; i < n; i++) {
        cl_kernel_arg_address_qualifier aq = 0;
        cl_kernel_arg_type_qualifier tq = 0;
        if (api()->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL) !=
                CL_SUCCESS ||
            api()->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL) != CL_SUCCESS)
            continue; /* no argument info: all 0 */
        v[i].address = aq;
        v[i].type_qual = tq;
        cl_kernel_arg_access_qualifier acc = 0;
        if (api()->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc, NULL) ==
            CL_SUCCESS)
            v[i].access = acc;
        char *type = aq == CL_KERNEL_ARG_ADDRESS_PRIVATE
                         ? sluice_cl_arg_text(api()->clGetKernelArgInfo, k, i, CL_KERNEL_ARG_TYPE_NAME)
                         : NULL;
        if (type != NULL)
            v[i].size = type_size(type);
        free(type);
    }
    out->bytes = (unsigned char *)v;
    out->rep.nbytes = n * sizeof *v;
    out->rep.v[0] = n;
}

void sluice_remote_objects(const struct sluice_remote_req *req, const unsigned char *p, size_t len,
                           struct sluice_remote_msg *out)
{
    union sluice_robj_args in;
    memcpy(&in, req->a, sizeof in); /* the request's words, as its operation's struct */
    const struct sluice_cl_api *A = api();
    cl_int err = CL_INVALID_OPERATION;
    switch ((int)in.op) {
    case SLUICE_ROBJ_PROG_IL: {
        cl_program prog = A->clCreateProgramWithIL
                              ? A->clCreateProgramWithIL(PTR(cl_context, in.prog_il.ctx), p, len, &err)
                              : NULL;
        out->rep.ret = err;
        out->rep.v[0] = RID(prog);
        break;
    }
    case SLUICE_ROBJ_PROG_BUILTIN:
        builtin(&in.builtin, p, len, out);
        break;
    case SLUICE_ROBJ_PROG_COMPILE:
        compile(&in.compile, p, len, out);
        break;
    case SLUICE_ROBJ_PROG_LINK:
        link_programs(&in.link, p, len, out);
        break;
    case SLUICE_ROBJ_SPEC_CONSTANT:
        out->rep.ret = A->clSetProgramSpecializationConstant
                           ? A->clSetProgramSpecializationConstant(PTR(cl_program, in.spec_constant.program),
                                                                   (cl_uint)in.spec_constant.spec_id, len, p)
                           : CL_INVALID_OPERATION;
        break;
    case SLUICE_ROBJ_KERNEL_ARGS:
        kernel_args(&in.kernel_args, out);
        break;
    case SLUICE_ROBJ_UNLOAD_COMPILER:
        out->rep.ret = A->clUnloadPlatformCompiler
                           ? A->clUnloadPlatformCompiler(PTR(cl_platform_id, in.unload_compiler.platform))
                           : CL_INVALID_OPERATION;
        break;
    case SLUICE_ROBJ_NATIVE_FIND:
        sluice_remote_native_find(p, len, out);
        break;
    default:
        if (in.op >= SLUICE_ROBJ_IMAGE_CREATE && in.op <= SLUICE_ROBJ_SAMPLER_INFO)
            sluice_remote_image_obj(&in, p, len, out);
        else
            out->rep.ret = CL_INVALID_OPERATION;
        break;
    }
}
