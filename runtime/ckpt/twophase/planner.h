/* SPDX-License-Identifier: MIT */
/* Commit planner: where each member of a checkpoint set goes in a new container version and
 * which rank writes it. Pure (no MPI, no I/O) so that it is unit-tested and shared by the
 * engine, recovery and the benchmarks.
 *
 * The plan is the seam between "deciding the layout" and "moving the data": the direct path
 * (docs/COMMIT.md) hands every write to the member's own writer rank; the two-phase writer
 * (docs/TWOPHASE.md) consumes the same list of writes and only replaces the data-movement step. */
#ifndef SLUICE_CKPT_TWOPHASE_PLANNER_H
#define SLUICE_CKPT_TWOPHASE_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One member as the planner sees it. */
struct sluice_plan_member {
    uint64_t size;   /* bytes of member data */
    int writer_rank; /* rank holding the staged bytes (-1: copied from the previous version) */
    int member_rank; /* rank number in the member's name; orders the layout */
};

/* One file-system write of the commit: `size` bytes of member `member` (index into the
 * planner's input) at container offset `offset`, issued by `writer_rank`. */
struct sluice_plan_write {
    size_t member;
    uint64_t offset;
    uint64_t size;
    int writer_rank;
};

struct sluice_plan {
    struct sluice_plan_write *writes; /* one per member, in layout order (zero-byte included) */
    size_t nwrites;
    uint64_t data_begin; /* first data byte (block-aligned) */
    uint64_t data_end;   /* one past the last data byte: where the index may start */
    uint64_t padding;    /* bytes of alignment padding between members */
};

/* Lays out `n` members from `data_start` (rounded up to `block_size`) each at a block-aligned
 * offset, in increasing member_rank order (ties keep input order), so that a restart reading
 * ranks in order streams through the file. Zero-byte members get an offset and size 0 and
 * take no space. block_size must be a power of two >= 1.
 * Returns 0, -EINVAL (bad block size or NULL arguments), -EOVERFLOW (layout passes 2^63) or
 * -ENOMEM. On success the caller frees with sluice_plan_free. */
int sluice_plan_direct(const struct sluice_plan_member *members, size_t n, uint64_t data_start,
                       uint64_t block_size, struct sluice_plan *out);

void sluice_plan_free(struct sluice_plan *plan);

/* Rounds v up to a multiple of the power of two `align`; -EOVERFLOW via *ok = 0. */
uint64_t sluice_plan_align_up(uint64_t v, uint64_t align, int *ok);

#ifdef __cplusplus
}
#endif
#endif
