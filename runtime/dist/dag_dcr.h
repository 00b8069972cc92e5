/* SPDX-License-Identifier: MIT */
/* Dynamic Collective Replacement (libWater, Grasso et al. 2014), on sluice's command DAG:
 * finds, among the commands not dispatched yet, host transfers that together form a
 * collective, and describes the replacement as a plan the runtime can run instead of the
 * per-device transfers. Pure analysis: the DAG is not changed. Patterns and rules: docs/DAG.md.
 *
 *   BCAST      the same host range written to several devices: one broadcast from its source
 *              (rank 0's memory, or the device whose pending read filled that range)
 *   ALLGATHER  pending reads of several devices fill disjoint pieces of one host range, which
 *              is then written whole to several devices: every piece goes to every receiver
 *   GATHER     the same with a single receiver
 *   P2P        a read from device A into host memory, then a write of that memory to device
 *              B: a direct A -> B transfer (device-host-device copy removal) */
#ifndef SLUICE_DCL_DAG_DCR_H
#define SLUICE_DCL_DAG_DCR_H

#include "dist/dag.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_DCR_KINDS(X) X(BCAST, "bcast") X(ALLGATHER, "allgather") X(GATHER, "gather") X(P2P, "p2p")
typedef enum {
#define SLUICE_DCR_ENUM(id, name) SLUICE_DCR_##id,
    SLUICE_DCR_KINDS(SLUICE_DCR_ENUM)
#undef SLUICE_DCR_ENUM
} sluice_dcr_kind;
const char *sluice_dcr_kind_name(sluice_dcr_kind kind);

/* One side of a collective. For a source: the bytes it provides, `host_offset` bytes into the
 * host range, read from (buffer, offset) on (rank, device) by pending read `node`; node 0 and
 * rank 0 mean "already in rank 0's host memory". For a receiver: the pending write `node` that
 * the collective replaces, into (buffer, offset) on (rank, device), host_offset 0, the whole range. */
struct sluice_dcr_part {
    uint64_t node;
    int rank;
    uint32_t device;
    uint64_t buffer;
    uint64_t offset;
    uint64_t host_offset;
    uint64_t size;
};

struct sluice_dcr_op {
    sluice_dcr_kind kind;
    uint64_t host_addr, host_size; /* the host range the pattern goes through */
    int root;                      /* BCAST, P2P: the rank the data comes from; otherwise -1 */
    struct sluice_dcr_part *sources;
    size_t nsources;
    struct sluice_dcr_part *receivers;
    size_t nreceivers;
};

struct sluice_dcr_plan {
    struct sluice_dcr_op *ops;
    size_t nops;
};

/* Analyses the pending (PENDING or READY) READ and WRITE nodes of `dag` and fills `plan`
 * (zero-initialize it first). Returns 0, or -ENOMEM. */
int sluice_dcr_find(const struct sluice_dag *dag, struct sluice_dcr_plan *plan);
void sluice_dcr_plan_free(struct sluice_dcr_plan *plan);

/* One line per operation, e.g.
 *   "bcast root 2 host 0x1000+4096: 2:#7 -> 1:#9 3:#10" */
size_t sluice_dcr_format(const struct sluice_dcr_plan *plan, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
