/* SPDX-License-Identifier: MIT */
/* One MPI message per (writer, aggregator, round) of a two-phase commit (twophase_exec.c): the
 * pieces a writer sends one aggregator in one round are scattered over its staging files (and
 * the aggregator's round buffer), so they travel as one message described by an hindexed
 * datatype of their addresses, as ROMIO's ad_write_coll.c does, instead of one message per
 * piece. A set laid out as a global array has one piece per row of a block: per row, a message
 * would cost a send and a matching receive (tens of thousands per commit). */
#ifndef SLUICE_CKPT_COMMIT_TWOPHASE_MSG_H
#define SLUICE_CKPT_COMMIT_TWOPHASE_MSG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct commit_tp_msg {
    void *buf; /* what MPI_Isend/MPI_Irecv take with count and type */
    int count;
    MPI_Datatype type;
    uint64_t bytes;
};

/* Describes the n byte spans (ptr[i], len[i]), in this order (adjacent ones merged; ptr is
 * clobbered), as one message. A single span is plain bytes (MPI_BYTE), else an hindexed type
 * at MPI_BOTTOM. The sum of len must fit an int (a round is at most 1 GiB). 0 or -ENOMEM. */
int commit_tp_msg_make(unsigned char **ptr, int *len, size_t n, struct commit_tp_msg *out);

/* Frees the datatype, if any (allowed while the operation using it is pending: it completes
 * normally). */
void commit_tp_msg_done(struct commit_tp_msg *m);

#endif
