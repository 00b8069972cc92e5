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
