/* SPDX-License-Identifier: MIT */
/* The object calls of distributed OpenCL on the serving side: executes rank 0's synchronous
 * requests (create, info, build, release...) against this process's real OpenCL loader (never
 * through sluice's handles). Rank 0 runs the same handler, without MPI, for its own devices.
 * Commands go to the engine (remote_engine.c); nothing here waits for a command. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/dql/dql_device.h"
#include "cl/intercept/backend.h"
#include "cl/intercept/info_text.h"
#include "cl/intercept/object.h"
#include "cl/serve/remote_ids.h"
#include "cl/serve/remote_objects.h"
#include "cl/serve/remote_proto.h"
#include "trace/trace.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

#define RID(p) ((uint64_t)(uintptr_t)(p))
#define PTR(t, v) ((t)(uintptr_t)sluice_rid_real(v))

/* Internal queues: one per context, out of order where the device allows, for the coherence
 * transfers that belong to no program queue (their order comes from explicit wait lists). */
struct srv_queue {
    cl_command_queue q;
    cl_context ctx;
    int internal;
    struct srv_queue *next;
};
static struct srv_queue *queues;
static pthread_mutex_t srv_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct sluice_cl_api *api(void)
{
    return &sluice_cl_loader_backend()->api;
}

static void queue_add(cl_command_queue q, cl_context ctx, int internal)
{
    struct srv_queue *s = calloc(1, sizeof *s);
    if (s == NULL)
        return;
    s->q = q;
    s->ctx = ctx;
    s->internal = internal;
    s->next = queues;
    queues = s;
}

static void queue_remove(cl_command_queue q)
{
    for (struct srv_queue **p = &queues; *p != NULL; p = &(*p)->next)
        if ((*p)->q == q) {
            struct srv_queue *s = *p;
            *p = s->next;
            free(s);
            return;
        }
}

/* The context's own queue, on its first device, created on first use. */
cl_command_queue sluice_remote_internal_queue(cl_context ctx, cl_int *err);
cl_command_queue sluice_remote_internal_queue(cl_context ctx, cl_int *err)
{
    pthread_mutex_lock(&srv_lock);
    for (struct srv_queue *s = queues; s != NULL; s = s->next)
        if (s->internal && s->ctx == ctx) {
            pthread_mutex_unlock(&srv_lock);
            return s->q;
        }
    cl_device_id dev = NULL;
    *err = api()->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
    cl_command_queue q = NULL;
    if (*err == CL_SUCCESS || *err == CL_INVALID_VALUE) {
        cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
        q = api()->clCreateCommandQueueWithProperties(ctx, dev, ooo, err);
        if (q == NULL)
            q = api()->clCreateCommandQueueWithProperties(ctx, dev, NULL, err);
    }
    if (q != NULL)
        queue_add(q, ctx, 1);
    pthread_mutex_unlock(&srv_lock);
    return q;
}

static void drop_internal_queues(cl_context ctx)
{
    for (struct srv_queue **p = &queues; *p != NULL;) {
        struct srv_queue *s = *p;
        if (s->internal && s->ctx == ctx) {
            api()->clReleaseCommandQueue(s->q);
            *p = s->next;
            free(s);
        } else {
            p = &s->next;
        }
    }
}

static void do_enum(struct sluice_remote_msg *out)
{
    cl_platform_id plats[MAX_PLATFORMS];
    cl_uint np = 0;
    if (api()->clGetPlatformIDs == NULL || api()->clGetPlatformIDs(MAX_PLATFORMS, plats, &np) != CL_SUCCESS)
        np = 0;
    if (np > MAX_PLATFORMS)
        np = MAX_PLATFORMS;
    char *names[MAX_PLATFORMS];
    size_t cap = 0;
    for (cl_uint p = 0; p < np; p++) {
        names[p] = sluice_cl_platform_text(api()->clGetPlatformInfo, plats[p], CL_PLATFORM_NAME);
        cap += sizeof(struct sluice_remote_enum_platform) + (names[p] ? strlen(names[p]) : 0) +
               MAX_DEVICES * (sizeof(struct sluice_remote_enum_device) + sizeof(struct sluice_dql_device));
    }
    uint64_t index = 0; /* the device's position among this rank's devices, for SLUICE_DEVICES */
    out->bytes = calloc(1, cap ? cap : 1);
    if (out->bytes == NULL) {
        for (cl_uint p = 0; p < np; p++)
            free(names[p]);
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    size_t len = 0;
    for (cl_uint p = 0; p < np; p++) {
        struct sluice_remote_enum_platform rec = {.rid = RID(plats[p]),
                                                  .name_len = names[p] ? strlen(names[p]) : 0};
        cl_device_id devs[MAX_DEVICES];
        cl_uint nd = 0;
        if (api()->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS)
            nd = 0;
        if (nd > MAX_DEVICES)
            nd = MAX_DEVICES;
        rec.ndev = nd;
        memcpy(out->bytes + len, &rec, sizeof rec);
        len += sizeof rec;
        if (rec.name_len > 0)
            memcpy(out->bytes + len, names[p], rec.name_len);
        len += rec.name_len;
        free(names[p]);
        for (cl_uint d = 0; d < nd; d++) {
            struct sluice_remote_enum_device dr = {.rid = RID(devs[d])};
            cl_device_type t = 0;
            api()->clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            dr.type = t;
            memcpy(out->bytes + len, &dr, sizeof dr);
            len += sizeof dr;
            struct sluice_dql_device desc;
            memset(&desc, 0, sizeof desc);
            sluice_dql_describe(devs[d], (uint64_t)sluice_launch_rank(), index++, api()->clGetDeviceInfo,
                                api()->clGetPlatformInfo, &desc);
            memcpy(out->bytes + len, &desc, sizeof desc);
            len += sizeof desc;
        }
    }
    out->rep.nbytes = len;
    out->rep.v[0] = np;
}

static void do_info(const struct sluice_req_info *in, struct sluice_remote_msg *out)
{
    size_t size = (size_t)in->size;
    if (size > ((size_t)1 << 26)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    void *val = NULL;
    if (size > 0 && (val = out->bytes = malloc(size)) == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    size_t ret_size = 0;
    cl_uint param = (cl_uint)in->param;
    cl_int r = CL_INVALID_OPERATION;
    const struct sluice_cl_api *A = api();
    switch ((int)in->getter) {
    case SLUICE_RG_PLATFORM:
        r = A->clGetPlatformInfo(PTR(cl_platform_id, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_DEVICE:
        r = A->clGetDeviceInfo(PTR(cl_device_id, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_CONTEXT:
        r = A->clGetContextInfo(PTR(cl_context, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_QUEUE:
        r = A->clGetCommandQueueInfo(PTR(cl_command_queue, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_MEM:
        r = A->clGetMemObjectInfo(PTR(cl_mem, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_PROGRAM:
        r = A->clGetProgramInfo(PTR(cl_program, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_BUILD:
        r = A->clGetProgramBuildInfo(PTR(cl_program, in->obj), PTR(cl_device_id, in->obj2), param, size, val,
                                     &ret_size);
        break;
    case SLUICE_RG_KERNEL:
        r = A->clGetKernelInfo(PTR(cl_kernel, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_KERNEL_WG:
        r = A->clGetKernelWorkGroupInfo(PTR(cl_kernel, in->obj), PTR(cl_device_id, in->obj2), param, size,
                                        val, &ret_size);
        break;
    case SLUICE_RG_KERNEL_ARG:
        r = A->clGetKernelArgInfo(PTR(cl_kernel, in->obj), (cl_uint)in->obj2, param, size, val, &ret_size);
        break;
    case SLUICE_RG_EVENT:
        r = A->clGetEventInfo(PTR(cl_event, in->obj), param, size, val, &ret_size);
        break;
    case SLUICE_RG_PROFILING:
        r = A->clGetEventProfilingInfo(PTR(cl_event, in->obj), param, size, val, &ret_size);
        break;
    default:
        break;
    }
    out->rep.ret = r;
    out->rep.v[0] = ret_size;
    if (r == CL_SUCCESS && val != NULL)
        out->rep.nbytes = ret_size < size ? ret_size : size;
}

static void do_build(const struct sluice_req_prog_build *in, const unsigned char *p, size_t len,
                     struct sluice_remote_msg *out)
{
    size_t nd = (size_t)in->ndev;
    if (nd * sizeof(uint64_t) > len) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    cl_device_id devs[MAX_DEVICES];
    if (nd > MAX_DEVICES) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    for (size_t i = 0; i < nd; i++) {
        uint64_t v;
        memcpy(&v, p + i * sizeof v, sizeof v);
        devs[i] = PTR(cl_device_id, v);
    }
    /* -cl-kernel-arg-info is appended, as PoCL's proxy driver does: rank 0 learns which buffer
     * arguments a kernel only reads (const or __constant) and moves them as reads. */
    static const char arg_info[] = " -cl-kernel-arg-info";
    size_t olen = len - nd * sizeof(uint64_t);
    char *opts = malloc(olen + sizeof arg_info);
    if (opts == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    memcpy(opts, p + nd * sizeof(uint64_t), olen);
    memcpy(opts + olen, arg_info, sizeof arg_info);
    cl_program prog = PTR(cl_program, in->program);
    out->rep.ret = api()->clBuildProgram(prog, (cl_uint)nd, devs, opts, NULL, NULL);
    /* A compiler may fail only because of the added option (NVIDIA's 580 driver emits PTX that
     * ptxas rejects for a kernel without arguments built with -cl-kernel-arg-info): build as the
     * program asked, and rank 0 classifies arguments from its handle table instead. */
    if (out->rep.ret == CL_BUILD_PROGRAM_FAILURE) {
        opts[olen] = '\0';
        out->rep.ret = api()->clBuildProgram(prog, (cl_uint)nd, devs, opts, NULL, NULL);
    }
    free(opts);
}

static void do_release(const struct sluice_req_release *in, struct sluice_remote_msg *out)
{
    const struct sluice_cl_api *A = api();
    cl_int r = CL_INVALID_VALUE;
    switch ((int)in->kind) {
    case SLUICE_CL_CONTEXT:
        drop_internal_queues(PTR(cl_context, in->rid));
        r = A->clReleaseContext(PTR(cl_context, in->rid));
        break;
    case SLUICE_CL_QUEUE:
        queue_remove(PTR(cl_command_queue, in->rid)); /* commands in flight keep it alive */
        r = A->clReleaseCommandQueue(PTR(cl_command_queue, in->rid));
        break;
    case SLUICE_CL_MEM:
        r = A->clReleaseMemObject(PTR(cl_mem, in->rid));
        break;
    case SLUICE_CL_PROGRAM:
        r = A->clReleaseProgram(PTR(cl_program, in->rid));
        break;
    case SLUICE_CL_KERNEL:
        r = A->clReleaseKernel(PTR(cl_kernel, in->rid));
        break;
    case SLUICE_CL_EVENT:
        r = A->clReleaseEvent(PTR(cl_event, in->rid));
        break;
    case SLUICE_CL_DEVICE:
        r = A->clReleaseDevice(PTR(cl_device_id, in->rid));
        break;
    case SLUICE_CL_SAMPLER:
        r = A->clReleaseSampler(PTR(cl_sampler, in->rid));
        break;
    default:
        break;
    }
    sluice_rid_forget(in->rid);
    out->rep.ret = r;
}

static void do_subdevices(const struct sluice_req_subdevices *in, const unsigned char *p, size_t len,
                          struct sluice_remote_msg *out)
{
    size_t n = len / sizeof(cl_device_partition_property);
    cl_device_partition_property props[64];
    if (n == 0 || n > 64) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    memcpy(props, p, n * sizeof props[0]);
    props[n - 1] = 0;
    cl_device_id subs[MAX_DEVICES];
    cl_uint ns = 0;
    out->rep.ret = api()->clCreateSubDevices(PTR(cl_device_id, in->device), props, MAX_DEVICES, subs, &ns);
    if (out->rep.ret != CL_SUCCESS)
        return;
    if (ns > MAX_DEVICES)
        ns = MAX_DEVICES;
    if ((out->bytes = malloc(ns * sizeof(uint64_t) + 1)) == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    for (cl_uint i = 0; i < ns; i++) {
        uint64_t v = RID(subs[i]);
        memcpy(out->bytes + i * sizeof v, &v, sizeof v);
    }
    out->rep.nbytes = ns * sizeof(uint64_t);
}

static void do_prog_binary(const struct sluice_req_prog_binary *in, struct sluice_remote_msg *out)
{
    cl_program prog = PTR(cl_program, in->program);
    cl_uint nd = 0;
    out->rep.ret = api()->clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL);
    if (out->rep.ret != CL_SUCCESS)
        return;
    if (in->index >= nd || nd > MAX_DEVICES) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    size_t sizes[MAX_DEVICES];
    unsigned char *bins[MAX_DEVICES] = {0};
    out->rep.ret = api()->clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, nd * sizeof sizes[0], sizes, NULL);
    if (out->rep.ret != CL_SUCCESS)
        return;
    size_t j = (size_t)in->index;
    /* Only the one asked for is fetched: a NULL entry tells the runtime to skip a device. */
    if ((bins[j] = malloc(sizes[j] ? sizes[j] : 1)) == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    out->rep.ret = api()->clGetProgramInfo(prog, CL_PROGRAM_BINARIES, nd * sizeof bins[0], bins, NULL);
    if (out->rep.ret != CL_SUCCESS) {
        free(bins[j]);
        return;
    }
    out->bytes = bins[j];
    out->rep.nbytes = sizes[j];
    out->rep.v[0] = sizes[j];
}

static void do_prog_from_binary(const struct sluice_req_prog_from_binary *in, const unsigned char *p,
                                size_t len, struct sluice_remote_msg *out)
{
    size_t nd = (size_t)in->ndev;
    if (nd == 0 || nd > MAX_DEVICES || len < nd * 2 * sizeof(uint64_t)) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    cl_device_id devs[MAX_DEVICES];
    size_t lens[MAX_DEVICES];
    const unsigned char *bins[MAX_DEVICES];
    size_t off = nd * 2 * sizeof(uint64_t);
    for (size_t i = 0; i < nd; i++) {
        uint64_t rec[2];
        memcpy(rec, p + i * sizeof rec, sizeof rec);
        devs[i] = PTR(cl_device_id, rec[0]);
        lens[i] = (size_t)rec[1];
        if (lens[i] > len - off) {
            out->rep.ret = CL_INVALID_VALUE;
            return;
        }
        bins[i] = p + off;
        off += lens[i];
    }
    cl_int status[MAX_DEVICES];
    cl_int err = CL_SUCCESS;
    cl_program prog = api()->clCreateProgramWithBinary(PTR(cl_context, in->ctx), (cl_uint)nd, devs, lens,
                                                       bins, status, &err);
    out->rep.ret = err;
    out->rep.v[0] = RID(prog);
    if ((out->bytes = malloc(nd * sizeof status[0])) != NULL) {
        memcpy(out->bytes, status, nd * sizeof status[0]);
        out->rep.nbytes = nd * sizeof status[0];
    }
}

/* The id rank 0 chose for the object this request creates (remote_ids.h), 0 when it waits for
 * the reply instead. */
static uint64_t creation_id(const struct sluice_remote_req *req)
{
    union sluice_robj_args in;
    switch (req->op) {
    case SLUICE_REMOTE_BUF_CREATE:
        return req->buf_create.id;
    case SLUICE_REMOTE_QUEUE_CREATE:
        return req->queue_create.id;
    case SLUICE_REMOTE_SUBBUF:
        return req->subbuf.id;
    case SLUICE_REMOTE_OBJ:
        memcpy(&in, req->a, sizeof in);
        return in.op == SLUICE_ROBJ_IMAGE_CREATE     ? in.image_create.id
               : in.op == SLUICE_ROBJ_SAMPLER_CREATE ? in.sampler_create.id
                                                     : 0;
    default:
        return 0;
    }
}

int sluice_remote_wants_reply(const struct sluice_remote_req *req)
{
    return !(req->op == SLUICE_REMOTE_RELEASE && req->release.no_reply == 1) && creation_id(req) == 0;
}

/* After a call: a creation under an id records what it gave; one that named a failed id failed
 * with that id's error (a sub-buffer or an image of a buffer whose allocation failed), even where
 * the driver took the NULL it found for a valid argument. Any other call that named a failed id
 * answers that id's error. */
static void settle_ids(const struct sluice_remote_req *req, struct sluice_remote_msg *out)
{
    int32_t failed = sluice_rid_take_error();
    uint64_t id = creation_id(req);
    if (id == 0) {
        if (failed != 0)
            out->rep.ret = failed;
        return;
    }
    uint64_t made = out->rep.ret == CL_SUCCESS ? out->rep.v[0] : 0;
    if (made != 0 && failed != 0) {
        int kind = req->op == SLUICE_REMOTE_QUEUE_CREATE ? SLUICE_CL_QUEUE
                   : req->op == SLUICE_REMOTE_OBJ && req->a[0] == SLUICE_ROBJ_SAMPLER_CREATE
                       ? SLUICE_CL_SAMPLER
                       : SLUICE_CL_MEM;
        struct sluice_req_release r = {(uint64_t)kind, made, 1};
        struct sluice_remote_msg ignored = {0};
        do_release(&r, &ignored);
        made = 0;
    }
    cl_int err = failed != 0                  ? failed
                 : out->rep.ret != CL_SUCCESS ? (cl_int)out->rep.ret
                                              : CL_OUT_OF_RESOURCES;
    /* Rank 0 checked the size against every device of the context: this rank's alone cannot hold
     * it, an allocation failure at the buffer's use here, as OpenCL allows one to show. */
    if (err == CL_INVALID_BUFFER_SIZE && req->op == SLUICE_REMOTE_BUF_CREATE)
        err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    sluice_rid_bind(id, (void *)(uintptr_t)made, made != 0 ? CL_SUCCESS : err);
}

void sluice_remote_handle(const struct sluice_remote_req *req, const unsigned char *p,
                          struct sluice_remote_msg *out)
{
    memset(out, 0, sizeof *out);
    sluice_rid_take_error(); /* (what an earlier request left) */
    const struct sluice_cl_api *A = api();
    size_t len = (size_t)req->nbytes;
    cl_int err = CL_SUCCESS;
    if (A->clGetPlatformIDs == NULL) {
        out->rep.ret = CL_INVALID_OPERATION;
        return;
    }
    pthread_mutex_lock(&srv_lock);
    switch (req->op) {
    case SLUICE_REMOTE_ENUM:
        do_enum(out);
        break;
    case SLUICE_REMOTE_INFO:
        do_info(&req->info, out);
        break;
    case SLUICE_REMOTE_CTX_CREATE: {
        cl_uint nd = (cl_uint)(len / sizeof(uint64_t));
        cl_device_id devs[MAX_DEVICES];
        if (nd > MAX_DEVICES) {
            out->rep.ret = CL_INVALID_VALUE;
            break;
        }
        for (cl_uint i = 0; i < nd; i++) {
            uint64_t v;
            memcpy(&v, p + i * sizeof v, sizeof v);
            devs[i] = PTR(cl_device_id, v);
        }
        cl_context c = A->clCreateContext(NULL, nd, devs, NULL, NULL, &err);
        out->rep.ret = err;
        out->rep.v[0] = RID(c);
        break;
    }
    case SLUICE_REMOTE_QUEUE_CREATE: {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, (cl_queue_properties)req->queue_create.properties,
                                       0};
        cl_command_queue q = A->clCreateCommandQueueWithProperties(
            PTR(cl_context, req->queue_create.ctx), PTR(cl_device_id, req->queue_create.device),
            req->queue_create.properties ? props : NULL, &err);
        if (q != NULL)
            queue_add(q, PTR(cl_context, req->queue_create.ctx), 0);
        out->rep.ret = err;
        out->rep.v[0] = RID(q);
        break;
    }
    case SLUICE_REMOTE_BUF_CREATE: {
        cl_mem m =
            A->clCreateBuffer(PTR(cl_context, req->buf_create.ctx), (cl_mem_flags)req->buf_create.flags,
                              (size_t)req->buf_create.size, NULL, &err);
        out->rep.ret = err;
        out->rep.v[0] = RID(m);
        break;
    }
    case SLUICE_REMOTE_PROG_CREATE: {
        char *src = malloc(len + 1);
        if (src == NULL) {
            out->rep.ret = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        memcpy(src, p, len);
        src[len] = '\0';
        const char *s = src;
        cl_program prog = A->clCreateProgramWithSource(PTR(cl_context, req->in_ctx.ctx), 1, &s, NULL, &err);
        free(src);
        out->rep.ret = err;
        out->rep.v[0] = RID(prog);
        break;
    }
    case SLUICE_REMOTE_PROG_BUILD:
        do_build(&req->prog_build, p, len, out);
        break;
    case SLUICE_REMOTE_KERNEL_CREATE: {
        char *name = malloc(len + 1); /* the program's kernel name, whatever its length */
        if (name == NULL) {
            out->rep.ret = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        cl_kernel k = A->clCreateKernel(PTR(cl_program, req->in_program.program), name, &err);
        free(name);
        out->rep.ret = err;
        out->rep.v[0] = RID(k);
        break;
    }
    case SLUICE_REMOTE_RELEASE:
        do_release(&req->release, out);
        break;
    case SLUICE_REMOTE_SUBDEVICES:
        do_subdevices(&req->subdevices, p, len, out);
        break;
    case SLUICE_REMOTE_OBJ:
        sluice_remote_objects(req, p, len, out); /* its words: remote_objects.h */
        break;
    case SLUICE_REMOTE_PROG_BINARY:
        do_prog_binary(&req->prog_binary, out);
        break;
    case SLUICE_REMOTE_PROG_FROM_BINARY:
        do_prog_from_binary(&req->prog_from_binary, p, len, out);
        break;
    case SLUICE_REMOTE_SUBBUF: {
        cl_buffer_region region = {(size_t)req->subbuf.origin, (size_t)req->subbuf.size};
        cl_mem m = A->clCreateSubBuffer(PTR(cl_mem, req->subbuf.parent), (cl_mem_flags)req->subbuf.flags,
                                        CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        out->rep.ret = err;
        out->rep.v[0] = RID(m);
        break;
    }
    default:
        out->rep.ret = CL_INVALID_OPERATION;
        break;
    }
    settle_ids(req, out);
    pthread_mutex_unlock(&srv_lock);
}

int sluice_remote_is_call(uint32_t op)
{
    enum { CALL, CMD, LOOP };
    static const unsigned char class_of[SLUICE_REMOTE_OP_COUNT] = {
#define X(name, class) [SLUICE_REMOTE_##name] = class,
        SLUICE_REMOTE_OPS(X)
#undef X
    };
    return op >= SLUICE_REMOTE_OP_COUNT || class_of[op] == CALL;
}
