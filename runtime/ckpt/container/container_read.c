/* SPDX-License-Identifier: MIT */
/* Reading member bytes out of an opened container: random access (pread, unverified),
 * streaming with checksum verification, copying into a descriptor, and lookups by path or
 * rank. Reads go through the I/O table, or come from the image for in-memory parses. */
#include "ckpt/container/container_internal.h"

#include <errno.h>
#include <stdlib.h>

#define CHUNK ((size_t)4 << 20) /* bytes read per pread while streaming a member */

long sluice_container_find(const struct sluice_container *c, const char *path)
{
    for (uint32_t i = 0; i < c->n_members; i++)
        if (strcmp(c->members[i].path, path) == 0)
            return (long)i;
    return -1;
}

long sluice_container_find_rank(const struct sluice_container *c, int32_t member_rank)
{
    for (uint32_t i = 0; i < c->n_members; i++)
        if (c->members[i].member_rank == member_rank)
            return (long)i;
    return -1;
}

/* Extent bounds were validated against index_offset (<= file size) when the index was read. */
static int read_file(const struct sluice_container *c, void *buf, size_t n, uint64_t off)
{
    if (c->image) {
        memcpy(buf, c->image + off, n);
        return 0;
    }
    return sluice_container_pread_full(c->fd, buf, n, off);
}

long sluice_container_pread(const struct sluice_container *c, uint32_t i, void *buf, size_t len, uint64_t off)
{
    if (i >= c->n_members)
        return -EINVAL;
    const struct sluice_member *m = &c->members[i];
    if (off >= m->size)
        return 0;
    if (len > m->size - off)
        len = (size_t)(m->size - off);
    if (len > (size_t)LONG_MAX)
        len = (size_t)LONG_MAX;
    unsigned char *out = buf;
    uint64_t end = off + len;
    /* First extent that ends after off (extents are sorted by logical offset). */
    uint32_t lo = 0, hi = m->n_extents;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->extents[mid].logical + m->extents[mid].length <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t pos = off;
    for (uint32_t e = lo; e < m->n_extents && pos < end; e++) {
        const struct sluice_extent *x = &m->extents[e];
        if (x->logical >= end)
            break;
        if (x->logical > pos) { /* hole before this extent */
            memset(out + (pos - off), 0, (size_t)(x->logical - pos));
            pos = x->logical;
        }
        uint64_t upto = x->logical + x->length < end ? x->logical + x->length : end;
        int rc = read_file(c, out + (pos - off), (size_t)(upto - pos), x->file_offset + (pos - x->logical));
        if (rc < 0)
            return rc;
        pos = upto;
    }
    if (pos < end)
        memset(out + (pos - off), 0, (size_t)(end - pos));
    return (long)len;
}

int sluice_container_read_member(const struct sluice_container *c, uint32_t i, sluice_container_sink sink,
                                 void *ctx, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (i >= c->n_members)
        return sluice_container_fail(-EINVAL, err, errlen, "%s: no member %u", c->path, i);
    const struct sluice_member *m = &c->members[i];
    unsigned char *buf = NULL;
    uint64_t largest = 0;
    for (uint32_t e = 0; e < m->n_extents; e++)
        if (m->extents[e].length > largest)
            largest = m->extents[e].length;
    if (largest && !c->image) {
        buf = malloc(largest < CHUNK ? (size_t)largest : CHUNK);
        if (!buf)
            return sluice_container_fail(-ENOMEM, err, errlen, "%s: no memory", c->path);
    }
    uint32_t crc = 0;
    uint64_t pos = 0;
    int rc = 0;
    for (uint32_t e = 0; e < m->n_extents && rc == 0; e++) {
        const struct sluice_extent *x = &m->extents[e];
        if (x->logical > pos) {
            crc = sluice_crc32c_zeros(crc, x->logical - pos);
            rc = sink ? sink(ctx, pos, NULL, (size_t)(x->logical - pos)) : 0;
            pos = x->logical;
        }
        for (uint64_t done = 0; done < x->length && rc == 0;) {
            size_t n = x->length - done < CHUNK ? (size_t)(x->length - done) : CHUNK;
            const unsigned char *p;
            if (c->image) {
                p = c->image + x->file_offset + done;
            } else {
                rc = sluice_container_pread_full(c->fd, buf, n, x->file_offset + done);
                if (rc < 0) {
                    rc = sluice_container_fail(rc, err, errlen, "%s: member %s (rank %d): read failed: %s",
                                               c->path, m->path, m->member_rank,
                                               rc == -EIO ? "container is shorter than its index says"
                                                          : strerror(-rc));
                    break;
                }
                p = buf;
            }
            crc = sluice_crc32c_update(crc, p, n);
            rc = sink ? sink(ctx, pos, p, n) : 0;
            pos += n;
            done += n;
        }
    }
    if (rc == 0 && pos < m->size) {
        crc = sluice_crc32c_zeros(crc, m->size - pos);
        rc = sink ? sink(ctx, pos, NULL, (size_t)(m->size - pos)) : 0;
    }
    free(buf);
    if (rc < 0) {
        if (err && errlen && !err[0])
            sluice_container_fail(rc, err, errlen, "%s: member %s (rank %d): %s", c->path, m->path,
                                  m->member_rank, strerror(-rc));
        return rc;
    }
    if (crc != m->crc32c)
        return sluice_container_fail(-EIO, err, errlen,
                                     "%s: member %s (rank %d): checksum mismatch (stored %08x, "
                                     "computed %08x): the container is corrupt",
                                     c->path, m->path, m->member_rank, m->crc32c, crc);
    return 0;
}

int sluice_container_verify_member(const struct sluice_container *c, uint32_t i, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    return sluice_container_read_member(c, i, NULL, NULL, err, errlen);
}

static int sink_to_fd(void *ctx, uint64_t logical, const void *buf, size_t len)
{
    if (!buf)
        return 0; /* holes stay holes: the final ftruncate gives them their zeros */
    return sluice_container_pwrite_full(*(int *)ctx, buf, len, logical);
}

int sluice_container_copy_member(const struct sluice_container *c, uint32_t i, int dst_fd, char *err,
                                 size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (i >= c->n_members)
        return sluice_container_fail(-EINVAL, err, errlen, "%s: no member %u", c->path, i);
    const struct sluice_member *m = &c->members[i];
    if (CIO->ftruncate(dst_fd, 0) != 0) {
        int e = errno;
        return sluice_container_fail(-e, err, errlen,
                                     "%s: member %s: cannot truncate the "
                                     "destination: %s",
                                     c->path, m->path, strerror(e));
    }
    int rc = sluice_container_read_member(c, i, sink_to_fd, &dst_fd, err, errlen);
    if (rc < 0)
        return rc;
    if (CIO->ftruncate(dst_fd, (off_t)m->size) != 0) {
        int e = errno;
        return sluice_container_fail(-e, err, errlen,
                                     "%s: member %s: cannot size the "
                                     "destination: %s",
                                     c->path, m->path, strerror(e));
    }
    return 0;
}
