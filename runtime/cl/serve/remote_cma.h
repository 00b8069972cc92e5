/* SPDX-License-Identifier: MIT */
/* Bulk data between rank 0 and a serving rank of the same node by cross-memory attach (CMA): the
 * serving rank copies a write's data straight out of rank 0's memory (process_vm_readv) and a
 * read's data straight into it (process_vm_writev), with a few threads at once, instead of MPI
 * messages. MPI's shared-memory transports make the same single copy for a large message, but in
 * one thread of the receiver, inside its MPI calls: on the GPU machine one such copy moved 4-6
 * GB/s, four at once 15-27 GB/s (16 to 256 MiB), MPI 6-9 GB/s. Used when rank 0 offers it
 * (SLUICE_DIST_CMA) and a probe at the clock ping read rank 0's memory from here; otherwise the
 * data goes by MPI as before. */
#ifndef SLUICE_CL_SERVE_REMOTE_CMA_H
#define SLUICE_CL_SERVE_REMOTE_CMA_H

#include <stddef.h>
#include <stdint.h>

/* At rank 0's clock ping: reads `nonce` at `addr` in process `pid` (rank 0); 1 when this rank
 * can copy to and from rank 0's memory (the same node, and the kernel lets it). The answer is
 * kept: later pings get it again. */
int sluice_cma_probe(int pid, uint64_t addr, uint64_t nonce);

/* One command's copy (command `id`): `size` bytes between `local` and rank 0's address `remote`,
 * in the pieces of sluice_remote_piece, from rank 0 (`to_rank0` 0: a write) or to it (1: a
 * read); it is a CL_DIST_CMA trace event. Pieces are copied in order once ready (below): a copy
 * of one piece in the calling thread, more by the copy threads (the caller taking a write's first).
 * NULL when out of memory. */
struct sluice_cma;
struct sluice_cma *sluice_cma_start(unsigned char *local, uint64_t remote, size_t size, uint64_t id,
                                    int to_rank0, size_t ready);

/* Pieces below `ready` may be copied (a read's, as the device has read them). */
void sluice_cma_ready(struct sluice_cma *x, size_t ready);

/* Piece i: 0 not copied yet, 1 copied, -errno if it could not be (rank 0's memory there is not
 * accessible, or rank 0 is gone). */
int sluice_cma_piece(const struct sluice_cma *x, size_t i);

/* 1 when every piece is copied or failed. */
int sluice_cma_complete(const struct sluice_cma *x);

/* Stops taking pieces of x, waits for those being copied (a copy of memory: bounded), frees x. */
void sluice_cma_end(struct sluice_cma *x);

#endif
