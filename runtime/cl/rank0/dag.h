/* SPDX-License-Identifier: MIT */
/* The command DAG of distributed OpenCL: every enqueued command is a node; edges come from
 * event wait lists, queue order (in-order queues, markers and barriers) and buffer use. Pure
 * code: rank 0's scheduler adds nodes as the program enqueues, dispatches the ready ones to
 * the rank that owns the device, marks them complete when the rank reports, and retires
 * completed nodes so that memory stays bounded. Edge rules and why: docs/DAG.md.
 *
 *   add      -> the node's dependencies (ordering and data), and whether it is ready
 *   dispatch -> the node left the ready list, it runs somewhere
 *   complete -> the nodes that became ready
 *   retire   -> completed nodes handed to a callback (the trace), then freed
 *
 * Ordering edges (wait list, queue) gate readiness. Data edges (read-after-write,
 * write-after-read, write-after-write on overlapping byte ranges of one buffer) never do: the
 * OpenCL program is responsible for ordering commands of different queues, so sluice does not
 * add order it did not ask for; data edges tell the coherence layer and the optimizer who last
 * wrote what. Not thread-safe: one scheduler thread owns a DAG. */
#ifndef SLUICE_CL_RANK0_DAG_H
#define SLUICE_CL_RANK0_DAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
#define SLUICE_DAG_KIND(id, name, commands) SLUICE_DAG_##id,
#include "cl/rank0/dag_kinds.def"
#undef SLUICE_DAG_KIND
    SLUICE_DAG_KIND_COUNT
} sluice_dag_kind;

const char *sluice_dag_kind_name(sluice_dag_kind kind);

/* How a command uses a byte range of a buffer. Sub-buffers are given as their parent's id with
 * the sub-buffer's origin added to the offset, so that overlaps between them are seen. */
enum { SLUICE_DAG_READS = 1u << 0, SLUICE_DAG_WRITES = 1u << 1 };
struct sluice_dag_access {
    uint64_t buffer;
    uint64_t offset;
    uint64_t size;
    unsigned mode; /* SLUICE_DAG_READS and/or SLUICE_DAG_WRITES */
};

/* What the runtime knows about a command when it is enqueued. */
struct sluice_dag_cmd {
    uint64_t id;       /* the command's event id: unique, > 0, increasing in enqueue order */
    uint64_t queue;    /* 0 for nodes outside any queue (user events) */
    bool out_of_order; /* the queue has CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE */
    int rank;          /* where the device is */
    uint32_t device;   /* the device's index on that rank */
    sluice_dag_kind kind;
    const uint64_t *wait; /* event wait list, as command ids */
    size_t nwait;
    const struct sluice_dag_access *access;
    size_t naccess;
    /* READ and WRITE: the contiguous host memory range on rank 0 (0, 0 if not contiguous);
     * the dynamic collective replacement matches transfers through it. */
    uint64_t host_addr;
    uint64_t host_size;
};

/* Why a node depends on another (bits; one edge may have several reasons). */
enum {
    SLUICE_DAG_DEP_WAIT = 1u << 0,  /* in the event wait list */
    SLUICE_DAG_DEP_QUEUE = 1u << 1, /* queue order: in-order predecessor, barrier, marker */
    SLUICE_DAG_DEP_RAW = 1u << 2,   /* reads bytes the other writes */
    SLUICE_DAG_DEP_WAR = 1u << 3,   /* writes bytes the other reads */
    SLUICE_DAG_DEP_WAW = 1u << 4,   /* writes bytes the other writes */
};
#define SLUICE_DAG_DEP_ORDERING (SLUICE_DAG_DEP_WAIT | SLUICE_DAG_DEP_QUEUE)
#define SLUICE_DAG_DEP_DATA (SLUICE_DAG_DEP_RAW | SLUICE_DAG_DEP_WAR | SLUICE_DAG_DEP_WAW)

struct sluice_dag_dep {
    uint64_t on;    /* the command depended on */
    unsigned why;   /* SLUICE_DAG_DEP_* bits */
    bool satisfied; /* it had already completed when this node was added */
};
/* The trace's CL_DEP kind for an edge: 0 wait list, 1 queue order, 2 buffer only. */
int sluice_dag_dep_trace_kind(unsigned why);

typedef enum {
    SLUICE_DAG_PENDING,  /* waits for ordering dependencies */
    SLUICE_DAG_READY,    /* may run; not dispatched yet */
    SLUICE_DAG_RUNNING,  /* dispatched */
    SLUICE_DAG_COMPLETE, /* done (with its status) */
} sluice_dag_state;

/* A node as the runtime and the trace see it. Pointers stay valid until the node is retired
 * (or, for ones returned by add, until the next call that changes the DAG). */
struct sluice_dag_node_info {
    uint64_t id, queue;
    int rank;
    uint32_t device;
    sluice_dag_kind kind;
    sluice_dag_state state;
    int status;      /* completion status: 0 (CL_COMPLETE) or a negative OpenCL error */
    bool failed_dep; /* an ordering dependency completed with a negative status */
    uint64_t t_enqueue, t_dispatch, t_start, t_end; /* caller's clock; 0 until known */
    const struct sluice_dag_dep *deps;
    size_t ndeps;
    const struct sluice_dag_access *access;
    size_t naccess;
    uint64_t host_addr, host_size;
};

struct sluice_dag;

struct sluice_dag *sluice_dag_create(void);
void sluice_dag_destroy(struct sluice_dag *dag);

/* Adds a command at time `now`. On success fills *info (if not NULL) with the node, its
 * dependencies among them, and its state (READY when no ordering dependency is pending).
 * Errors (negative errno): -EINVAL for an id not above every earlier one, a wait-list id that
 * was never added, or an unknown kind (nothing changed); -ENOMEM (if it happens after the node
 * was inserted, the node stays, with the dependencies recorded so far). */
int sluice_dag_add(struct sluice_dag *dag, const struct sluice_dag_cmd *cmd, uint64_t now,
                   struct sluice_dag_node_info *info);

/* Ready nodes not dispatched yet, in the order they became ready: writes up to `max` ids into
 * out and returns how many there are in all. */
size_t sluice_dag_ready(const struct sluice_dag *dag, uint64_t *out, size_t max);

/* The runtime sent a READY node to its rank at time `now`. -EINVAL if it is not READY. */
int sluice_dag_dispatch(struct sluice_dag *dag, uint64_t id, uint64_t now);

/* A READY or RUNNING node finished with `status` (0, or negative: failed) and device times
 * t_start..t_end. Nodes whose last pending ordering dependency it was become READY: their ids
 * are in *ready (n of them; valid until the next call). A negative status marks dependents
 * failed_dep: OpenCL leaves their fate to the implementation; the runtime fails them with
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. Markers, barriers and user events are completed
 * this way too (user events by clSetUserEventStatus). */
int sluice_dag_complete(struct sluice_dag *dag, uint64_t id, int status, uint64_t t_start, uint64_t t_end,
                        const uint64_t **ready, size_t *n);

/* Looks a live node up. -ENOENT if it was never added or was retired. */
int sluice_dag_get(const struct sluice_dag *dag, uint64_t id, struct sluice_dag_node_info *info);

/* Frees every COMPLETE node, calling emit (if not NULL) on each first, in id order. Later
 * references to a retired id (wait lists, queue order) count as complete. Returns how many. */
size_t sluice_dag_retire(struct sluice_dag *dag, void (*emit)(const struct sluice_dag_node_info *, void *),
                         void *ctx);

/* Calls fn on every live node in id order. */
void sluice_dag_foreach(const struct sluice_dag *dag, void (*fn)(const struct sluice_dag_node_info *, void *),
                        void *ctx);

/* Live nodes. */
size_t sluice_dag_size(const struct sluice_dag *dag);

/* Writes the live DAG as Graphviz DOT: one box per node (kind, id, rank/device, state, times),
 * solid edges for ordering, dashed edges for data-only dependencies. Returns the length it
 * needed, like snprintf. */
size_t sluice_dag_format_dot(const struct sluice_dag *dag, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
