/* SPDX-License-Identifier: MIT */
/* Expanding an array-laid-out set into two-phase ranges and index extents (planner_array.h). */
#include "ckpt/twophase/planner_array.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* Calls emit(logical, file, len) for rank's header and each merged run of its block; returns
 * the count. */
static size_t walk(const struct sluice_array *a, const uint32_t *grid, int rank, uint64_t (*ext)[3])
{
    size_t n = 0;
    if (a->header) {
        if (ext) {
            ext[n][0] = 0;
            ext[n][1] = a->header_offset + (uint64_t)rank * a->header;
            ext[n][2] = a->header;
        }
        n++;
    }
    struct sluice_array_block b;
    sluice_array_block(a, grid, (uint32_t)rank, &b);
    uint64_t run_lo = 0, run_file = 0, run_len = 0;
    for (uint64_t k = 0; k < b.nrows; k++) {
        uint64_t file = a->array_offset + sluice_array_row_offset(a, &b, k);
        uint64_t logical = a->header + k * b.row_len;
        if (run_len && run_file + run_len == file) {
            run_len += b.row_len;
            continue;
        }
        if (run_len) {
            if (ext) {
                ext[n][0] = run_lo;
                ext[n][1] = run_file;
                ext[n][2] = run_len;
            }
            n++;
        }
        run_lo = logical;
        run_file = file;
        run_len = b.row_len;
    }
    if (run_len) {
        if (ext) {
            ext[n][0] = run_lo;
            ext[n][1] = run_file;
            ext[n][2] = run_len;
        }
        n++;
    }
    return n;
}

static int grid_of(const struct sluice_array *a, uint32_t *grid)
{
    return sluice_array_grid(a, a->nprocs, grid, NULL, 0);
}

size_t sluice_tp_array_extent_count(const struct sluice_array *a, int rank)
{
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    if (rank < 0 || (uint32_t)rank >= a->nprocs || grid_of(a, grid))
        return 0;
    return walk(a, grid, rank, NULL);
}

size_t sluice_tp_array_extents(const struct sluice_array *a, int rank, uint64_t (*ext)[3])
{
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    if (rank < 0 || (uint32_t)rank >= a->nprocs || grid_of(a, grid))
        return 0;
    return walk(a, grid, rank, ext);
}

int sluice_tp_array_expand(const struct sluice_array *a, const int *member_rank, const int *src, size_t n,
                           struct sluice_tp_member **out_tm, struct sluice_tp_array_range **out_src,
                           size_t *n_out)
{
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    if (grid_of(a, grid))
        return -EINVAL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (member_rank[i] < 0 || (uint32_t)member_rank[i] >= a->nprocs)
            return -EINVAL;
        total += walk(a, grid, member_rank[i], NULL);
    }
    struct sluice_tp_member *tm = malloc((total ? total : 1) * sizeof *tm);
    struct sluice_tp_array_range *rs = malloc((total ? total : 1) * sizeof *rs);
    uint64_t(*ext)[3] = malloc((total ? total : 1) * sizeof *ext);
    if (!tm || !rs || !ext) {
        free(tm);
        free(rs);
        free(ext);
        return -ENOMEM;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = walk(a, grid, member_rank[i], ext + at);
        for (size_t e = at; e < at + k; e++) {
            tm[e] = (struct sluice_tp_member){ext[e][1], ext[e][2], src[i]};
            rs[e] = (struct sluice_tp_array_range){i, ext[e][0]};
        }
        at += k;
    }
    free(ext);
    *out_tm = tm;
    *out_src = rs;
    *n_out = total;
    return 0;
}

size_t sluice_tp_array_regions(const struct sluice_array *a, int src, struct sluice_tp_member *out)
{
    size_t n = 0;
    if (a->header && a->nprocs)
        out[n++] = (struct sluice_tp_member){a->header_offset, a->header * a->nprocs, src};
    uint64_t bytes = sluice_array_bytes(a);
    if (bytes && bytes != UINT64_MAX)
        out[n++] = (struct sluice_tp_member){a->array_offset, bytes, src};
    return n;
}

void sluice_tp_array_bounds(const struct sluice_array *a, const uint32_t *grid, int rank, uint64_t *head,
                            uint64_t *lo, uint64_t *hi)
{
    struct sluice_array_block b;
    sluice_array_block(a, grid, (uint32_t)rank, &b);
    *head = a->header_offset + (uint64_t)rank * a->header;
    *lo = *hi = a->array_offset;
    if (b.nrows) {
        /* Rows lie in storage order: the first starts lowest, the last ends highest. */
        *lo = a->array_offset + sluice_array_row_offset(a, &b, 0);
        *hi = a->array_offset + sluice_array_row_offset(a, &b, b.nrows - 1) + b.row_len;
    }
}

/* ---- a participant's own pieces ---------------------------------------------------------------- */

struct share_ctx {
    const struct sluice_tp_domain *d;
    size_t nd;
    uint64_t round;
    long skip;       /* a domain whose pieces come from elsewhere, or -1 */
    uint64_t lo, hi; /* only bytes in [lo, hi) */
    /* the run being cut */
    size_t local;
    int src;
    uint64_t run_file, run_logical;
    struct sluice_tp_piece *v;
    size_t n, cap;
};

static int emit(void *arg, size_t di, uint32_t round, uint64_t x, uint64_t e)
{
    struct share_ctx *c = arg;
    if ((long)di == c->skip)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct sluice_tp_piece *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (struct sluice_tp_piece){
        c->local, c->run_logical + (x - c->run_file), x, e - x, c->src, (uint32_t)di, round};
    return 0;
}

/* Cuts the run [file, file + len) at logical into pieces, within [c->lo, c->hi). */
static int cut_run(struct share_ctx *c, uint64_t file, uint64_t logical, uint64_t len)
{
    uint64_t x = file > c->lo ? file : c->lo, e = file + len < c->hi ? file + len : c->hi;
    if (x >= e)
        return 0;
    c->run_file = file;
    c->run_logical = logical;
    return sluice_tp_split_range(c->d, c->nd, c->round, x, e, emit, c);
}

/* The first row of block b that ends past `at` (past = row_len), or starts at or past it
 * (past = 0); b->nrows when none. Rows lie in storage order. */
static uint64_t first_row_at(const struct sluice_array *a, const struct sluice_array_block *b, uint64_t at,
                             uint64_t past)
{
    uint64_t lo = 0, hi = b->nrows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a->array_offset + sluice_array_row_offset(a, b, mid) + past <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Room for the pieces of rank's member within [lo, hi) that have no window cut in them: its
 * header and one per row there (runs merge rows, so this is an upper bound). */
static uint64_t pieces_at_most(const struct sluice_array *a, const uint32_t *grid, int rank, uint64_t lo,
                               uint64_t hi)
{
    struct sluice_array_block b;
    sluice_array_block(a, grid, (uint32_t)rank, &b);
    return 1 + first_row_at(a, &b, hi, 0) - first_row_at(a, &b, lo, b.row_len);
}

/* The pieces of rank's member within [c->lo, c->hi): its header, then its rows merged into runs
 * where contiguous in the file (as walk() merges them), from the first row that ends past lo
 * (rows lie in storage order) to the last that starts before hi. */
static int cut_member(struct share_ctx *c, const struct sluice_array *a, const uint32_t *grid, int rank)
{
    int rc = 0;
    if (a->header)
        rc = cut_run(c, a->header_offset + (uint64_t)rank * a->header, 0, a->header);
    struct sluice_array_block b;
    sluice_array_block(a, grid, (uint32_t)rank, &b);
    uint64_t first = first_row_at(a, &b, c->lo, b.row_len);
    uint64_t run_file = 0, run_logical = 0, run_len = 0;
    for (uint64_t k = first; rc == 0 && k < b.nrows; k++) {
        uint64_t file = a->array_offset + sluice_array_row_offset(a, &b, k);
        if (run_len && run_file + run_len == file) {
            run_len += b.row_len;
            continue;
        }
        if (run_len)
            rc = cut_run(c, run_file, run_logical, run_len);
        if (file >= c->hi) {
            run_len = 0;
            break;
        }
        run_file = file;
        run_logical = a->header + k * b.row_len;
        run_len = b.row_len;
    }
    if (rc == 0 && run_len)
        rc = cut_run(c, run_file, run_logical, run_len);
    return rc;
}

int sluice_tp_array_share(const struct sluice_array *a, const struct sluice_tp_domain *d, size_t nd,
                          uint64_t round_size, const struct sluice_tp_array_who *mine, size_t nmine, long own,
                          const struct sluice_tp_array_who *who, size_t nwho, struct sluice_tp_piece **out,
                          size_t *nout)
{
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    *out = NULL;
    *nout = 0;
    if (grid_of(a, grid) || round_size == 0 || (own >= 0 && (size_t)own >= nd))
        return -EINVAL;
    for (size_t i = 0; i < nmine + nwho; i++) {
        int r = i < nmine ? mine[i].member_rank : who[i - nmine].member_rank;
        if (r < 0 || (uint32_t)r >= a->nprocs)
            return -EINVAL;
    }
    struct share_ctx c = {.d = d, .nd = nd, .round = round_size};
    /* One allocation of about the right size (growing by doubling faulted in a fresh mapping at
     * each step): a piece per row and header, plus a few for the window cuts. */
    uint64_t want = 64;
    for (size_t i = 0; i < nmine; i++)
        want += pieces_at_most(a, grid, mine[i].member_rank, 0, UINT64_MAX) + 2;
    for (size_t i = 0; own >= 0 && i < nwho; i++)
        want += pieces_at_most(a, grid, who[i].member_rank, d[own].begin, d[own].end) + 2;
    c.v = want <= SIZE_MAX / sizeof *c.v ? malloc((size_t)want * sizeof *c.v) : NULL;
    c.cap = c.v ? (size_t)want : 0;
    int rc = 0;
    /* Own members everywhere but in the own domain, whose pieces all come from who. */
    c.skip = own;
    c.lo = 0;
    c.hi = UINT64_MAX;
    for (size_t i = 0; rc == 0 && i < nmine; i++) {
        c.local = mine[i].local;
        c.src = mine[i].src;
        rc = cut_member(&c, a, grid, mine[i].member_rank);
    }
    c.skip = -1;
    if (own >= 0) {
        c.lo = d[own].begin;
        c.hi = d[own].end;
    }
    for (size_t i = 0; rc == 0 && own >= 0 && i < nwho; i++) {
        c.local = who[i].local;
        c.src = who[i].src;
        rc = cut_member(&c, a, grid, who[i].member_rank);
    }
    if (rc) {
        free(c.v);
        return rc;
    }
    /* Each member's pieces came in file order; the plan's order is file order. */
    sluice_tp_sort_runs(c.v, c.n, sizeof *c.v, offsetof(struct sluice_tp_piece, file_off));
    *out = c.v;
    *nout = c.n;
    return 0;
}
