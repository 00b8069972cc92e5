/* SPDX-License-Identifier: MIT */
/* Images on rank 0: the commands on them (reads, writes, copies, fills, maps and unmaps), checked at
 * enqueue against rank 0's record of the image and sent to the queue's rank; a read into or a write
 * from the program's memory travels packed (dist_image.c). */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_image_internal.h"
#include "cl/serve/remote_image.h"

static struct sluice_cl_api below; /* the slots under this file's (clEnqueueUnmapMemObject) */

/* ---- commands ----------------------------------------------------------------------------- */

static bool whole(const struct dist_image *im, const size_t *origin, const size_t *region)
{
    for (int i = 0; i < 3; i++)
        if (origin[i] != 0 || region[i] != im->dims[i])
            return false;
    return true;
}

static cl_int check_image(const struct dist_queue *q, const struct dist_mem *m)
{
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(m == NULL || m->image == NULL, CL_INVALID_MEM_OBJECT,
                           "m == NULL || m->image == NULL");
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
    struct sluice_rect_geom g;
    dist_image_geom(m->image, origin, region, h, &g);
    struct dist_uses u = {0};
    pthread_mutex_lock(&dist_lock);
    cl_int r = dist_use(&u, m, rank, 0, m->size, false, false);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = image_command(q, kind, nwait, wl, &u);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? packed : 0;
        c.recv = rect != NULL ? (void *)rect->tmp : ptr;
        c.len = rank != 0 ? packed : 0;
        c.bytes = &g;
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
        dist_image_copy_rows(tmp, (unsigned char *)ptr, region, line, h, false);
        free(free_after); /* packed: the program's region is not needed any more */
        free_after = tmp;
    }
    struct sluice_rect_geom g;
    dist_image_geom(m->image, origin, region, h, &g);
    struct dist_uses u = {0};
    pthread_mutex_lock(&dist_lock);
    cl_int r = dist_use(&u, m, rank, 0, m->size, true, whole(m->image, origin, region));
    if (r == CL_SUCCESS) {
        struct dist_cmd c = image_command(q, kind, nwait, wl, &u);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? packed : 0;
        c.send = tmp != NULL ? (const void *)tmp : ptr;
        c.len = rank != 0 ? packed : 0;
        c.bytes = &g;
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
    SLUICE_ERROR_ON(r, (r = dist_image_check_region(m->image, origin, region)) == CL_SUCCESS && ptr == NULL,
                    CL_INVALID_VALUE,
                    "(r = dist_image_check_region(m->image, origin, region)) == CL_SUCCESS && ptr == NULL");
    if (r == CL_SUCCESS)
        r = dist_image_host_layout(m->image, region, rp, sp, h);
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
        c.args.image_copy.src = src != NULL ? src->rid[rank] : dst->rid[rank];
        c.args.image_copy.dst = dst->rid[rank];
        c.args.image_copy.kind = (uint64_t)copy; /* SLUICE_IMG_COPY_* */
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
    if (r == CL_SUCCESS && !dist_image_same_format(&s->image->format, &d->image->format))
        r = CL_IMAGE_FORMAT_MISMATCH;
    if (r == CL_SUCCESS)
        r = dist_image_check_region(s->image, so, region);
    if (r == CL_SUCCESS)
        r = dist_image_check_region(d->image, dor, region);
    SLUICE_ERROR_ON(r, s == d && overlap(so, dor, region), CL_MEM_COPY_OVERLAP,
                    "s == d && overlap(so, dor, region)");
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
    SLUICE_RETURN_ERROR_ON(b == NULL || b->image != NULL, CL_INVALID_MEM_OBJECT,
                           "b == NULL || b->image != NULL");
    SLUICE_RETURN_ERROR_ON(b->ctx != q->ctx, CL_INVALID_CONTEXT,
                           "objects of two contexts (b->ctx != q->ctx)");
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
        r = dist_image_check_region(img->image, origin, region);
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
    SLUICE_ERROR_ON(r, color == NULL, CL_INVALID_VALUE, "no value (NULL)");
    if (r == CL_SUCCESS)
        r = dist_image_check_region(m->image, origin, region);
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
        r = dist_image_check_region(m->image, origin, region);
    SLUICE_ERROR_ON(r,
                    (row_pitch == NULL || (slice_pitch == NULL && (dist_image_has_slices(m->image) ||
                                                                   dist_image_arrayed_1d(m->image)))),
                    CL_INVALID_VALUE,
                    "(row_pitch == NULL || (slice_pitch == NULL && (dist_image_has_slices(m->image) || "
                    "dist_image_arrayed_1d(m->image))))");
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
            mp->h = dist_image_creation_layout(m->image);
        } else {
            dist_image_host_layout(m->image, m->image->dims, 0, 0, &mp->h);
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
        *row_pitch = dist_image_arrayed_1d(m->image) ? m->image->dims[0] * m->image->elem : mp->h.row;
        if (slice_pitch != NULL)
            *slice_pitch = dist_image_arrayed_1d(m->image)   ? mp->h.row
                           : dist_image_has_slices(m->image) ? mp->h.slice
                                                             : 0;
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

void dist_image_cmds_install(struct sluice_cl_api *api)
{
    below = *api;
    api->clEnqueueReadImage = read_image;
    api->clEnqueueWriteImage = write_image;
    api->clEnqueueCopyImage = copy_image;
    api->clEnqueueCopyImageToBuffer = copy_image_to_buffer;
    api->clEnqueueCopyBufferToImage = copy_buffer_to_image;
    api->clEnqueueFillImage = fill_image;
    api->clEnqueueMapImage = map_image;
    api->clEnqueueUnmapMemObject = unmap;
}
