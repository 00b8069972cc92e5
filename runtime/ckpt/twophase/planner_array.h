/* SPDX-License-Identifier: MIT */
/* Two-phase plan of a set laid out as one global array (container_array.h): each member,
 * header + block, becomes the ranges the two-phase planner moves (planner_twophase.h): its
 * header at headers + rank * H and one range per run of its block that is contiguous in the
 * array (adjacent runs merged). The file domains of the plan are then stripes of the array
 * region, and each aggregator receives from every rank the rows that fall in its domain: the
 * nested-hvector file view of a block-decomposed array, written by two-phase I/O.
 *
 * Pure; every participant expands the same members the same way. */
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

#ifdef __cplusplus
}
#endif
#endif
