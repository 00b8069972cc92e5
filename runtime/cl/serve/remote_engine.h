/* SPDX-License-Identifier: MIT */
/* The parts of a rank's command engine, shared by its files (internal to runtime/cl/serve):
 * - remote_engine.c: the loop (callback notes, progress, DONE reports) and the serving loop;
 * - remote_commands.c: one command turned into real enqueues, and the commands deferred behind a
 *   write still waiting for its data;
 * - remote_transfer.c: bulk data to and from peers (staging, pieces, mapped buffers);
 * - remote_tracking.c: the command table, buffer uses, other ranks' dependencies and failures.
 * Everything below is used under sluice_eng_lock (the engine's entry points take it), except
 * the callback notes, which have their own lock (a leaf). Lock order on rank 0 (dist_lock,
 * dist_sched_lock, sluice_eng_lock, srv_lock): runtime/cl/rank0/dist_internal.h, top. */
#ifndef SLUICE_CL_SERVE_REMOTE_ENGINE_H
#define SLUICE_CL_SERVE_REMOTE_ENGINE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cl/intercept/backend.h"
#include "cl/intercept/object.h"
#include "cl/serve/remote_cma.h"
#include "cl/serve/remote_ids.h"
#include "cl/serve/remote_peer.h"
#include "cl/serve/remote_proto.h"
#include "trace/debug.h"

/* The subsystem of this room's SLUICE_RETURN_ERROR_ON reasons (SLUICE_DEBUG=serve). */
#define SLUICE_DEBUG_HERE serve

/* A rid of a request as this process's handle (a chosen id through its table: remote_ids.h). */
#define PTR(t, v) ((t)(uintptr_t)sluice_rid_real(v))
#define MAX_WAIT 4096

struct eng_cmd {
    uint64_t id;
    uint32_t op, flags;
    cl_command_queue q;
    cl_event ev;                        /* complete when the command's device work is */
    cl_event *piece_ev;                 /* per piece of bulk data (reads to a peer, writes from a peer) */
    cl_event *wait;                     /* writes from a peer: what each piece's write waits for (retained) */
    size_t nwait, nwait_own;            /* ... of which the first nwait_own are the program's dependencies */
    struct sluice_remote_access acc[8]; /* its buffer uses, registered once it is enqueued */
    size_t nacc;
    cl_mem buf;
    MPI_Request *reqs; /* per piece */
    size_t npieces, off, size;
    int peer;
    unsigned char *staging;
    size_t staging_cap;
    int dev_done, cbs;        /* device work complete (callback seen or status asked); callbacks to come */
    int reported;             /* its DONE went (it stays until its callbacks came) */
    uint64_t t_enq, next_ask; /* when it came; when its statuses may be asked next */
    uint64_t t_ready;         /* when its last device work was enqueued: asking intervals grow from there */
    int zombie;               /* failed without its callbacks: never freed (they may still come) */
    int rect;                 /* a rect read/write/copy: geometry below */
    struct sluice_rect_geom geom;
    void *mapped; /* a write from a peer received straight into the mapped device buffer */
    cl_event map_ev;
    int posted;     /* its receives are posted (once the map completed) */
    size_t sent;    /* reads to a peer: pieces whose send started; writes from one: pieces arrived */
    size_t nposted; /* writes from a peer: pieces whose receive is posted */
    int64_t status;
    uint64_t bcast;           /* SLUICE_CMD_BCAST: the rank mask of the broadcast's communicator */
    uint64_t gseq;            /* SLUICE_CMD_GATHER: its number among this rank's gathers */
    struct eng_allgather *ag; /* SLUICE_CMD_ALLGATHER: its slice and the members' (remote_allgather.c) */
    struct eng_chain *chain;  /* SLUICE_CMD_BCAST: the member its pieces go on to (remote_chain.c) */
    uint64_t cma_addr;        /* SLUICE_CMD_CMA: rank 0's address of the data (remote_cma.h) */
    struct sluice_cma *cma;   /* ... its copy, once started */
    struct eng_cmd *hnext, *next, *prev;
};

static inline const struct sluice_cl_api *api(void)
{
    return &sluice_cl_loader_backend()->api;
}

/* An MPI call with `peer` failed: the job ends with one line naming the rank (remote_peer.h). */
static inline int checked(int rc, int peer, const char *what)
{
    if (rc != MPI_SUCCESS)
        sluice_remote_peer_failed(peer, rc, what);
    return rc;
}

static inline void fail_now(struct eng_cmd *c, cl_int r)
{
    c->status = r;
    c->dev_done = 1;
}

extern pthread_mutex_t sluice_eng_lock;

/* What a watched event stands for, besides a piece's index (0, 1, ...). */
enum { SLUICE_ENG_FINAL = -1 /* the command's own event */, SLUICE_ENG_MAP = -2 /* the map of its buffer */ };
/* remote_engine.c: calls back into the loop when ev completes (piece: SLUICE_ENG_FINAL,
 * SLUICE_ENG_MAP or that piece's index); 0 when no callback could be set. */
int sluice_eng_watch(struct eng_cmd *c, cl_event ev, long piece);

/* remote_tracking.c */
extern struct eng_cmd *sluice_eng_all; /* every command in flight, newest first */
struct eng_cmd *sluice_eng_find(uint64_t id);
void sluice_eng_insert(struct eng_cmd *c);
void sluice_eng_unlink(struct eng_cmd *c);
int sluice_eng_done_event(cl_event ev);
struct track;
struct track *sluice_eng_track_of(uint64_t root);
void sluice_eng_track_deps(struct track *t, int write, int transfer, cl_event *wl, size_t *n);
void sluice_eng_track_add(struct track *t, cl_event ev, int write, int transfer);
void sluice_eng_track_prune(void);
cl_event sluice_eng_remote_dep(uint64_t id, cl_context ctx, int *none);
int sluice_eng_failed_dep(uint64_t id);
void sluice_eng_failed_add(uint64_t id, int64_t status);
/* Waiting on a failed event does not work (PoCL leaves the command queued forever, and an event
 * can fail after sluice learned of it: a user event set negative, a command failed by its own
 * wait list), so each wait list is checked right before its enqueue. A failed one of the first
 * *own events (the program's dependencies) fails the command, as OpenCL would:
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; one of the rest (earlier uses of its buffers,
 * which sluice adds) is dropped: a failed use leaves the buffer as it was and later uses go on,
 * as on one queue. Compacts wl, *n and *own; `release`: the list holds references (dropped ones
 * are released). */
cl_int sluice_eng_wait_list_check(cl_event *wl, size_t *n, size_t *own, int release);
/* A real wait list fails its command when any event in it fails: right for the program's
 * dependencies, wrong for the earlier uses of a buffer that a coherence transfer waits for (a
 * failed use leaves the buffer as it was, and the transfer must still move it, or the receiver
 * would keep a stale copy). So a transfer waits for such a use through a user event of its
 * context that is set complete once the use ended in any way: by the use's callback at once, or
 * by the sweep in every round of the engine's progress (no callback comes for a use its wait
 * list failed). NULL when the use has ended already. */
cl_event sluice_eng_shield(cl_event use, cl_context ctx);
void sluice_eng_shields_sweep(void);
void sluice_eng_hold_failed(struct eng_cmd *c); /* takes a failed command's events and wait list */
void sluice_eng_held_sweep(void);
void sluice_eng_forget_notified(void);

/* remote_commands.c */
extern uint64_t sluice_eng_gathers;        /* gathers given to this rank (remote_transfer.c) */
extern struct eng_cmd *sluice_eng_blocked; /* a write from a peer still waiting for its data */
int sluice_eng_deferring(void);            /* commands wait behind sluice_eng_blocked */
void sluice_eng_run_deferred(void);

/* remote_transfer.c */
void sluice_eng_staging_release(unsigned char *p, size_t cap);
cl_int sluice_eng_read_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw);
int sluice_eng_read_mapped(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw);
cl_int sluice_eng_write_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw);
cl_int sluice_eng_rect(struct eng_cmd *c, uint32_t op, cl_mem buf, unsigned char *ptr, cl_event *wl,
                       size_t nw);
void sluice_eng_settle_peer(struct eng_cmd *c, uint32_t op);
void sluice_eng_post_sends(struct eng_cmd *c);
void sluice_eng_post_receives(struct eng_cmd *c);
void sluice_eng_send_read_pieces(struct eng_cmd *c, long piece);
void sluice_eng_failed_silently(struct eng_cmd *c);
int sluice_eng_mpi_done(struct eng_cmd *c, int *progress);
int sluice_eng_reqs_pending(const struct eng_cmd *c);
void sluice_eng_trace_inbound(struct eng_cmd *c);

/* remote_allgather.c: a write whose range comes by an allgather among serving ranks. parse: its
 * payload (after the accesses); start: read this rank's slice into `to` (the whole range);
 * ready: 1 once its part is posted (when the slice is in), so its receive can be waited for. */
cl_int sluice_eng_allgather_parse(struct eng_cmd *c, const unsigned char *p, size_t len);
int sluice_eng_allgather_start(struct eng_cmd *c, unsigned char *to);
int sluice_eng_allgather_ready(struct eng_cmd *c);
void sluice_eng_allgather_free(struct eng_cmd *c);

/* remote_chain.c: a broadcast's pieces, received from the member before this one and forwarded
 * to the one after it. start: post the receives into `to` (c->npieces pieces); forward: send on
 * the pieces before `arrived` not sent yet; arrived: the same for the pieces whose receive
 * completed, in order; sent: 1 once every forward completed (the buffer may then go). */
int sluice_eng_chain_start(struct eng_cmd *c, unsigned char *to);
void sluice_eng_chain_forward(struct eng_cmd *c, size_t arrived);
void sluice_eng_chain_arrived(struct eng_cmd *c);
int sluice_eng_chain_sent(struct eng_cmd *c);
int sluice_eng_chain_pending(const struct eng_cmd *c); /* forwards to come or not tested complete */
void sluice_eng_chain_free(struct eng_cmd *c);

/* The internal queue of a context (remote_server.c). */
cl_command_queue sluice_remote_internal_queue(cl_context ctx, cl_int *err);

#endif
