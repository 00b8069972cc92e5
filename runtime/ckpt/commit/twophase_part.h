/* SPDX-License-Identifier: MIT */
/* One participant's share of a two-phase plan (twophase_part.c). The home computes the plan once
 * and sends each participant only what it acts on: its own members, the pieces it sends (as a
 * writer) or receives (as an aggregator), the domains those pieces go to and its own domain's
 * requests. A writer's share is O(1) in the job's size and an aggregator's is O(the members of
 * its domain), so the plan messages of a version cost O(N) bytes at the home, not O(N^2).
 *
 * The share decodes into a plan of the planner's shape (planner_twophase.h) in local numbering:
 * its pieces and requests keep the home plan's order (domain, round, offset), its domains are
 * the referenced ones in the home plan's order, and each piece keeps its index in the home's
 * plan (piece_id) for the trace's message ids. */
#ifndef SLUICE_CKPT_COMMIT_TWOPHASE_PART_H
#define SLUICE_CKPT_COMMIT_TWOPHASE_PART_H

#include "ckpt/commit/commit_internal.h"
#include "ckpt/twophase/planner_twophase.h"

/* A piece of another rank's member in this aggregator's share. */
#define COMMIT_TP_NOT_MINE ((size_t)-1)

struct commit_tp_part {
    uint32_t id;
    char tmp[PATH_MAX];
    uint64_t unit;
    uint32_t chunk;             /* > 0: answer the chunk checksums of its members (twophase_exec.c) */
    struct sluice_tp_plan plan; /* local numbering; plan.pieces[k].member indexes m, or
                                   COMMIT_TP_NOT_MINE */
    struct commit_tp_member *m; /* this participant's shuffled members (src is this rank) */
    size_t n;
    uint64_t *piece_id; /* per local piece: its index in the home's plan */
};

/* Home: sends each participant (the ranks that staged a shuffled member of m: writer -1, and
 * the aggregators of plan's domains) its share of plan as one MSG_TWOPHASE; chunk > 0 asks the
 * writers for their members' checksums per chunk of that many bytes. Returns how many were
 * sent, or -ENOMEM (then none was). */
int commit_twophase_send_parts(uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                               const struct sluice_tp_plan *plan, const struct commit_tp_member *m, size_t n);
/* Participant `me`: decodes a MSG_TWOPHASE. 0, -EPROTO or -ENOMEM (out is then freed). */
int commit_twophase_part_decode(struct cmsg *in, int me, struct commit_tp_part *out);
void commit_twophase_part_free(struct commit_tp_part *p);

#endif
