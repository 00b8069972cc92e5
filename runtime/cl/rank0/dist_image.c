/* SPDX-License-Identifier: MIT */
/* Images and samplers of the distributed backend. An image, like a buffer, has one real image on
 * every rank of its context; its contents move through the coherence directory, where the whole
 * image is one unit: any command that reads it makes it valid on its rank, any that writes it
 * makes that rank the only holder, and a move carries the whole image packed (rows of width x
 * element size bytes) with clEnqueueReadImage on the holder and clEnqueueWriteImage on the
 * receiver (cl/serve/remote_image.c), straight between the two ranks. Reads and writes of the
 * program's memory travel packed too: rank 0 packs a write at enqueue and unpacks a read when it
 * completes, with the program's pitches; rank 0's own device uses them directly.
 * Errors OpenCL returns at enqueue are checked here, against rank 0's record of the image, so
 * that they are returned at enqueue as a local driver returns them. Samplers are created on
 * every rank of their context and become that rank's sampler in each kernel launch. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_objects.h"

#define for_ranks(ctx, r)                                                                                    \
    for (int r = 0; r < dist_size(); r++)                                                                    \
        if ((ctx)->rid[r] != 0)

static struct sluice_cl_api below; /* the slots under this file's (clEnqueueUnmapMemObject) */

/* ---- geometry ------------------------------------------------------------------------------ */

static bool arrayed_1d(const struct dist_image *im)
{
    return im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
}

static bool has_slices(const struct dist_image *im)
{
    return im->desc.image_type == CL_MEM_OBJECT_IMAGE3D || im->desc.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
}

static void view_dims(const cl_image_desc *d, size_t dims[3])
{
    dims[0] = d->image_width;
    dims[1] = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? d->image_array_size
              : d->image_type == CL_MEM_OBJECT_IMAGE2D || d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                      d->image_type == CL_MEM_OBJECT_IMAGE3D
                  ? d->image_height
                  : 1;
    dims[2] = d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? d->image_array_size
              : d->image_type == CL_MEM_OBJECT_IMAGE3D     ? d->image_depth
                                                           : 1;
}

/* Host memory of a region: the distance of its rows and of its slices, from the program's pitches
 * (0: packed). The rows of a 1D array are its images, a slice pitch apart. */
struct layout {
    size_t row, slice;
};

static cl_int host_layout(const struct dist_image *im, const size_t *region, size_t rp, size_t sp,
                          struct layout *h)
{
    size_t line = region[0] * im->elem;
    if (arrayed_1d(im)) {
        h->row = sp ? sp : line;
        h->slice = h->row * region[1];
        return (rp != 0 && rp < line) || (sp != 0 && sp < line) ? CL_INVALID_VALUE : CL_SUCCESS;
    }
    h->row = rp ? rp : line;
    h->slice = sp ? sp : h->row * region[1];
    return rp < line && rp != 0                                   ? CL_INVALID_VALUE
           : has_slices(im) && sp != 0 && sp < h->row * region[1] ? CL_INVALID_VALUE
                                                                  : CL_SUCCESS;
}

static cl_int check_region(const struct dist_image *im, const size_t *origin, const size_t *region)
{
    if (origin == NULL || region == NULL)
        return CL_INVALID_VALUE;
    for (int i = 0; i < 3; i++)
        if (region[i] == 0 || origin[i] > im->dims[i] || region[i] > im->dims[i] - origin[i])
            return CL_INVALID_VALUE;
    return CL_SUCCESS;
}

static bool whole(const struct dist_image *im, const size_t *origin, const size_t *region)
{
    for (int i = 0; i < 3; i++)
        if (origin[i] != 0 || region[i] != im->dims[i])
            return false;
    return true;
}

/* The engine's geometry (cl/serve/remote_image.h) of a region with host layout h. */
static void geom(const struct dist_image *im, const size_t *origin, const size_t *region,
                 const struct layout *h, size_t g[13])
{
    memset(g, 0, 13 * sizeof g[0]);
    memcpy(g, origin, 3 * sizeof g[0]);
    memcpy(g + 6, region, 3 * sizeof g[0]);
    g[9] = im->elem;
    g[11] = h->row;
    g[12] = arrayed_1d(im) ? h->row : h->slice;
}

void dist_image_whole(const struct dist_mem *m, size_t g[13])
{
    static const size_t zero[3] = {0, 0, 0};
    struct layout h;
    host_layout(m->image, m->image->dims, 0, 0, &h);
    geom(m->image, zero, m->image->dims, &h, g);
}

/* Between the packed form and host memory with layout h (to_host: unpack). */
static void copy_rows(unsigned char *packed, unsigned char *host, const size_t *region, size_t line,
                      const struct layout *h, bool to_host)
{
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++, packed += line) {
            unsigned char *p = host + z * h->slice + y * h->row;
            memcpy(to_host ? p : packed, to_host ? packed : p, line);
        }
}

/* ---- images ------------------------------------------------------------------------------- */

#define RANK0_FLAGS                                                                                          \
    (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY |           \
     CL_MEM_HOST_NO_ACCESS)

/* The program's memory of an image created with a host pointer: its layout. */
static struct layout creation_layout(const struct dist_image *im)
{
    struct layout h;
    host_layout(im, im->dims, im->desc.image_row_pitch, im->desc.image_slice_pitch, &h);
    return h;
}

#define DEVICE_ACCESS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define HOST_ACCESS (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)
#define HOST_PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)

/* The checks of an image with its own storage (the real images hold no host memory: rank 0
 * keeps the program's data). */
static cl_int check_own_storage(cl_mem_flags flags, const cl_image_desc *desc, const void *host_ptr)
{
    bool use = (flags & CL_MEM_USE_HOST_PTR) != 0, copy = (flags & CL_MEM_COPY_HOST_PTR) != 0;
    if (use && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
        return CL_INVALID_VALUE;
    if ((use || copy) != (host_ptr != NULL))
        return CL_INVALID_HOST_PTR;
    if (host_ptr == NULL && (desc->image_row_pitch || desc->image_slice_pitch))
        return CL_INVALID_IMAGE_DESCRIPTOR;
    return CL_SUCCESS;
}

/* An image made from a memory object b (an image1d_buffer, a 2D image of a buffer, an image of
 * an image) is b's storage: its record's parent is b, so the directory and the engines see the
 * uses of either as uses of b's root, and a move of the root carries both. Its flags are the
 * program's, each group it leaves out inherited from b (as the specification says, and PoCL
 * reports); the host pointer is b's. The drivers check the rest (size, format, sub-buffers). */
static cl_int storage_of(struct dist_mem *m, struct dist_mem *b, cl_mem_flags flags)
{
    pthread_mutex_lock(&dist_lock);
    bool live = dist_mem_is_live(b);
    pthread_mutex_unlock(&dist_lock);
    if (!live)
        return CL_INVALID_IMAGE_DESCRIPTOR;
    if (b->ctx != m->ctx)
        return CL_INVALID_MEM_OBJECT;
    if ((flags & DEVICE_ACCESS) == 0)
        flags |= b->flags & DEVICE_ACCESS;
    if ((flags & HOST_ACCESS) == 0)
        flags |= b->flags & HOST_ACCESS;
    m->flags = (flags & ~(cl_mem_flags)HOST_PTR_FLAGS) | (b->flags & HOST_PTR_FLAGS);
    m->host_ptr = b->image == NULL ? dist_mem_host_ptr(b) : NULL;
    m->parent = b;
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

/* The bytes of its storage an image uses: the packed image, or for an image of a buffer the
 * buffer's rows (a 2D image's row pitch apart). */
static size_t storage_size(const struct dist_image *im, bool of_buffer)
{
    size_t line = im->dims[0] * im->elem;
    if (!of_buffer || im->dims[0] == 0)
        return line * im->dims[1] * im->dims[2];
    size_t rp = im->desc.image_row_pitch ? im->desc.image_row_pitch : line;
    return rp * (im->dims[1] - 1) + line;
}

static cl_mem CL_API_CALL create_image(cl_context context, cl_mem_flags flags, const cl_image_format *fmt,
                                       const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    cl_int err = c == NULL      ? CL_INVALID_CONTEXT
                 : fmt == NULL  ? CL_INVALID_IMAGE_FORMAT_DESCRIPTOR
                 : desc == NULL ? CL_INVALID_IMAGE_DESCRIPTOR
                                : CL_SUCCESS;
    struct dist_mem *b = err == CL_SUCCESS ? (struct dist_mem *)desc->buffer : NULL;
    if (b != NULL)
        host_ptr = NULL; /* the storage is b's (PoCL ignores a host pointer here too) */
    else if (err == CL_SUCCESS)
        err = check_own_storage(flags, desc, host_ptr);
    struct dist_mem *m = err == CL_SUCCESS ? calloc(1, sizeof *m) : NULL;
    if (err == CL_SUCCESS && (m == NULL || (m->image = calloc(1, sizeof *m->image)) == NULL)) {
        free(m);
        err = CL_OUT_OF_HOST_MEMORY;
    }
    if (err != CL_SUCCESS) {
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    struct dist_image *im = m->image;
    im->format = *fmt;
    im->desc = *desc;
    view_dims(desc, im->dims);
    m->refs = 1;
    m->ctx = c;
    m->flags = flags ? flags : CL_MEM_READ_WRITE;
    m->host_ptr = (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : NULL;
    dist_ctx_retain(c);
    if (b != NULL)
        err = storage_of(m, b, flags);
    unsigned char wire[sizeof(cl_image_format) + sizeof(cl_image_desc)];
    cl_image_desc d = *desc;
    if (b == NULL)
        d.image_row_pitch = d.image_slice_pitch = 0; /* the real images hold no host memory */
    memcpy(wire, fmt, sizeof *fmt);
    for_ranks(c, r)
    {
        if (err != CL_SUCCESS)
            break;
        d.buffer = b != NULL ? (cl_mem)(uintptr_t)b->rid[r] : NULL; /* that rank's real object */
        memcpy(wire + sizeof *fmt, &d, sizeof d);
        uint64_t a[3] = {SLUICE_ROBJ_IMAGE_CREATE, c->rid[r], flags & ~(cl_mem_flags)RANK0_FLAGS};
        struct sluice_remote_msg rep = {0};
        if ((err = dist_call(r, SLUICE_REMOTE_OBJ, a, 3, wire, sizeof wire, &rep)) != CL_SUCCESS)
            break;
        if (im->elem == 0 && rep.bytes != NULL && rep.rep.nbytes == sizeof im->info)
            memcpy(&im->info, rep.bytes, sizeof im->info); /* the first rank answers queries */
        free(rep.bytes);
        m->rid[r] = rep.rep.v[0];
        im->elem = (size_t)rep.rep.v[1];
    }
    if (err == CL_SUCCESS && im->elem == 0)
        err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    m->size = storage_size(im, b != NULL && b->image == NULL);
    im->padded = m->size != storage_size(im, false);
    if (b != NULL) /* the directory knows the storage as b's root */
        return dist_mem_publish(m, err, errcode_ret);
    if (err == CL_SUCCESS && host_ptr != NULL) {
        if ((m->shadow = malloc(m->size)) == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
        } else {
            struct layout h = creation_layout(im);
            copy_rows(m->shadow, host_ptr, im->dims, im->dims[0] * im->elem, &h, false);
        }
    }
    return dist_mem_publish_root(m, err, errcode_ret);
}

static cl_mem CL_API_CALL create_image_props(cl_context context, const cl_mem_properties *props,
                                             cl_mem_flags flags, const cl_image_format *fmt,
                                             const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
    if (!dist_mem_props_ok(context, props, errcode_ret))
        return NULL;
    return dist_mem_props_given(create_image(context, flags, fmt, desc, host_ptr, errcode_ret), props);
}

static cl_mem CL_API_CALL create_image2d(cl_context context, cl_mem_flags flags, const cl_image_format *fmt,
                                         size_t w, size_t h, size_t rp, void *host_ptr, cl_int *errcode_ret)
{
    cl_image_desc d = {
        .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = h, .image_row_pitch = rp};
    return create_image(context, flags, fmt, &d, host_ptr, errcode_ret);
}

static cl_mem CL_API_CALL create_image3d(cl_context context, cl_mem_flags flags, const cl_image_format *fmt,
                                         size_t w, size_t h, size_t depth, size_t rp, size_t sp,
                                         void *host_ptr, cl_int *errcode_ret)
{
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE3D,
                       .image_width = w,
                       .image_height = h,
                       .image_depth = depth,
                       .image_row_pitch = rp,
                       .image_slice_pitch = sp};
    return create_image(context, flags, fmt, &d, host_ptr, errcode_ret);
}

/* An info query of an object rank r holds (OBJ op `op`), answered as the driver there answers. */
static cl_int remote_info(int r, uint64_t op, uint64_t rid, cl_uint param, size_t size, void *value,
                          size_t *size_ret)
{
    uint64_t a[4] = {op, rid, param, value != NULL ? size : 0};
    struct sluice_remote_msg rep = {0};
    cl_int err = dist_call(r, SLUICE_REMOTE_OBJ, a, 4, NULL, 0, &rep);
    if (err == CL_SUCCESS) {
        if (value != NULL && rep.rep.nbytes > 0)
            memcpy(value, rep.bytes, rep.rep.nbytes < size ? rep.rep.nbytes : size);
        if (size_ret != NULL)
            *size_ret = (size_t)rep.rep.v[0];
    }
    free(rep.bytes);
    return err;
}

/* The answer to a query the image's creation answered: true, with its code in *r. */
static bool cached_info(const struct dist_image *im, cl_image_info param, size_t size, void *value,
                        size_t *size_ret, cl_int *r)
{
    switch (param) {
#define SLUICE_X(p, type, field)                                                                             \
    case p:                                                                                                  \
        *r = dist_answer(&im->info.field, sizeof im->info.field, size, value, size_ret);                     \
        return true;
        SLUICE_REMOTE_IMAGE_INFO(SLUICE_X)
#undef SLUICE_X
    default:
        return false;
    }
}

/* Answered on rank 0: what is known at creation (the program's format and buffer, the driver's
 * sizes and pitches asked then). A buffer's, or an unknown parameter, goes to the owning rank. */
static cl_int CL_API_CALL image_info(cl_mem mem, cl_image_info param, size_t size, void *value,
                                     size_t *size_ret)
{
    struct dist_mem *m = (struct dist_mem *)mem;
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
    struct dist_image *im = m->image;
    if (param == CL_IMAGE_BUFFER && im != NULL) {
        cl_mem buffer = m->parent != NULL && m->parent->image == NULL ? (cl_mem)m->parent : NULL;
        return dist_answer(&buffer, sizeof buffer, size, value, size_ret);
    }
    if (param == CL_IMAGE_FORMAT && im != NULL)
        return dist_answer(&im->format, sizeof im->format, size, value, size_ret);
    /* CL_MEM_USE_HOST_PTR with pitches: the program's memory is the image (the real ones have none). */
    const cl_image_desc *d = im != NULL ? &im->desc : NULL;
    if (d != NULL && m->host_ptr != NULL && m->parent == NULL && d->image_row_pitch != 0 &&
        (param == CL_IMAGE_ROW_PITCH || param == CL_IMAGE_SLICE_PITCH)) {
        size_t v = param == CL_IMAGE_ROW_PITCH ? d->image_row_pitch
                   : d->image_slice_pitch      ? d->image_slice_pitch
                                               : d->image_row_pitch * (arrayed_1d(im) ? 1 : im->dims[1]);
        return dist_answer(&v, sizeof v, size, value, size_ret);
    }
    cl_int r;
    if (im != NULL && cached_info(im, param, size, value, size_ret, &r))
        return r;
    for_ranks(m->ctx, r) return remote_info(r, SLUICE_ROBJ_IMAGE_INFO, m->rid[r], param, size, value,
                                            size_ret);
    return CL_INVALID_MEM_OBJECT;
}

static bool same_format(const cl_image_format *a, const cl_image_format *b)
{
    return a->image_channel_order == b->image_channel_order &&
           a->image_channel_data_type == b->image_channel_data_type;
}

/* The formats every rank of the context supports for flags and type, in the first rank's order
 * (*out: allocated, NULL when none). */
static cl_int common_formats(struct dist_context *c, cl_mem_flags flags, cl_mem_object_type type,
                             cl_image_format **out, size_t *nout)
{
    cl_image_format *common = NULL;
    size_t n = 0;
    bool first = true;
    cl_int err = CL_SUCCESS;
    for_ranks(c, r)
    {
        uint64_t a[4] = {SLUICE_ROBJ_IMAGE_FORMATS, c->rid[r], flags, type};
        struct sluice_remote_msg rep = {0};
        if ((err = dist_call(r, SLUICE_REMOTE_OBJ, a, 4, NULL, 0, &rep)) != CL_SUCCESS) {
            free(rep.bytes);
            break;
        }
        const cl_image_format *v = (const cl_image_format *)rep.bytes;
        size_t nv = rep.bytes != NULL ? (size_t)rep.rep.nbytes / sizeof *v : 0;
        if (first) {
            common = (cl_image_format *)rep.bytes;
            n = nv;
            first = false;
            continue;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            bool found = false;
            for (size_t j = 0; j < nv && !found; j++)
                found = same_format(&common[i], &v[j]);
            if (found)
                common[k++] = common[i];
        }
        n = k;
        free(rep.bytes);
    }
    if (err != CL_SUCCESS) {
        free(common);
        common = NULL;
        n = 0;
    }
    *out = common;
    *nout = n;
    return err;
}

/* A context's answers to clGetSupportedImageFormats, asked of its ranks once per flags and type
 * (the conformance suite asks before every image it makes). */
struct dist_formats {
    cl_mem_flags flags;
    cl_mem_object_type type;
    size_t n;
    cl_image_format *v;
    struct dist_formats *next;
};

void dist_image_forget_formats(struct dist_context *c)
{
    while (c->formats != NULL) {
        struct dist_formats *f = c->formats;
        c->formats = f->next;
        free(f->v);
        free(f);
    }
}

static cl_int CL_API_CALL image_formats(cl_context context, cl_mem_flags flags, cl_mem_object_type type,
                                        cl_uint num, cl_image_format *formats, cl_uint *num_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL)
        return CL_INVALID_CONTEXT;
    if (num == 0 && formats != NULL)
        return CL_INVALID_VALUE;
    flags &= ~(cl_mem_flags)RANK0_FLAGS; /* what the ranks are asked */
    pthread_mutex_lock(&dist_lock);
    struct dist_formats *f = c->formats;
    while (f != NULL && !(f->flags == flags && f->type == type))
        f = f->next;
    cl_int err = CL_SUCCESS;
    if (f == NULL) {
        if ((f = calloc(1, sizeof *f)) == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
        } else if ((err = common_formats(c, flags, type, &f->v, &f->n)) != CL_SUCCESS) {
            free(f);
        } else {
            f->flags = flags;
            f->type = type;
            f->next = c->formats;
            c->formats = f;
        }
    }
    if (err == CL_SUCCESS) {
        if (formats != NULL)
            memcpy(formats, f->v, (f->n < num ? f->n : num) * sizeof *formats);
        if (num_ret != NULL)
            *num_ret = (cl_uint)f->n;
    }
    pthread_mutex_unlock(&dist_lock);
    return err;
}

/* ---- commands ----------------------------------------------------------------------------- */

static cl_int check_image(const struct dist_queue *q, const struct dist_mem *m)
{
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (m == NULL || m->image == NULL)
        return CL_INVALID_MEM_OBJECT;
    return m->ctx != q->ctx ? CL_INVALID_CONTEXT : CL_SUCCESS;
}

static struct dist_cmd image_command(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait,
                                     const cl_event *wl, const struct dist_uses *u)
{
    struct dist_cmd c = dist_command(q, kind, nwait, wl, u);
    c.flags = SLUICE_CMD_IMAGE;
    return c;
}

/* A read of the region into host memory at ptr with layout h (a map's read too): on another
 * rank it lands packed and is unpacked when the command completes. */
static cl_int read_region(struct dist_queue *q, struct dist_mem *m, dist_cmd_kind kind, const size_t *origin,
                          const size_t *region, void *ptr, const struct layout *h, cl_uint nwait,
                          const cl_event *wl, struct dist_event **e)
{
    int rank = q->dev->rank;
    size_t line = region[0] * m->image->elem, packed = line * region[1] * region[2];
    struct dist_rect *rect = NULL;
    if (rank != 0 && ((rect = calloc(1, sizeof *rect)) == NULL || (rect->tmp = malloc(packed)) == NULL)) {
        free(rect);
        return CL_OUT_OF_HOST_MEMORY;
    }
    if (rect != NULL) {
        rect->dst = ptr;
        rect->region[0] = line;
        rect->region[1] = region[1];
        rect->region[2] = region[2];
        rect->row_pitch = h->row;
        rect->slice_pitch = h->slice;
    }
    size_t g[13];
    geom(m->image, origin, region, h, g);
    struct dist_uses u = {0};
    pthread_mutex_lock(&dist_lock);
    cl_int r = dist_use(&u, m, rank, 0, m->size, false, false);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = image_command(q, kind, nwait, wl, &u);
        c.a[0] = m->rid[rank];
        c.a[2] = rank != 0 ? packed : 0;
        c.recv = rect != NULL ? (void *)rect->tmp : ptr;
        c.len = rank != 0 ? packed : 0;
        c.bytes = g;
        c.nbytes = sizeof g;
        c.rect = rect;
        r = dist_sched_submit(&c, e);
        rect = NULL; /* the record owns it */
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    if (rect != NULL) {
        free(rect->tmp);
        free(rect);
    }
    return r;
}

/* A write of the region from host memory at ptr with layout h (an unmap's write-back too): to
 * another rank it is packed now, since the program may reuse its memory once the call returned.
 * free_after is freed when the command is done, hold keeps its reference until then. */
static cl_int write_region(struct dist_queue *q, struct dist_mem *m, dist_cmd_kind kind, const size_t *origin,
                           const size_t *region, const void *ptr, const struct layout *h, cl_uint nwait,
                           const cl_event *wl, struct dist_event **e, struct dist_mem *hold, void *free_after)
{
    int rank = q->dev->rank;
    size_t line = region[0] * m->image->elem, packed = line * region[1] * region[2];
    unsigned char *tmp = NULL;
    if (rank != 0) {
        if ((tmp = malloc(packed)) == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        copy_rows(tmp, (unsigned char *)ptr, region, line, h, false);
        free(free_after); /* packed: the program's region is not needed any more */
        free_after = tmp;
    }
    size_t g[13];
    geom(m->image, origin, region, h, g);
    struct dist_uses u = {0};
    pthread_mutex_lock(&dist_lock);
    cl_int r = dist_use(&u, m, rank, 0, m->size, true, whole(m->image, origin, region));
    if (r == CL_SUCCESS) {
        struct dist_cmd c = image_command(q, kind, nwait, wl, &u);
        c.a[0] = m->rid[rank];
        c.a[2] = rank != 0 ? packed : 0;
        c.send = tmp != NULL ? (const void *)tmp : ptr;
        c.len = rank != 0 ? packed : 0;
        c.bytes = g;
        c.nbytes = sizeof g;
        c.hold = hold;
        c.free_after = free_after;
        r = dist_sched_submit(&c, e);
        free_after = NULL; /* the record owns it */
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    free(free_after);
    return r;
}

static cl_int host_checks(struct dist_queue *q, struct dist_mem *m, const size_t *origin,
                          const size_t *region, size_t rp, size_t sp, const void *ptr, cl_uint nwait,
                          const cl_event *wl, bool write, struct layout *h)
{
    cl_int r = check_image(q, m);
    if (r == CL_SUCCESS && (r = check_region(m->image, origin, region)) == CL_SUCCESS && ptr == NULL)
        r = CL_INVALID_VALUE;
    if (r == CL_SUCCESS)
        r = host_layout(m->image, region, rp, sp, h);
    if (r == CL_SUCCESS)
        r = dist_mem_host_access(m, !write, write);
    return r == CL_SUCCESS ? dist_check_wait(nwait, wl) : r;
}

static cl_int CL_API_CALL read_image(cl_command_queue queue, cl_mem image, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t rp, size_t sp,
                                     void *ptr, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)image;
    struct layout h;
    cl_int r = host_checks(q, m, origin, region, rp, sp, ptr, nwait, wl, false, &h);
    struct dist_event *e = NULL;
    if (r == CL_SUCCESS)
        r = read_region(q, m, DIST_CMD_READ_IMAGE, origin, region, ptr, &h, nwait, wl, &e);
    return dist_finish_call(r, e, blocking, event);
}

static cl_int CL_API_CALL write_image(cl_command_queue queue, cl_mem image, cl_bool blocking,
                                      const size_t *origin, const size_t *region, size_t rp, size_t sp,
                                      const void *ptr, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)image;
    struct layout h;
    cl_int r = host_checks(q, m, origin, region, rp, sp, ptr, nwait, wl, true, &h);
    struct dist_event *e = NULL;
    if (r == CL_SUCCESS)
        r = write_region(q, m, DIST_CMD_WRITE_IMAGE, origin, region, ptr, &h, nwait, wl, &e, NULL, NULL);
    return dist_finish_call(r, e, blocking, event);
}

/* Copies and fills run on the queue's rank: the sources are directory reads, the destination a
 * write (of the whole object when the region covers it). */
static cl_int device_cmd(struct dist_queue *q, dist_cmd_kind kind, struct dist_mem *src, size_t src_off,
                         size_t src_size, struct dist_mem *dst, size_t dst_off, size_t dst_size, bool dst_all,
                         int copy, const struct sluice_remote_image_cmd *ic, cl_uint nwait,
                         const cl_event *wl, cl_event *event)
{
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    cl_int r = src != NULL ? dist_use(&u, src, rank, src_off, src_size, false, false) : CL_SUCCESS;
    if (r == CL_SUCCESS)
        r = dist_use(&u, dst, rank, dst_off, dst_size, true, dst_all);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = image_command(q, kind, nwait, wl, &u);
        c.a[0] = src != NULL ? src->rid[rank] : dst->rid[rank];
        c.a[1] = dst->rid[rank];
        c.a[2] = (uint64_t)copy; /* SLUICE_IMG_COPY_* */
        c.bytes = ic;
        c.nbytes = sizeof *ic;
        r = dist_sched_submit(&c, &e);
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
}

static bool overlap(const size_t *a, const size_t *b, const size_t *region)
{
    for (int i = 0; i < 3; i++)
        if (a[i] >= b[i] + region[i] || b[i] >= a[i] + region[i])
            return false;
    return true;
}

static cl_int CL_API_CALL copy_image(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *so,
                                     const size_t *dor, const size_t *region, cl_uint nwait,
                                     const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    cl_int r = check_image(q, s);
    if (r == CL_SUCCESS)
        r = check_image(q, d);
    if (r == CL_SUCCESS && !same_format(&s->image->format, &d->image->format))
        r = CL_IMAGE_FORMAT_MISMATCH;
    if (r == CL_SUCCESS)
        r = check_region(s->image, so, region);
    if (r == CL_SUCCESS)
        r = check_region(d->image, dor, region);
    if (r == CL_SUCCESS && s == d && overlap(so, dor, region))
        r = CL_MEM_COPY_OVERLAP;
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct sluice_remote_image_cmd ic;
    memset(&ic, 0, sizeof ic);
    memcpy(ic.src_origin, so, sizeof ic.src_origin);
    memcpy(ic.dst_origin, dor, sizeof ic.dst_origin);
    memcpy(ic.region, region, sizeof ic.region);
    return device_cmd(q, DIST_CMD_COPY_IMAGE, s, 0, s->size, d, 0, d->size, whole(d->image, dor, region),
                      SLUICE_IMG_COPY_IMAGE, &ic, nwait, wl, event);
}

/* The buffer side of an image-buffer copy: a buffer (not an image) of the queue's context that
 * holds `size` bytes at off. */
static cl_int check_buffer(const struct dist_queue *q, const struct dist_mem *b, size_t off, size_t size)
{
    if (b == NULL || b->image != NULL)
        return CL_INVALID_MEM_OBJECT;
    if (b->ctx != q->ctx)
        return CL_INVALID_CONTEXT;
    return off > b->size || size > b->size - off ? CL_INVALID_VALUE : CL_SUCCESS;
}

/* The checks both image-buffer copies make: the image's region, then the buffer's `*size` bytes at
 * off (the region's bytes), then the wait list. */
static cl_int check_image_buffer(const struct dist_queue *q, const struct dist_mem *img, const size_t *origin,
                                 const size_t *region, const struct dist_mem *b, size_t off, cl_uint nwait,
                                 const cl_event *wl, size_t *size)
{
    cl_int r = check_image(q, img);
    if (r == CL_SUCCESS)
        r = check_region(img->image, origin, region);
    *size = r == CL_SUCCESS ? region[0] * region[1] * region[2] * img->image->elem : 0;
    if (r == CL_SUCCESS)
        r = check_buffer(q, b, off, *size);
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    return r;
}

/* Both image-buffer copies: the image's region, and the buffer's bytes at off; to_buffer: the
 * image is the source. */
static cl_int image_buffer_copy(cl_command_queue queue, bool to_buffer, cl_mem image, cl_mem buffer,
                                const size_t *origin, const size_t *region, size_t off, cl_uint nwait,
                                const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *img = (struct dist_mem *)image, *b = (struct dist_mem *)buffer;
    size_t size;
    cl_int r = check_image_buffer(q, img, origin, region, b, off, nwait, wl, &size);
    if (r != CL_SUCCESS)
        return r;
    struct sluice_remote_image_cmd ic;
    memset(&ic, 0, sizeof ic);
    memcpy(to_buffer ? ic.src_origin : ic.dst_origin, origin, sizeof ic.src_origin);
    memcpy(ic.region, region, sizeof ic.region);
    ic.offset = off;
    if (to_buffer)
        return device_cmd(q, DIST_CMD_COPY_IMAGE_TO_BUFFER, img, 0, img->size, b, off, size, true,
                          SLUICE_IMG_COPY_TO_BUFFER, &ic, nwait, wl, event);
    return device_cmd(q, DIST_CMD_COPY_BUFFER_TO_IMAGE, b, off, size, img, 0, img->size,
                      whole(img->image, origin, region), SLUICE_IMG_COPY_FROM_BUFFER, &ic, nwait, wl, event);
}

static cl_int CL_API_CALL copy_image_to_buffer(cl_command_queue queue, cl_mem src, cl_mem dst,
                                               const size_t *so, const size_t *region, size_t off,
                                               cl_uint nwait, const cl_event *wl, cl_event *event)
{
    return image_buffer_copy(queue, true, src, dst, so, region, off, nwait, wl, event);
}

static cl_int CL_API_CALL copy_buffer_to_image(cl_command_queue queue, cl_mem src, cl_mem dst, size_t off,
                                               const size_t *dor, const size_t *region, cl_uint nwait,
                                               const cl_event *wl, cl_event *event)
{
    return image_buffer_copy(queue, false, dst, src, dor, region, off, nwait, wl, event);
}

static cl_int CL_API_CALL fill_image(cl_command_queue queue, cl_mem image, const void *color,
                                     const size_t *origin, const size_t *region, cl_uint nwait,
                                     const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)image;
    cl_int r = check_image(q, m);
    if (r == CL_SUCCESS && color == NULL)
        r = CL_INVALID_VALUE;
    if (r == CL_SUCCESS)
        r = check_region(m->image, origin, region);
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct sluice_remote_image_cmd ic;
    memset(&ic, 0, sizeof ic);
    /* a cl_float4, cl_int4 or cl_uint4; one float for a depth image */
    cl_channel_order order = m->image->format.image_channel_order;
    memcpy(ic.fill, color,
           order == CL_DEPTH || order == CL_DEPTH_STENCIL ? sizeof(cl_float) : sizeof ic.fill);
    memcpy(ic.dst_origin, origin, sizeof ic.dst_origin);
    memcpy(ic.region, region, sizeof ic.region);
    return device_cmd(q, DIST_CMD_FILL_IMAGE, NULL, 0, 0, m, 0, m->size, whole(m->image, origin, region), 0,
                      &ic, nwait, wl, event);
}

/* ---- maps --------------------------------------------------------------------------------- */

/* Maps are served from rank 0 memory laid out as the whole image: the program's memory for
 * CL_MEM_USE_HOST_PTR (as OpenCL requires), else a packed copy of the image, so the pitches are
 * those a local driver gives (rows of width x element size bytes). */
struct image_map {
    struct dist_mem *mem;
    unsigned char *base; /* allocated here (NULL: the program's host_ptr) */
    void *ptr;
    size_t origin[3], region[3];
    struct layout h;
    cl_map_flags flags;
    struct image_map *next;
};
static struct image_map *maps;

static void *CL_API_CALL map_image(cl_command_queue queue, cl_mem image, cl_bool blocking, cl_map_flags flags,
                                   const size_t *origin, const size_t *region, size_t *row_pitch,
                                   size_t *slice_pitch, cl_uint nwait, const cl_event *wl, cl_event *event,
                                   cl_int *errcode_ret)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)image;
    cl_int r = check_image(q, m);
    if (r == CL_SUCCESS)
        r = check_region(m->image, origin, region);
    if (r == CL_SUCCESS &&
        (row_pitch == NULL || (slice_pitch == NULL && (has_slices(m->image) || arrayed_1d(m->image)))))
        r = CL_INVALID_VALUE;
    bool rd = (flags & CL_MAP_READ) != 0, wr = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
    if (r == CL_SUCCESS)
        r = dist_mem_host_access(m, rd, wr);
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    struct image_map *mp = NULL;
    if (r == CL_SUCCESS && (mp = calloc(1, sizeof *mp)) == NULL)
        r = CL_OUT_OF_HOST_MEMORY;
    if (r == CL_SUCCESS) {
        if (m->host_ptr != NULL) {
            mp->h = creation_layout(m->image);
        } else {
            host_layout(m->image, m->image->dims, 0, 0, &mp->h);
            if ((mp->base = malloc(m->size)) == NULL)
                r = CL_OUT_OF_HOST_MEMORY;
        }
    }
    struct dist_event *e = NULL;
    if (r == CL_SUCCESS) {
        unsigned char *base = mp->base != NULL ? mp->base : m->host_ptr;
        mp->ptr = base + origin[2] * mp->h.slice + origin[1] * mp->h.row + origin[0] * m->image->elem;
        memcpy(mp->origin, origin, sizeof mp->origin);
        memcpy(mp->region, region, sizeof mp->region);
        mp->flags = flags;
        mp->mem = m;
        if (!(flags & CL_MAP_WRITE_INVALIDATE_REGION))
            r = read_region(q, m, DIST_CMD_MAP_IMAGE_READ, origin, region, mp->ptr, &mp->h, nwait, wl, &e);
        else
            r = dist_exec_marker(q, DIST_CMD_MAP_IMAGE_INVALIDATE, nwait, wl, &e, NULL, NULL);
    }
    if (r == CL_SUCCESS) {
        *row_pitch = arrayed_1d(m->image) ? m->image->dims[0] * m->image->elem : mp->h.row;
        if (slice_pitch != NULL)
            *slice_pitch = arrayed_1d(m->image) ? mp->h.row : has_slices(m->image) ? mp->h.slice : 0;
        pthread_mutex_lock(&dist_lock);
        mp->next = maps;
        maps = mp;
        pthread_mutex_unlock(&dist_lock);
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL); /* a mapped object stays alive */
    }
    void *ptr = mp != NULL ? mp->ptr : NULL;
    bool mapped = r == CL_SUCCESS;
    r = dist_finish_call(r, e, blocking, event);
    dist_set_err(errcode_ret, r);
    if (!mapped && mp != NULL) {
        free(mp->base);
        free(mp);
    }
    return r == CL_SUCCESS ? ptr : NULL;
}

/* The unmap of an image map: its write-back when the map allowed writes, else a marker; other
 * memory objects go to the buffer slot below. */
static cl_int CL_API_CALL unmap(cl_command_queue queue, cl_mem memobj, void *ptr, cl_uint nwait,
                                const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)memobj;
    if (q == NULL || m == NULL || m->image == NULL)
        return below.clEnqueueUnmapMemObject(queue, memobj, ptr, nwait, wl, event);
    cl_int r = check_image(q, m);
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    pthread_mutex_lock(&dist_lock);
    struct image_map **pp = &maps;
    while (*pp != NULL && !((*pp)->mem == m && (*pp)->ptr == ptr))
        pp = &(*pp)->next;
    struct image_map *mp = *pp;
    if (mp == NULL) {
        pthread_mutex_unlock(&dist_lock);
        return CL_INVALID_VALUE;
    }
    *pp = mp->next;
    pthread_mutex_unlock(&dist_lock);
    struct dist_event *e = NULL;
    /* The map's reference and memory go with the command that ends it. */
    if (mp->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
        r = write_region(q, m, DIST_CMD_UNMAP_WRITE, mp->origin, mp->region, mp->ptr, &mp->h, nwait, wl, &e,
                         m, mp->base);
    else
        r = dist_exec_marker(q, DIST_CMD_UNMAP_READ, nwait, wl, &e, m, mp->base);
    if (r == CL_SUCCESS) {
        free(mp);
    } else {
        pthread_mutex_lock(&dist_lock);
        mp->next = maps;
        maps = mp;
        pthread_mutex_unlock(&dist_lock);
    }
    return dist_finish_call(r, e, false, event);
}

/* ---- samplers ----------------------------------------------------------------------------- */

DIST_LIVE_LIST(sampler, struct dist_sampler)

static void sampler_unref(struct dist_sampler *s)
{
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    sampler_live_remove(s);
    dist_release_everywhere(s->rid, SLUICE_CL_SAMPLER);
    dist_ctx_unref(s->ctx);
    free(s);
}

DIST_RETAIN_RELEASE(sampler, cl_sampler, struct dist_sampler, sampler_unref, CL_INVALID_SAMPLER)

/* a[2] 1: clCreateSampler's arguments in a[3..5]; 0: the property list in the payload. */
static cl_sampler make_sampler(cl_context context, uint64_t *a, const void *props, size_t len,
                               cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    struct dist_sampler *s = calloc(1, sizeof *s);
    if (s == NULL) {
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    s->refs = 1;
    s->ctx = c;
    dist_ctx_retain(c);
    sampler_live_add(s);
    cl_int err = CL_SUCCESS;
    a[0] = SLUICE_ROBJ_SAMPLER_CREATE;
    for_ranks(c, r)
    {
        a[1] = c->rid[r];
        if ((err = dist_call_v(r, SLUICE_REMOTE_OBJ, a, 6, props, len, &s->rid[r])) != CL_SUCCESS)
            break;
    }
    dist_set_err(errcode_ret, err);
    if (err != CL_SUCCESS) {
        sampler_unref(s);
        return NULL;
    }
    return (cl_sampler)s;
}

static cl_sampler CL_API_CALL create_sampler(cl_context context, cl_bool norm, cl_addressing_mode addr,
                                             cl_filter_mode filter, cl_int *errcode_ret)
{
    uint64_t a[6] = {0, 0, 1, norm, addr, filter};
    return make_sampler(context, a, NULL, 0, errcode_ret);
}

static cl_sampler CL_API_CALL create_sampler_props(cl_context context, const cl_sampler_properties *props,
                                                   cl_int *errcode_ret)
{
    size_t n = 0;
    while (props != NULL && props[n] != 0 && n < 15)
        n += 2;
    if (props != NULL && props[n] != 0) {
        dist_set_err(errcode_ret, context == NULL ? CL_INVALID_CONTEXT : CL_INVALID_VALUE);
        return NULL;
    }
    uint64_t a[6] = {0};
    return make_sampler(context, a, props, props != NULL ? (n + 1) * sizeof *props : 0, errcode_ret);
}

static cl_int CL_API_CALL sampler_info(cl_sampler sampler, cl_sampler_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_sampler *s = (struct dist_sampler *)sampler;
    if (s == NULL)
        return CL_INVALID_SAMPLER;
    if (param == CL_SAMPLER_CONTEXT)
        return dist_answer(&s->ctx, sizeof s->ctx, size, value, size_ret);
    if (param == CL_SAMPLER_REFERENCE_COUNT) {
        cl_uint n = (cl_uint)__atomic_load_n(&s->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    for_ranks(s->ctx, r) return remote_info(r, SLUICE_ROBJ_SAMPLER_INFO, s->rid[r], param, size, value,
                                            size_ret);
    return CL_INVALID_SAMPLER;
}

void dist_image_install(struct sluice_cl_api *api)
{
    below = *api;
    api->clCreateImage = create_image;
    api->clCreateImageWithProperties = create_image_props;
    api->clCreateImage2D = create_image2d;
    api->clCreateImage3D = create_image3d;
    api->clGetImageInfo = image_info;
    api->clGetSupportedImageFormats = image_formats;
    api->clEnqueueReadImage = read_image;
    api->clEnqueueWriteImage = write_image;
    api->clEnqueueCopyImage = copy_image;
    api->clEnqueueCopyImageToBuffer = copy_image_to_buffer;
    api->clEnqueueCopyBufferToImage = copy_buffer_to_image;
    api->clEnqueueFillImage = fill_image;
    api->clEnqueueMapImage = map_image;
    api->clEnqueueUnmapMemObject = unmap;
    api->clCreateSampler = create_sampler;
    api->clCreateSamplerWithProperties = create_sampler_props;
    api->clRetainSampler = retain_sampler;
    api->clReleaseSampler = release_sampler;
    api->clGetSamplerInfo = sampler_info;
}
