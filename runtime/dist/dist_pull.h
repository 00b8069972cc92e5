/* SPDX-License-Identifier: MIT */
/* Rank 0's side of pulled writes (serve/remote_pull.h): whether a serving rank can copy the data
 * of a write out of rank 0's memory itself, and the commands that then go without data messages. */
#ifndef SLUICE_DIST_PULL_H
#define SLUICE_DIST_PULL_H

#include <stddef.h>

#include "serve/remote_proto.h"

/* A clock ping (PING) to a serving rank: offers pulling (SLUICE_DIST_PULL) with what the rank's
 * probe reads; then its answer (TAG_CLOCK, `len` bytes), which says whether it can. */
void dist_pull_offer(struct sluice_remote_req *ping);
void dist_pull_answer(int rank, const unsigned char *rep, size_t len);

/* A write to `rank` whose data is at `data` (rank 0's memory, unchanged until the command's
 * DONE) and whose payload `p` starts with its command header: 1 when the rank will pull it (the
 * request then says so, and no data message may go), 0 when the data goes by MPI. */
int dist_pull_write(int rank, struct sluice_remote_req *req, unsigned char *p, const void *data);

#endif
