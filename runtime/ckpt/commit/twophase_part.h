/* SPDX-License-Identifier: MIT */
/* One participant's share of a two-phase plan (twophase_part.c). The home computes the plan once
 * and sends each participant only what it acts on: its own members, the pieces it sends (as a
 * writer) or receives (as an aggregator), the domains those pieces go to and its own domain's
 * requests. A writer's share is O(1) in the job's size and an aggregator's is O(the members of
 * its domain), so the plan messages of a version cost O(N) bytes at the home, not O(N^2).
 *
 * The share decodes into a plan of the planner's shape (planner_twophase.h) in local numbering:
 * its pieces and requests keep the home plan's order (domain, round, offset) and its domains are
 * the referenced ones in the home plan's order. */
#ifndef SLUICE_CKPT_COMMIT_TWOPHASE_PART_H
#define SLUICE_CKPT_COMMIT_TWOPHASE_PART_H

#include "ckpt/commit/commit_internal.h"
#include "ckpt/twophase/planner_twophase.h"

/* A piece of another rank's member in this aggregator's share. */
#define COMMIT_TP_NOT_MINE ((size_t)-1)

/* How a share tells its pieces: listed by the home, or cut by the participant from the layout of
 * a set laid out as one global array (twophase_part_array.c). */
enum { COMMIT_TP_FORM_PIECES = 0, COMMIT_TP_FORM_ARRAY = 1 };

struct commit_tp_array_cut;

struct commit_tp_part {
    uint32_t id;
    char tmp[PATH_MAX];
    uint64_t unit;
    uint32_t chunk;             /* > 0: answer the chunk checksums of its members (twophase_exec.c) */
    struct sluice_tp_plan plan; /* local numbering; plan.pieces[k].member indexes m, or
                                   COMMIT_TP_NOT_MINE */
    struct commit_tp_member *m; /* this participant's shuffled members (src is this rank) */
    size_t n;
    struct commit_tp_array_cut *cut; /* array form: what commit_twophase_part_cut needs */
    int *peers;                      /* the ranks of this rank's node it exchanges pieces with, ascending */
    size_t npeers;
};

/* Home side: the ranks on a participant's node that it exchanges pieces with (the aggregators
 * it sends to, the writers that send to it), each once, listed at the end of its share: such a
 * pair moves its rounds through a buffer they share instead of messages (twophase_exec.c). The
 * node of each rank is what the home noted (commit_twophase_note_node); an unknown one is a
 * node of its own. */
struct commit_tp_peers {
    int me;
    int *v;
    size_t n;
    unsigned char *seen; /* per rank */
};
int commit_twophase_peers_init(struct commit_tp_peers *p, int size); /* 0 or -ENOMEM */
void commit_twophase_peers_offer(struct commit_tp_peers *p, int rank);
/* Puts the list (count, ranks) and empties it for the next participant's `me`. */
void commit_twophase_peers_put(struct cmsg *msg, struct commit_tp_peers *p, int next_me);
void commit_twophase_peers_free(struct commit_tp_peers *p);
/* Participant side: reads the list into out (0, or -EPROTO / -ENOMEM). */
int commit_twophase_get_peers(struct cmsg *in, struct commit_tp_part *out);

/* Home: sends each participant (the ranks that staged a shuffled member of m: writer -1, and
 * the aggregators of plan's domains) its share of plan as one MSG_TWOPHASE; chunk > 0 asks the
 * writers for their members' checksums per chunk of that many bytes. Returns how many were
 * sent, or -ENOMEM (then none was). */
int commit_twophase_send_parts(uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                               const struct sluice_tp_plan *plan, const struct commit_tp_member *m, size_t n);
/* Participant `me`: decodes a MSG_TWOPHASE. 0, -EPROTO or -ENOMEM (out is then freed). The
 * plan's domains and requests are known at once; for the array form its pieces come with
 * commit_twophase_part_cut (an aggregator's take milliseconds: its round buffers can be put in
 * place meanwhile). */
int commit_twophase_part_decode(struct cmsg *in, int me, struct commit_tp_part *out);
/* The plan's pieces, where the decode left them to cut (a no-op otherwise). 0, -EPROTO or
 * -ENOMEM (out is then freed). */
int commit_twophase_part_cut(struct commit_tp_part *out);

/* Wire helpers both forms share: the fields every share starts with, and a domain. */
void commit_twophase_put_head(struct cmsg *msg, uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                              uint64_t round_size, uint32_t form);
void commit_twophase_put_domain(struct cmsg *msg, const struct sluice_tp_domain *d);
void commit_twophase_get_domain(struct cmsg *in, struct sluice_tp_domain *d);

/* The same for a set laid out as one global array (plan: the home's plan of its regions,
 * pieces left out; array: its layout record): each participant's share holds its members, the
 * domains they touch, and on an aggregator the members that touch its domain and its requests;
 * the participant cuts the pieces itself (planner_array.h). Returns how many were sent, or
 * -ENOMEM (then none was). */
int commit_twophase_send_array_parts(uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                                     const struct sluice_array *array, const struct sluice_tp_plan *plan,
                                     const struct commit_tp_member *m, size_t n);
/* Decodes the rest of a MSG_TWOPHASE of form COMMIT_TP_FORM_ARRAY (the common fields read),
 * leaving out->cut for commit_twophase_part_cut_array. */
int commit_twophase_part_decode_array(struct cmsg *in, int me, struct commit_tp_part *out);
int commit_twophase_part_cut_array(struct commit_tp_part *out);
void commit_twophase_part_cut_free(struct commit_tp_array_cut *cut);
void commit_twophase_part_free(struct commit_tp_part *p);

#endif
