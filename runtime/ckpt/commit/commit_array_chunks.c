/* SPDX-License-Identifier: MIT */
/* A restart's block of another decomposition, verified chunk by chunk (format 1.3 chunk
 * checksums, docs/LAYOUT.md): for each old member that holds part of the new block (and rank
 * 0's, for the header), the pieces of its rows that the new block takes become segments (old
 * member bytes -> new member bytes); the chunks those segments touch are mapped through the
 * member's extents to spans of the file; all spans, of every member, are read in file order,
 * a window of up to 4 MiB per read (small gaps included), so each byte is read once; each
 * span is folded into its chunk's CRC32C (checked once the chunk is whole) and its segment
 * bytes copied from that same buffer. So a rank reads and checks about what it serves, instead
 * of every old member it touches, whole. On a mismatch the whole open fails (nothing copied
 * is served).
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

/* An old member the block needs: its segments, in member order, and the next to copy. */
struct src {
    uint32_t i;
    struct seg *s;
    size_t n, cur;
    uint64_t done; /* its bytes taken so far end here (they come in member order) */
};

/* A chunk to check: its CRC32C folded over its bytes as they come (in member order). */
struct need {
    size_t src;
    uint64_t chunk, lo, len, seen;
    uint32_t crc;
};

/* A piece of a needed chunk in the file: one extent's part of it. */
struct span {
    uint64_t file, logical, len;
    size_t need;
};

struct plan {
    struct src *src;
    size_t nsrc;
    struct need *need;
    size_t nneed, capneed;
    struct span *span;
    size_t nspan, capspan;
};

static int grow(void **p, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 256;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* The chunks the segments of source x touch, and their spans through the member's extents. */
static int plan_source(const struct sluice_container *c, struct plan *p, size_t x)
{
    const struct src *sr = &p->src[x];
    const struct sluice_member *m = &c->members[sr->i];
    uint64_t cs = m->chunk_size, last = UINT64_MAX;
    uint32_t e = 0;
    for (size_t k = 0; k < sr->n; k++) {
        if (!sr->s[k].len)
            continue;
        uint64_t c0 = sr->s[k].src / cs, c1 = (sr->s[k].src + sr->s[k].len - 1) / cs;
        for (uint64_t ch = last == UINT64_MAX || c0 > last ? c0 : last + 1; ch <= c1; ch++) {
            if (grow((void **)&p->need, &p->capneed, p->nneed + 1, sizeof *p->need))
                return -ENOMEM;
            uint64_t lo = ch * cs, hi = lo + cs < m->size ? lo + cs : m->size;
            p->need[p->nneed] = (struct need){x, ch, lo, hi - lo, 0, 0};
            while (e < m->n_extents && m->extents[e].logical + m->extents[e].length <= lo)
                e++; /* chunks come in order: the extents are walked once */
            for (uint32_t f = e; f < m->n_extents && m->extents[f].logical < hi; f++) {
                const struct sluice_extent *xt = &m->extents[f];
                uint64_t a = xt->logical > lo ? xt->logical : lo;
                uint64_t z = xt->logical + xt->length < hi ? xt->logical + xt->length : hi;
                if (grow((void **)&p->span, &p->capspan, p->nspan + 1, sizeof *p->span))
                    return -ENOMEM;
                p->span[p->nspan++] = (struct span){xt->file_offset + (a - xt->logical), a, z - a, p->nneed};
            }
            p->nneed++;
            last = ch;
        }
    }
    return 0;
}

static int by_file(const void *x, const void *y)
{
    const struct span *a = x, *b = y;
    return (a->file > b->file) - (a->file < b->file);
}

/* Folds span sp (its bytes at b) into its chunk's CRC, copies the segments' bytes in it to
 * dst, and checks the chunk once whole. 0, 1 (a member whose bytes are not in file order, which
 * sluice never writes: the caller verifies whole members instead) or -EIO with one line. */
static int take(const struct sluice_container *c, struct plan *p, const struct span *sp,
                const unsigned char *b, unsigned char *dst)
{
    struct need *nd = &p->need[sp->need];
    struct src *sr = &p->src[nd->src];
    const struct sluice_member *m = &c->members[sr->i];
    if (sp->logical < nd->lo + nd->seen || sp->logical < sr->done)
        return 1;
    sr->done = sp->logical + sp->len;
    nd->crc = sluice_crc32c_zeros(nd->crc, sp->logical - (nd->lo + nd->seen)); /* a hole */
    nd->crc = sluice_crc32c_update(nd->crc, b, sp->len);
    nd->seen = sp->logical + sp->len - nd->lo;
    while (sr->cur < sr->n && sr->s[sr->cur].src + sr->s[sr->cur].len <= sp->logical)
        sr->cur++;
    for (size_t k = sr->cur; k < sr->n && sr->s[k].src < sp->logical + sp->len; k++) {
        uint64_t a = sr->s[k].src > sp->logical ? sr->s[k].src : sp->logical;
        uint64_t z = sr->s[k].src + sr->s[k].len < sp->logical + sp->len ? sr->s[k].src + sr->s[k].len
                                                                         : sp->logical + sp->len;
        if (a < z)
            memcpy(dst + sr->s[k].dst + (a - sr->s[k].src), b + (a - sp->logical), z - a);
    }
    if (nd->seen < nd->len)
        return 0;
    if (nd->crc != m->chunk_crc[nd->chunk]) {
        sluice_log_error("%s: member %s (rank %d): chunk %llu (bytes %llu..%llu) checksum mismatch "
                         "(stored %08x, computed %08x): the container is corrupt",
                         c->path, m->path, m->member_rank, (unsigned long long)nd->chunk,
                         (unsigned long long)nd->lo, (unsigned long long)(nd->lo + nd->len),
                         m->chunk_crc[nd->chunk], nd->crc);
        return -EIO;
    }
    return 0;
}

static int pread_all(int fd, unsigned char *buf, uint64_t len, uint64_t off)
{
    struct iovec v = {buf, len};
    return commit_array_preadv(fd, &v, 1, off);
}

/* Reads the spans in file order, a window at a time: spans a small gap apart (at most the
 * previous span, or a page, up to 64 KiB) are one read, gaps included; each byte once. */
static int run(const struct sluice_container *c, struct plan *p, unsigned char *dst, unsigned char *buf)
{
    qsort(p->span, p->nspan, sizeof *p->span, by_file);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < p->nspan;) {
        uint64_t start = p->span[k].file, end = start + p->span[k].len;
        size_t t = k + 1;
        for (; t < p->nspan; t++) {
            uint64_t gap = p->span[t - 1].len > 4096 ? p->span[t - 1].len : 4096;
            if (p->span[t].file < end || p->span[t].file - end > (gap < GAP_MAX ? gap : GAP_MAX) ||
                p->span[t].file + p->span[t].len - start > WINDOW_MAX)
                break;
            end = p->span[t].file + p->span[t].len;
        }
        rc = pread_all(c->fd, buf, end - start, start);
        for (; rc == 0 && k < t; k++)
            rc = take(c, p, &p->span[k], buf + (p->span[k].file - start), dst);
    }
    for (size_t k = 0; rc == 0 && k < p->nneed; k++)
        if (p->need[k].seen < p->need[k].len) { /* a hole at the chunk's end */
            struct span tail = {0, p->need[k].lo + p->need[k].len, 0, k};
            rc = take(c, p, &tail, buf, dst);
        }
    return rc;
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
        if (needed(old, og, &c->members[i], b, &ob) &&
            (c->members[i].size != sluice_array_member_bytes(old, &ob) ||
             (c->members[i].size && (!c->members[i].n_chunks || c->members[i].chunk_size > WINDOW_MAX))))
            return 1; /* no chunk checksums (or larger ones), or not the layout's size: whole members */
    struct plan p;
    memset(&p, 0, sizeof p);
    p.src = calloc(c->n_members ? c->n_members : 1, sizeof *p.src);
    unsigned char *buf = malloc(WINDOW_MAX);
    int rc = p.src && buf ? 0 : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        if (!needed(old, og, m, b, &ob) || !m->size)
            continue;
        struct src *sr = &p.src[p.nsrc];
        long n = segments(old, &ob, b, m->member_rank == 0 && old->header, &sr->s);
        if (n < 0) {
            rc = -ENOMEM;
            break;
        }
        sr->i = i;
        sr->n = (size_t)n;
        rc = plan_source(c, &p, p.nsrc++);
    }
    if (rc == 0)
        rc = run(c, &p, dst, buf);
    for (size_t x = 0; x < p.nsrc; x++)
        free(p.src[x].s);
    free(p.src);
    free(p.need);
    free(p.span);
    free(buf);
    return rc;
}
