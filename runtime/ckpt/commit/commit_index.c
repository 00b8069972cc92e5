/* SPDX-License-Identifier: MIT */
/* A version's tail (its index, the index's copy and the footers; docs/FORMAT.md), encoded by
 * the home once every writer answered.
 *
 * For a set laid out as a global array the index lists a row per extent: 32,776 rows, 1.6 MB
 * with its copy, for a 16 MiB array on 8 ranks, 2.5 ms at a home on 16 cores between the last
 * round and the fsync, on the path to durability. Its shape (members, their extents and chunk
 * counts) is known once the version is planned; only the members' checksums come with their
 * writers' answers. So for such a set the tail is encoded "ahead", on the I/O threads' index
 * lane while the data moves, and at the end only the checksums are filled in
 * (sluice_container_patch_tail). Where the shape changed meanwhile (a member unlinked while its
 * bytes moved, chunk checksums that could not be computed) the tail is encoded at the end, as
 * for every other set. */
#include "ckpt/commit/commit_home_internal.h"

#include "ckpt/commit/commit_array.h"
#include "ckpt/commit/io_worker.h"
#include "ckpt/container/container_array.h"
#include "ckpt/twophase/planner_array.h"
#include "common/hugebuf.h"
#include "common/log.h"
#include "trace/trace.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct commit_index_ahead {
    struct sluice_io_task io; /* on the index lane; reads nothing but this struct */
    struct sluice_array array;
    struct sluice_container_meta meta; /* as planned; the checksums' end sets the final one */
    uint64_t index_offset;
    size_t n;
    size_t *order;            /* the members in index order: their places in c->mem */
    struct sluice_member *mm; /* their records, checksums zero */
    uint32_t *zeros;          /* chunk checksums until they are known */
    struct sluice_extent *ext;
    size_t ext_bytes;
    void *tail; /* the encoded tail (hugebuf), tail_size bytes; NULL once handed out */
    size_t tail_size;
    int err;
};

static const struct gm *order_base; /* progress thread only */
static int order_cmp(const void *a, const void *b)
{
    const struct gm *x = &order_base[*(const size_t *)a], *y = &order_base[*(const size_t *)b];
    if (x->member_rank != y->member_rank)
        return x->member_rank < y->member_rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The kept members of c in index order (rank order, like the data): *order (malloc'ed). */
static int index_order(const struct hcommit *c, size_t **order, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < c->nmem; i++)
        k += c->mem[i].keep != 0;
    *n = k;
    *order = malloc((k ? k : 1) * sizeof **order);
    if (!*order)
        return -ENOMEM;
    k = 0;
    for (size_t i = 0; i < c->nmem; i++)
        if (c->mem[i].keep)
            (*order)[k++] = i;
    order_base = c->mem;
    qsort(*order, k, sizeof **order, order_cmp);
    return 0;
}

/* The extents of member g in the new file (written to ext unless NULL; returns the count):
 * the data runs its writer stored, a carried member's extents in the previous version, else
 * one dense extent. Holes are never written and read as zeros (docs/FORMAT.md). */
static uint32_t member_extents(const struct hcommit *c, const struct gm *g, struct sluice_extent *ext)
{
    if (g->size == 0)
        return 0;
    if (c->array)
        return commit_array_member_extents(c, g, ext);
    if (g->src < 0 && g->old_index >= 0 && c->old) {
        const struct sluice_member *om = &c->old->members[g->old_index];
        for (uint32_t e = 0; ext && e < om->n_extents; e++)
            ext[e] = (struct sluice_extent){om->extents[e].logical, g->offset + om->extents[e].logical,
                                            om->extents[e].length};
        return om->n_extents;
    }
    if (g->runs == NULL) {
        if (ext)
            ext[0] = (struct sluice_extent){0, g->offset, g->size};
        return 1;
    }
    for (uint32_t r = 0; ext && r < g->nruns; r++)
        ext[r] =
            (struct sluice_extent){g->runs[r].logical, g->offset + g->runs[r].logical, g->runs[r].length};
    return g->nruns;
}

/* Member g's record, its extents aside. */
static struct sluice_member record_of(const struct gm *g)
{
    return (struct sluice_member){.path = g->path,
                                  .member_rank = g->member_rank,
                                  .writer_rank = g->writer_rank,
                                  .size = g->size,
                                  .mtime_ns = g->mtime_ns,
                                  .crc32c = g->crc,
                                  .chunk_size = g->chunk_crc ? g->chunk_size : 0,
                                  .n_chunks = g->chunk_crc ? g->nchunks : 0,
                                  .chunk_crc = g->chunk_crc};
}

/* ---- the tail encoded ahead (array sets) ---------------------------------------------------- */

/* Index lane: the extents of every member (rows of the array) and the tail around them. */
static void ahead_run(struct sluice_io_task *t)
{
    struct commit_index_ahead *a = (struct commit_index_ahead *)t;
    size_t e0 = 0;
    for (size_t o = 0; o < a->n; o++) {
        struct sluice_member *m = &a->mm[o];
        if (m->size == 0)
            continue;
        /* Rows come as (logical, file, length) triples, an extent's own fields: in place. */
        _Static_assert(sizeof(struct sluice_extent) == 3 * sizeof(uint64_t) &&
                           offsetof(struct sluice_extent, file_offset) == sizeof(uint64_t) &&
                           offsetof(struct sluice_extent, length) == 2 * sizeof(uint64_t),
                       "an extent is the triple (logical, file offset, length)");
        sluice_tp_array_extents(&a->array, m->member_rank, (uint64_t(*)[3])(void *)&a->ext[e0]);
        m->extents = &a->ext[e0];
        e0 += m->n_extents;
    }
    a->tail_size = sluice_container_tail_size(a->mm, (uint32_t)a->n);
    a->tail = sluice_hugebuf_alloc(a->tail_size);
    if (!a->tail) {
        a->err = -ENOMEM;
        return;
    }
    long n =
        sluice_container_encode_tail(&a->meta, a->mm, (uint32_t)a->n, a->index_offset, a->tail, a->tail_size);
    if (n < 0)
        a->err = (int)n;
}

static void ahead_free(struct commit_index_ahead *a)
{
    sluice_hugebuf_free(a->tail, a->tail_size);
    sluice_hugebuf_free(a->ext, a->ext_bytes);
    free(a->order);
    free(a->mm);
    free(a->zeros);
    free(a);
}

void commit_index_ahead(struct hcommit *c, const struct sluice_container_meta *meta)
{
    if (!c->array || c->ahead)
        return;
    struct commit_index_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return; /* encoded at the end */
    a->array = *c->array;
    a->meta = *meta;
    a->index_offset = c->index_offset;
    size_t next = 0;
    uint32_t most = 0;
    int ok = index_order(c, &a->order, &a->n) == 0 && (a->mm = calloc(a->n ? a->n : 1, sizeof *a->mm));
    for (size_t o = 0; ok && o < a->n; o++) {
        const struct gm *g = &c->mem[a->order[o]];
        struct sluice_member *m = &a->mm[o];
        *m = record_of(g);
        m->n_extents = member_extents(c, g, NULL);
        next += m->n_extents;
        /* A new member's writer sends the checksum of each chunk with its answer. */
        if (g->src >= 0 && g->size) {
            m->chunk_size = COMMIT_ARRAY_CHUNK;
            m->n_chunks = (uint32_t)((g->size + COMMIT_ARRAY_CHUNK - 1) / COMMIT_ARRAY_CHUNK);
            if (m->n_chunks > most)
                most = m->n_chunks;
        }
    }
    a->ext_bytes = (next ? next : 1) * sizeof(struct sluice_extent);
    ok = ok && (a->zeros = calloc(most ? most : 1, sizeof *a->zeros)) &&
         (a->ext = sluice_hugebuf_alloc(a->ext_bytes));
    if (!ok) {
        ahead_free(a);
        return;
    }
    for (size_t o = 0; o < a->n; o++)
        if (a->mm[o].n_chunks)
            a->mm[o].chunk_crc = a->zeros;
    a->io.run = ahead_run;
    c->ahead = a;
    sluice_io_submit(SLUICE_IO_INDEX, &a->io);
}

/* Waits for the index lane to be done with a (its own work only: milliseconds). */
static void ahead_wait(const struct commit_index_ahead *a)
{
    while (!sluice_io_done(&a->io)) {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
}

void commit_index_forget(struct hcommit *c)
{
    if (!c->ahead)
        return;
    ahead_wait(c->ahead);
    ahead_free(c->ahead);
    c->ahead = NULL;
}

/* The tail encoded ahead with the final checksums, or NULL where the shape changed. */
static void *ahead_take(struct hcommit *c, const struct sluice_container_meta *meta, size_t *size)
{
    struct commit_index_ahead *a = c->ahead;
    ahead_wait(a);
    if (a->err)
        return NULL;
    size_t *order, n;
    if (index_order(c, &order, &n) != 0)
        return NULL;
    int same = n == a->n && memcmp(order, a->order, n * sizeof *order) == 0;
    free(order);
    struct sluice_member *mm = same ? malloc((n ? n : 1) * sizeof *mm) : NULL;
    for (size_t o = 0; mm && o < n; o++) {
        mm[o] = record_of(&c->mem[a->order[o]]);
        mm[o].n_extents = a->mm[o].n_extents;
        mm[o].extents = a->mm[o].extents;
    }
    long rc = mm ? sluice_container_patch_tail(meta, mm, (uint32_t)n, c->index_offset, a->tail, a->tail_size)
                 : -EINVAL;
    free(mm);
    if (rc < 0)
        return NULL;
    void *tail = a->tail;
    *size = a->tail_size;
    a->tail = NULL;
    return tail;
}

static void trace_index(const struct hcommit *c, uint64_t t0, size_t size, int ahead)
{
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_COMMIT_INDEX, 0, t0, commit_home_now_ns() - t0, size, (uint64_t)ahead,
                            c->version);
}

int commit_index_tail(struct hcommit *c, const struct sluice_container_meta *meta, void **tail, size_t *size)
{
    uint64_t t0 = commit_home_now_ns();
    *tail = c->ahead ? ahead_take(c, meta, size) : NULL;
    commit_index_forget(c);
    if (*tail) {
        trace_index(c, t0, *size, 1);
        return 0;
    }
    size_t *order = NULL, n = 0, next = 0;
    int err = index_order(c, &order, &n);
    for (size_t o = 0; err == 0 && o < n; o++)
        next += member_extents(c, &c->mem[order[o]], NULL);
    struct sluice_member *mm = err ? NULL : calloc(n ? n : 1, sizeof *mm);
    size_t ext_bytes = (next ? next : 1) * sizeof(struct sluice_extent);
    struct sluice_extent *ext = mm ? sluice_hugebuf_alloc(ext_bytes) : NULL;
    if (!ext)
        err = -ENOMEM;
    size_t e0 = 0;
    for (size_t o = 0; err == 0 && o < n; o++) {
        const struct gm *g = &c->mem[order[o]];
        mm[o] = record_of(g);
        mm[o].n_extents = member_extents(c, g, &ext[e0]);
        mm[o].extents = mm[o].n_extents ? &ext[e0] : NULL;
        e0 += mm[o].n_extents;
    }
    if (err == 0) {
        *size = sluice_container_tail_size(mm, (uint32_t)n);
        *tail = sluice_hugebuf_alloc(*size);
        if (!*tail)
            err = -ENOMEM;
    }
    if (err == 0) {
        long r = sluice_container_encode_tail(meta, mm, (uint32_t)n, c->index_offset, *tail, *size);
        if (r < 0) {
            err = (int)r;
            sluice_log_error("%s: cannot encode the index of version %llu", c->container,
                             (unsigned long long)c->version);
            sluice_hugebuf_free(*tail, *size);
            *tail = NULL;
        }
    }
    sluice_hugebuf_free(ext, ext_bytes);
    free(mm);
    free(order);
    if (err == 0)
        trace_index(c, t0, *size, 0);
    return err;
}
