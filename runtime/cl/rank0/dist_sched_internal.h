/* SPDX-License-Identifier: MIT */
/* Internals of rank 0's scheduler, shared by its files only (its contract with the rest of the
 * backend is dist_internal.h; dist_sched.c says how it works):
 *
 *   dist_sched.c            its state and lock, the record table, records and user events, the
 *                           DAG's retired nodes in the trace, start and end
 *   dist_sched_submit.c     a command the program enqueued: wait list, payload, DAG node
 *   dist_sched_window.c     the window of collective replacement (broadcast, scatter, gather,
 *                           allgather)
 *   dist_sched_transmit.c   a built command sent to its rank; rank 0's own data messages
 *   dist_sched_fill.c       host memory that pending reads fill; writes whose data waits for them
 *   dist_sched_thread.c     the scheduler thread: DONE records, completion, NOTIFY, MPI progress
 *   dist_sched_clock.c      the offsets of the serving ranks' clocks
 *   dist_sched_callbacks.c  event callbacks and dead records, handled outside the lock
 *   dist_sched_wait.c       the program's waits
 *
 * Lock order (dist_lock, dist_sched_lock, sluice_eng_lock, srv_lock): dist_internal.h, top.
 * What is declared here is under dist_sched_lock unless it says otherwise. */
#ifndef SLUICE_CL_RANK0_DIST_SCHED_INTERNAL_H
#define SLUICE_CL_RANK0_DIST_SCHED_INTERNAL_H

#include <pthread.h>

#include "cl/rank0/dist_internal.h"

/* ---- dist_sched.c ---------------------------------------------------------------------------- */

extern pthread_mutex_t dist_sched_lock;   /* the scheduler's lock */
extern pthread_cond_t dist_sched_done;    /* broadcast when commands complete */
extern struct sluice_dag *dist_sched_dag; /* the command DAG */
extern uint64_t dist_sched_last_id;       /* the id of the last record made */
extern long dist_sched_inflight;          /* commands sent and not yet complete */
extern int dist_sched_started;            /* 1: the thread runs; 2: no thread (waits progress themselves) */
extern int dist_sched_stopping;           /* the job ends: the thread stops once idle */
/* The record table, by id. */
void dist_sched_insert(struct dist_event *e);
struct dist_event *dist_sched_find(uint64_t id);
void dist_sched_unlink_event(struct dist_event *e);
/* Retires the DAG's finished nodes (into the trace when it is on). */
void dist_sched_retire(void);
/* Starts the scheduler once (the DAG, the clock offsets, the thread). */
void dist_sched_start_locked(void);
/* A new record (one reference, the caller's). */
struct dist_event *dist_sched_new_record(struct dist_queue *q, struct dist_context *ctx, int rank,
                                         cl_command_type type);
/* Drops a reference; the last one puts the record in dist_sched_graveyard. */
void dist_sched_unref_locked(struct dist_event *e);

/* ---- dist_sched_callbacks.c ------------------------------------------------------------------ */

struct dist_event_cb {
    cl_int type;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *user_data;
    struct dist_event_cb *next;
};
/* Callbacks to call once the lock is dropped. */
struct pending_cb {
    struct dist_event_cb *cb;
    struct dist_event *e;
    cl_int status;
    struct pending_cb *next;
};
extern struct pending_cb *dist_sched_to_call;   /* those callbacks, the newest first */
extern struct dist_event *dist_sched_graveyard; /* records whose last reference went */
extern int dist_sched_wake_waiters;             /* wake the waiters once the dead records are freed */
extern unsigned dist_sched_wake_gen; /* bumped where waiters are woken (atomic; read without the lock) */
/* Calls the pending callbacks and frees the dead records, without the lock; then wakes waiters. */
void dist_sched_run_callbacks(void);

/* ---- dist_sched_thread.c --------------------------------------------------------------------- */

extern struct dist_event *dist_sched_mpi_pending; /* records with data messages of rank 0 in flight */
/* Those of them moving at least SLUICE_REMOTE_DATA_HOT_MIN bytes (up to BIG_MAX are known): while
 * there are any, the scheduler keeps polling MPI (remote_proto.h). Small ones are left to the short
 * poll: polling while a stencil's halo reads waited for their kernels took the devices' cores. */
#define BIG_MAX 64
extern struct dist_event *dist_sched_big[BIG_MAX];
extern int dist_sched_nbig;
void dist_sched_big_done(struct dist_event *e); /* e is not one of them any more */
/* NOTIFY: tells `rank` that command `id` ended with `status`. */
void dist_sched_notify(int rank, uint64_t id, cl_int status);
/* The record is done (its status, NOTIFYs, the DAG, callbacks queued, waiters to wake). */
void dist_sched_complete(struct dist_event *e, cl_int status);
/* The scheduler thread. */
void *dist_sched_main(void *arg);

/* ---- dist_sched_clock.c ---------------------------------------------------------------------- */

extern int64_t dist_sched_clock_off[DIST_MAX_RANKS]; /* rank's clock minus rank 0's */
void dist_sched_measure_clocks(void);                /* fills dist_sched_clock_off at start */

/* ---- dist_sched_fill.c ----------------------------------------------------------------------- */

extern size_t dist_sched_nfills;            /* host ranges that pending reads fill */
extern struct dist_event *dist_sched_lates; /* writes whose data waits for their node to be ready */
void dist_sched_fill_drop(uint64_t id);     /* read `id` landed: its range is free */
int dist_sched_fill_overlaps(const void *p, size_t len); /* a pending read fills some of [p, p+len) */
void dist_sched_note_fill(const struct dist_cmd *c, uint64_t id); /* the range read `id` fills */
void dist_sched_send_late(uint64_t id); /* the node of a late write is ready: its data goes */

/* ---- dist_sched_transmit.c ------------------------------------------------------------------- */

/* A command ready to go to its rank: built at enqueue, sent then or when the window closes. */
struct held {
    struct dist_event *e;
    struct sluice_remote_req req;
    unsigned char *p; /* the payload (owned) */
    int rank;
    const void *send;
    void *recv;
    size_t len;
    int dir;               /* of its data in the trace (DIST_DATA_*) */
    int bcast_candidate;   /* a host write to a serving rank, plain (not rect) */
    int staged;            /* send is a copy rank 0 made (a blocking write) */
    int late;              /* a pending read fills its host bytes: data sent once it is ready */
    const void *pack_from; /* a rect write packed when its data goes (dist_cmd.pack_from) */
    struct sluice_rect_geom geom;
    struct dist_event **rdeps; /* its wait list's events of other ranks and user events (retained) */
    uint32_t nrdeps;
    int push, push_rank; /* the sending half of a transfer between two ranks */
    struct sluice_req_xfer push_xfer;
    uint64_t push_ctx;
    struct sluice_remote_access push_access;
    int push_image; /* the sending half reads an image: push_geom is its geometry */
    struct sluice_rect_geom push_geom;
    uint64_t tiles; /* a candidate whose host range serving ranks' slices tile: their ranks */
    struct dist_dhdcr_slice *slices; /* those slices in host order (owned) */
    size_t nslices;
    struct held *next;
};
void dist_sched_data_trace(int peer, size_t bytes, int dir); /* CL_DIST_DATA: bytes to or from peer */
void dist_sched_pend_mpi(struct dist_event *e, size_t len);  /* e's data messages are in flight */
void dist_sched_transmit(struct held *h);                    /* sends h to its rank (and frees it) */

/* ---- dist_sched_window.c --------------------------------------------------------------------- */

extern struct held *dist_sched_win;               /* the held commands of the open window (NULL: none) */
int dist_sched_window_due(uint64_t now);          /* the open window must close now */
void dist_sched_window_close_locked(void);        /* finds its collectives, sends what it held */
void dist_sched_held_tiles(struct held *h);       /* the serving ranks' slices that tile h's range */
void dist_sched_hold_or_transmit(struct held *h); /* into the window, or to its rank now */

#endif
