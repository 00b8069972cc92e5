/* SPDX-License-Identifier: MIT */
/* A leader's redundancy buffers made ready while the job starts (docs/REDUNDANCY.md, "The first
 * version's start, explained in part"). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_WARM_H
#define SLUICE_CKPT_REDUNDANCY_RED_WARM_H

#include "ckpt/redundancy/red_nodes.h"

/* On a node's leader with redundancy on and node-local versions (SLUICE_DRAIN_EVERY above 1), queues on its
 * I/O thread the filling of the buffer pool (common/bufpool.h) with the pieces and parity blocks the node's
 * first version will hold at once, their pages mapped. Once per process; the progress thread or the thread
 * starting MPI. */
void red_warm_start(const struct red_nodes *n);

#endif
