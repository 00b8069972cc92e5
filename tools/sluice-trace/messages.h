/* SPDX-License-Identifier: MIT */
/* Rank-to-rank messages of a trace set, each once, with its purpose: the two-phase checkpoint
 * shuffle (COMMIT_SHUFFLE at the sender, COMMIT_SHUFFLE_RECV at the aggregator, one message id),
 * OpenCL data (MPI_SEND/MPI_RECV between serving ranks, MSG_SEND/MSG_RECV of rank 0's data and
 * their serving-rank ends), control (MSG_SEND/MSG_RECV of requests, replies, DONE records,
 * clocks and the commit protocol) and the DSM's messages (MPI_SEND/MPI_RECV on its own
 * communicator). The purpose of an MPI or MSG record comes from its tag (runtime/mpi/tags.def).
 * A send and a receive with the same ends, tag (or message id) and size are one message (paired
 * in time order, as MPI matches them); a message with one recorded end counts once, from that
 * end. Used by summary, heatmap and perfetto. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_MESSAGES_H
#define SLUICE_TOOLS_SLUICE_TRACE_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "timeline.h"
#include "traceset.h"

enum msg_purpose { MSG_SHUFFLE, MSG_OPENCL, MSG_CONTROL, MSG_DSM, MSG_OTHER, MSG_NPURPOSES };

struct msg_end {
    const struct sluice_trace_file *f; /* NULL: this end was not recorded */
    const struct sluice_trace_rthread *t;
    uint64_t e; /* index of the event in t */
};

struct message {
    int src, dst;
    uint64_t bytes, tag;
    enum msg_purpose purpose;
    int64_t t_ns; /* on the timeline: the send, else the receive */
    struct msg_end send, recv;
};

/* All messages of `set`, sorted by time. 0, or -1 when out of memory. */
int messages_collect(const struct trace_set *set, const struct timeline *tl, struct message **out, size_t *n);
const char *msg_purpose_name(enum msg_purpose p);
/* The purpose of an MPI_SEND/MPI_RECV/MSG_SEND/MSG_RECV record of tag `tag`. */
enum msg_purpose msg_purpose_of_tag(uint64_t tag);

#endif
