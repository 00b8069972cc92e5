/* SPDX-License-Identifier: MIT */
/* XOR parity: the set layout, the routing of a part's bytes and the parity file (red_xor.h).
 * Every file call goes to the real libc. */
#include "ckpt/redundancy/red_xor.h"

#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor_accum.h"
#include "common/bytebuf.h"
#include "common/full_io.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RX_MAGIC "SLUICERX"
#define RX_FORMAT 1u
#define TRAILER_MAX (64u << 20)

int sluice_red_xor_set(int nnodes, int S, int node, int *first, int *size)
{
    int nsets = nnodes / S + (nnodes % S >= 2); /* a last set of one joins the one before */
    int set = node / S < nsets ? node / S : nsets - 1;
    *first = set * S;
    *size = set == nsets - 1 ? nnodes - *first : S;
    return node - *first;
}

uint64_t sluice_red_xor_chunk(uint64_t len, int S)
{
    return (len + (uint64_t)S - 2) / (uint64_t)(S - 1);
}

uint64_t sluice_red_xor_route(uint64_t len, int S, int i, uint64_t off, int *pos, uint64_t *at)
{
    uint64_t c = sluice_red_xor_chunk(len, S);
    if (off >= len || c == 0)
        return 0;
    uint64_t k = off / c;
    *pos = (int)(((uint64_t)i + 1 + k) % (uint64_t)S);
    *at = off % c;
    uint64_t n = c - *at;
    return n < len - off ? n : len - off;
}

int sluice_red_xor_into(int fd, uint64_t off, const void *p, size_t len)
{
    unsigned char buf[65536];
    const unsigned char *q = p;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < sizeof buf ? len - done : sizeof buf;
        ssize_t k = SLUICE_REAL(pread)(fd, buf, n, (off_t)(off + done));
        if (k < 0)
            return -errno;
        memset(buf + k, 0, n - (size_t)k); /* past the end: zeros */
        size_t i = 0;
        for (; i + 8 <= n; i += 8) { /* a word at a time */
            uint64_t a, b;
            memcpy(&a, buf + i, 8);
            memcpy(&b, q + done + i, 8);
            a ^= b;
            memcpy(buf + i, &a, 8);
        }
        for (; i < n; i++)
            buf[i] ^= q[done + i];
        for (size_t w = 0; w < n;) {
            ssize_t r = SLUICE_REAL(pwrite)(fd, buf + w, n - w, (off_t)(off + done + w));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return r < 0 ? -errno : -EIO;
            w += (size_t)r;
        }
        done += n;
    }
    return 0;
}

void sluice_red_xor_meta_free(struct sluice_red_xor_meta *x)
{
    for (int i = 0; i < x->S && i < SLUICE_RED_XOR_MAX_SET; i++) {
        free(x->m[i].ranks);
        x->m[i].ranks = NULL;
    }
    free(x->crc);
    x->crc = NULL;
}

int sluice_red_xor_path(const char *dir, const char *key, uint64_t v, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/" SLUICE_RED_XOR_PREFIX "%016" PRIx64 "-%020" PRIu64 SLUICE_RED_XOR_SUFFIX,
                     dir, sluice_level_key_hash(key), v);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* ---- the trailer -------------------------------------------------------------------------------- */

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
    ssize_t k = SLUICE_REAL(pread)(fd, p, n, (off_t)off);
    return k == (ssize_t)n ? 0 : k < 0 ? -errno : -EBADMSG;
}

int sluice_red_xor_seal(int fd, struct sluice_red_xor_meta *x)
{
    return sluice_red_xor_seal_accum(fd, x, NULL);
}

int sluice_red_xor_seal_accum(int fd, struct sluice_red_xor_meta *x, struct sluice_red_xor_accum *a)
{
    x->nblocks = (x->plen + SLUICE_RED_CHUNK - 1) / SLUICE_RED_CHUNK;
    free(x->crc);
    x->crc = calloc((size_t)x->nblocks + 1, sizeof *x->crc);
    unsigned char *known = calloc((size_t)x->nblocks + 1, 1);
    int rc = x->crc && known ? 0 : -ENOMEM;
    if (rc == 0 && a)
        rc = sluice_red_xor_accum_flush(a, x->plen, x->crc, known, x->nblocks);
    /* The parity file is as long as the longest chunk it was given; pad it to plen. */
    if (rc == 0 && SLUICE_REAL(ftruncate)(fd, (off_t)x->plen) != 0)
        rc = -errno;
    unsigned char *buf = NULL;
    for (uint64_t b = 0; rc == 0 && b < x->nblocks; b++) {
        if (known[b])
            continue; /* the accumulator wrote it and knows its checksum */
        if (!buf && !(buf = malloc(SLUICE_RED_CHUNK))) {
            rc = -ENOMEM;
            break;
        }
        uint64_t off = b * SLUICE_RED_CHUNK;
        size_t n = x->plen - off < SLUICE_RED_CHUNK ? (size_t)(x->plen - off) : SLUICE_RED_CHUNK;
        rc = pread_all(fd, buf, n, off);
        x->crc[b] = sluice_crc32c_update(0, buf, n);
    }
    free(buf);
    free(known);
    struct sluice_bytebuf t = {.grow_max = TRAILER_MAX};
    sluice_bytebuf_put(&t, RX_MAGIC, 8);
    sluice_bytebuf_u32(&t, RX_FORMAT);
    sluice_bytebuf_u64(&t, x->version);
    sluice_bytebuf_u32(&t, (uint32_t)x->nprocs);
    sluice_bytebuf_str(&t, x->key);
    sluice_bytebuf_u32(&t, (uint32_t)x->S);
    sluice_bytebuf_u32(&t, (uint32_t)x->pos);
    sluice_bytebuf_u64(&t, x->plen);
    sluice_bytebuf_u64(&t, x->nblocks);
    for (uint64_t b = 0; rc == 0 && b < x->nblocks; b++)
        sluice_bytebuf_u32(&t, x->crc[b]);
    for (int i = 0; rc == 0 && i < x->S; i++) {
        sluice_bytebuf_put(&t, x->m[i].host, 16);
        sluice_bytebuf_u64(&t, x->m[i].len);
        sluice_bytebuf_u32(&t, (uint32_t)x->m[i].nranks);
        for (int k = 0; k < x->m[i].nranks; k++)
            sluice_bytebuf_u32(&t, (uint32_t)x->m[i].ranks[k]);
    }
    uint32_t crc = t.bad ? 0 : sluice_crc32c_update(0, t.p, t.len);
    sluice_bytebuf_u32(&t, crc);
    sluice_bytebuf_u32(&t, (uint32_t)t.len);
    sluice_bytebuf_put(&t, RX_MAGIC, 8);
    if (rc == 0)
        rc = t.bad ? -ENOMEM : sluice_full_pwrite(fd, t.p, t.len, x->plen);
    free(t.p);
    return rc;
}

static int parse_trailer(struct sluice_bytereader *b, struct sluice_red_xor_meta *x)
{
    char magic[8];
    sluice_bytereader_get(b, magic, 8);
    uint32_t format = sluice_bytereader_u32(b);
    x->version = sluice_bytereader_u64(b);
    x->nprocs = (int)sluice_bytereader_u32(b);
    uint32_t klen = sluice_bytereader_u32(b);
    if (b->bad || memcmp(magic, RX_MAGIC, 8) != 0 || format != RX_FORMAT || klen >= sizeof x->key)
        return -EBADMSG;
    sluice_bytereader_get(b, x->key, klen);
    x->S = (int)sluice_bytereader_u32(b);
    x->pos = (int)sluice_bytereader_u32(b);
    x->plen = sluice_bytereader_u64(b);
    x->nblocks = sluice_bytereader_u64(b);
    if (b->bad || x->S < 2 || x->S > SLUICE_RED_XOR_MAX_SET || x->pos < 0 || x->pos >= x->S ||
        x->nblocks != (x->plen + SLUICE_RED_CHUNK - 1) / SLUICE_RED_CHUNK || x->nblocks > b->len / 4) {
        x->S = 0;
        return -EBADMSG;
    }
    x->crc = calloc((size_t)x->nblocks + 1, sizeof *x->crc);
    if (!x->crc)
        return -ENOMEM;
    for (uint64_t k = 0; k < x->nblocks; k++)
        x->crc[k] = sluice_bytereader_u32(b);
    for (int i = 0; !b->bad && i < x->S; i++) {
        sluice_bytereader_get(b, x->m[i].host, 16);
        x->m[i].len = sluice_bytereader_u64(b);
        uint32_t nr = sluice_bytereader_u32(b);
        if (b->bad || nr > b->len / 4)
            return -EBADMSG;
        x->m[i].nranks = (int)nr;
        x->m[i].ranks = calloc((size_t)nr + 1, sizeof *x->m[i].ranks);
        if (!x->m[i].ranks)
            return -ENOMEM;
        for (uint32_t k = 0; k < nr; k++)
            x->m[i].ranks[k] = (int)sluice_bytereader_u32(b);
    }
    return b->bad || b->pos != b->len ? -EBADMSG : 0;
}

int sluice_red_xor_meta_read(const char *file, struct sluice_red_xor_meta *x)
{
    memset(x, 0, sizeof *x);
    int fd = SLUICE_REAL(open)(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    unsigned char tail[12], *t = NULL;
    uint32_t tlen = 0, crc = 0;
    int rc = SLUICE_REAL(fstat)(fd, &st) == 0 ? 0 : -errno;
    if (rc == 0 && st.st_size < 12)
        rc = -EBADMSG;
    if (rc == 0)
        rc = pread_all(fd, tail, 12, (uint64_t)st.st_size - 12);
    if (rc == 0) {
        memcpy(&tlen, tail, 4);
        if (memcmp(tail + 4, RX_MAGIC, 8) != 0 || tlen < 4 || tlen > TRAILER_MAX ||
            (uint64_t)tlen + 12 > (uint64_t)st.st_size)
            rc = -EBADMSG;
    }
    if (rc == 0 && !(t = malloc(tlen)))
        rc = -ENOMEM;
    uint64_t at = (uint64_t)st.st_size - 12 - tlen;
    if (rc == 0)
        rc = pread_all(fd, t, tlen, at);
    if (rc == 0) {
        memcpy(&crc, t + tlen - 4, 4);
        if (sluice_crc32c_update(0, t, tlen - 4) != crc)
            rc = -EBADMSG;
    }
    if (rc == 0) {
        struct sluice_bytereader b = {t, tlen - 4, 0, 0};
        rc = parse_trailer(&b, x);
        if (rc == 0 && x->plen != at)
            rc = -EBADMSG;
    }
    free(t);
    SLUICE_REAL(close)(fd);
    if (rc)
        sluice_red_xor_meta_free(x);
    return rc;
}

int sluice_red_xor_read_block(int fd, const struct sluice_red_xor_meta *x, const char *file, uint64_t block,
                              unsigned char *buf, uint32_t *len, char *err, size_t cap)
{
    uint64_t off = block * SLUICE_RED_CHUNK;
    *len = 0;
    if (block >= x->nblocks) {
        snprintf(err, cap, "no block %" PRIu64 " in %s", block, file);
        return -EBADMSG;
    }
    uint32_t n = x->plen - off < SLUICE_RED_CHUNK ? (uint32_t)(x->plen - off) : SLUICE_RED_CHUNK;
    int rc = pread_all(fd, buf, n, off);
    if (rc) {
        snprintf(err, cap, "block %" PRIu64 " of %s unreadable (%s)", block, file,
                 rc == -EBADMSG ? "cut short" : strerror(-rc));
        return rc;
    }
    if (sluice_crc32c_update(0, buf, n) != x->crc[block]) {
        snprintf(err, cap, "crc32c mismatch in block %" PRIu64 " of %s", block, file);
        return -EBADMSG;
    }
    *len = n;
    return 0;
}

int sluice_red_xor_contribute(const char *dir, const char *file, int x, sluice_red_xor_emit emit, void *ctx,
                              char *text, size_t cap)
{
    char path[PATH_MAX];
    struct sluice_red_xor_meta *meta = malloc(sizeof *meta);
    unsigned char *buf = malloc(SLUICE_RED_STREAM_BUF);
    struct sluice_red_header *h = calloc(1, sizeof *h);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = SLUICE_REAL(open)(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int rc = meta && buf && h ? fd >= 0 ? sluice_red_xor_meta_read(path, meta) : -errno : -ENOMEM;
    int have_meta = rc == 0, opened = 0;
    if (rc)
        snprintf(text, cap, "the parity file %s is unreadable (%s)", file,
                 rc == -EBADMSG ? "a malformed or corrupt trailer" : strerror(-rc));
    if (rc == 0 && (x < 0 || x >= meta->S || x == meta->pos)) {
        snprintf(text, cap, "no member %d to rebuild in the set of %s", x, file);
        rc = -EINVAL;
    }
    int S = have_meta ? meta->S : 2, p = have_meta ? meta->pos : 0;
    uint64_t cx = rc == 0 ? sluice_red_xor_chunk(meta->m[x].len, S) : 0;
    /* Its parity: it took x's chunk for p, which lies at x's offset kx * cx. */
    uint64_t at = (uint64_t)((p - x - 1 + S) % S) * cx;
    for (uint64_t b = 0; rc == 0 && b * SLUICE_RED_CHUNK < cx && b < meta->nblocks; b++) {
        uint32_t len = 0;
        rc = sluice_red_xor_read_block(fd, meta, file, b, buf, &len, text, cap);
        uint64_t use = cx - b * SLUICE_RED_CHUNK < len ? cx - b * SLUICE_RED_CHUNK : len;
        if (rc == 0)
            emit(ctx, at + b * SLUICE_RED_CHUNK, buf, (size_t)use);
    }
    if (fd >= 0)
        SLUICE_REAL(close)(fd);
    /* Its own part, regenerated: the bytes of its chunks that went to the other survivors. */
    struct sluice_red_stream st;
    if (rc == 0) {
        h->version = meta->version;
        h->nprocs = meta->nprocs;
        memcpy(h->host, meta->m[p].host, 17);
        snprintf(h->key, sizeof h->key, "%s", meta->key);
        h->nranks = meta->m[p].nranks <= SLUICE_RED_MAX_RANKS ? meta->m[p].nranks : 0;
        memcpy(h->ranks, meta->m[p].ranks, (size_t)h->nranks * sizeof *h->ranks);
        opened = 1;
        rc = sluice_red_stream_open(&st, dir, h);
        if (rc)
            snprintf(text, cap, "its own part of the version is not whole here (%s)", strerror(-rc));
        else if (st.length != meta->m[p].len)
            snprintf(text, cap, "its own part of the version changed since it was encoded"), rc = -EBADMSG;
    }
    for (uint64_t off = 0; rc == 0;) {
        long l = sluice_red_stream_next(&st, buf, SLUICE_RED_STREAM_BUF);
        if (l <= 0) {
            if (l < 0 || off != st.length)
                snprintf(text, cap, "its own part of the version is not whole here"), rc = -EBADMSG;
            break;
        }
        for (uint64_t d = 0; d < (uint64_t)l;) {
            int j = 0;
            uint64_t in = 0, r = sluice_red_xor_route(st.length, S, p, off, &j, &in);
            r = r < (uint64_t)l - d ? r : (uint64_t)l - d;
            if (r == 0) { /* longer than listed */
                snprintf(text, cap, "its own part of the version changed since it was encoded");
                rc = -EBADMSG;
                break;
            }
            if (j != x && in < cx) /* the chunk x gave j, at x's offset for j */
                emit(ctx, (uint64_t)((j - x - 1 + S) % S) * cx + in, buf + d,
                     (size_t)(cx - in < r ? cx - in : r));
            d += r;
            off += r;
        }
    }
    if (opened)
        sluice_red_stream_close(&st);
    else
        free(h);
    if (have_meta)
        sluice_red_xor_meta_free(meta);
    free(meta);
    free(buf);
    return rc;
}
