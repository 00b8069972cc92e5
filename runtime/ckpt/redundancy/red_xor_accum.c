/* SPDX-License-Identifier: MIT */
/* XOR parity accumulated in memory, block by block (red_xor_accum.h). */
#include "ckpt/redundancy/red_xor_accum.h"

#include "ckpt/container/container.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_xor.h"
#include "common/bufpool.h"
#include "common/full_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define B ((uint64_t)SLUICE_RED_CHUNK)

/* A block: untouched (a hole of zeros in the file), held in memory, written whole with its
 * checksum, or XORed in the file piece by piece (its checksum read back at the seal). */
enum { BLK_NONE, BLK_HELD, BLK_WRITTEN, BLK_FILE };

struct blk {
    unsigned char state;
    uint32_t crc;       /* BLK_WRITTEN */
    uint64_t got;       /* bytes XORed in (BLK_HELD) */
    unsigned char *buf; /* B bytes (BLK_HELD) */
};

struct sluice_red_xor_accum {
    int fd, S, pos;
    int held, members;   /* blocks held; members whose length is known */
    uint64_t in_file;    /* blocks XORed in the file */
    uint64_t *owed;      /* [S]: bytes member p owes this parity */
    unsigned char *seen; /* [S]: its length is known */
    uint64_t plen;       /* the parity's length once every member is known */
    struct blk *b;
    uint64_t nb; /* entries of b */
};

struct sluice_red_xor_accum *sluice_red_xor_accum_new(int fd, int S, int pos)
{
    struct sluice_red_xor_accum *a = calloc(1, sizeof *a);
    if (!a || S < 2 || pos < 0 || pos >= S) {
        free(a);
        return NULL;
    }
    a->fd = fd;
    a->S = S;
    a->pos = pos;
    a->owed = calloc((size_t)S, sizeof *a->owed);
    a->seen = calloc((size_t)S, 1);
    if (!a->owed || !a->seen) {
        sluice_red_xor_accum_free(a);
        return NULL;
    }
    return a;
}

void sluice_red_xor_accum_free(struct sluice_red_xor_accum *a)
{
    if (!a)
        return;
    for (uint64_t i = 0; i < a->nb; i++)
        sluice_bufpool_put(a->b[i].buf, (size_t)B);
    free(a->b);
    free(a->owed);
    free(a->seen);
    free(a);
}

/* Bytes block i is owed by all members: what [0, owed[p]) of each overlaps it. */
static uint64_t owed_in(const struct sluice_red_xor_accum *a, uint64_t i)
{
    uint64_t sum = 0, lo = i * B;
    for (int p = 0; p < a->S; p++)
        if (p != a->pos && a->owed[p] > lo)
            sum += a->owed[p] - lo < B ? a->owed[p] - lo : B;
    return sum;
}

static uint64_t block_len(uint64_t plen, uint64_t i)
{
    return plen > i * B ? (plen - i * B < B ? plen - i * B : B) : 0;
}

/* A held block written, its checksum kept, its buffer freed. */
static int write_held(struct sluice_red_xor_accum *a, uint64_t i, uint64_t plen)
{
    struct blk *k = &a->b[i];
    size_t n = (size_t)block_len(plen, i);
    int rc = n ? sluice_full_pwrite(a->fd, k->buf, n, i * B) : 0;
    k->crc = sluice_crc32c_update(0, k->buf, n);
    k->state = BLK_WRITTEN;
    sluice_bufpool_put(k->buf, (size_t)B); /* for the next block, or the next version's */
    k->buf = NULL;
    a->held--;
    return rc;
}

static int maybe_complete(struct sluice_red_xor_accum *a, uint64_t i)
{
    struct blk *k = &a->b[i];
    if (k->state != BLK_HELD || a->members != a->S - 1 || k->got != owed_in(a, i))
        return 0;
    return write_held(a, i, a->plen);
}

int sluice_red_xor_accum_member(struct sluice_red_xor_accum *a, int p, uint64_t len)
{
    if (p < 0 || p >= a->S || p == a->pos)
        return -EINVAL;
    /* Member p's chunk k goes to position (p + 1 + k) mod S (sluice_red_xor_route). */
    uint64_t c = sluice_red_xor_chunk(len, a->S);
    uint64_t k = (uint64_t)((a->pos - p - 1 + 2 * a->S) % a->S);
    a->owed[p] = k * c >= len ? 0 : (len - k * c < c ? len - k * c : c);
    if (!a->seen[p]) {
        a->seen[p] = 1;
        a->members++;
    }
    if (c > a->plen)
        a->plen = c;
    int rc = 0;
    for (uint64_t i = 0; i < a->nb && rc == 0; i++)
        rc = maybe_complete(a, i);
    return rc;
}

static int grow(struct sluice_red_xor_accum *a, uint64_t i)
{
    if (i < a->nb)
        return 0;
    uint64_t n = a->nb ? a->nb : 16;
    while (n <= i)
        n *= 2;
    struct blk *b = realloc(a->b, (size_t)n * sizeof *b);
    if (!b)
        return -ENOMEM;
    memset(b + a->nb, 0, (size_t)(n - a->nb) * sizeof *b);
    a->b = b;
    a->nb = n;
    return 0;
}

/* n bytes of q XORed into block i at offset `at` in it. */
static int add_in_block(struct sluice_red_xor_accum *a, uint64_t i, uint64_t at, const unsigned char *q,
                        size_t n)
{
    int rc = grow(a, i);
    if (rc)
        return rc;
    struct blk *k = &a->b[i];
    if (k->state == BLK_NONE && a->held < SLUICE_RED_XOR_ACCUM_BLOCKS) {
        size_t cap = 0;
        k->buf = sluice_bufpool_get((size_t)B, &cap);
        if (k->buf) {
            memset(k->buf, 0, (size_t)B);
            k->state = BLK_HELD;
            a->held++;
        }
    }
    if (k->state != BLK_HELD) { /* past the bound, or more than owed reached a written block */
        a->in_file += k->state != BLK_FILE;
        k->state = BLK_FILE;
        return sluice_red_xor_into(a->fd, i * B + at, q, n);
    }
    unsigned char *d = k->buf + at;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) { /* a word at a time */
        uint64_t x, y;
        memcpy(&x, d + j, 8);
        memcpy(&y, q + j, 8);
        x ^= y;
        memcpy(d + j, &x, 8);
    }
    for (; j < n; j++)
        d[j] ^= q[j];
    k->got += n;
    return maybe_complete(a, i);
}

int sluice_red_xor_accum_add(struct sluice_red_xor_accum *a, uint64_t off, const void *data, size_t len)
{
    const unsigned char *q = data;
    int rc = 0;
    for (size_t done = 0; done < len && rc == 0;) {
        uint64_t i = (off + done) / B, at = (off + done) % B;
        size_t n = len - done < B - at ? len - done : (size_t)(B - at);
        rc = add_in_block(a, i, at, q + done, n);
        done += n;
    }
    return rc;
}

int sluice_red_xor_accum_flush(struct sluice_red_xor_accum *a, uint64_t plen, uint32_t *crc,
                               unsigned char *known, uint64_t nblocks)
{
    static const unsigned char zeros[4096];
    int rc = 0;
    for (uint64_t i = 0; i < nblocks && rc == 0; i++) {
        struct blk *k = i < a->nb ? &a->b[i] : NULL;
        if (k && k->state == BLK_HELD)
            rc = write_held(a, i, plen);
        if (k && k->state == BLK_WRITTEN && a->plen == plen) {
            crc[i] = k->crc;
            known[i] = 1;
        } else if (!k || k->state == BLK_NONE) { /* nothing came: zeros */
            uint32_t c = 0;
            for (uint64_t n = block_len(plen, i); n;) {
                size_t m = n < sizeof zeros ? (size_t)n : sizeof zeros;
                c = sluice_crc32c_update(c, zeros, m);
                n -= m;
            }
            crc[i] = c;
            known[i] = 1;
        }
    }
    return rc;
}

uint64_t sluice_red_xor_accum_in_file(const struct sluice_red_xor_accum *a)
{
    return a->in_file;
}
