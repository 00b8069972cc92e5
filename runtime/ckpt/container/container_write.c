/* SPDX-License-Identifier: MIT */
/* A complete container from whole member sources, in one pass: find each source's data
 * segments (SEEK_DATA/SEEK_HOLE keeps holes as holes), place members block-aligned after the
 * header, copy while checksumming, then write index+footer and header. Used where one process
 * holds all members: recovery of staged data, single-process commits, tools and tests. The
 * collective commit uses the same primitives (layout, encode_header, encode_tail) directly. */
#include "ckpt/container/container_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define CHUNK ((size_t)4 << 20)

struct plan {
    struct sluice_member *members;
    struct sluice_extent *ext; /* all members' extents, members[i].extents points into it */
    size_t n_ext, cap_ext;
};

static int add_extent(struct plan *p, uint64_t logical, uint64_t length)
{
    if (p->n_ext == p->cap_ext) {
        size_t cap = p->cap_ext ? 2 * p->cap_ext : 64;
        struct sluice_extent *e = realloc(p->ext, cap * sizeof *e);
        if (!e)
            return -ENOMEM;
        p->ext = e;
        p->cap_ext = cap;
    }
    p->ext[p->n_ext++] = (struct sluice_extent){.logical = logical, .length = length};
    return 0;
}

/* Data segments of [0, size) of a source, appended to p->ext. */
static int find_segments(struct plan *p, const struct sluice_container_source *s)
{
    if (s->size == 0)
        return 0;
    if (s->fd < 0)
        return add_extent(p, 0, s->size);
    uint64_t pos = 0;
    while (pos < s->size) {
        off_t d = CIO->lseek(s->fd, (off_t)pos, SEEK_DATA);
        if (d < 0) {
            if (errno == ENXIO)
                return 0;                             /* only a hole up to the end */
            return add_extent(p, pos, s->size - pos); /* no SEEK_DATA here: copy it all */
        }
        if ((uint64_t)d >= s->size)
            return 0;
        off_t h = CIO->lseek(s->fd, d, SEEK_HOLE);
        uint64_t end = (h < 0 || (uint64_t)h > s->size) ? s->size : (uint64_t)h;
        if (end <= (uint64_t)d)
            end = s->size;
        int rc = add_extent(p, (uint64_t)d, end - (uint64_t)d);
        if (rc < 0)
            return rc;
        pos = end;
    }
    return 0;
}

/* Placement (sluice_container_place): every member with data starts on a block boundary; a
 * member's extents follow each other without gaps (holes between them cost nothing in the
 * container), so the bytes it takes are its extents' total. Fills p->members from src. */
static int place(struct plan *p, const struct sluice_container_source *src, uint32_t n, const size_t *first,
                 const struct sluice_container_meta *meta, uint64_t *data_end)
{
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *off = calloc(n ? n : 1, sizeof *off);
    int rc = bytes && off ? 0 : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        struct sluice_member *m = &p->members[i];
        size_t end = (i + 1 < n) ? first[i + 1] : p->n_ext;
        m->path = src[i].path;
        m->member_rank = src[i].member_rank;
        m->writer_rank = src[i].writer_rank;
        m->size = src[i].size;
        m->mtime_ns = src[i].mtime_ns;
        m->n_extents = (uint32_t)(end - first[i]);
        m->extents = p->ext + first[i];
        for (size_t e = first[i]; e < end; e++)
            bytes[i] += p->ext[e].length;
    }
    if (rc == 0)
        rc = sluice_container_place(bytes, n, meta->block_size,
                                    sluice_container_data_start(meta->set_key, meta->block_size), off,
                                    data_end);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint64_t cursor = off[i];
        for (size_t e = first[i]; e < first[i] + p->members[i].n_extents; e++) {
            p->ext[e].file_offset = cursor;
            cursor += p->ext[e].length;
        }
    }
    free(bytes);
    free(off);
    return rc;
}

/* Copies one member's extents into the container, checksumming its logical bytes. */
static int copy_member(int fd, const struct sluice_container_source *s, struct sluice_member *m,
                       unsigned char *buf, char *err, size_t errlen)
{
    uint32_t crc = 0;
    uint64_t pos = 0;
    for (uint32_t e = 0; e < m->n_extents; e++) {
        const struct sluice_extent *x = &m->extents[e];
        crc = sluice_crc32c_zeros(crc, x->logical - pos);
        for (uint64_t done = 0; done < x->length;) {
            size_t n = x->length - done < CHUNK ? (size_t)(x->length - done) : CHUNK;
            const unsigned char *p;
            if (s->fd >= 0) {
                int rc = sluice_container_pread_full(s->fd, buf, n, x->logical + done);
                if (rc < 0)
                    return sluice_container_fail(
                        rc, err, errlen, "member %s: reading its source: %s", s->path,
                        rc == -EIO ? "source is shorter than its size" : strerror(-rc));
                p = buf;
            } else {
                p = (const unsigned char *)s->buf + x->logical + done;
            }
            crc = sluice_crc32c_update(crc, p, n);
            int rc = sluice_container_pwrite_full(fd, p, n, x->file_offset + done);
            if (rc < 0)
                return sluice_container_fail(rc, err, errlen, "member %s: writing the container: %s", s->path,
                                             strerror(-rc));
            done += n;
        }
        pos = x->logical + x->length;
    }
    m->crc32c = sluice_crc32c_zeros(crc, s->size - pos);
    return 0;
}

int sluice_container_write(int fd, const struct sluice_container_meta *meta,
                           const struct sluice_container_source *src, uint32_t n, char *err, size_t errlen)
{
    unsigned char hdr[SLUICE_CONTAINER_HEADER_FIXED + SLUICE_CONTAINER_KEY_MAX + 8];
    long hs = sluice_container_encode_header(meta, hdr, sizeof hdr);
    if (hs < 0)
        return sluice_container_fail((int)hs, err, errlen,
                                     "set %s: invalid container metadata "
                                     "(block size %u, key must be absolute and contain %%r)",
                                     meta->set_key ? meta->set_key : "(null)", meta->block_size);
    struct plan p = {0};
    size_t *first = NULL;
    unsigned char *buf = NULL, *tail = NULL;
    int rc = 0;
    p.members = calloc(n ? n : 1, sizeof *p.members);
    first = calloc(n ? n : 1, sizeof *first);
    buf = malloc(CHUNK);
    if (!p.members || !first || !buf) {
        rc = sluice_container_fail(-ENOMEM, err, errlen, "set %s: no memory", meta->set_key);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        first[i] = p.n_ext;
        if (!src[i].path || (src[i].fd < 0 && src[i].size && !src[i].buf)) {
            rc = sluice_container_fail(-EINVAL, err, errlen,
                                       "set %s: member %u has no path or "
                                       "no data source",
                                       meta->set_key, i);
            goto out;
        }
        rc = find_segments(&p, &src[i]);
        if (rc < 0) {
            rc = sluice_container_fail(rc, err, errlen, "member %s: %s", src[i].path, strerror(-rc));
            goto out;
        }
    }
    uint64_t data_end;
    rc = place(&p, src, n, first, meta, &data_end);
    if (rc < 0) {
        rc = sluice_container_fail(rc, err, errlen, "set %s: %s", meta->set_key,
                                   rc == -EOVERFLOW ? "the members do not fit below 2^63 bytes"
                                                    : strerror(-rc));
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        rc = copy_member(fd, &src[i], &p.members[i], buf, err, errlen);
        if (rc < 0)
            goto out;
    }
    uint64_t index_offset = sluice_pad8(data_end);
    size_t ts = sluice_container_tail_size(p.members, n);
    tail = malloc(ts);
    if (!tail) {
        rc = sluice_container_fail(-ENOMEM, err, errlen, "set %s: no memory for the index", meta->set_key);
        goto out;
    }
    long tl = sluice_container_encode_tail(meta, p.members, n, index_offset, tail, ts);
    if (tl < 0) {
        rc = sluice_container_fail((int)tl, err, errlen,
                                   "set %s: cannot encode the index "
                                   "(a member path is not absolute or too long)",
                                   meta->set_key);
        goto out;
    }
    if ((rc = sluice_container_pwrite_full(fd, tail, (size_t)tl, index_offset)) < 0 ||
        (rc = sluice_container_pwrite_full(fd, hdr, (size_t)hs, 0)) < 0) {
        rc = sluice_container_fail(rc, err, errlen, "set %s: writing the container: %s", meta->set_key,
                                   strerror(-rc));
        goto out;
    }
    if (CIO->ftruncate(fd, (off_t)(index_offset + (uint64_t)tl)) != 0) {
        rc = -errno;
        sluice_container_fail(rc, err, errlen, "set %s: sizing the container: %s", meta->set_key,
                              strerror(-rc));
    }
out:
    free(tail);
    free(buf);
    free(first);
    free(p.ext);
    free(p.members);
    return rc;
}
