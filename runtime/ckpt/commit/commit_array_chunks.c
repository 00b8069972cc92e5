/* SPDX-License-Identifier: MIT */
/* A restart's block of another decomposition, verified chunk by chunk (format 1.3 chunk
 * checksums, docs/LAYOUT.md): for each old member that holds part of the new block (and rank
 * 0's, for the header), the pieces of its rows that the new block takes become segments (old
 * member bytes -> new member bytes); the chunks of the old member those segments touch are read
 * once, in windows of consecutive chunks, with few large reads through the member's extents,
 * each chunk checked against its stored CRC32C, and the segments copied from that same buffer.
 * So a rank reads and checks about what it serves, instead of every old member it touches.
 * Chunk checksums are computed by the ranks that wrote the members, from their staged bytes
 * (twophase_exec.c), as the members' own CRCs are: no byte corrupted after that is served. */
#include "ckpt/commit/commit_array.h"

#include "common/log.h"
#include "common/real.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Bytes read and checked at once (a window of consecutive chunks). */
#define WINDOW_MAX (UINT64_C(4) << 20)
/* The largest gap between two extents that one read spans (into a scratch buffer). */
#define GAP_MAX (UINT64_C(64) << 10)

struct seg {
    uint64_t src, dst, len; /* bytes [src, src + len) of the old member go to dst of the new */
};

int commit_array_preadv(int fd, struct iovec *iov, int n, uint64_t off)
{
    while (n > 0) {
        ssize_t got = SLUICE_REAL(preadv)(fd, iov, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? -errno : -EIO;
        off += (uint64_t)got;
        while (n > 0 && (size_t)got >= iov->iov_len) {
            got -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (unsigned char *)iov->iov_base + got;
            iov->iov_len -= (size_t)got;
        }
    }
    return 0;
}

/* Storage position i (0 slowest) holds dimension perm(i). */
static int perm(const struct sluice_array *a, int i)
{
    return a->fortran ? a->ndims - 1 - i : i;
}

/* The segments of old block ob (old member bytes) that new block b takes, in old member order:
 * one per old row inside b, after rank 0's header when hdr. Their count; -1 without memory. */
static long segments(const struct sluice_array *a, const struct sluice_array_block *ob,
                     const struct sluice_array_block *b, int hdr, struct seg **out)
{
    uint64_t lo[SLUICE_ARRAY_DIMS_MAX] = {0}, hi[SLUICE_ARRAY_DIMS_MAX] = {0}, rows = 1;
    int nd = a->ndims, inside = ob->nrows && b->nrows;
    for (int d = 0; d < nd; d++) {
        lo[d] = ob->lo[d] > b->lo[d] ? ob->lo[d] : b->lo[d];
        hi[d] = ob->lo[d] + ob->n[d] < b->lo[d] + b->n[d] ? ob->lo[d] + ob->n[d] : b->lo[d] + b->n[d];
        inside &= lo[d] < hi[d];
    }
    for (int i = 0; inside && i < nd - 1; i++)
        rows *= hi[perm(a, i)] - lo[perm(a, i)];
    size_t n = (hdr ? 1 : 0) + (inside ? rows : 0), k = 0;
    struct seg *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return -1;
    if (hdr)
        s[k++] = (struct seg){0, 0, a->header};
    int f = perm(a, nd - 1);
    uint64_t x[SLUICE_ARRAY_DIMS_MAX];
    for (int i = 0; i < nd - 1; i++)
        x[i] = lo[perm(a, i)];
    for (uint64_t r = 0; inside && r < rows; r++) {
        uint64_t ko = 0, kn = 0;
        for (int i = 0; i < nd - 1; i++) {
            int d = perm(a, i);
            ko = ko * ob->n[d] + (x[i] - ob->lo[d]);
            kn = kn * b->n[d] + (x[i] - b->lo[d]);
        }
        s[k++] = (struct seg){a->header + ko * ob->row_len + (lo[f] - ob->lo[f]) * a->elem,
                              a->header + kn * b->row_len + (lo[f] - b->lo[f]) * a->elem,
                              (hi[f] - lo[f]) * a->elem};
        for (int i = nd - 2; i >= 0; i--) { /* the next row: the last position fastest */
            if (++x[i] < hi[perm(a, i)])
                break;
            x[i] = lo[perm(a, i)];
        }
    }
    *out = s;
    return (long)n;
}

/* Logical bytes [lo, hi) of member m into buf, through its extents (holes as zeros): extents
 * a small gap apart in the file are one preadv whose gaps land in scratch. 0 or -errno. */
static int read_logical(int fd, const struct sluice_member *m, uint64_t lo, uint64_t hi, unsigned char *buf,
                        struct iovec *iov, unsigned char *scratch)
{
    uint32_t e = 0, lo_e = 0, hi_e = m->n_extents;
    while (lo_e < hi_e) { /* the first extent that ends after lo */
        uint32_t mid = lo_e + (hi_e - lo_e) / 2;
        if (m->extents[mid].logical + m->extents[mid].length <= lo)
            lo_e = mid + 1;
        else
            hi_e = mid;
    }
    uint64_t pos = lo, off = 0, end = 0;
    int n = 0, rc = 0;
    for (e = lo_e; rc == 0 && e < m->n_extents && m->extents[e].logical < hi; e++) {
        const struct sluice_extent *x = &m->extents[e];
        uint64_t a = x->logical > lo ? x->logical : lo;
        uint64_t z = x->logical + x->length < hi ? x->logical + x->length : hi;
        uint64_t o = x->file_offset + (a - x->logical);
        if (a > pos)
            memset(buf + (pos - lo), 0, a - pos); /* a hole */
        pos = z;
        if (n > 0 && (o < end || o - end > GAP_MAX || n + 2 > IOV_MAX)) {
            rc = commit_array_preadv(fd, iov, n, off);
            n = 0;
        }
        if (n == 0)
            off = end = o;
        if (o > end)
            iov[n++] = (struct iovec){scratch, o - end};
        iov[n++] = (struct iovec){buf + (a - lo), z - a};
        end = o + (z - a);
    }
    if (rc == 0 && n > 0)
        rc = commit_array_preadv(fd, iov, n, off);
    if (rc == 0 && pos < hi)
        memset(buf + (pos - lo), 0, hi - pos);
    return rc;
}

/* Chunks [c0, c1] of member i, read into buf (their bytes from c0 * chunk_size), match their
 * checksums: 0, or -EIO with one line naming the container, the member and the chunk. */
static int check_chunks(const struct sluice_container *c, uint32_t i, uint64_t c0, uint64_t c1,
                        const unsigned char *buf)
{
    const struct sluice_member *m = &c->members[i];
    uint64_t cs = m->chunk_size;
    for (uint64_t k = c0; k <= c1; k++) {
        uint64_t len = m->size - k * cs < cs ? m->size - k * cs : cs;
        uint32_t got = sluice_crc32c_update(0, buf + (k - c0) * cs, len);
        if (got != m->chunk_crc[k]) {
            sluice_log_error("%s: member %s (rank %d): chunk %llu (bytes %llu..%llu) checksum mismatch "
                             "(stored %08x, computed %08x): the container is corrupt",
                             c->path, m->path, m->member_rank, (unsigned long long)k,
                             (unsigned long long)(k * cs), (unsigned long long)(k * cs + len),
                             m->chunk_crc[k], got);
            return -EIO;
        }
    }
    return 0;
}

struct window_io {
    unsigned char *buf, *scratch;
    struct iovec *iov;
};

/* Serves segments s[0..n) of member i into dst, window by window. 0 or -errno. */
static int serve(const struct sluice_container *c, uint32_t i, const struct seg *s, size_t n,
                 unsigned char *dst, struct window_io *w)
{
    const struct sluice_member *m = &c->members[i];
    uint64_t cs = m->chunk_size, done = 0, wchunks = WINDOW_MAX / cs ? WINDOW_MAX / cs : 1;
    for (size_t k = 0; k < n;) {
        if (s[k].len == 0) {
            k++;
            continue;
        }
        /* The window: consecutive chunks touched by the next segments, from this one on. */
        uint64_t c0 = (s[k].src + done) / cs, c1 = (s[k].src + s[k].len - 1) / cs;
        for (size_t t = k + 1; t < n && c1 - c0 + 1 < wchunks; t++) {
            if (s[t].len == 0)
                continue;
            if (s[t].src / cs > c1 + 1)
                break;
            uint64_t z = (s[t].src + s[t].len - 1) / cs;
            c1 = z > c1 ? z : c1;
        }
        if (c1 - c0 + 1 > wchunks)
            c1 = c0 + wchunks - 1;
        uint64_t lo = c0 * cs, hi = (c1 + 1) * cs < m->size ? (c1 + 1) * cs : m->size;
        int rc = read_logical(c->fd, m, lo, hi, w->buf, w->iov, w->scratch);
        if (rc == 0)
            rc = check_chunks(c, i, c0, c1, w->buf);
        if (rc)
            return rc;
        while (k < n && s[k].src + done < hi) {
            uint64_t a = s[k].src + done, e = s[k].src + s[k].len < hi ? s[k].src + s[k].len : hi;
            memcpy(dst + s[k].dst + done, w->buf + (a - lo), e - a);
            done += e - a;
            if (done == s[k].len) {
                k++;
                done = 0;
            }
        }
    }
    return 0;
}

/* 1 when member m is needed (it overlaps b, or it is rank 0's and holds the header). */
static int needed(const struct sluice_array *old, const uint32_t *og, const struct sluice_member *m,
                  const struct sluice_array_block *b, struct sluice_array_block *ob)
{
    if (m->member_rank < 0 || (uint32_t)m->member_rank >= old->nprocs)
        return 0;
    sluice_array_block(old, og, (uint32_t)m->member_rank, ob);
    int over = ob->nrows && b->nrows;
    for (int d = 0; over && d < old->ndims; d++)
        over = ob->lo[d] < b->lo[d] + b->n[d] && b->lo[d] < ob->lo[d] + ob->n[d];
    return over || (m->member_rank == 0 && old->header);
}

int commit_array_read_chunks(const struct sluice_container *c, const struct sluice_array *old,
                             const struct sluice_array_block *b, unsigned char *dst)
{
    uint32_t og[SLUICE_ARRAY_DIMS_MAX];
    struct sluice_array_block ob;
    if (sluice_array_grid(old, old->nprocs, og, NULL, 0) != 0)
        return -EIO;
    for (uint32_t i = 0; i < c->n_members; i++)
        if (needed(old, og, &c->members[i], b, &ob) && c->members[i].size &&
            (!c->members[i].n_chunks || c->members[i].chunk_size > WINDOW_MAX))
            return 1; /* written without chunk checksums (or larger ones): whole members */
    struct window_io w = {malloc(WINDOW_MAX), malloc(GAP_MAX), malloc(IOV_MAX * sizeof(struct iovec))};
    int rc = w.buf && w.scratch && w.iov ? 0 : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        if (!needed(old, og, m, b, &ob))
            continue;
        struct seg *s = NULL;
        long n = segments(old, &ob, b, m->member_rank == 0 && old->header, &s);
        rc = n < 0 ? -ENOMEM : serve(c, i, s, (size_t)n, dst, &w);
        free(s);
    }
    free(w.buf);
    free(w.scratch);
    free(w.iov);
    return rc;
}
