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
 * every rank of their context and become that rank's sampler in each kernel launch.
 *
 * This file: image records (creation, queries, supported formats); the other files of images and
 * samplers are listed in dist_image_internal.h. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_image_internal.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_objects.h"

/* ---- images ------------------------------------------------------------------------------- */

#define RANK0_FLAGS                                                                                          \
    (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY |           \
     CL_MEM_HOST_NO_ACCESS)

/* The program's memory of an image created with a host pointer: its layout. */
struct layout dist_image_creation_layout(const struct dist_image *im)
{
    struct layout h;
    dist_image_host_layout(im, im->dims, im->desc.image_row_pitch, im->desc.image_slice_pitch, &h);
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
    SLUICE_RETURN_ERROR_ON(use && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)), CL_INVALID_VALUE,
                           "use && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))");
    SLUICE_RETURN_ERROR_ON((use || copy) != (host_ptr != NULL), CL_INVALID_HOST_PTR,
                           "(use || copy) != (host_ptr != NULL)");
    SLUICE_RETURN_ERROR_ON(host_ptr == NULL && (desc->image_row_pitch || desc->image_slice_pitch),
                           CL_INVALID_IMAGE_DESCRIPTOR,
                           "host_ptr == NULL && (desc->image_row_pitch || desc->image_slice_pitch)");
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
    SLUICE_RETURN_ERROR_ON(!live, CL_INVALID_IMAGE_DESCRIPTOR, "!live");
    SLUICE_RETURN_ERROR_ON(b->ctx != m->ctx, CL_INVALID_MEM_OBJECT,
                           "objects of two contexts (b->ctx != m->ctx)");
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
    dist_image_view_dims(desc, im->dims);
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
    cl_mem_flags sent = flags & ~(cl_mem_flags)RANK0_FLAGS;
    if (err == CL_SUCCESS) /* known to be taken: no rank is waited for (its answers when asked) */
        im->elem = dist_image_accepted(c, sent, fmt, &d, b);
    im->info_known = im->elem == 0;
    for_ranks(c, r)
    {
        if (err != CL_SUCCESS)
            break;
        d.buffer = b != NULL ? (cl_mem)(uintptr_t)b->rid[r] : NULL; /* that rank's real object */
        memcpy(wire + sizeof *fmt, &d, sizeof d);
        struct sluice_robj_image_create in = {SLUICE_ROBJ_IMAGE_CREATE, c->rid[r], sent, 0};
        if (im->elem != 0) { /* the first rank's driver took it: the others without waiting */
            if ((err = dist_create(r, SLUICE_REMOTE_OBJ, DIST_WORDS_ID(in), wire, sizeof wire, &m->rid[r])) !=
                CL_SUCCESS)
                break;
            continue;
        }
        struct sluice_remote_msg rep = {0};
        if ((err = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), wire, sizeof wire, &rep)) != CL_SUCCESS)
            break;
        if (im->elem == 0 && rep.bytes != NULL && rep.rep.nbytes == sizeof im->info)
            memcpy(&im->info, rep.bytes, sizeof im->info); /* the first rank answers queries */
        free(rep.bytes);
        m->rid[r] = rep.rep.v[0];
        im->elem = (size_t)rep.rep.v[1];
        if (r > 0)
            dist_image_learn(c, sent, fmt, &d, b, im->elem);
    }
    SLUICE_ERROR_ON(err, im->elem == 0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "im->elem == 0");
    m->size = storage_size(im, b != NULL && b->image == NULL);
    im->padded = m->size != storage_size(im, false);
    if (b != NULL) /* the directory knows the storage as b's root */
        return dist_mem_publish(m, err, errcode_ret);
    if (err == CL_SUCCESS && host_ptr != NULL) {
        if ((m->shadow = malloc(m->size)) == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
        } else {
            struct layout h = dist_image_creation_layout(im);
            dist_image_copy_rows(m->shadow, host_ptr, im->dims, im->dims[0] * im->elem, &h, false);
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
cl_int dist_image_remote_info(int r, uint64_t op, uint64_t rid, cl_uint param, size_t size, void *value,
                              size_t *size_ret)
{
    struct sluice_robj_info in = {op, rid, param, value != NULL ? size : 0};
    struct sluice_remote_msg rep = {0};
    cl_int err = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), NULL, 0, &rep);
    if (err == CL_SUCCESS) {
        if (value != NULL && rep.rep.nbytes > 0)
            memcpy(value, rep.bytes, rep.rep.nbytes < size ? rep.rep.nbytes : size);
        if (size_ret != NULL)
            *size_ret = (size_t)rep.rep.v[0];
    }
    free(rep.bytes);
    return err;
}

const struct sluice_remote_image_info *dist_image_answers(struct dist_mem *m, cl_int *err)
{
    struct dist_image *im = m->image;
    if (__atomic_load_n(&im->info_known, __ATOMIC_ACQUIRE))
        return &im->info;
    int r = dist_first_rank(m->ctx);
    struct sluice_robj_info in = {SLUICE_ROBJ_IMAGE_ANSWERS, r >= 0 ? m->rid[r] : 0, 0, 0};
    struct sluice_remote_msg rep = {0};
    *err = r < 0 ? CL_INVALID_MEM_OBJECT : dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), NULL, 0, &rep);
    if (*err == CL_SUCCESS && (rep.bytes == NULL || rep.rep.nbytes != sizeof im->info))
        *err = CL_OUT_OF_RESOURCES;
    if (*err == CL_SUCCESS) {
        pthread_mutex_lock(&dist_lock);
        if (!im->info_known) { /* another thread may have asked too: the same answers */
            memcpy(&im->info, rep.bytes, sizeof im->info);
            __atomic_store_n(&im->info_known, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&dist_lock);
    }
    free(rep.bytes);
    return *err == CL_SUCCESS ? &im->info : NULL;
}

/* The answer to a query the image's driver answers once for all: true, with its code in *r. */
static bool cached_info(struct dist_mem *m, cl_image_info param, size_t size, void *value, size_t *size_ret,
                        cl_int *r)
{
    const struct sluice_remote_image_info *info;
    switch (param) {
#define SLUICE_X(p, type, field)                                                                             \
    case p:                                                                                                  \
        if ((info = dist_image_answers(m, r)) != NULL)                                                       \
            *r = dist_answer(&info->field, sizeof info->field, size, value, size_ret);                       \
        return true;
        SLUICE_REMOTE_IMAGE_INFO(SLUICE_X)
#undef SLUICE_X
    default:
        return false;
    }
}

/* Answered on rank 0: what is known at creation (the program's format and buffer, the driver's
 * sizes and pitches, asked then or at the first such query). A buffer's, or an unknown parameter,
 * goes to the owning rank. */
static cl_int CL_API_CALL image_info(cl_mem mem, cl_image_info param, size_t size, void *value,
                                     size_t *size_ret)
{
    struct dist_mem *m = (struct dist_mem *)mem;
    SLUICE_RETURN_ERROR_ON(m == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
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
                   : d->image_slice_pitch
                       ? d->image_slice_pitch
                       : d->image_row_pitch * (dist_image_arrayed_1d(im) ? 1 : im->dims[1]);
        return dist_answer(&v, sizeof v, size, value, size_ret);
    }
    if (param == CL_IMAGE_ELEMENT_SIZE && im != NULL && im->elem != 0) /* the driver's, for its format */
        return dist_answer(&im->elem, sizeof im->elem, size, value, size_ret);
    cl_int r;
    if (im != NULL && cached_info(m, param, size, value, size_ret, &r))
        return r;
    for_ranks(m->ctx, r) return dist_image_remote_info(r, SLUICE_ROBJ_IMAGE_INFO, m->rid[r], param, size,
                                                       value, size_ret);
    return CL_INVALID_MEM_OBJECT;
}

bool dist_image_same_format(const cl_image_format *a, const cl_image_format *b)
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
        struct sluice_robj_image_formats in = {SLUICE_ROBJ_IMAGE_FORMATS, c->rid[r], flags, type};
        struct sluice_remote_msg rep = {0};
        if ((err = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), NULL, 0, &rep)) != CL_SUCCESS) {
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
                found = dist_image_same_format(&common[i], &v[j]);
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
    SLUICE_RETURN_ERROR_ON(c == NULL, CL_INVALID_CONTEXT, "no context (NULL)");
    SLUICE_RETURN_ERROR_ON(num == 0 && formats != NULL, CL_INVALID_VALUE, "num == 0 && formats != NULL");
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

void dist_image_install(struct sluice_cl_api *api)
{
    dist_image_cmds_install(api); /* first: it keeps the slots below this file's */
    api->clCreateImage = create_image;
    api->clCreateImageWithProperties = create_image_props;
    api->clCreateImage2D = create_image2d;
    api->clCreateImage3D = create_image3d;
    api->clGetImageInfo = image_info;
    api->clGetSupportedImageFormats = image_formats;
    dist_sampler_install(api);
}
