/* SPDX-License-Identifier: MIT */
/* A write from rank 0 to a serving rank of the same node, pulled: the serving rank copies the
 * data straight out of rank 0's memory (process_vm_readv, the single copy MPI's shared-memory
 * transports make for a large message) with a few threads at once, instead of receiving it as
 * MPI messages, which one thread of the receiver copies inside its MPI calls. On the GPU machine
 * one such copy moved 4-6 GB/s, four at once 15-27 GB/s (16 to 256 MiB); MPI moved 6-9 GB/s.
 * Used when rank 0 offers it (SLUICE_DIST_PULL) and a probe at the clock ping read rank 0's
 * memory from here; otherwise the data comes by MPI as before. */
#ifndef SLUICE_SERVE_REMOTE_PULL_H
#define SLUICE_SERVE_REMOTE_PULL_H

#include <stddef.h>
#include <stdint.h>

/* At rank 0's clock ping: reads `nonce` at `addr` in process `pid` (rank 0); 1 when this rank
 * can pull from rank 0 (the same node, and the kernel lets it read rank 0's memory). The
 * answer is kept: later pings return it again. */
int sluice_pull_probe(int pid, uint64_t addr, uint64_t nonce);

/* One write's copy (command `id`): `size` bytes from rank 0's address `from` into `to`, in the
 * pieces of sluice_remote_piece; the copy is a CL_DIST_PULL trace event. A write of one piece is copied in the calling thread before this returns;
 * more pieces go to the pull threads, in order. NULL when out of memory. */
struct sluice_pull;
struct sluice_pull *sluice_pull_start(unsigned char *to, uint64_t from, size_t size, uint64_t id);

/* Piece i: 0 still moving, 1 in place, -errno if it could not be read (rank 0's memory there is
 * not readable, or rank 0 is gone). */
int sluice_pull_piece(const struct sluice_pull *p, size_t i);

/* Stops taking pieces of p, waits for those being copied (a copy of memory: bounded), frees p. */
void sluice_pull_end(struct sluice_pull *p);

#endif
