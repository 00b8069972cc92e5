/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler of distributed OpenCL: every command the program enqueues becomes a node
 * of the command DAG (cl/rank0/dag.h) and is sent at once, without waiting, to the rank of its device
 * (rank 0's own devices go to this process's engine directly). The rank's engine enqueues it on
 * real queues with real wait lists and reports its end in a DONE record.
 *
 * Dependencies: one on a command of the same rank is left to that rank (its real event); one on
 * another rank's command, or on a user event, is a NOTIFY this scheduler sends to the waiting
 * rank when the dependency's DONE arrives (or the user event is set). The scheduler thread
 * receives DONE records, progresses rank 0's own data messages (writes sent straight from the
 * program's pointer, reads received straight into it), calls event callbacks and wakes the
 * program's waits. It never spins: it polls for a short burst after progress, then sleeps with a
 * back-off, and sleeps long while nothing is in flight.
 *
 * Profiling times arrive on their rank's CLOCK_MONOTONIC and are moved onto rank 0's by the
 * offset measured at start (Cristian's method: the sample of least round trip of 8 pings). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "cl/rank0/dag_dcr.h"
#include "cl/rank0/dist_cma.h"
#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_internal.h"
#include "config/config.h"
#include "threads/helper_threads.h"
#include "trace/trace.h"

#define BUCKETS 4096
#define CLOCK_SAMPLES 8

struct dist_event_cb {
    cl_int type;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *user_data;
    struct dist_event_cb *next;
};

static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sched_done; /* broadcast when commands complete */
static struct sluice_dag *dag;
static struct dist_event *table[BUCKETS];
static struct dist_event *mpi_pending; /* records with data messages of rank 0 in flight */
/* Those of them moving at least SLUICE_REMOTE_DATA_HOT_MIN bytes (up to BIG_MAX are known): while
 * there are any, the scheduler keeps polling MPI (remote_proto.h). Small ones are left to the short
 * poll: polling while a stencil's halo reads waited for their kernels took the devices' cores. */
#define BIG_MAX 64
static struct dist_event *big[BIG_MAX];
static int nbig;

static void big_done(struct dist_event *e)
{
    for (int i = 0; i < nbig; i++)
        if (big[i] == e) {
            big[i] = big[--nbig];
            return;
        }
}
static uint64_t last_id;
static long inflight;
static int64_t clock_off[DIST_MAX_RANKS]; /* rank's clock minus rank 0's */
static int started, stopping;
static pthread_t thread;
/* The window of collective replacement (below): held commands, when it opened, the last enqueue.
 * It closes SLUICE_DCR_WINDOW (default 1 ms) after the last enqueue, or 10 times that after it
 * opened. */
struct held;
static struct held *win;
static uint64_t win_t0, win_last;
static int window_due(uint64_t now)
{
    uint64_t idle = (uint64_t)sluice_config.DCR_WINDOW * 1000u;
    return now - win_last > idle || now - win_t0 > 10 * idle;
}
static void window_close_locked(void);

/* Callbacks to call once the lock is dropped. */
struct pending_cb {
    struct dist_event_cb *cb;
    struct dist_event *e;
    cl_int status;
    struct pending_cb *next;
};
static struct pending_cb *to_call;
static struct dist_event *graveyard; /* records whose last reference went */
static int wake_waiters;
/* Bumped where waiters are woken: a waiter polls it before it sleeps (wait_locked). */
static unsigned wake_gen;

static void insert(struct dist_event *e)
{
    e->hnext = table[e->id % BUCKETS];
    table[e->id % BUCKETS] = e;
}

static struct dist_event *find(uint64_t id)
{
    for (struct dist_event *e = table[id % BUCKETS]; e != NULL; e = e->hnext)
        if (e->id == id)
            return e;
    return NULL;
}

static void unlink_event(struct dist_event *e)
{
    for (struct dist_event **p = &table[e->id % BUCKETS]; *p != NULL; p = &(*p)->hnext)
        if (*p == e) {
            *p = e->hnext;
            return;
        }
}

/* --- host memory that pending reads fill ------------------------------------------------------
 * A host write of bytes that a pending read (from any rank, rank 0's own devices included) is to
 * bring must not take them at enqueue: rank 0 would send, stage or compare what the memory holds
 * before the read lands (stale bytes). Such a write goes to its rank at once, but its data only
 * when its node is ready in the DAG: its wait list and queue order complete, so the read it waits
 * for has landed. Its rank's engine waits for the data as for any write. */
struct host_fill {
    uint64_t id;
    uintptr_t lo, hi;
};
static struct host_fill *fills;
static size_t nfills, cap_fills;
static struct dist_event *lates; /* writes whose data waits for their node to be ready */

static void fill_add(uint64_t id, uintptr_t lo, uintptr_t hi)
{
    if (nfills == cap_fills) {
        size_t cap = cap_fills ? 2 * cap_fills : 64;
        struct host_fill *v = realloc(fills, cap * sizeof *v);
        if (v == NULL)
            return; /* not known: such a write then takes the bytes at enqueue, as before */
        fills = v;
        cap_fills = cap;
    }
    fills[nfills++] = (struct host_fill){id, lo, hi};
}

static void fill_drop(uint64_t id)
{
    for (size_t i = 0; i < nfills; i++)
        if (fills[i].id == id) {
            fills[i] = fills[--nfills];
            return;
        }
}

static int fill_overlaps(const void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    for (size_t i = 0; i < nfills; i++)
        if (fills[i].lo < hi && lo < fills[i].hi)
            return 1;
    return 0;
}

int dist_sched_host_busy(const void *p, size_t len)
{
    pthread_mutex_lock(&sched_lock);
    int busy = fill_overlaps(p, len);
    pthread_mutex_unlock(&sched_lock);
    return busy;
}

/* The host range a read fills: plain, or the bounding range of a rect read's host region. */
static void note_fill(const struct dist_cmd *c, uint64_t id)
{
    if (dist_cmd_info(c->kind)->op != SLUICE_REMOTE_CMD_READ || c->queue == NULL)
        return;
    if (c->kind == DIST_CMD_READ_BUFFER_RECT && c->nbytes == 13 * sizeof(size_t)) {
        size_t g[13];
        memcpy(g, c->bytes, sizeof g);
        uintptr_t base = (uintptr_t)(c->rect != NULL ? (void *)c->rect->dst : c->recv);
        uintptr_t lo = base + g[5] * g[12] + g[4] * g[11] + g[3];
        uintptr_t hi = base + (g[5] + g[8] - 1) * g[12] + (g[4] + g[7] - 1) * g[11] + g[3] + g[6];
        fill_add(id, lo, hi);
    } else if (c->recv != NULL && c->len > 0) {
        fill_add(id, (uintptr_t)c->recv, (uintptr_t)c->recv + c->len);
    }
}

static void data_trace(int peer, size_t bytes, int dir);
static void pend_mpi(struct dist_event *e, size_t len);

/* The node of a write whose data waited became ready: the data goes now. */
static void send_late(uint64_t id)
{
    for (struct dist_event **p = &lates; *p != NULL; p = &(*p)->late_next) {
        struct dist_event *e = *p;
        if (e->id != id)
            continue;
        *p = e->late_next;
        if (e->late_pack != NULL)
            dist_rect_pack((unsigned char *)e->late_send, e->late_pack, e->late_geom);
        uint64_t t_send = sluice_now_ns(); /* the peer may have it before the call returns */
        if (sluice_remote_data_isend(sluice_comm(), e->rank, e->id, e->late_send, e->late_len, e->reqs) !=
            MPI_SUCCESS)
            dist_fault_peer(e->rank, MPI_ERR_OTHER, "sending a command's data");
        pend_mpi(e, e->late_len);
        data_trace(e->rank, e->late_len, DIST_DATA_SENT);
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)e->rank, e->late_len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
        return;
    }
}

/* --- trace: the DAG's retired nodes ------------------------------------------------------ */

static void emit(const struct sluice_dag_node_info *n, void *ctx)
{
    (void)ctx;
    uint64_t t0 = n->t_start ? n->t_start : n->t_enqueue;
    uint64_t t1 = n->t_end ? n->t_end : t0;
    static uint32_t kind_str[SLUICE_DAG_KIND_COUNT];
    if ((unsigned)n->kind < SLUICE_DAG_KIND_COUNT && kind_str[n->kind] == 0)
        kind_str[n->kind] = sluice_trace_string(sluice_dag_kind_name(n->kind));
    sluice_trace_record(SLUICE_EV_CL_DAG_NODE, n->status < 0 ? SLUICE_EVF_ERROR : 0, t0,
                        t1 >= t0 ? t1 - t0 : 0, n->id, (uint64_t)(int64_t)n->rank, kind_str[n->kind]);
    for (size_t i = 0; i < n->ndeps; i++)
        sluice_trace_record(SLUICE_EV_CL_DAG_EDGE, 0, t0, 0, n->id, n->deps[i].on, n->deps[i].why);
}

static void retire(void)
{
    sluice_dag_retire(dag, sluice_trace_active() ? emit : NULL, NULL);
}

/* --- completion ---------------------------------------------------------------------------- */

static void unref_locked(struct dist_event *e);
static void complete(struct dist_event *e, cl_int status);
static void trace_received(struct dist_event *e);

static void notify(int rank, uint64_t id, cl_int status)
{
    if (rank == 0) {
        sluice_engine_notify(id, status);
        return;
    }
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = SLUICE_REMOTE_NOTIFY;
    req.a[0] = id;
    req.a[1] = (uint64_t)(int64_t)status;
    int rc = MPI_Send(&req, sizeof req, MPI_BYTE, rank, SLUICE_REMOTE_TAG_REQ, sluice_comm());
    sluice_trace_instant(SLUICE_EV_MSG_SEND, (uint64_t)rank, sizeof req, SLUICE_REMOTE_TAG_REQ);
    if (rc != MPI_SUCCESS)
        dist_fault_peer(rank, rc, "sending a completion notice");
}

/* Commands whose DONE arrived while the DAG still had them PENDING (their rank finished them
 * before rank 0 saw their dependencies finish). Their records are already unlinked from the
 * table, so what the DAG needs to complete them later is kept here. */
struct early_done {
    uint64_t id;
    int status;
    uint64_t t_start, t_end;
};
static struct early_done *earlies;
static size_t nearlies, cap_earlies;

static int take_early(uint64_t id, struct early_done *out)
{
    for (size_t i = 0; i < nearlies; i++)
        if (earlies[i].id == id) {
            *out = earlies[i];
            earlies[i] = earlies[--nearlies];
            return 1;
        }
    return 0;
}

static void keep_early(const struct early_done *d)
{
    if (nearlies == cap_earlies) {
        size_t cap = cap_earlies ? 2 * cap_earlies : 64;
        struct early_done *v = realloc(earlies, cap * sizeof *v);
        if (v == NULL)
            return; /* the node stays in the DAG until exit: memory, not correctness */
        earlies = v;
        cap_earlies = cap;
    }
    earlies[nearlies++] = *d;
}

/* The DAG learns that e is done; dependents that became ready are dispatched, and those whose
 * DONE came early are completed now (worklist, no recursion). */
static void dag_done(struct dist_event *e)
{
    struct early_done *work = NULL;
    size_t nwork = 0, capwork = 0;
    struct early_done cur = {e->id, e->status < 0 ? e->status : 0, e->t[2], e->t[3]};
    for (;;) {
        struct sluice_dag_node_info info;
        if (sluice_dag_get(dag, cur.id, &info) == 0) {
            if (info.state == SLUICE_DAG_PENDING) {
                keep_early(&cur);
            } else {
                const uint64_t *ready = NULL;
                size_t n = 0;
                sluice_dag_complete(dag, cur.id, cur.status, cur.t_start, cur.t_end, &ready, &n);
                uint64_t now = sluice_now_ns();
                for (size_t i = 0; i < n; i++) {
                    sluice_dag_dispatch(dag, ready[i], now);
                    if (lates != NULL)
                        send_late(ready[i]);
                    struct early_done d;
                    if (!take_early(ready[i], &d))
                        continue;
                    if (nwork == capwork) {
                        size_t cap = capwork ? 2 * capwork : 16;
                        struct early_done *v = realloc(work, cap * sizeof *v);
                        if (v == NULL) {
                            keep_early(&d);
                            continue;
                        }
                        work = v;
                        capwork = cap;
                    }
                    work[nwork++] = d;
                }
            }
        }
        if (nwork == 0)
            break;
        cur = work[--nwork];
    }
    free(work);
}

static void complete(struct dist_event *e, cl_int status)
{
    if (e->status <= CL_COMPLETE)
        return;
    e->status = status < 0 ? status : CL_COMPLETE;
    unlink_event(e);
    big_done(e);       /* (a CMA transfer's) */
    trace_received(e); /* (a CMA read's) */
    if (e->rect != NULL) {
        struct dist_rect *r = e->rect;
        const unsigned char *from = r->tmp;
        for (size_t z = 0; z < r->region[2] && e->status == CL_COMPLETE; z++)
            for (size_t y = 0; y < r->region[1]; y++, from += r->region[0])
                memcpy(r->dst + (r->origin[2] + z) * r->slice_pitch + (r->origin[1] + y) * r->row_pitch +
                           r->origin[0],
                       from, r->region[0]);
        free(r->tmp);
        free(r);
        e->rect = NULL;
    }
    if (e->type == CL_COMMAND_READ_BUFFER && e->rank > 0) /* before anyone can see it done */
        dist_dhdcr_read_done(e->id, e->status == CL_COMPLETE);
    if (nfills > 0)
        fill_drop(e->id);
    for (int r = 0; r < DIST_MAX_RANKS; r++)
        if (e->subs & (1ull << r))
            notify(r, e->id, e->status);
    dag_done(e);
    for (struct dist_event_cb *cb = e->cbs; cb != NULL; cb = cb->next) {
        struct pending_cb *p = malloc(sizeof *p);
        if (p == NULL)
            continue;
        *p = (struct pending_cb){cb, e, e->status < 0 ? e->status : cb->type, to_call};
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        to_call = p;
    }
    e->cbs = NULL;
    if (e->queue != NULL)
        e->queue->inflight--;
    if (!e->user)
        inflight--;
    free(e->free_after);
    e->free_after = NULL;
    unref_locked(e); /* the in-flight reference */
    /* Waiters are woken by run_callbacks, after the records that died released what they held
     * (a buffer released by the program is gone when its clFinish returns). */
    wake_waiters = 1;
}

static void run_callbacks(void)
{
    for (;;) {
        pthread_mutex_lock(&sched_lock);
        struct pending_cb *p = to_call;
        to_call = NULL;
        struct dist_event *dead = graveyard;
        graveyard = NULL;
        if (p == NULL && dead == NULL && wake_waiters) {
            wake_waiters = 0;
            __atomic_add_fetch(&wake_gen, 1, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&sched_done);
        }
        pthread_mutex_unlock(&sched_lock);
        if (p == NULL && dead == NULL)
            return;
        while (dead != NULL) {
            struct dist_event *n = dead->mnext;
            if (dead->hold != NULL)
                dist_mem_unref(dead->hold);
            if (dead->queue != NULL)
                dist_queue_unref(dead->queue);
            free(dead->free_after);
            free(dead);
            dead = n;
        }
        struct pending_cb *rev = NULL; /* in registration order */
        while (p != NULL) {
            struct pending_cb *n = p->next;
            p->next = rev;
            rev = p;
            p = n;
        }
        while (rev != NULL) {
            struct pending_cb *n = rev->next;
            rev->cb->fn((cl_event)rev->e, rev->status, rev->cb->user_data);
            free(rev->cb);
            dist_sched_release(rev->e);
            free(rev);
            rev = n;
        }
    }
}

/* Done when its DONE arrived and rank 0's own data messages finished. */
static void maybe_complete(struct dist_event *e)
{
    if (e->done_msg && e->nreqs == 0)
        complete(e, e->result < 0 ? e->result : CL_COMPLETE);
}

static void on_done(int rank, const struct sluice_remote_done *d)
{
    dist_alive_heard(rank);
    struct dist_event *e = find(d->id);
    if (e == NULL)
        return;
    if (d->t[3] != 0) {
        uint64_t t[4];
        for (int i = 0; i < 4; i++)
            t[i] = (uint64_t)((int64_t)d->t[i] - clock_off[rank]);
        /* QUEUED and SUBMIT are rank 0's: when the program enqueued the command and when it left
         * for its rank (the rank's own stamps would omit the dispatch). START and END are the
         * device's, converted; the offsets are exact to a few µs, so the order is kept. */
        t[0] = e->queued_ns != 0 ? e->queued_ns : t[0];
        t[1] = e->submit_ns > t[0] ? e->submit_ns : t[0];
        for (int i = 2; i < 4; i++)
            t[i] = t[i] > t[i - 1] ? t[i] : t[i - 1];
        memcpy(e->t, t, sizeof t);
        e->has_times = 1;
    }
    e->done_msg = 1;
    if (d->status < 0 && e->result >= 0)
        e->result = (cl_int)d->status;
    maybe_complete(e);
}

/* A read's data landed: its MSG_RECV, one per rank (a gather's members each have theirs). */
static void trace_received(struct dist_event *e)
{
    if (e->recv_len > 0)
        sluice_trace_instant(SLUICE_EV_MSG_RECV, (uint64_t)e->rank, e->recv_len,
                             (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
    e->recv_len = 0;
}

static int test_mpi(void)
{
    int progress = 0;
    for (struct dist_event **p = &mpi_pending; *p != NULL;) {
        struct dist_event *e = *p;
        for (int i = 0; i < e->nreqs;) {
            int flag = 0;
            int rc = MPI_Test(&e->reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                dist_fault_peer(e->rank, rc, "moving a command's data");
            if (flag) {
                e->reqs[i] = e->reqs[--e->nreqs];
                progress = 1;
            } else {
                i++;
            }
        }
        if (e->nreqs == 0) {
            trace_received(e); /* the data arrived now, not when the receive was posted */
            big_done(e);
            *p = e->mnext;
            free(e->reqs);
            e->reqs = NULL;
            for (struct dist_event *f = e->gather_next, *n; f != NULL; f = n) {
                n = f->gather_next; /* the other parts of its gather landed with it */
                f->gather_next = NULL;
                trace_received(f);
                f->nreqs = 0;
                maybe_complete(f);
            }
            e->gather_next = NULL;
            maybe_complete(e);
        } else {
            p = &e->mnext;
        }
    }
    return progress;
}

static void *sched_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: the default 50 us would be most of a round trip */
    sluice_helper_thread_enter("sluice-sched");
    MPI_Comm comm = sluice_comm();
    uint64_t last = sluice_now_ns();
    struct sluice_remote_done local[64];
    size_t cap = 64;
    struct sluice_remote_done *buf = malloc(cap * sizeof *buf);
    for (;;) {
        int progress = 0, flag = 0;
        MPI_Status st;
        for (;;) {
            int prc = MPI_Iprobe(MPI_ANY_SOURCE, SLUICE_REMOTE_TAG_DONE, comm, &flag, &st);
            if (prc != MPI_SUCCESS)
                dist_fault_peer(-1, prc, "waiting for completions");
            if (!flag || buf == NULL)
                break;
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            size_t n = (size_t)count / sizeof *buf;
            if (n > cap) {
                struct sluice_remote_done *nb = realloc(buf, n * sizeof *buf);
                if (nb == NULL)
                    break;
                buf = nb;
                cap = n;
            }
            int rc = MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, SLUICE_REMOTE_TAG_DONE, comm,
                              MPI_STATUS_IGNORE);
            sluice_trace_instant(SLUICE_EV_MSG_RECV, (uint64_t)st.MPI_SOURCE, (uint64_t)count,
                                 SLUICE_REMOTE_TAG_DONE);
            if (rc != MPI_SUCCESS)
                dist_fault_peer(st.MPI_SOURCE, rc, "receiving completions");
            pthread_mutex_lock(&sched_lock);
            for (size_t i = 0; i < n; i++)
                on_done(st.MPI_SOURCE, &buf[i]);
            pthread_mutex_unlock(&sched_lock);
            progress = 1;
        }
        int moved = 0;
        size_t n = sluice_engine_progress(local, 64, &moved);
        pthread_mutex_lock(&sched_lock);
        if (win != NULL && window_due(sluice_now_ns()))
            window_close_locked(); /* nothing waits longer than that for the window */
        for (size_t i = 0; i < n; i++)
            on_done(0, &local[i]);
        progress |= moved | (n > 0) | test_mpi();
        if (progress)
            retire();
        int idle = inflight == 0 && mpi_pending == NULL;
        int data = nbig > 0 || sluice_engine_data_active();
        int stop = stopping && idle;
        pthread_mutex_unlock(&sched_lock);
        run_callbacks();
        if (stop)
            break;
        uint64_t waited = sluice_now_ns() - last;
        if (progress) {
            last = sluice_now_ns();
        } else if (idle) {
            if (sluice_engine_wait(20000000)) /* nothing in flight: an enqueue wakes us */
                last = sluice_now_ns();
        } else if (waited < SLUICE_REMOTE_HOT_NS || (data && waited < SLUICE_REMOTE_DATA_HOT_NS)) {
            /* A DONE is due soon (a sleep would cost more than the round trip), or data messages
             * of ours are moving: MPI moves them only while we call it. */
            sched_yield();
        } else if (sluice_engine_wait(sluice_remote_idle_ns(waited, data ? 100000 : 250000))) {
            last = sluice_now_ns(); /* a command went out: its DONE is due */
        }
    }
    free(buf);
    sluice_helper_thread_leave();
    return NULL;
}

/* Cristian's method, per rank: the ping of least round trip gives the offset. */
static void measure_clocks(void)
{
    MPI_Comm comm = sluice_comm();
    int n = dist_size();
    for (int r = 1; r < n && r < DIST_MAX_RANKS; r++) {
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < CLOCK_SAMPLES; i++) {
            struct sluice_remote_req req;
            memset(&req, 0, sizeof req);
            req.op = SLUICE_REMOTE_PING;
            req.a[0] = sluice_remote_chunk_setting();
            dist_cma_offer(&req);
            uint64_t t0 = sluice_now_ns();
            unsigned char *rep = NULL;
            size_t len = 0;
            int rc = sluice_remote_send(comm, r, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, NULL, 0);
            if (rc == MPI_SUCCESS)
                rc = sluice_remote_recv(comm, r, SLUICE_REMOTE_TAG_CLOCK, &rep, &len);
            if (rc != MPI_SUCCESS)
                dist_fault_peer(r, rc, "measuring its clock");
            uint64_t t1 = sluice_now_ns(), ts = 0;
            if (len >= sizeof ts)
                memcpy(&ts, rep, sizeof ts);
            dist_cma_answer(r, rep, len);
            free(rep);
            if (t1 - t0 < best) {
                best = t1 - t0;
                clock_off[r] = (int64_t)ts - (int64_t)(t0 + (t1 - t0) / 2);
            }
        }
    }
}

static void start_locked(void)
{
    if (started)
        return;
    started = 1;
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&sched_done, &a);
    pthread_condattr_destroy(&a);
    dag = sluice_dag_create();
    measure_clocks();
    sluice_mpi_on_finalize(dist_sched_drain);
    if (pthread_create(&thread, NULL, sched_main, NULL) != 0)
        started = 2; /* no thread: waits progress themselves (see wait_until) */
}

/* --- submission ------------------------------------------------------------------------------ */

static cl_command_queue_properties queue_props(struct dist_queue *q)
{
    if (!q->props_known) {
        cl_command_queue_properties p = 0;
        dist_info(q->dev->rank, SLUICE_RG_QUEUE, q->rid, 0, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL);
        q->props = p;
        q->props_known = 1;
    }
    return q->props;
}

static struct dist_event *new_record(struct dist_queue *q, struct dist_context *ctx, int rank,
                                     cl_command_type type)
{
    struct dist_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->refs = 1;
    e->queue = q;
    e->ctx = ctx;
    e->rank = rank;
    e->type = type;
    e->status = CL_SUBMITTED;
    if (q != NULL)
        __atomic_add_fetch(&q->refs, 1, __ATOMIC_ACQ_REL);
    return e;
}

struct dist_event *dist_sched_done_event(struct dist_queue *q, cl_command_type type)
{
    struct dist_event *e = new_record(q, q->ctx, q->dev->rank, type);
    if (e != NULL)
        e->status = CL_COMPLETE;
    return e;
}

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
    size_t geom[13];
    struct dist_event **rdeps; /* its wait list's events of other ranks and user events (retained) */
    uint32_t nrdeps;
    int push, push_rank; /* the sending half of a transfer between two ranks */
    uint64_t push_a[5], push_ctx;
    struct sluice_remote_access push_access;
    int push_image; /* the sending half reads an image: push_geom is its geometry */
    size_t push_geom[13];
    uint64_t tiles; /* a candidate whose host range serving ranks' slices tile: their ranks */
    struct dist_dhdcr_slice *slices; /* those slices in host order (owned) */
    size_t nslices;
    struct held *next;
};

/* The sending half of a transfer: no record of its own, no DONE (the receiving half's DONE
 * ends the transfer). */
static cl_int send_push(const struct held *c, uint64_t id)
{
    struct {
        struct sluice_remote_cmd h;
        struct sluice_remote_access a;
        size_t g[13];
    } m = {{id, 0, c->push_ctx, 0, 0, 1,
            SLUICE_CMD_TRANSFER | SLUICE_CMD_SILENT | (c->push_image ? SLUICE_CMD_IMAGE : 0u)},
           c->push_access,
           {0}};
    memcpy(m.g, c->push_geom, sizeof m.g);
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = SLUICE_REMOTE_CMD_READ;
    memcpy(req.a, c->push_a, sizeof c->push_a);
    req.nbytes = c->push_image ? sizeof m : sizeof m.h + sizeof m.a;
    if (c->push_rank == 0) {
        sluice_engine_command(&req, (const unsigned char *)&m);
        return CL_SUCCESS;
    }
    int rc = sluice_remote_send(sluice_comm(), c->push_rank, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, &m,
                                sizeof m);
    if (rc != MPI_SUCCESS)
        dist_fault_peer(c->push_rank, rc, "sending a transfer");
    return CL_SUCCESS;
}

static void data_trace(int peer, size_t bytes, int dir)
{
    if (bytes > 0 && sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CL_DIST_DATA, 0, sluice_now_ns(), 0, (uint64_t)peer, bytes,
                            (uint64_t)dir);
}

/* Rank 0's own data messages of e (pieces of a write it sends, a read it receives, a broadcast it
 * roots): the record completes only when they have. */
static void pend_mpi(struct dist_event *e, size_t len)
{
    e->mnext = mpi_pending;
    mpi_pending = e;
    if (len >= SLUICE_REMOTE_DATA_HOT_MIN && nbig < BIG_MAX)
        big[nbig++] = e;
}

/* Sends a built command to its rank (under sched_lock, in program order). */
static void transmit(struct held *h)
{
    struct dist_event *e = h->e;
    e->submit_ns = sluice_now_ns(); /* CL_PROFILING_COMMAND_SUBMIT */
    cl_int r = CL_SUCCESS;
    MPI_Comm comm = sluice_comm();
    size_t pieces = sluice_remote_pieces(h->len);
    if (h->push)
        r = send_push(h, e->id);
    if (r != CL_SUCCESS) {
    } else if (h->rank == 0) {
        if (h->send != NULL || h->recv != NULL)
            h->req.a[3] = (uint64_t)(uintptr_t)(h->send ? h->send : h->recv);
        sluice_engine_command(&h->req, h->p);
    } else {
        struct sluice_dag_node_info info;
        int late = h->late && h->send != NULL && sluice_dag_get(dag, e->id, &info) == 0 &&
                   info.state == SLUICE_DAG_PENDING;
        /* A write or a plain read the rank copies from or to our memory itself (dist_cma.h): no
         * data messages. */
        int cma = !late && h->pack_from == NULL &&
                  (h->send != NULL ? dist_cma_command(h->rank, &h->req, h->p, h->send)
                                   : e->type == CL_COMMAND_READ_BUFFER &&
                                         dist_cma_command(h->rank, &h->req, h->p, h->recv));
        int data =
            !cma && (h->recv != NULL || h->send != NULL); /* (a broadcast's first write has reqs already) */
        if (data) {
            e->reqs = malloc(pieces * sizeof *e->reqs);
            if (e->reqs == NULL)
                r = CL_OUT_OF_HOST_MEMORY;
        }
        int rc = MPI_SUCCESS;
        if (r == CL_SUCCESS && h->recv != NULL && !cma)
            rc = sluice_remote_data_irecv(comm, h->rank, e->id, h->recv, h->len, e->reqs);
        uint64_t t_req = sluice_now_ns(); /* a CMA copy may start as soon as the request is out */
        if (r == CL_SUCCESS && rc == MPI_SUCCESS)
            rc = sluice_remote_send(comm, h->rank, SLUICE_REMOTE_TAG_REQ, &h->req, sizeof h->req, h->p,
                                    (size_t)h->req.nbytes);
        if (r == CL_SUCCESS && h->send != NULL && !late && h->pack_from != NULL)
            dist_rect_pack((unsigned char *)h->send, h->pack_from, h->geom); /* ready by now */
        uint64_t t_send = sluice_now_ns(); /* a write's data: the peer may have it before Isend returns */
        if (r == CL_SUCCESS && rc == MPI_SUCCESS && h->send != NULL && !late && !cma)
            rc = sluice_remote_data_isend(comm, h->rank, e->id, h->send, h->len, e->reqs);
        if (rc != MPI_SUCCESS)
            dist_fault_peer(h->rank, rc, "sending a command");
        if (r == CL_SUCCESS && cma) {
            data_trace(h->rank, h->len, h->dir); /* it leaves or reaches rank 0 all the same */
            /* The trace shows the copy as the message it replaces, with the data tag. */
            if (h->send != NULL && sluice_trace_active())
                sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_req, 0, (uint64_t)h->rank, h->len,
                                    (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
            else if (h->send == NULL)
                e->recv_len = h->len; /* its MSG_RECV at the DONE: the copy ended before it went */
            /* Its DONE comes as soon as the copy ends: poll for it as for data messages (asleep,
             * the scheduler saw a 16 MiB write's DONE 266 us after it was sent, not 36 us). */
            if (h->len >= SLUICE_REMOTE_DATA_HOT_MIN && nbig < BIG_MAX)
                big[nbig++] = e;
        }
        if (r == CL_SUCCESS && data) {
            e->nreqs = (int)pieces; /* (a late write cannot complete before its data went) */
            if (late) {
                e->late_send = h->send;
                e->late_len = h->len;
                e->late_pack = h->pack_from;
                memcpy(e->late_geom, h->geom, sizeof e->late_geom);
                e->late_next = lates;
                lates = e;
            } else {
                pend_mpi(e, h->len);
                data_trace(h->rank, h->len, h->dir);
                if (h->dir == DIST_DATA_SENT && sluice_trace_active())
                    sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, h->len,
                                        (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
                else if (h->dir != DIST_DATA_SENT)
                    e->recv_len = h->len; /* recorded by test_mpi */
            }
        }
    }
    /* Its other-rank dependencies: NOTIFY now those that completed while it was held (after the
     * command, so that the rank knows it waits for them), the others when they complete. */
    for (uint32_t i = 0; i < h->nrdeps; i++) {
        struct dist_event *w = h->rdeps[i];
        if (w->status <= CL_COMPLETE)
            notify(h->rank, w->id, w->status);
        else
            w->subs |= 1ull << h->rank;
        unref_locked(w);
    }
    free(h->rdeps);
    if (r != CL_SUCCESS) {
        e->done_msg = 1;
        complete(e, r);
    }
    free(h->p);
    free(h->slices);
    free(h);
}

/* --- the window of collective replacement (docs/DAG.md, section 2) -------------------------
 * While a window is open, commands are built and added to the DAG at enqueue but held here, in
 * order; when it closes, the broadcasts among them are found (sluice_dcr_window) and everything
 * is sent. It opens at a host write to a serving rank and closes where the program waits for a
 * command (clWaitForEvents, clFinish, a blocking read or map), at any object call other than an
 * info query (a release must follow the commands that use the object), when it holds WINDOW_MAX
 * commands or
 * WINDOW_STAGED bytes of staged copies, and when the program enqueued nothing for SLUICE_DCR_WINDOW
 * or it opened 10 times that ago (the scheduler thread closes it then): a command the program
 * enqueued and clFlush'ed starts at most that late. */
#define WINDOW_MAX 256
#define WINDOW_STAGED ((size_t)1 << 30)

static struct held **win_tail = &win;
static size_t win_n, win_staged;

/* Not for a rank that copies its data from and to rank 0's memory itself (dist_cma.h): its
 * commands then go at once, unheld. On the GPU machine (K = 2 and 4 PoCL devices, 16 and 256 MiB)
 * K such copies took 0.20-0.43 of one MPI broadcast's time, and holding them in the window
 * without a rewrite still cost 8-24 %. */
int dist_sched_dcr_on(int rank)
{
    return sluice_config.DCR && rank != 0 && dist_size() > 2 && !dist_cma_can(rank);
}

/* Equal bytes get equal content numbers (only writes that may form a broadcast are compared). */
static void content_classes(struct held **hv, const struct sluice_dcr_item *it, size_t n, uint64_t *cls)
{
    for (size_t i = 0; i < n; i++) {
        cls[i] = i + 1;
        if (it[i].kind != SLUICE_DCR_ITEM_WRITE)
            continue;
        for (size_t j = 0; j < i; j++) {
            if (it[j].kind != SLUICE_DCR_ITEM_WRITE || cls[j] != j + 1 || hv[j]->len != hv[i]->len ||
                hv[j]->rank == hv[i]->rank)
                continue;
            /* The same program pointer, neither staged: OpenCL forbids changing it while either write
             * is pending, and no read in the window landed there (sluice_dcr_window checks that). */
            if ((hv[j]->send == hv[i]->send && !hv[j]->staged && !hv[i]->staged) ||
                memcmp(hv[j]->send, hv[i]->send, hv[i]->len) == 0) {
                cls[i] = j + 1;
                break;
            }
        }
    }
}

/* The trace string of a rewrite's name, made once. */
static uint32_t dcr_name(uint32_t *slot, const char *name)
{
    if (*slot == 0)
        *slot = sluice_trace_string(name);
    return *slot;
}

/* The members of collective `g` of a window: their ranks (rank 0's bit set), the first of them,
 * how many and their bytes. */
struct coll {
    uint64_t mask;
    struct held *lead;
    int members;
    size_t total;
};

static struct coll coll_members(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = {1, NULL, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (group[i] == g) {
            c.mask |= 1ull << hv[i]->rank;
            c.lead = c.lead ? c.lead : hv[i];
            c.members++;
            c.total += hv[i]->len;
        }
    return c;
}

/* A scatter's or gather's setup: its communicator (group mask `mask`), one request on the lead's
 * record and the counts, then displacements, by group rank (each member's host pointer against
 * the lead's), which MPI reads until the collective completes. NULL: sent one by one, as without
 * the replacement (over INT_MAX bytes too: counts and displacements are ints). */
static int *coll_setup(struct held **hv, size_t n, const uint32_t *group, uint32_t g, const struct coll *c,
                       uint64_t mask, MPI_Comm *comm)
{
    if (c->lead == NULL || c->total > INT_MAX || c->lead->e->free_after != NULL)
        return NULL;
    int size = __builtin_popcountll(c->mask);
    int *cd = calloc(2 * (size_t)size, sizeof *cd);
    *comm = cd != NULL ? sluice_remote_group_comm(mask) : MPI_COMM_NULL;
    struct dist_event *e = c->lead->e;
    if (*comm == MPI_COMM_NULL || (e->reqs = malloc(sizeof *e->reqs)) == NULL) {
        free(cd);
        return NULL;
    }
    const char *base = c->lead->send ? (const char *)c->lead->send : (const char *)c->lead->recv;
    for (size_t i = 0; i < n; i++)
        if (group[i] == g) {
            const char *at = hv[i]->send ? (const char *)hv[i]->send : (const char *)hv[i]->recv;
            int cr = __builtin_popcountll(c->mask & ((1ull << hv[i]->rank) - 1));
            cd[cr] = (int)hv[i]->len;
            cd[size + cr] = (int)(at - base);
        }
    e->nreqs = 1;
    e->free_after = cd;
    return cd;
}

/* A member's command says which collective brings (or takes) its data: `flag`, group `mask`. */
static void coll_flag(struct held *h, unsigned flag, uint64_t mask)
{
    struct sluice_remote_cmd hd;
    memcpy(&hd, h->p, sizeof hd);
    hd.flags |= flag;
    memcpy(h->p, &hd, sizeof hd);
    h->req.a[5] = mask;
}

/* Rank 0's part of broadcast `g` (its members flagged, their data no longer sent one by one). */
static void start_bcast(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm = sluice_remote_group_comm(c.mask);
    if (comm == MPI_COMM_NULL || c.lead == NULL)
        return; /* sent one by one, as without the replacement */
    struct held *lead = c.lead;
    struct dist_event *e = lead->e;
    size_t pieces = sluice_remote_pieces(lead->len);
    e->reqs = malloc(pieces * sizeof *e->reqs);
    if (e->reqs == NULL)
        return;
    const void *data = lead->send;
    uint64_t t_send = sluice_now_ns(); /* a member may have it before the broadcast call returns */
    if (sluice_remote_data_ibcast(comm, 0, (void *)data, lead->len, e->reqs) != MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a broadcast");
    e->nreqs = (int)pieces;
    pend_mpi(e, lead->len);
    data_trace(c.members, lead->len, DIST_DATA_BCAST);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_BCAST, c.mask);
        h->req.a[4] = 0;
        h->send = NULL; /* the broadcast brings it */
        if (sluice_trace_active()) {
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "bcast"), h->e->id,
                                0);
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, lead->len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(h->e->id));
        }
    }
}

/* Rank 0's part of scatter `g`: each member's slice of one host range goes once, straight from
 * the program's memory (no member is staged), by one MPI_Iscatterv over rank 0 and the members
 * (rank 0 keeps its own part: MPI_IN_PLACE). */
static void start_scatter(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm;
    int *cd = coll_setup(hv, n, group, g, &c, c.mask, &comm);
    if (cd == NULL)
        return;
    int size = __builtin_popcountll(c.mask);
    struct dist_event *e = c.lead->e;
    uint64_t t_send = sluice_now_ns(); /* a member may have its slice before MPI_Iscatterv returns */
    if (MPI_Iscatterv(c.lead->send, cd, cd + size, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0, comm, e->reqs) !=
        MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a scatter");
    pend_mpi(e, c.total);
    data_trace(c.members, c.total, 3);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_SCATTER, c.mask);
        h->req.a[4] = 0;
        if (sluice_trace_active()) { /* one message per member: its slice */
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "scatter"), h->e->id,
                                0);
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, h->len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(h->e->id));
        }
        h->send = NULL; /* the scatter brings it */
    }
}

/* Rank 0's part of gather `g`: the members' reads of adjacent slices of one host range land by one
 * MPI_Igatherv rooted here over the gather communicator of rank 0 and the members (rank 0 gives
 * nothing: MPI_IN_PLACE), straight into the program's memory. The other reads complete when it
 * does (their DONE alone does not say their bytes landed). */
static void start_gather(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm;
    int *cd = coll_setup(hv, n, group, g, &c, c.mask | SLUICE_REMOTE_GROUP_GATHER, &comm);
    if (cd == NULL)
        return;
    int size = __builtin_popcountll(c.mask);
    struct dist_event *e = c.lead->e;
    if (MPI_Igatherv(MPI_IN_PLACE, 0, MPI_BYTE, c.lead->recv, cd, cd + size, MPI_BYTE, 0, comm, e->reqs) !=
        MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a gather");
    pend_mpi(e, c.total);
    data_trace(c.members, c.total, 4);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_GATHER, c.mask | SLUICE_REMOTE_GROUP_GATHER);
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "gather"), h->e->id,
                                (uint64_t)h->rank);
        h->e->recv_len = h->len; /* its MSG_RECV: test_mpi, when the gather completed */
        h->recv = NULL;          /* the gather brings it */
        if (h != c.lead) {
            h->e->nreqs = 1; /* until the gather completes */
            h->e->gather_next = e->gather_next;
            e->gather_next = h->e;
        }
    }
}

/* Which serving ranks' slices tile the host range of candidate h, from copy removal's table of
 * completed reads (taken at enqueue: a later command writing a slice's buffer forgets it). */
static void held_tiles(struct held *h)
{
    struct dist_dhdcr_slice s[64];
    struct sluice_dcr_slice d[64];
    size_t order[64];
    size_t n = dist_dhdcr_slices(h->send, h->len, s, 64);
    for (size_t i = 0; i < n; i++) /* (a slice of another context's buffer: not readable for this write) */
        d[i] = (struct sluice_dcr_slice){(uint64_t)(uintptr_t)s[i].host, s[i].size, s[i].rank,
                                         s[i].unchanged && s[i].ctx == h->e->ctx};
    uint64_t tiles = sluice_dcr_tiling(d, n, (uint64_t)(uintptr_t)h->send, h->len, order);
    if (tiles == 0 || h->len > INT_MAX || (h->slices = malloc(n * sizeof *h->slices)) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        h->slices[i] = s[order[i]];
    h->nslices = n;
    h->tiles = tiles;
}

/* Allgather `g`: every member's write of one host range that serving ranks' slices tile (the
 * members include every source) takes the range by one MPI_Iallgatherv in place among the
 * members, each giving its slice from the buffer its device computed it in; rank 0 sends nothing
 * (the program's reads filled its host copy already). Each member's command carries its slice's
 * buffer and the counts and displacements (struct sluice_remote_allgather). */
static void start_allgather(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    uint64_t mask = c.mask & ~1ull;
    if (c.lead == NULL || c.lead->slices == NULL || sluice_remote_group_announce(mask) != 0)
        return; /* a broadcast from rank 0 would be as good: sent one by one, as without it */
    const struct held *lead = c.lead;
    int size = __builtin_popcountll(mask);
    size_t ext = sizeof(struct sluice_remote_allgather) + 2 * (size_t)size * sizeof(int32_t);
    int32_t cd[2 * 64] = {0};
    for (size_t k = 0; k < lead->nslices; k++) {
        const struct dist_dhdcr_slice *s = &lead->slices[k];
        int cr = __builtin_popcountll(mask & ((1ull << s->rank) - 1));
        cd[cr] = (int32_t)s->size;
        cd[size + cr] = (int32_t)(s->host - (const unsigned char *)lead->send);
    }
    data_trace(c.members, lead->len, DIST_DATA_ALLGATHER); /* before its CL_DCR records (sluice-trace dag) */
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        unsigned char *p = realloc(h->p, (size_t)h->req.nbytes + ext);
        if (p == NULL) {
            dist_fault_peer(-1, MPI_ERR_NO_MEM, "starting an allgather");
            return;
        }
        struct sluice_remote_allgather a = {0, 0, (uint32_t)size, 0};
        for (size_t k = 0; k < lead->nslices; k++)
            if (lead->slices[k].rank == h->rank)
                a = (struct sluice_remote_allgather){lead->slices[k].rid, lead->slices[k].off, (uint32_t)size,
                                                     0};
        memcpy(p + h->req.nbytes, &a, sizeof a);
        memcpy(p + h->req.nbytes + sizeof a, cd, 2 * (size_t)size * sizeof *cd);
        h->p = p;
        h->req.nbytes += ext;
        coll_flag(h, SLUICE_CMD_ALLGATHER, mask);
        h->req.a[4] = 0;
        h->send = NULL; /* the members bring it */
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "allgather"),
                                h->e->id, lead->tiles);
    }
}

/* Every member of group g copies its data from or to rank 0's memory itself (dist_cma.h; their
 * writes joined a window another rank's opened): a broadcast, scatter or gather is not worth it
 * (dist_sched_dcr_on). An allgather among serving ranks moves no data through rank 0: kept. */
static int members_copy_by_cma(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    for (size_t i = 0; i < n; i++)
        if (group[i] == g && !dist_cma_can(hv[i]->rank))
            return 0;
    return 1;
}

static void window_close_locked(void)
{
    if (win == NULL)
        return;
    size_t n = win_n;
    struct held **hv = malloc((n ? n : 1) * sizeof *hv);
    struct sluice_dcr_item *it = calloc(n ? n : 1, sizeof *it);
    uint32_t *group = calloc(n ? n : 1, sizeof *group);
    uint64_t *cls = calloc(n ? n : 1, sizeof *cls);
    sluice_dcr_kind *kinds = calloc(n ? n : 1, sizeof *kinds);
    size_t k = 0;
    for (struct held *h = win; h != NULL && k < n; h = h->next)
        hv[k++] = h;
    if (hv != NULL && it != NULL && group != NULL && cls != NULL && kinds != NULL) {
        for (size_t i = 0; i < n; i++) {
            struct held *h = hv[i];
            struct sluice_dcr_item x = {SLUICE_DCR_ITEM_OTHER, h->rank, -1, 0, 0, 0, 0, 0};
            if (h->bcast_candidate) {
                x.kind = SLUICE_DCR_ITEM_WRITE;
                x.host_addr = (uint64_t)(uintptr_t)h->send;
                x.host_size = h->len;
                x.staged = h->staged;
                x.tiles = h->tiles;
            } else if (h->recv != NULL && h->rank != 0) {
                x.kind = SLUICE_DCR_ITEM_READ;
                x.host_addr = (uint64_t)(uintptr_t)h->recv;
                x.host_size = h->len;
                x.staged = h->e->type != CL_COMMAND_READ_BUFFER; /* a rect read or a map: no gather */
            } else if (h->push) {
                x.kind = SLUICE_DCR_ITEM_PEER;
                x.peer = h->push_rank;
            } else if (h->req.op == SLUICE_REMOTE_CMD_WRITE && h->req.a[4] != 0) {
                x.kind = SLUICE_DCR_ITEM_PEER;
                x.peer = (int)h->req.a[4];
            }
            it[i] = x;
        }
        content_classes(hv, it, n, cls);
        for (size_t i = 0; i < n; i++)
            it[i].content = cls[i];
        uint32_t ng = sluice_dcr_window(it, n, group, kinds);
        for (uint32_t g = 1; g <= ng; g++) {
            if (kinds[g - 1] != SLUICE_DCR_ALLGATHER && members_copy_by_cma(hv, n, group, g))
                continue; /* each member copies its data itself, all at once */
            if (kinds[g - 1] == SLUICE_DCR_SCATTER)
                start_scatter(hv, n, group, g);
            else if (kinds[g - 1] == SLUICE_DCR_GATHER)
                start_gather(hv, n, group, g);
            else if (kinds[g - 1] == SLUICE_DCR_ALLGATHER)
                start_allgather(hv, n, group, g);
            else
                start_bcast(hv, n, group, g);
        }
    }
    struct held *h = win;
    win = NULL;
    win_tail = &win;
    win_n = win_staged = 0;
    while (h != NULL) {
        struct held *next = h->next;
        transmit(h);
        h = next;
    }
    free(hv);
    free(it);
    free(group);
    free(cls);
    free(kinds);
}

void dist_sched_flush(void)
{
    pthread_mutex_lock(&sched_lock);
    window_close_locked();
    pthread_mutex_unlock(&sched_lock);
}

/* A command's wait list on the wire, after its header at p: the ids of commands of its own rank
 * (their real events there), then those of other ranks and user events, retained in rdeps and
 * NOTIFYd once the command has gone (transmit). ids gets every id, for the DAG. */
struct waits {
    uint32_t nlocal, nremote;
    size_t nid;
    int failed; /* a dependency failed already */
};

static unsigned char *encode_waits(const struct dist_cmd *c, unsigned char *p, uint64_t *ids,
                                   struct dist_event **rdeps, struct waits *w)
{
    *w = (struct waits){0, 0, 0, 0};
    for (cl_uint i = 0; i < c->nwait; i++) {
        struct dist_event *d = (struct dist_event *)c->wait[i];
        if (d->id != 0)
            ids[w->nid++] = d->id;
        if (d->status <= CL_COMPLETE) {
            w->failed |= d->status < 0;
            continue;
        }
        if (d->rank == c->rank && !d->user)
            w->nlocal++;
    }
    unsigned char *at = p + sizeof(struct sluice_remote_cmd);
    unsigned char *rem = at + w->nlocal * 8;
    for (cl_uint i = 0; i < c->nwait; i++) {
        struct dist_event *d = (struct dist_event *)c->wait[i];
        if (d->status <= CL_COMPLETE)
            continue;
        if (d->rank == c->rank && !d->user) {
            memcpy(at, &d->id, 8);
            at += 8;
        } else {
            memcpy(rem, &d->id, 8);
            rem += 8;
            __atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
            rdeps[w->nremote++] = d;
        }
    }
    return rem;
}

/* The whole payload: header, wait list (encode_waits), accesses, the operation's bytes. Returns
 * its length. */
static size_t encode_cmd(const struct dist_cmd *c, const struct dist_event *e, unsigned flags,
                         unsigned char *p, unsigned char *at, const struct waits *w)
{
    struct sluice_remote_cmd h = {e->id,
                                  c->queue ? c->queue->rid : 0,
                                  c->ctx->rid[c->rank],
                                  w->nlocal,
                                  w->nremote,
                                  (uint32_t)c->naccess,
                                  flags};
    memcpy(p, &h, sizeof h);
    if (c->naccess)
        memcpy(at, c->raccess, c->naccess * sizeof *c->raccess);
    at += c->naccess * sizeof *c->raccess;
    if (c->nbytes)
        memcpy(at, c->bytes, c->nbytes);
    at += c->nbytes;
    return (size_t)(at - p);
}

/* Adds the command's node to the DAG (dispatched at once when ready). Returns 1 when it is ready. */
static int dag_add_cmd(const struct dist_cmd *c, const struct dist_event *e, const struct dist_cmd_info *kind,
                       int ooo, const uint64_t *ids, size_t nid)
{
    struct sluice_dag_cmd dc = {.id = e->id,
                                .queue = (uint64_t)(uintptr_t)c->queue,
                                .out_of_order = ooo,
                                .rank = c->rank,
                                .kind = kind->dag,
                                .wait = ids,
                                .nwait = nid,
                                .access = c->access,
                                .naccess = c->naccess,
                                .host_addr = (uint64_t)(uintptr_t)(c->send ? c->send : c->recv),
                                .host_size = c->len};
    struct sluice_dag_node_info info;
    uint64_t now = sluice_now_ns();
    if (sluice_dag_add(dag, &dc, now, &info) != 0 || info.state != SLUICE_DAG_READY)
        return 0;
    sluice_dag_dispatch(dag, e->id, now);
    return 1;
}

/* A plain write whose bytes a pending read still brings, or that waits for a user event (the
 * program may fill the memory before setting it): its data waits for its dependencies. */
static int write_is_late(const struct dist_cmd *c, const struct dist_cmd_info *kind, int ready)
{
    if (ready)
        return 0;
    if (c->pack_from != NULL)
        return 1; /* dist_exec.c saw a pending read bring its host bytes */
    if (kind->op != SLUICE_REMOTE_CMD_WRITE || c->rank == 0 || c->send == NULL || c->len == 0 ||
        c->nbytes != 0 || (c->flags & SLUICE_CMD_STAGED))
        return 0;
    int late = fill_overlaps(c->send, c->len);
    for (cl_uint i = 0; i < c->nwait && !late; i++) {
        struct dist_event *w = (struct dist_event *)c->wait[i];
        late = w->user && w->status > CL_COMPLETE;
    }
    return late;
}

/* The built command, ready to be sent now or when the window closes. */
static void held_fill(struct held *h, const struct dist_cmd *c, struct dist_event *e,
                      const struct dist_cmd_info *kind, unsigned char *p, size_t nbytes, int late)
{
    h->e = e;
    h->req.op = kind->op;
    h->dir = kind->dir;
    memcpy(h->req.a, c->a, sizeof c->a);
    h->req.nbytes = nbytes;
    h->p = p;
    h->rank = c->rank;
    h->send = c->send;
    h->recv = c->recv;
    h->len = c->len;
    h->staged = (c->flags & SLUICE_CMD_STAGED) != 0;
    h->late = late;
    h->pack_from = c->pack_from;
    if (c->pack_from != NULL)
        memcpy(h->geom, c->bytes, sizeof h->geom);
    h->bcast_candidate = c->rank != 0 && kind->op == SLUICE_REMOTE_CMD_WRITE && c->queue != NULL &&
                         c->send != NULL && c->nbytes == 0 && c->len > 0 && !late;
    h->push = c->push;
    h->push_rank = c->push_rank;
    memcpy(h->push_a, c->push_a, sizeof c->push_a);
    h->push_ctx = c->push ? c->ctx->rid[c->push_rank] : 0;
    h->push_access = c->push_access;
    if ((h->push_image = c->push_geom != NULL))
        memcpy(h->push_geom, c->push_geom, sizeof h->push_geom);
    if (h->bcast_candidate && !h->staged && dist_sched_dcr_on(h->rank) && dist_dhdcr_on())
        held_tiles(h);
}

/* Into the window (opening it at a host write to a serving rank), or to its rank now. */
static void hold_or_transmit(struct held *h)
{
    int opens = h->bcast_candidate && dist_sched_dcr_on(h->rank);
    if (win == NULL && opens)
        win_t0 = sluice_now_ns();
    win_last = sluice_now_ns();
    if (win == NULL && !opens) {
        transmit(h);
        return;
    }
    *win_tail = h;
    win_tail = &h->next;
    win_n++;
    if (h->staged)
        win_staged += h->len;
    if (win_n >= WINDOW_MAX || win_staged >= WINDOW_STAGED || window_due(sluice_now_ns()))
        window_close_locked();
}

/* A command that never goes to its rank: complete it with `status` now. */
static void fail_unsent(struct dist_event *e, unsigned char *p, struct dist_event **rdeps, uint32_t nremote,
                        cl_int status)
{
    free(p);
    for (uint32_t i = 0; i < nremote; i++)
        unref_locked(rdeps[i]);
    free(rdeps);
    e->done_msg = 1;
    complete(e, status);
}

cl_int dist_sched_submit(const struct dist_cmd *c, struct dist_event **out)
{
    uint64_t queued = sluice_now_ns(); /* CL_PROFILING_COMMAND_QUEUED */
    if (out != NULL)
        *out = NULL;
    MPI_Comm comm = c->rank != 0 ? sluice_comm() : MPI_COMM_NULL;
    if (c->rank != 0 && comm == MPI_COMM_NULL)
        return CL_DEVICE_NOT_AVAILABLE;
    unsigned flags = c->flags & ~(unsigned)SLUICE_CMD_STAGED;
    if (c->queue != NULL && (queue_props(c->queue) & CL_QUEUE_PROFILING_ENABLE))
        flags |= SLUICE_CMD_PROFILE;
    int ooo = c->queue != NULL && (queue_props(c->queue) & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    for (cl_uint i = 0; i < c->nwait; i++)
        if (c->wait == NULL || c->wait[i] == NULL)
            return CL_INVALID_EVENT_WAIT_LIST;
    const struct dist_cmd_info *kind = dist_cmd_info(c->kind);
    struct dist_event *e = new_record(c->queue, c->ctx, c->rank, kind->type);
    size_t cap = sizeof(struct sluice_remote_cmd) + c->nwait * 8 +
                 c->naccess * sizeof(struct sluice_remote_access) + c->nbytes;
    unsigned char *p = malloc(cap);
    uint64_t *ids = malloc((c->nwait + 1) * sizeof *ids);
    struct dist_event **rdeps = malloc((c->nwait + 1) * sizeof *rdeps);
    if (e == NULL || p == NULL || ids == NULL || rdeps == NULL) {
        free(e);
        free(p);
        free(ids);
        free(rdeps);
        return CL_OUT_OF_HOST_MEMORY;
    }
    e->refs = 0; /* one in flight and the caller's, below */
    e->queued_ns = queued;
    e->hold = c->hold;
    e->free_after = c->free_after;
    e->rect = c->rect;
    pthread_mutex_lock(&sched_lock);
    start_locked();
    e->id = ++last_id;
    struct waits w;
    unsigned char *at = encode_waits(c, p, ids, rdeps, &w);
    size_t nbytes = encode_cmd(c, e, flags, p, at, &w);
    int ready = dag_add_cmd(c, e, kind, ooo, ids, w.nid);
    free(ids);
    insert(e);
    int late = write_is_late(c, kind, ready);
    note_fill(c, e->id);
    e->refs++; /* in flight */
    inflight++;
    if (c->queue != NULL)
        c->queue->inflight++;
    if (out != NULL) {
        e->refs++;
        *out = e;
    }
    cl_int r = CL_SUCCESS;
    struct held *h = w.failed ? NULL : calloc(1, sizeof *h);
    if (w.failed) { /* the command never runs */
        fail_unsent(e, p, rdeps, w.nremote, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    } else if (h == NULL) {
        fail_unsent(e, p, rdeps, w.nremote, r = CL_OUT_OF_HOST_MEMORY);
    } else {
        held_fill(h, c, e, kind, p, nbytes, late);
        h->rdeps = rdeps;
        h->nrdeps = w.nremote;
        hold_or_transmit(h);
    }
    pthread_mutex_unlock(&sched_lock);
    sluice_engine_wake();
    if (started == 2)
        return CL_OUT_OF_RESOURCES;
    run_callbacks();
    return r;
}

/* --- waiting ------------------------------------------------------------------------------- */

/* A wait of the program's thread: until *hot (first WAIT_HOT_NS) it polls wake_gen, yielding the
 * core, and only then sleeps on sched_done. A remote command's DONE is usually due within tens of
 * microseconds, and waking a thread asleep on a condition variable (a futex wake, then the
 * kernel putting it back on a core) costs several microseconds of a 30 us round trip. A yield
 * that took over YIELD_BUSY_NS means that another thread wanted this core (an oversubscribed
 * node, measured: 2 cores for 2 ranks and other jobs, round trips of 1-2 ms instead of 0.05-0.8
 * when the waiter kept polling): the wait sleeps from then on. A wait polls only while the last
 * wait ended within WAIT_HOT_NS (wait_hot): on a loaded node where commands take a millisecond
 * the poll would only burn 100 us of a core per blocking call (integration.dist_api_objects on 2
 * cores at load 18: 140-146 s against 94-126 s without the poll). Called and returns with
 * sched_lock held; 0 when the job is ending. */
#define WAIT_HOT_NS 100000u
#define YIELD_BUSY_NS 5000u
static int wait_paid = 1; /* the last wait ended within WAIT_HOT_NS */

static uint64_t wait_hot(uint64_t t0)
{
    return __atomic_load_n(&wait_paid, __ATOMIC_RELAXED) ? t0 + WAIT_HOT_NS : 0;
}

static void wait_ended(uint64_t t0)
{
    __atomic_store_n(&wait_paid, sluice_now_ns() - t0 < WAIT_HOT_NS, __ATOMIC_RELAXED);
}

static int wait_locked(uint64_t *hot)
{
    uint64_t now = sluice_now_ns();
    if (now < *hot) {
        unsigned gen = __atomic_load_n(&wake_gen, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&sched_lock);
        while (__atomic_load_n(&wake_gen, __ATOMIC_ACQUIRE) == gen && now < *hot) {
            sched_yield();
            uint64_t then = now;
            now = sluice_now_ns();
            if (now - then > YIELD_BUSY_NS)
                *hot = 0;
        }
        pthread_mutex_lock(&sched_lock);
        return !dist_fault_ending();
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += 100000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
    pthread_cond_timedwait(&sched_done, &sched_lock, &ts);
    sluice_time_leave(prev);
    return !dist_fault_ending(); /* the job is ending: stop waiting */
}

/* Whether the rank waited on is still there (dist_alive.c); without the lock, since ending the
 * job runs exit work that takes it. */
static void alive_check_unlocked(int rank, uint64_t since, const char *what)
{
    pthread_mutex_unlock(&sched_lock);
    dist_alive_check(rank, since, what);
    pthread_mutex_lock(&sched_lock);
}

cl_int dist_sched_wait_event(struct dist_event *e)
{
    pthread_mutex_lock(&sched_lock);
    window_close_locked();
    uint64_t t0 = sluice_now_ns(), hot = wait_hot(t0);
    char what[96];
    snprintf(what, sizeof what, "the end of command %llu (OpenCL command type 0x%x)",
             (unsigned long long)e->id, (unsigned)e->type);
    while (e->status > CL_COMPLETE && started && wait_locked(&hot))
        alive_check_unlocked(e->rank, t0, what);
    wait_ended(t0);
    cl_int st = e->status > CL_COMPLETE ? CL_COMPLETE : e->status;
    pthread_mutex_unlock(&sched_lock);
    return st;
}

cl_int dist_sched_finish(struct dist_queue *q)
{
    pthread_mutex_lock(&sched_lock);
    window_close_locked();
    uint64_t t0 = sluice_now_ns(), hot = wait_hot(t0);
    while (q->inflight > 0 && started && wait_locked(&hot))
        alive_check_unlocked(q->dev->rank, t0, "clFinish of a queue of its device");
    wait_ended(t0);
    pthread_mutex_unlock(&sched_lock);
    return CL_SUCCESS;
}

/* --- records ------------------------------------------------------------------------------- */

static void unref_locked(struct dist_event *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* Freed by run_callbacks, outside the lock: releasing a queue or buffer talks to other ranks. */
    e->mnext = graveyard;
    graveyard = e;
}

void dist_sched_release(struct dist_event *e)
{
    pthread_mutex_lock(&sched_lock);
    unref_locked(e);
    int dead = graveyard != NULL;
    pthread_mutex_unlock(&sched_lock);
    if (dead) /* now: the queue it held may be the context's last reference */
        run_callbacks();
}

/* --- events the program sees (dist_event.c calls these) ------------------------------------ */

struct dist_event *dist_sched_user_event(struct dist_context *ctx);
struct dist_event *dist_sched_user_event(struct dist_context *ctx)
{
    struct dist_event *e = new_record(NULL, ctx, -1, CL_COMMAND_USER);
    if (e == NULL)
        return NULL;
    e->user = 1;
    pthread_mutex_lock(&sched_lock);
    start_locked();
    e->id = ++last_id;
    struct sluice_dag_cmd dc = {.id = e->id, .rank = 0, .kind = SLUICE_DAG_USER_EVENT};
    sluice_dag_add(dag, &dc, sluice_now_ns(), NULL);
    sluice_dag_dispatch(dag, e->id, sluice_now_ns());
    insert(e);
    e->refs++; /* until set */
    pthread_mutex_unlock(&sched_lock);
    return e;
}

cl_int dist_sched_set_user(struct dist_event *e, cl_int status);
cl_int dist_sched_set_user(struct dist_event *e, cl_int status)
{
    if (status > CL_COMPLETE)
        return CL_INVALID_VALUE;
    pthread_mutex_lock(&sched_lock);
    cl_int r = CL_SUCCESS;
    if (!e->user)
        r = CL_INVALID_EVENT;
    else if (e->status <= CL_COMPLETE)
        r = CL_INVALID_OPERATION;
    else {
        e->t[0] = e->t[1] = e->t[2] = e->t[3] = sluice_now_ns();
        e->done_msg = 1;
        complete(e, status);
    }
    pthread_mutex_unlock(&sched_lock);
    run_callbacks();
    return r;
}

int dist_sched_peek_done(struct dist_event *e)
{
    pthread_mutex_lock(&sched_lock);
    int d = e->status == CL_COMPLETE ? 1 : e->status < 0 ? -1 : 0;
    pthread_mutex_unlock(&sched_lock);
    return d;
}

void dist_dcr_trace_p2p(uint64_t id, int from)
{
    static uint32_t str;
    if (!sluice_trace_active())
        return;
    if (str == 0)
        str = sluice_trace_string("p2p");
    sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, str, id, (uint64_t)from);
}

cl_int dist_sched_status(struct dist_event *e);
cl_int dist_sched_status(struct dist_event *e)
{
    pthread_mutex_lock(&sched_lock);
    cl_int st = e->status;
    pthread_mutex_unlock(&sched_lock);
    return st;
}

/* Copies the four times (rank 0's clock); CL_PROFILING_INFO_NOT_AVAILABLE until done or when
 * the queue does not profile. */
cl_int dist_sched_times(struct dist_event *e, uint64_t t[4]);
cl_int dist_sched_times(struct dist_event *e, uint64_t t[4])
{
    pthread_mutex_lock(&sched_lock);
    cl_int r = (e->status == CL_COMPLETE && e->has_times) ? CL_SUCCESS : CL_PROFILING_INFO_NOT_AVAILABLE;
    if (r == CL_SUCCESS)
        memcpy(t, e->t, sizeof e->t);
    pthread_mutex_unlock(&sched_lock);
    return r;
}

cl_int dist_sched_callback(struct dist_event *e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                           void *user_data);
cl_int dist_sched_callback(struct dist_event *e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                           void *user_data)
{
    struct dist_event_cb *cb = malloc(sizeof *cb);
    if (cb == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    *cb = (struct dist_event_cb){type, fn, user_data, NULL};
    pthread_mutex_lock(&sched_lock);
    /* Reached already (commands are submitted when enqueued; RUNNING is reported with COMPLETE):
     * called now, from this thread. */
    if (e->status <= type) {
        struct pending_cb *p = malloc(sizeof *p);
        if (p == NULL) {
            pthread_mutex_unlock(&sched_lock);
            free(cb);
            return CL_OUT_OF_HOST_MEMORY;
        }
        *p = (struct pending_cb){cb, e, e->status < 0 ? e->status : type, to_call};
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        to_call = p;
    } else {
        /* at the end of the list: called in registration order */
        struct dist_event_cb **pp = &e->cbs;
        while (*pp != NULL)
            pp = &(*pp)->next;
        *pp = cb;
    }
    pthread_mutex_unlock(&sched_lock);
    run_callbacks();
    return CL_SUCCESS;
}

/* --- end ----------------------------------------------------------------------------------- */

void dist_sched_drain(void)
{
    pthread_mutex_lock(&sched_lock);
    window_close_locked();
    if (started != 1 || stopping) {
        pthread_mutex_unlock(&sched_lock);
        return;
    }
    /* User events nobody set: their waiters can never run. Fail them so that everything ends. */
    for (int i = 0; i < BUCKETS; i++)
        for (struct dist_event *e = table[i], *n; e != NULL; e = n) {
            n = e->hnext;
            if (e->user && e->status > CL_COMPLETE) {
                e->done_msg = 1;
                complete(e, CL_DEVICE_NOT_AVAILABLE);
            }
        }
    stopping = 1;
    pthread_mutex_unlock(&sched_lock);
    sluice_engine_wake();
    pthread_join(thread, NULL);
    pthread_mutex_lock(&sched_lock);
    retire();
    pthread_mutex_unlock(&sched_lock);
    run_callbacks();
}
