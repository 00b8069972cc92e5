/* SPDX-License-Identifier: MIT */
/* Array layouts (SLUICE_LAYOUT, docs/LAYOUT.md): each member of a checkpoint set is a header of
 * H bytes followed by its rank's block of one global array. The container then stores the
 * global array itself, in canonical order, and the members as extents into it.
 *
 *   spec      "header=64,dtype=f8,shape=48x48x48,grid=auto[,order=C|F]" (size=N instead of
 *             dtype=...; grid=PxQxR explicit); the same text, normalized and completed with
 *             the writer's grid and where the array lies, is the container's layout record;
 *   grid      the process grid: explicit, or what MPI_Dims_create(nprocs, ndims) chooses
 *             (sluice_array_dims_create); rank r sits at the row-major Cartesian coordinates
 *             MPI_Cart_create gives without reordering;
 *   block     along dimension d the rank at coordinate c of p owns [N*c/p, N*(c+1)/p);
 *   rows      a block is a sequence of runs that are contiguous in the array (a run along the
 *             fastest dimension: the last for order=C, the first for order=F); run k of the
 *             block is bytes [H + k*len, H + (k+1)*len) of the member.
 *
 * Pure (no I/O): the parser is fuzzed, the geometry unit-tested. */
#ifndef SLUICE_CKPT_CONTAINER_CONTAINER_ARRAY_H
#define SLUICE_CKPT_CONTAINER_CONTAINER_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_ARRAY_DIMS_MAX 3
#define SLUICE_ARRAY_RECORD_MAX 512 /* bytes of a layout record (text), its NUL included */

struct sluice_array {
    uint64_t header;                       /* bytes before the block in each member */
    uint32_t elem;                         /* bytes per element, 1 .. 64 */
    char dtype[4];                         /* "f8", "i4", "u2"...; "" when given as size=N */
    int ndims;                             /* 1 .. 3 */
    uint64_t shape[SLUICE_ARRAY_DIMS_MAX]; /* global extents, as written (dimension 0 first) */
    int fortran;                           /* order=F: dimension 0 varies fastest */
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];  /* 0 in grid[0]: auto */
    /* Layout record only (a container's): the writer's job size and where things lie. */
    uint32_t nprocs;
    uint64_t array_offset;  /* the global array's first byte in the container */
    uint64_t header_offset; /* rank i's header at header_offset + i * header */
};

/* Parses a spec or a layout record (the record's keys nprocs=, array=, headers= are accepted
 * too). 0, or -EINVAL with one line in err naming the problem. */
int sluice_array_parse(const char *spec, struct sluice_array *out, char *err, size_t errlen);

/* Writes the normalized text (a layout record when a->nprocs is set). Bytes written (without
 * the NUL), or -ENOSPC. */
int sluice_array_format(const struct sluice_array *a, char *buf, size_t cap);

/* MPI_Dims_create(nprocs, ndims) for an all-zero dims array, as MPICH computes it: the
 * factorization of nprocs into ndims factors in non-increasing order whose largest and smallest
 * factors differ least. Checked against MPICH 4.0 for 1..128 ranks and 1..3 dimensions: equal
 * everywhere; Open MPI 4.1 differs once in that range (72 ranks in 2 dimensions: 12x6, where
 * MPICH and this give 9x8); give grid= explicitly to match such a choice. */
void sluice_array_dims_create(uint32_t nprocs, int ndims, uint32_t *dims);

/* The grid for a job of nprocs ranks: the explicit one (its product must be nprocs) or the
 * automatic one. 0, or -EINVAL with one line in err. */
int sluice_array_grid(const struct sluice_array *a, uint32_t nprocs, uint32_t grid[SLUICE_ARRAY_DIMS_MAX],
                      char *err, size_t errlen);

/* Rank r's block: origin lo[d] and extent n[d] per dimension (dimension 0 first). */
struct sluice_array_block {
    uint64_t lo[SLUICE_ARRAY_DIMS_MAX], n[SLUICE_ARRAY_DIMS_MAX];
    uint64_t nrows;   /* runs contiguous in the array (0 for an empty block) */
    uint64_t row_len; /* bytes of each run */
};
void sluice_array_block(const struct sluice_array *a, const uint32_t grid[SLUICE_ARRAY_DIMS_MAX],
                        uint32_t rank, struct sluice_array_block *b);

/* Bytes of the whole array, and of a member (header + block). UINT64_MAX on overflow. */
uint64_t sluice_array_bytes(const struct sluice_array *a);
uint64_t sluice_array_member_bytes(const struct sluice_array *a, const struct sluice_array_block *b);

/* Byte offset, from the array's start, of run k of block b (k < b->nrows). */
uint64_t sluice_array_row_offset(const struct sluice_array *a, const struct sluice_array_block *b,
                                 uint64_t k);

#ifdef __cplusplus
}
#endif
#endif
