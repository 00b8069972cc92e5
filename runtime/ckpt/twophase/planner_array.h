/* SPDX-License-Identifier: MIT */
/* Two-phase plan of a set laid out as one global array (container_array.h): each member,
 * header + block, is its header at headers + rank * H and one range per run of its block that
 * is contiguous in the array (adjacent runs merged). The file domains of the plan are stripes of
 * the array region, and each aggregator receives from every rank the rows that fall in its
 * domain: the nested-hvector file view of a block-decomposed array, written by two-phase I/O.
 *
 * The home plans only the regions (sluice_tp_array_regions) and each participant cuts its own
 * pieces (sluice_tp_array_share), so no rank lists every row; sluice_tp_array_expand, the plan
 * of every row, is the reference both are checked against (tests/unit). Pure. */
#ifndef SLUICE_CKPT_TWOPHASE_PLANNER_ARRAY_H
#define SLUICE_CKPT_TWOPHASE_PLANNER_ARRAY_H

#include "ckpt/container/container_array.h"
#include "ckpt/twophase/planner_twophase.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One expanded range: planner input `tm`, and where its bytes come from. */
struct sluice_tp_array_range {
    size_t member;    /* index of the member in the caller's list */
    uint64_t logical; /* the range's first byte within that member */
};

/* a: a layout record (nprocs, headers and array offsets set). Member i of n is rank
 * member_rank[i]'s (0 <= rank < a->nprocs), staged on rank src[i]. On success *out_tm and
 * *out_src (n_out entries each) are malloc'ed; the ranges of one member come in increasing
 * logical and file order. 0, -EINVAL (bad rank, grid) or -ENOMEM. */
int sluice_tp_array_expand(const struct sluice_array *a, const int *member_rank, const int *src, size_t n,
                           struct sluice_tp_member **out_tm, struct sluice_tp_array_range **out_src,
                           size_t *n_out);

/* The extents (logical, file offset, length) of rank `rank`'s member in a container laid out by
 * record a: ext (room for sluice_tp_array_extent_count) receives them. Returns the count. */
size_t sluice_tp_array_extent_count(const struct sluice_array *a, int rank);
size_t sluice_tp_array_extents(const struct sluice_array *a, int rank, uint64_t (*ext)[3]);

/* The home's plan of a set laid out as an array needs no rows: the headers and the array each
 * tile one stretch of the file, so planning these (at most two) regions, staged on src, gives
 * the runs, domains, rounds and requests that planning every row gives (pieces aside, which each
 * participant cuts itself: sluice_tp_array_share). a: a layout record whose nprocs ranks are all
 * members. out: room for 2. Returns the count. */
size_t sluice_tp_array_regions(const struct sluice_array *a, int src, struct sluice_tp_member *out);

/* Where rank `rank`'s member lies in the file (grid from sluice_array_grid for a->nprocs): its
 * header at *head (a->header bytes) and its rows within [*lo, *hi) (*lo == *hi: no rows). */
void sluice_tp_array_bounds(const struct sluice_array *a, const uint32_t *grid, int rank, uint64_t *head,
                            uint64_t *lo, uint64_t *hi);

/* A member in a share made from the layout: rank member_rank's, staged on rank src; local is
 * its index among the participant's own members, or SIZE_MAX (another rank's). */
struct sluice_tp_array_who {
    int member_rank;
    int src;
    size_t local;
};

/* One participant's pieces, made from the layout record alone: those that the plan of every row
 * (sluice_tp_array_expand, then sluice_tp_plan_make over the same domains and round size) gives
 * it, in the same (domain, round, offset) order: every piece of its own members (mine) in the
 * domains d[0..nd) (increasing), and on an aggregator (own >= 0: it writes d[own]) every piece
 * in d[own] of the members in who, which must list each member that touches d[own] (mine
 * among them). Pieces name their domain by index into d and their member by `local`
 * (SIZE_MAX: another rank's). O(own rows + rows in d[own]) (times log of the members),
 * no rank's list of every row, no sort (planner_array_share.c). 0, -EINVAL (bad rank or grid)
 * or -ENOMEM; free *out with sluice_tp_pieces_free(*out, *out_bytes). */
int sluice_tp_array_share(const struct sluice_array *a, const struct sluice_tp_domain *d, size_t nd,
                          uint64_t round_size, const struct sluice_tp_array_who *mine, size_t nmine, long own,
                          const struct sluice_tp_array_who *who, size_t nwho, struct sluice_tp_piece **out,
                          size_t *nout, size_t *out_bytes);

/* Frees pieces from sluice_tp_array_share: bytes > 0, huge-page memory (hugebuf.h) of that
 * size; 0, malloc'ed. */
void sluice_tp_pieces_free(struct sluice_tp_piece *v, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
