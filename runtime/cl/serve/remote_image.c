/* SPDX-License-Identifier: MIT */
/* Images and samplers on a serving rank (and in-process for rank 0's own devices): created,
 * queried and released for rank 0 through OBJ requests, and the image commands of the engine,
 * against this process's real OpenCL loader. Rank 0 keeps the records (cl/rank0/dist_image.c). */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/backend.h"
#include "cl/serve/remote_ids.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_objects.h"
#include "trace/debug.h"

#define SLUICE_DEBUG_HERE serve /* SLUICE_DEBUG=serve */

#define RID(p) ((uint64_t)(uintptr_t)(p))
#define PTR(t, v) ((t)(uintptr_t)sluice_rid_real(v))
#define MAX_VALUE ((size_t)1 << 20)

static const struct sluice_cl_api *api(void)
{
    return &sluice_cl_loader_backend()->api;
}

/* The driver's answers for the image, in the creation's reply. */
static cl_int image_info(cl_mem img, struct sluice_remote_image_info *in)
{
    cl_int err = api()->clGetMemObjectInfo(img, CL_MEM_SIZE, sizeof in->mem_size, &in->mem_size, NULL);
#define SLUICE_X(param, type, field)                                                                         \
    if (err == CL_SUCCESS)                                                                                   \
        err = api()->clGetImageInfo(img, param, sizeof in->field, &in->field, NULL);
    SLUICE_REMOTE_IMAGE_INFO(SLUICE_X)
#undef SLUICE_X
    return err;
}

static void create_image(const struct sluice_robj_image_create *in, const unsigned char *p, size_t len,
                         struct sluice_remote_msg *out)
{
    cl_image_format fmt;
    cl_image_desc desc;
    if (len != sizeof fmt + sizeof desc) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    memcpy(&fmt, p, sizeof fmt);
    memcpy(&desc, p + sizeof fmt, sizeof desc);
    desc.buffer = PTR(cl_mem, (uint64_t)(uintptr_t)desc.buffer); /* rank 0's name of it */
    cl_int err = CL_SUCCESS;
    cl_mem img =
        api()->clCreateImage(PTR(cl_context, in->ctx), (cl_mem_flags)in->flags, &fmt, &desc, NULL, &err);
    out->rep.ret = err;
    if (err == CL_SUCCESS && in->id != 0) /* no reply: rank 0 asks its answers if it needs them */
        out->rep.v[0] = RID(img);
    if (err != CL_SUCCESS || in->id != 0)
        return;
    struct sluice_remote_image_info *ii = calloc(1, sizeof *ii);
    out->rep.ret = ii == NULL ? CL_OUT_OF_HOST_MEMORY : image_info(img, ii);
    if (out->rep.ret != CL_SUCCESS) {
        free(ii);
        api()->clReleaseMemObject(img);
        return;
    }
    out->rep.v[0] = RID(img);
    out->rep.v[1] = ii->elem;
    out->bytes = (unsigned char *)ii;
    out->rep.nbytes = sizeof *ii;
}

/* The answers of image_info for an image created without a reply. */
static void answers(const struct sluice_robj_info *in, struct sluice_remote_msg *out)
{
    struct sluice_remote_image_info *ii = calloc(1, sizeof *ii);
    out->rep.ret = ii == NULL ? CL_OUT_OF_HOST_MEMORY : image_info(PTR(cl_mem, in->obj), ii);
    if (out->rep.ret != CL_SUCCESS) {
        free(ii);
        return;
    }
    out->bytes = (unsigned char *)ii;
    out->rep.nbytes = sizeof *ii;
}

static void formats(const struct sluice_robj_image_formats *in, struct sluice_remote_msg *out)
{
    cl_uint n = 0;
    cl_context ctx = PTR(cl_context, in->ctx);
    cl_mem_flags flags = (cl_mem_flags)in->flags;
    cl_mem_object_type type = (cl_mem_object_type)in->type;
    out->rep.ret = api()->clGetSupportedImageFormats(ctx, flags, type, 0, NULL, &n);
    if (out->rep.ret != CL_SUCCESS || n == 0)
        return;
    cl_image_format *v = malloc(n * sizeof *v);
    if (v == NULL) {
        out->rep.ret = CL_OUT_OF_HOST_MEMORY;
        return;
    }
    out->rep.ret = api()->clGetSupportedImageFormats(ctx, flags, type, n, v, NULL);
    out->bytes = (unsigned char *)v;
    out->rep.nbytes = n * sizeof *v;
    out->rep.v[0] = n;
}

/* An info query of an image or a sampler, of the program's size (0: size only). */
static void info(const struct sluice_robj_info *in, struct sluice_remote_msg *out, int sampler)
{
    size_t size = (size_t)in->size, ret = 0;
    if (size > MAX_VALUE || (size > 0 && (out->bytes = malloc(size)) == NULL)) {
        out->rep.ret = size > MAX_VALUE ? CL_INVALID_VALUE : CL_OUT_OF_HOST_MEMORY;
        return;
    }
    out->rep.ret = sampler ? api()->clGetSamplerInfo(PTR(cl_sampler, in->obj), (cl_sampler_info)in->param,
                                                     size, out->bytes, &ret)
                           : api()->clGetImageInfo(PTR(cl_mem, in->obj), (cl_image_info)in->param, size,
                                                   out->bytes, &ret);
    out->rep.v[0] = ret;
    if (out->rep.ret == CL_SUCCESS && size > 0)
        out->rep.nbytes = ret < size ? ret : size;
}

static void create_sampler(const struct sluice_robj_sampler_create *in, const unsigned char *p, size_t len,
                           struct sluice_remote_msg *out)
{
    cl_int err = CL_SUCCESS;
    cl_context ctx = PTR(cl_context, in->ctx);
    cl_sampler s = NULL;
    if (in->with_args == 1) {
        s = api()->clCreateSampler(ctx, (cl_bool)in->normalized, (cl_addressing_mode)in->addressing,
                                   (cl_filter_mode)in->filter, &err);
    } else {
        cl_sampler_properties props[16];
        size_t n = len / sizeof props[0];
        if (n > 16 || n * sizeof props[0] != len) {
            out->rep.ret = CL_INVALID_VALUE;
            return;
        }
        memcpy(props, p, len);
        s = api()->clCreateSamplerWithProperties
                ? api()->clCreateSamplerWithProperties(ctx, n ? props : NULL, &err)
                : NULL;
        if (api()->clCreateSamplerWithProperties == NULL)
            err = CL_INVALID_OPERATION;
    }
    out->rep.ret = err;
    out->rep.v[0] = RID(s);
}

void sluice_remote_image_obj(const union sluice_robj_args *in, const unsigned char *p, size_t len,
                             struct sluice_remote_msg *out)
{
    switch (in->op) {
    case SLUICE_ROBJ_IMAGE_CREATE:
        create_image(&in->image_create, p, len, out);
        break;
    case SLUICE_ROBJ_IMAGE_FORMATS:
        formats(&in->image_formats, out);
        break;
    case SLUICE_ROBJ_IMAGE_INFO:
        info(&in->info, out, 0);
        break;
    case SLUICE_ROBJ_IMAGE_ANSWERS:
        answers(&in->info, out);
        break;
    case SLUICE_ROBJ_SAMPLER_CREATE:
        create_sampler(&in->sampler_create, p, len, out);
        break;
    case SLUICE_ROBJ_SAMPLER_INFO:
        info(&in->info, out, 1);
        break;
    default:
        out->rep.ret = CL_INVALID_OPERATION;
        break;
    }
}

cl_int sluice_remote_image_rw(cl_command_queue q, int write, cl_mem img, const struct sluice_rect_geom *g,
                              int packed, void *ptr, cl_uint nw, const cl_event *wl, cl_event *ev)
{
    cl_mem_object_type t = 0;
    SLUICE_RETURN_ERROR_ON(api()->clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof t, &t, NULL) != CL_SUCCESS,
                           CL_INVALID_MEM_OBJECT,
                           "api()->clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof t, &t, NULL) != CL_SUCCESS");
    size_t rp = packed ? sluice_remote_image_row(g) : g->host_row_pitch;
    /* The images of a 1D array are its rows, one slice pitch apart; 1D and 2D images take 0. */
    size_t sp = !packed ? g->host_slice_pitch : t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? rp : rp * g->region[1];
    if (t != CL_MEM_OBJECT_IMAGE3D && t != CL_MEM_OBJECT_IMAGE2D_ARRAY && t != CL_MEM_OBJECT_IMAGE1D_ARRAY)
        sp = 0;
    return write ? api()->clEnqueueWriteImage(q, img, CL_FALSE, g->origin, g->region, rp, sp, ptr, nw,
                                              nw ? wl : NULL, ev)
                 : api()->clEnqueueReadImage(q, img, CL_FALSE, g->origin, g->region, rp, sp, ptr, nw,
                                             nw ? wl : NULL, ev);
}

cl_int sluice_remote_image_cmd(cl_command_queue q, const struct sluice_remote_req *req,
                               const unsigned char *p, size_t len, cl_uint nw, const cl_event *wl,
                               cl_event *ev)
{
    struct sluice_remote_image_cmd c;
    SLUICE_RETURN_ERROR_ON(len != sizeof c, CL_INVALID_VALUE, "len != sizeof c");
    memcpy(&c, p, sizeof c);
    const cl_event *w = nw ? wl : NULL;
    const struct sluice_cl_api *A = api();
    if (req->op == SLUICE_REMOTE_CMD_FILL)
        return A->clEnqueueFillImage(q, PTR(cl_mem, req->fill.buf), c.fill, c.dst_origin, c.region, nw, w,
                                     ev);
    cl_mem s = PTR(cl_mem, req->image_copy.src), d = PTR(cl_mem, req->image_copy.dst);
    switch (req->image_copy.kind) {
    case SLUICE_IMG_COPY_IMAGE:
        return A->clEnqueueCopyImage(q, s, d, c.src_origin, c.dst_origin, c.region, nw, w, ev);
    case SLUICE_IMG_COPY_TO_BUFFER:
        return A->clEnqueueCopyImageToBuffer(q, s, d, c.src_origin, c.region, c.offset, nw, w, ev);
    case SLUICE_IMG_COPY_FROM_BUFFER:
        return A->clEnqueueCopyBufferToImage(q, s, d, c.offset, c.dst_origin, c.region, nw, w, ev);
    default:
        return CL_INVALID_VALUE;
    }
}
