/* SPDX-License-Identifier: MIT */
/* The coherence directory (coherence.h): per buffer, per chunk, the set of valid holders as a
 * bitmap over ranks, the Modified owner if any, and whether the chunk was ever initialized.
 *
 * Invariants (sluice_coh_check verifies them; the property test runs it after every step):
 *   - owner >= 0  =>  holders == { owner }            (one writer, nobody else valid)
 *   - initialized =>  holders is not empty            (a valid copy exists somewhere)
 *   - !initialized => holders empty, owner == -1      (nothing to move before the first write)
 * Exclusive is "sole holder, not owner"; Shared is "holder among several". */
#include "cl/rank0/coherence.h"

#include <CL/cl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (add_failed = true)
#include <uthash.h>

struct coh_buffer {
    uint64_t id;
    uint64_t size;
    uint64_t nchunks;
    int32_t *owner;       /* per chunk: the Modified rank or -1 */
    uint8_t *initialized; /* per chunk */
    uint64_t *holders;    /* per chunk: `words` 64-bit words of holder bits */
    UT_hash_handle hh;
};

struct sluice_coh_dir {
    int nranks;
    size_t words; /* bitmap words per chunk */
    uint64_t chunk;
    struct coh_buffer *buffers;
    uint64_t *sent; /* bytes each rank has been planned to send: spreads the load over holders */
    struct sluice_coh_stats stats;
};

sluice_coh_init sluice_coh_init_from_flags(uint64_t flags)
{
    return (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) ? SLUICE_COH_INIT_HOST
                                                                  : SLUICE_COH_INIT_NONE;
}

void sluice_coh_plan_free(struct sluice_coh_plan *plan)
{
    free(plan->v);
    plan->v = NULL;
    plan->n = plan->cap = 0;
}

struct sluice_coh_dir *sluice_coh_create(int nranks, uint64_t chunk_size)
{
    if (nranks < 1 || nranks > SLUICE_COH_MAX_RANKS)
        return NULL;
    struct sluice_coh_dir *dir = calloc(1, sizeof *dir);
    if (dir == NULL)
        return NULL;
    dir->nranks = nranks;
    dir->words = ((size_t)nranks + 63) / 64;
    dir->chunk = chunk_size ? chunk_size : SLUICE_COH_DEFAULT_CHUNK;
    dir->sent = calloc((size_t)nranks, sizeof *dir->sent);
    if (dir->sent == NULL) {
        free(dir);
        return NULL;
    }
    return dir;
}

static void free_buffer(struct coh_buffer *b)
{
    free(b->owner);
    free(b->initialized);
    free(b->holders);
    free(b);
}

void sluice_coh_destroy(struct sluice_coh_dir *dir)
{
    if (dir == NULL)
        return;
    struct coh_buffer *b, *tmp;
    HASH_ITER(hh, dir->buffers, b, tmp)
    {
        HASH_DEL(dir->buffers, b);
        free_buffer(b);
    }
    free(dir->sent);
    free(dir);
}

static struct coh_buffer *find(const struct sluice_coh_dir *dir, uint64_t id)
{
    struct coh_buffer *b = NULL;
    HASH_FIND(hh, dir->buffers, &id, sizeof id, b);
    return b;
}

static uint64_t *bits(const struct sluice_coh_dir *dir, const struct coh_buffer *b, uint64_t c)
{
    return &b->holders[c * dir->words];
}
static bool holds(const uint64_t *h, int r)
{
    return (h[r / 64] >> (r % 64)) & 1;
}
static void set_holder(uint64_t *h, int r)
{
    h[r / 64] |= (uint64_t)1 << (r % 64);
}

int sluice_coh_add_buffer(struct sluice_coh_dir *dir, uint64_t id, uint64_t size, sluice_coh_init init)
{
    if (size == 0)
        return -EINVAL;
    if (find(dir, id))
        return -EEXIST;
    struct coh_buffer *b = calloc(1, sizeof *b);
    if (b == NULL)
        return -ENOMEM;
    b->id = id;
    b->size = size;
    b->nchunks = size / dir->chunk + (size % dir->chunk != 0);
    if (b->nchunks > SIZE_MAX / (dir->words * sizeof(uint64_t)))
        return free(b), -ENOMEM;
    b->owner = malloc(b->nchunks * sizeof *b->owner);
    b->initialized = calloc(b->nchunks, 1);
    b->holders = calloc(b->nchunks * dir->words, sizeof(uint64_t));
    if (b->owner == NULL || b->initialized == NULL || b->holders == NULL)
        return free_buffer(b), -ENOMEM;
    for (uint64_t c = 0; c < b->nchunks; c++) {
        b->owner[c] = -1;
        if (init == SLUICE_COH_INIT_HOST) {
            b->initialized[c] = 1;
            set_holder(bits(dir, b, c), SLUICE_COH_HOST_RANK);
        }
    }
    bool add_failed = false;
    HASH_ADD(hh, dir->buffers, id, sizeof b->id, b);
    if (add_failed)
        return free_buffer(b), -ENOMEM;
    return 0;
}

int sluice_coh_remove_buffer(struct sluice_coh_dir *dir, uint64_t id)
{
    struct coh_buffer *b = find(dir, id);
    if (b == NULL)
        return -ENOENT;
    HASH_DEL(dir->buffers, b);
    free_buffer(b);
    return 0;
}

static int check_args(const struct sluice_coh_dir *dir, uint64_t id, uint64_t offset, uint64_t size, int rank,
                      struct coh_buffer **out)
{
    if (rank < 0 || rank >= dir->nranks)
        return -EINVAL;
    struct coh_buffer *b = find(dir, id);
    if (b == NULL)
        return -ENOENT;
    if (offset > b->size || size > b->size - offset)
        return -ERANGE;
    *out = b;
    return 0;
}

/* The holder chunk c is fetched from: not `dst`; a rank other than 0 when there is one (rank 0
 * is the host, whose link every command competes for); the one that has sent the least so far,
 * then the lowest rank: deterministic. -1 if nobody holds it. */
static int pick_source(const struct sluice_coh_dir *dir, const uint64_t *h, int dst)
{
    int best = -1;
    for (size_t w = 0; w < dir->words; w++) {
        for (uint64_t word = h[w]; word; word &= word - 1) {
            int r = (int)(w * 64) + __builtin_ctzll(word);
            if (r == dst || r == SLUICE_COH_HOST_RANK)
                continue;
            if (best < 0 || dir->sent[r] < dir->sent[best])
                best = r;
        }
    }
    if (best < 0 && dst != SLUICE_COH_HOST_RANK && holds(h, SLUICE_COH_HOST_RANK))
        best = SLUICE_COH_HOST_RANK;
    return best;
}

static int plan_append(struct sluice_coh_plan *plan, uint64_t buffer, uint64_t offset, uint64_t size, int src,
                       int dst)
{
    if (plan->n > 0) {
        struct sluice_coh_transfer *last = &plan->v[plan->n - 1];
        if (last->buffer == buffer && last->src == src && last->dst == dst &&
            last->offset + last->size == offset) {
            last->size += size;
            return 0;
        }
    }
    if (plan->n == plan->cap) {
        size_t ncap = plan->cap ? plan->cap * 2 : 8;
        struct sluice_coh_transfer *v = realloc(plan->v, ncap * sizeof *v);
        if (v == NULL)
            return -ENOMEM;
        plan->v = v;
        plan->cap = ncap;
    }
    plan->v[plan->n++] = (struct sluice_coh_transfer){buffer, offset, size, src, dst};
    return 0;
}

/* Plans the fetch of chunk c to `rank` if it lacks a valid copy. */
static int fetch_chunk(struct sluice_coh_dir *dir, struct coh_buffer *b, uint64_t c, int rank,
                       struct sluice_coh_plan *plan)
{
    uint64_t *h = bits(dir, b, c);
    if (!b->initialized[c])
        return 0;
    if (holds(h, rank)) {
        dir->stats.chunk_hits++;
        return 0;
    }
    int src = pick_source(dir, h, rank);
    uint64_t off = c * dir->chunk, len = b->size - off < dir->chunk ? b->size - off : dir->chunk;
    if (plan_append(plan, b->id, off, len, src, rank) != 0)
        return -ENOMEM;
    dir->sent[src] += len;
    dir->stats.chunk_misses++;
    dir->stats.bytes_planned += len;
    if (src == SLUICE_COH_HOST_RANK)
        dir->stats.bytes_from_host += len;
    return 0;
}

int sluice_coh_read(struct sluice_coh_dir *dir, uint64_t id, uint64_t offset, uint64_t size, int rank,
                    struct sluice_coh_plan *plan)
{
    struct coh_buffer *b;
    int rc = check_args(dir, id, offset, size, rank, &b);
    if (rc != 0 || size == 0)
        return rc;
    for (uint64_t c = offset / dir->chunk; c <= (offset + size - 1) / dir->chunk; c++) {
        if (!b->initialized[c])
            continue;
        bool hit = holds(bits(dir, b, c), rank);
        if ((rc = fetch_chunk(dir, b, c, rank, plan)) != 0)
            return rc;
        if (!hit) {
            /* A new sharer: the former Modified owner, if any, keeps a valid copy as Shared. */
            set_holder(bits(dir, b, c), rank);
            b->owner[c] = -1;
        }
    }
    return 0;
}

int sluice_coh_write(struct sluice_coh_dir *dir, uint64_t id, uint64_t offset, uint64_t size, int rank,
                     unsigned flags, struct sluice_coh_plan *plan)
{
    struct coh_buffer *b;
    int rc = check_args(dir, id, offset, size, rank, &b);
    if (rc != 0 || size == 0)
        return rc;
    uint64_t end = offset + size;
    for (uint64_t c = offset / dir->chunk; c <= (end - 1) / dir->chunk; c++) {
        uint64_t cstart = c * dir->chunk,
                 cend = cstart + dir->chunk < b->size ? cstart + dir->chunk : b->size;
        bool whole = offset <= cstart && end >= cend;
        if (!(whole && (flags & SLUICE_COH_WRITE_ALL)) && (rc = fetch_chunk(dir, b, c, rank, plan)) != 0)
            return rc;
        uint64_t *h = bits(dir, b, c);
        for (size_t w = 0; w < dir->words; w++)
            dir->stats.invalidations += (uint64_t)__builtin_popcountll(h[w]);
        dir->stats.invalidations -= holds(h, rank);
        memset(h, 0, dir->words * sizeof *h);
        set_holder(h, rank);
        b->owner[c] = rank;
        b->initialized[c] = 1;
    }
    return 0;
}

sluice_coh_state sluice_coh_state_of(const struct sluice_coh_dir *dir, uint64_t id, uint64_t c, int rank)
{
    struct coh_buffer *b = find(dir, id);
    if (b == NULL || c >= b->nchunks || rank < 0 || rank >= dir->nranks)
        return SLUICE_COH_INVALID;
    const uint64_t *h = bits(dir, b, c);
    if (!holds(h, rank))
        return SLUICE_COH_INVALID;
    if (b->owner[c] == rank)
        return SLUICE_COH_MODIFIED;
    size_t n = 0;
    for (size_t w = 0; w < dir->words; w++)
        n += (size_t)__builtin_popcountll(h[w]);
    return n == 1 ? SLUICE_COH_EXCLUSIVE : SLUICE_COH_SHARED;
}

int sluice_coh_initialized(const struct sluice_coh_dir *dir, uint64_t id, uint64_t c)
{
    struct coh_buffer *b = find(dir, id);
    return b != NULL && c < b->nchunks && b->initialized[c];
}

int sluice_coh_home(const struct sluice_coh_dir *dir, uint64_t buffer, uint64_t chunk)
{
    /* splitmix64 of (buffer, chunk): neighbouring chunks land on different homes. */
    uint64_t x = buffer * 0x9E3779B97F4A7C15ull + chunk + 0x632BE59BD9B4E019ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (int)(x % (uint64_t)dir->nranks);
}

uint64_t sluice_coh_chunk_size(const struct sluice_coh_dir *dir)
{
    return dir->chunk;
}

void sluice_coh_get_stats(const struct sluice_coh_dir *dir, struct sluice_coh_stats *out)
{
    *out = dir->stats;
}

int sluice_coh_check(const struct sluice_coh_dir *dir, char *err, size_t errlen)
{
    const struct coh_buffer *b, *tmp;
    HASH_ITER(hh, dir->buffers, b, tmp)
    {
        for (uint64_t c = 0; c < b->nchunks; c++) {
            const uint64_t *h = bits(dir, b, c);
            size_t n = 0;
            for (size_t w = 0; w < dir->words; w++)
                n += (size_t)__builtin_popcountll(h[w]);
            const char *why = NULL;
            if (dir->nranks % 64 && (h[dir->words - 1] >> (dir->nranks % 64)) != 0)
                why = "a holder beyond the last rank";
            else if (b->owner[c] >= 0 && (n != 1 || !holds(h, b->owner[c])))
                why = "the Modified owner is not the only holder";
            else if (b->owner[c] < -1 || b->owner[c] >= dir->nranks)
                why = "an owner that is not a rank";
            else if (b->initialized[c] && n == 0)
                why = "an initialized chunk without any valid copy";
            else if (!b->initialized[c] && (n != 0 || b->owner[c] != -1))
                why = "an uninitialized chunk with holders";
            if (why) {
                snprintf(err, errlen, "buffer %llu chunk %llu: %s", (unsigned long long)b->id,
                         (unsigned long long)c, why);
                return -1;
            }
        }
    }
    return 0;
}
