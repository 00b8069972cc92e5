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
 *              B: a direct A -> B transfer (device-host-device copy removal)
 *   SCATTER    (the window only) adjacent slices of one host range written to several devices:
 *              one scatter from rank 0, each slice sent once
 *   GATHER     (in the window) adjacent slices of one host range read from several devices: one
 *              gather to rank 0
 *   ALLGATHER  (in the window) one host range, tiled by completed reads of several serving ranks'
 *              devices, written whole to those ranks: one allgather among the serving ranks */
#ifndef SLUICE_CL_RANK0_DAG_DCR_H
#define SLUICE_CL_RANK0_DAG_DCR_H

#include "cl/rank0/dag.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_DCR_KINDS(X)                                                                                  \
    X(BCAST, "bcast") X(ALLGATHER, "allgather") X(GATHER, "gather") X(P2P, "p2p") X(SCATTER, "scatter")
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

/* Broadcast detection over the window of commands rank 0 holds before sending them (docs/DAG.md,
 * section 2, "The window"), in enqueue order. The caller describes each command; the bytes of
 * writes are compared by the caller, who gives equal `content` values to writes of equal bytes. */
typedef enum {
    SLUICE_DCR_ITEM_WRITE, /* a host write of host_size bytes to a buffer on `rank` */
    SLUICE_DCR_ITEM_READ,  /* a read from a buffer on `rank` into host memory */
    SLUICE_DCR_ITEM_PEER,  /* data moving between `rank` and `peer` (a coherence move, a direct copy) */
    SLUICE_DCR_ITEM_OTHER, /* kernels, fills, markers...: no host data */
    SLUICE_DCR_ITEM_FENCE, /* the program could observe something here (a wait): nothing crosses it */
} sluice_dcr_item_kind;

struct sluice_dcr_item {
    sluice_dcr_item_kind kind;
    int rank, peer;
    uint64_t host_addr, host_size;
    uint64_t content;
    int staged;     /* a write: its bytes are a copy taken at enqueue, not the program's memory; a
                       read: not a plain read (rect, map), which joins no gather */
    uint64_t tiles; /* a write: the ranks whose slices tile its host range (sluice_dcr_tiling), or 0 */
};

/* A host range that holds a copy of a buffer range of `rank` (a completed read from it, known to
 * copy removal); `unchanged`: the host bytes are still what the read brought. */
struct sluice_dcr_slice {
    uint64_t host_addr, host_size;
    int rank;
    int unchanged;
};

/* Whether the n slices tile [addr, addr + size) exactly: two or more, each inside it, adjacent
 * (no gap, no overlap), unchanged, from distinct ranks 1 to 62 (rank 0's device moves no bytes
 * by MPI). Returns the rank mask of their sources, 0 when they do not; order (n entries, may be
 * NULL) gets the slices' indices in host order. */
uint64_t sluice_dcr_tiling(const struct sluice_dcr_slice *s, size_t n, uint64_t addr, uint64_t size,
                           size_t *order);

/* Fills group[i] (n entries): 0, or the number (1, 2, ...) of the collective that replaces write
 * i, and kinds[g - 1] (n entries; NULL: broadcasts only) its kind. A broadcast has two or more
 * writes of equal size and content; a scatter, two or more writes of adjacent slices of one host
 * range in increasing order (each starts where the previous one ended), none of them staged (the
 * scatter sends from the program's memory); a gather, two or more plain READs of adjacent slices
 * in increasing order (group[i] is then given for reads too); each on distinct ranks other than 0
 * and below 63. A broadcast whose writes all have the same host range and the same nonzero
 * `tiles`, every rank of which is a member (each source receives the whole range), is an
 * allgather (SLUICE_DCR_ALLGATHER) instead. A write (a read, for a gather) joins an open group unless: its
 * rank is already in it; its host range received a read earlier in the window (its bytes are a device's, not
 * known yet); its rank met a later group already (every rank meets its groups in increasing order, the order
 * rank 0 starts the collectives in, which MPI requires on one communicator); a PEER item on its rank came
 * after the group opened (it might wait for a member that waits for the collective). A READ into a group's
 * host range, a PEER on one of its ranks and a FENCE close groups. Returns the number of groups. */
uint32_t sluice_dcr_window(const struct sluice_dcr_item *v, size_t n, uint32_t *group,
                           sluice_dcr_kind *kinds);

#ifdef __cplusplus
}
#endif
#endif
