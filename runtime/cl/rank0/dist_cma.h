/* SPDX-License-Identifier: MIT */
/* Rank 0's side of cross-memory attach (cl/serve/remote_cma.h): whether a serving rank can copy the
 * data of a write out of rank 0's memory and the data of a read into it itself, and the commands
 * that then go without data messages. */
#ifndef SLUICE_CL_RANK0_DIST_CMA_H
#define SLUICE_CL_RANK0_DIST_CMA_H

#include <stddef.h>

#include "cl/serve/remote_proto.h"

/* A clock ping (PING) to a serving rank: offers the copies (SLUICE_DIST_CMA) with what the
 * rank's probe reads; then its answer (TAG_CLOCK, `len` bytes), which says whether it can. */
void dist_cma_offer(struct sluice_remote_req *ping);
void dist_cma_answer(int rank, const unsigned char *rep, size_t len);

/* 1 when `rank` copies its data from and to rank 0's memory itself. */
int dist_cma_can(int rank);

/* A write from `host` or a read into it (rank 0's memory, which the program leaves alone until the
 * command's DONE) on `rank`, its payload `p` starting with its command header: 1 when the rank
 * will copy the data itself (the request then says so, and no data message may go), 0 when the
 * data goes by MPI. */
int dist_cma_command(int rank, struct sluice_remote_req *req, unsigned char *p, const void *host);

#endif
