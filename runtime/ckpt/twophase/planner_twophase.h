/* SPDX-License-Identifier: MIT */
/* Two-phase commit planner: given the container layout of a checkpoint set (planner.h decides
 * where each member goes), decides who writes which bytes so that the file system sees a few
 * large stripe-aligned requests from a few writers (ROMIO's ad_write_coll.c, in the terms of a
 * container commit).
 *
 *   aggregators   a few ranks (default one per node) that alone open and write the container;
 *   file domains  the data region is cut into one contiguous range per aggregator, cut on stripe
 *                 boundaries so that no two aggregators ever write into the same stripe: where
 *                 each node's data is one stretch of the file, a domain is its node's stretch
 *                 (only the pieces of the stripes at its ends cross links), else by bytes;
 *   rounds        each domain is moved in windows of the collective buffer size (rounded down to
 *                 whole stripes, at least one): a round is what an aggregator holds in memory;
 *                 smaller where the largest domain would otherwise take fewer than
 *                 SLUICE_TP_PIPELINE_ROUNDS rounds, since an aggregator writes round r while it
 *                 receives round r+1: a domain moved in one round is all received, then all
 *                 written;
 *   pieces        what a writer sends: the part of one member that falls into one round;
 *   requests      what an aggregator writes: one pwrite per contiguous run of the round, so a
 *                 domain has at most one partial request at each end;
 *   direct        members that share no stripe with another writer's data gain nothing from the
 *                 shuffle and are written by their own rank (SLUICE_CB_WRITE=auto), like ROMIO's
 *                 romio_cb_write=automatic skips collective buffering for non-interleaved access.
 *
 * Pure and deterministic. The home computes it once and sends each participant only its own
 * share (ckpt/commit/twophase_part.c). */
#ifndef SLUICE_CKPT_TWOPHASE_PLANNER_TWOPHASE_H
#define SLUICE_CKPT_TWOPHASE_PLANNER_TWOPHASE_H

#include <stddef.h>
#include <stdint.h>

/* Rounds the largest domain is cut into at least, where rounds stay at least
 * SLUICE_TP_PIPELINE_MIN bytes (rounded up to whole stripes) and within the buffer. */
#define SLUICE_TP_PIPELINE_ROUNDS 4
#define SLUICE_TP_PIPELINE_MIN (UINT64_C(1) << 20)

#ifdef __cplusplus
extern "C" {
#endif

/* SLUICE_CB_WRITE, with romio_cb_write's meaning. */
enum sluice_cb_write {
    SLUICE_CB_WRITE_AUTO = 0, /* shuffle members that share a stripe with another writer */
    SLUICE_CB_WRITE_ENABLE,   /* shuffle every member */
    SLUICE_CB_WRITE_DISABLE,  /* never shuffle: every writer writes its own members */
};
/* "auto" | "enable" | "disable" (also ROMIO's "automatic"); 0 or -EINVAL. */
int sluice_cb_write_parse(const char *s, enum sluice_cb_write *out);
const char *sluice_cb_write_name(enum sluice_cb_write mode);

/* Aggregator selection. `ranks[i]` runs on node `nodes[i]` (any id, equal on one node).
 * cb_nodes == 0: the lowest rank of each node. cb_nodes == k: k ranks (at most n), spread over
 * the nodes round-robin (the lowest rank of each node first, then the second lowest, ...), as
 * ROMIO spreads cb_nodes. Writes the chosen ranks in increasing order to out (room for n) and
 * returns how many (0 only when n == 0). */
size_t sluice_tp_pick_aggregators(const int *ranks, const uint64_t *nodes, size_t n, uint64_t cb_nodes,
                                  int *out);

/* One member in the container layout. src >= 0: its bytes are staged on rank src and may be
 * shuffled; src < 0: written by someone else outside the two-phase step (carried over from the
 * previous version) and never overwritten by an aggregator. */
struct sluice_tp_member {
    uint64_t offset;
    uint64_t size;
    int src;
};

struct sluice_tp_params {
    uint64_t stripe_unit; /* >= block_size */
    uint64_t block_size;  /* the container's block size (power of two); padding is zero-filled
                             only up to the next block boundary */
    uint64_t buffer_size; /* SLUICE_CB_BUFFER_SIZE: bytes an aggregator holds per round */
    enum sluice_cb_write mode;
    const int *aggregators; /* ranks */
    size_t naggr;
    /* Optional, both or neither: the node of each aggregator and of each member's src. Given,
     * and when every node's shuffled members are one stretch of the file with one aggregator on
     * that node, each domain follows a node's data (cut on the stripe boundary nearest to where
     * the next node's data starts): only stripe-boundary pieces cross links. Otherwise (or
     * NULL) domains balance bytes, in aggregator order. */
    const uint64_t *aggr_node;   /* per aggregator */
    const uint64_t *member_node; /* per member (input order) */
};

/* The range of the file aggregator `aggregator` owns: [begin, end). Rounds start at
 * stripe-aligned offsets base + r * round_size (base = begin rounded down to a stripe). */
struct sluice_tp_domain {
    int aggregator;
    uint64_t begin, end;
    uint64_t base;
    uint32_t nrounds;
};

/* Bytes [member_off, member_off + size) of member `member` go to file offset file_off, sent by
 * rank src to the aggregator of `domain` in its round `round`. */
struct sluice_tp_piece {
    size_t member;
    uint64_t member_off;
    uint64_t file_off;
    uint64_t size;
    int src;
    uint32_t domain;
    uint32_t round;
};

/* One file-system request of an aggregator: full is 1 when it covers whole stripes only. */
struct sluice_tp_request {
    uint32_t domain;
    uint32_t round;
    uint64_t offset;
    uint64_t size;
    int full;
};

struct sluice_tp_plan {
    unsigned char *direct; /* per member: 1 written by its own rank (or nothing to move) */
    size_t nmembers;
    struct sluice_tp_domain *domains; /* only domains that hold shuffled bytes */
    size_t ndomains;
    struct sluice_tp_piece *pieces; /* sorted by (domain, round, file_off) */
    size_t npieces;
    size_t pieces_huge;                 /* > 0: pieces are huge-page memory of that many bytes (hugebuf.h) */
    struct sluice_tp_request *requests; /* sorted by (domain, round, offset) */
    size_t nrequests;
    uint64_t round_size; /* effective buffer: a whole number of stripes */
    uint32_t max_rounds; /* over all domains */
    uint64_t shuffled_bytes;
};

/* Builds the plan. Members must not overlap (any order). Returns 0, -EINVAL (bad parameters:
 * zero or non-power-of-two block, stripe unit below the block size, no aggregators while some
 * member must be shuffled) or -ENOMEM. Free with sluice_tp_plan_free. */
int sluice_tp_plan_make(const struct sluice_tp_member *members, size_t n,
                        const struct sluice_tp_params *params, struct sluice_tp_plan *out);
void sluice_tp_plan_free(struct sluice_tp_plan *plan);

/* The index of the domain aggregator `rank` owns, or -1. */
long sluice_tp_domain_of(const struct sluice_tp_plan *plan, int rank);

/* [a, b) cut by the domains d[0..nd) (increasing, disjoint) and their round windows of
 * round_size bytes: emit(ctx, domain index, round, x, e) for each part in file order; a
 * nonzero return stops the walk and is returned. Bytes outside every domain are skipped. */
typedef int (*sluice_tp_window_fn)(void *ctx, size_t domain, uint32_t round, uint64_t x, uint64_t e);
int sluice_tp_split_range(const struct sluice_tp_domain *d, size_t nd, uint64_t round_size, uint64_t a,
                          uint64_t b, sluice_tp_window_fn emit, void *ctx);

/* Sorts n items of `size` bytes by the uint64_t at byte `key` of each, merging the ascending
 * runs they already form (the rows of one rank are one run): O(n log runs), stable; where
 * memory for the merge runs out, qsort (not stable: keys should be distinct). */
void sluice_tp_sort_runs(void *items, size_t n, size_t size, size_t key);

#ifdef __cplusplus
}
#endif
#endif
