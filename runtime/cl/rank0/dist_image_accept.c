/* SPDX-License-Identifier: MIT */
/* When an image or a sampler may be created without waiting for the first rank's driver, though
 * that rank is not rank 0 (docs/DISTRIBUTED.md, "Object ids"). The driver's verdict on a creation
 * depends on its arguments and the context's devices only, and the answers the program may ask
 * later (pitches, sizes) are fetched when it asks (dist_image.c). So:
 * - a sampler whose arguments the first rank's driver accepted once in this context is accepted
 *   again (they are the program's own values: nothing else about the device enters);
 * - an image of a kind (format, type, flags) the first rank's driver accepted once in this context
 *   is accepted again at any size within every context device's limits (CL_DEVICE_IMAGE2D_MAX_*,
 *   IMAGE3D_MAX_*, IMAGE_MAX_ARRAY_SIZE, and packed bytes within half CL_DEVICE_MAX_MEM_ALLOC_SIZE,
 *   as a driver may pad rows), asked once per device: the sizes are all the specification lets a
 *   driver refuse for, beyond what the first image of the kind showed. Its element size is the one
 *   that image's driver gave.
 * - an image of a buffer (a 1D image buffer, or a 2D image of a buffer) of a kind the first rank's
 *   driver accepted once in this context, the buffer's flags part of the kind, is accepted again
 *   where rank 0 sees what the driver checks: the width within every device's
 *   CL_DEVICE_IMAGE_MAX_BUFFER_SIZE (2D: IMAGE2D_MAX_*), the row pitch a multiple of the largest
 *   CL_DEVICE_IMAGE_PITCH_ALIGNMENT, a CL_MEM_USE_HOST_PTR buffer's memory aligned to the largest
 *   CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, and the rows within the buffer's size (asked once per
 *   device; the buffer's size and flags are rank 0's).
 * Everything else (a new kind, a size beyond a limit or the buffer, mipmaps, a pitch the driver
 * would judge, an image of a sub-buffer or of an image) waits for the driver as before, which then
 * reports its own code at creation. Rank 0's own devices always answer in-process. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_image_internal.h"
#include "config/config.h"

/* One accepted creation: its key bytes, and what the reply said (an image's element size). */
struct dist_accepted {
    struct dist_accepted *next;
    size_t value;
    size_t len;
    unsigned char key[];
};

/* Under dist_lock. */
static struct dist_accepted *find(const struct dist_context *c, const void *key, size_t len)
{
    for (struct dist_accepted *a = c->accepted; a != NULL; a = a->next)
        if (a->len == len && memcmp(a->key, key, len) == 0)
            return a;
    return NULL;
}

static void learn(struct dist_context *c, const void *key, size_t len, size_t value)
{
    pthread_mutex_lock(&dist_lock);
    struct dist_accepted *a = find(c, key, len);
    if (a == NULL && (a = malloc(sizeof *a + len)) != NULL) { /* none: the next one waits too */
        a->value = value;
        a->len = len;
        memcpy(a->key, key, len);
        a->next = c->accepted;
        c->accepted = a;
    }
    pthread_mutex_unlock(&dist_lock);
}

void dist_image_forget_accepted(struct dist_context *c)
{
    while (c->accepted != NULL) {
        struct dist_accepted *a = c->accepted;
        c->accepted = a->next;
        free(a);
    }
}

int dist_first_rank(const struct dist_context *c)
{
    for_ranks(c, r) return r;
    return -1;
}

/* Whether creations in c can skip the first rank's reply at all: it is a serving rank, and ids
 * are rank 0's to choose. */
static bool may_skip(const struct dist_context *c)
{
    return sluice_config.DIST_IDS && dist_first_rank(c) > 0;
}

/* ---- samplers ---- */

/* The key: the request's words without the context and id (the same arguments), then the
 * property list. */
static size_t sampler_key(const struct sluice_robj_sampler_create *in, const void *props, size_t len,
                          unsigned char *key)
{
    struct sluice_robj_sampler_create k = *in;
    k.ctx = k.id = 0;
    memcpy(key, &k, sizeof k);
    if (len > 0)
        memcpy(key + sizeof k, props, len);
    return sizeof k + len;
}

enum { SAMPLER_KEY_MAX = sizeof(struct sluice_robj_sampler_create) + 16 * sizeof(cl_sampler_properties) };

bool dist_sampler_accepted(struct dist_context *c, const struct sluice_robj_sampler_create *in,
                           const void *props, size_t len)
{
    unsigned char key[SAMPLER_KEY_MAX];
    if (!may_skip(c) || len > SAMPLER_KEY_MAX - sizeof *in)
        return false;
    size_t n = sampler_key(in, props, len, key);
    pthread_mutex_lock(&dist_lock);
    bool known = find(c, key, n) != NULL;
    pthread_mutex_unlock(&dist_lock);
    return known;
}

void dist_sampler_learn(struct dist_context *c, const struct sluice_robj_sampler_create *in,
                        const void *props, size_t len)
{
    unsigned char key[SAMPLER_KEY_MAX];
    if (len <= SAMPLER_KEY_MAX - sizeof *in)
        learn(c, key, sampler_key(in, props, len, key), 0);
}

/* ---- images ---- */

/* An image of b may go without waiting only where b is a buffer of its own (a sub-buffer's origin
 * and an image's layout are the driver's to judge). */
static bool plain_buffer(const struct dist_mem *b)
{
    return b->image == NULL && b->parent == NULL;
}

struct image_kind {
    cl_image_format format;
    cl_mem_object_type type;
    cl_mem_flags flags;
    int of_buffer;
    cl_mem_flags buffer_flags; /* the driver's verdict depends on both objects' flags */
};

static struct image_kind kind_of(cl_mem_flags flags, const cl_image_format *fmt, const cl_image_desc *d,
                                 const struct dist_mem *b)
{
    struct image_kind k;
    memset(&k, 0, sizeof k); /* the padding too: keys compare as bytes */
    k.format = *fmt;
    k.type = d->image_type;
    k.flags = flags;
    k.of_buffer = b != NULL;
    k.buffer_flags = b != NULL ? b->flags : 0;
    return k;
}

void dist_image_learn(struct dist_context *c, cl_mem_flags flags, const cl_image_format *fmt,
                      const cl_image_desc *d, const struct dist_mem *b, size_t elem)
{
    struct image_kind k = kind_of(flags, fmt, d, b);
    if ((b == NULL || plain_buffer(b)) && elem != 0)
        learn(c, &k, sizeof k, elem);
}

static size_t device_size(struct dist_device *d, cl_device_info param)
{
    size_t v = 0;
    return dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

/* A device's image limits, asked once (under dist_lock); all 0 where unknown, so nothing fits. */
static const struct dist_image_limits *limits_of(struct dist_device *d)
{
    struct dist_image_limits *l = &d->image_limits;
    if (l->known)
        return l;
    l->max_2d[0] = device_size(d, CL_DEVICE_IMAGE2D_MAX_WIDTH);
    l->max_2d[1] = device_size(d, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
    l->max_3d[0] = device_size(d, CL_DEVICE_IMAGE3D_MAX_WIDTH);
    l->max_3d[1] = device_size(d, CL_DEVICE_IMAGE3D_MAX_HEIGHT);
    l->max_3d[2] = device_size(d, CL_DEVICE_IMAGE3D_MAX_DEPTH);
    l->max_array = device_size(d, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
    cl_ulong alloc = 0;
    if (dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc,
                  NULL) == CL_SUCCESS)
        l->max_alloc = alloc;
    l->known = 1;
    return l;
}

/* The same for images of buffers (under dist_lock). */
static const struct dist_image_limits *storage_limits_of(struct dist_device *d)
{
    struct dist_image_limits *l = &d->image_limits;
    if (l->storage_known)
        return l;
    l->max_buffer = device_size(d, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE);
    cl_uint v[2] = {0, 0};
    const cl_device_info param[2] = {CL_DEVICE_IMAGE_PITCH_ALIGNMENT, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT};
    for (int i = 0; i < 2; i++)
        if (dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param[i], sizeof v[i], &v[i], NULL) != CL_SUCCESS)
            v[i] = 0;
    l->pitch_align = v[0];
    l->base_align = v[1];
    l->storage_known = 1;
    return l;
}

/* Whether the image's size is within the device's limits (the checks of clCreateImage). */
static bool fits(const struct dist_image_limits *l, const cl_image_desc *d, size_t elem)
{
    size_t w = d->image_width, h = d->image_height, depth = d->image_depth, n = d->image_array_size;
    size_t px;
    switch (d->image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
        h = depth = n = 1;
        break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        h = depth = 1;
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        depth = n = 1;
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        depth = 1;
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        n = 1;
        if (depth < 2) /* OpenCL 1.x wanted a 3D image deeper than 1: the driver decides */
            return false;
        break;
    default:
        return false;
    }
    bool is3d = d->image_type == CL_MEM_OBJECT_IMAGE3D;
    bool arrayed =
        d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
    if (w == 0 || h == 0 || depth == 0 || n == 0 || w > (is3d ? l->max_3d[0] : l->max_2d[0]) ||
        h > (is3d ? l->max_3d[1] : l->max_2d[1]) || (is3d && depth > l->max_3d[2]) ||
        (arrayed && n > l->max_array))
        return false;
    return !__builtin_mul_overflow(w, h, &px) && !__builtin_mul_overflow(px, depth, &px) &&
           !__builtin_mul_overflow(px, n, &px) && !__builtin_mul_overflow(px, elem, &px) &&
           px <= l->max_alloc / 2;
}

/* Whether an image of buffer b is what every device of c takes, once the driver took its kind:
 * a 1D image buffer of packed rows, or a 2D image (cl_khr_image2d_from_buffer) whose row pitch
 * is a multiple of the context's pitch alignment, within b (under dist_lock). Fields the type
 * leaves unused must be 0, pitches the driver would judge otherwise (a 1D image's) absent. */
static bool fits_buffer(struct dist_context *c, const cl_image_desc *d, size_t elem, const struct dist_mem *b)
{
    bool is2d = d->image_type == CL_MEM_OBJECT_IMAGE2D;
    size_t w = d->image_width, h = is2d ? d->image_height : 1, line, rows;
    if ((!is2d && (d->image_type != CL_MEM_OBJECT_IMAGE1D_BUFFER || d->image_height != 0 ||
                   d->image_row_pitch != 0)) ||
        w == 0 || h == 0 || d->image_depth != 0 || d->image_array_size != 0 || d->image_slice_pitch != 0 ||
        __builtin_mul_overflow(w, elem, &line))
        return false;
    size_t rp = d->image_row_pitch != 0 ? d->image_row_pitch : line, pitch_align = 1, base_align = 1;
    bool use = (b->flags & CL_MEM_USE_HOST_PTR) != 0;
    for (int i = 0; i < c->ndev; i++) {
        const struct dist_image_limits *l = storage_limits_of(c->devs[i]);
        if (!is2d) {
            if (w > l->max_buffer)
                return false;
            continue;
        }
        const struct dist_image_limits *l2 = limits_of(c->devs[i]);
        if (w > l2->max_2d[0] || h > l2->max_2d[1] || l->pitch_align == 0 || (use && l->base_align == 0))
            return false;
        pitch_align = l->pitch_align > pitch_align ? l->pitch_align : pitch_align;
        base_align = l->base_align > base_align ? l->base_align : base_align;
    }
    size_t pitch_bytes, base_bytes;
    if (__builtin_mul_overflow(pitch_align, elem, &pitch_bytes) ||
        __builtin_mul_overflow(base_align, elem, &base_bytes) || rp < line || rp % pitch_bytes != 0 ||
        (is2d && use && (uintptr_t)b->host_ptr % base_bytes != 0))
        return false;
    return !__builtin_mul_overflow(rp, h, &rows) && rows <= b->size;
}

size_t dist_image_accepted(struct dist_context *c, cl_mem_flags flags, const cl_image_format *fmt,
                           const cl_image_desc *d, const struct dist_mem *b)
{
    if (!may_skip(c) || d->num_mip_levels != 0 || d->num_samples != 0 ||
        (b == NULL && (d->image_row_pitch != 0 || d->image_slice_pitch != 0)) ||
        (b != NULL && !plain_buffer(b)))
        return 0;
    struct image_kind k = kind_of(flags, fmt, d, b);
    pthread_mutex_lock(&dist_lock);
    const struct dist_accepted *a = find(c, &k, sizeof k);
    size_t elem = a != NULL ? a->value : 0;
    if (b != NULL && elem != 0 && !fits_buffer(c, d, elem, b))
        elem = 0;
    for (int i = 0; i < c->ndev && elem != 0 && b == NULL; i++)
        if (!fits(limits_of(c->devs[i]), d, elem))
            elem = 0;
    pthread_mutex_unlock(&dist_lock);
    return elem;
}
