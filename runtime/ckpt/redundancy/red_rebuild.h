/* SPDX-License-Identifier: MIT */
/* The rebuild of lost node parts at restart, shared by the partner (red_rebuild.c) and XOR
 * (red_xor_rebuild.c) schemes. Collective calls run on every rank of sluice's communicator, in
 * the same order (every rank computes the same plan from the leaders' summaries). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_REBUILD_H
#define SLUICE_CKPT_REDUNDANCY_RED_REBUILD_H

#include "ckpt/redundancy/red_nodes.h"

#include <stddef.h>
#include <stdint.h>

/* Ships the copy `file` (a partner-copy stream in holder's stage folder dir) to target, which
 * checks every checksum and restores the ranks listed into its stage folder (one line and a
 * CKPT_REBUILD event, or one line naming what failed). xor_from: NULL for a partner copy, else
 * what an XOR rebuild made it from (for the lines). Called by every rank; returns 1 unless this
 * rank is the target and the restore failed. */
int red_rebuild_task(MPI_Comm comm, const struct red_nodes *n, const char *dir, const char *file, int holder,
                     int target, const int *ranks, int nr, const char *xor_from);

/* The summary line of XOR parity file `name` of dir held by rank me, malloc'ed; NULL where the
 * name is no parity file, its version is not protected here, or it is unreadable. */
char *red_xor_summary_line(const char *dir, const char *name, int me);

/* Whether some node's stage folder holds the level record of rank of version v of the set
 * hashed h (from the leaders' summaries). */
typedef int (*red_present_fn)(const void *ctx, uint64_t h, uint64_t v, int rank);

/* Rebuilds, per set, the newest protected version that lost one node of an XOR set, from the
 * survivors' parts and parities (all the leaders' summaries in all, len bytes). Collective. */
void red_xor_execute(MPI_Comm comm, const struct red_nodes *n, const char *dir, const char *all, size_t len,
                     red_present_fn present, const void *ctx);

#endif
