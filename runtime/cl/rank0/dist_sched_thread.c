/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler thread and the completion of commands: DONE records from every rank (and
 * rank 0's own engine), rank 0's own data messages progressed, a record completed (NOTIFY to the
 * ranks waiting for it, the DAG told, its dependents dispatched, callbacks queued, waiters woken). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "threads/helper_threads.h"
#include "trace/trace.h"

struct dist_event *dist_sched_mpi_pending; /* records with data messages of rank 0 in flight */
struct dist_event *dist_sched_big[BIG_MAX];
int dist_sched_nbig;

void dist_sched_big_done(struct dist_event *e)
{
    for (int i = 0; i < dist_sched_nbig; i++)
        if (dist_sched_big[i] == e) {
            dist_sched_big[i] = dist_sched_big[--dist_sched_nbig];
            return;
        }
}

/* --- completion ---------------------------------------------------------------------------- */

static void trace_received(struct dist_event *e);

void dist_sched_notify(int rank, uint64_t id, cl_int status)
{
    if (rank == 0) {
        sluice_engine_notify(id, status);
        return;
    }
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = SLUICE_REMOTE_NOTIFY;
    req.notify.id = id;
    req.notify.status = (int64_t)status;
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
        if (sluice_dag_get(dist_sched_dag, cur.id, &info) == 0) {
            if (info.state == SLUICE_DAG_PENDING) {
                keep_early(&cur);
            } else {
                const uint64_t *ready = NULL;
                size_t n = 0;
                sluice_dag_complete(dist_sched_dag, cur.id, cur.status, cur.t_start, cur.t_end, &ready, &n);
                uint64_t now = sluice_now_ns();
                for (size_t i = 0; i < n; i++) {
                    sluice_dag_dispatch(dist_sched_dag, ready[i], now);
                    if (dist_sched_lates != NULL)
                        dist_sched_send_late(ready[i]);
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

void dist_sched_complete(struct dist_event *e, cl_int status)
{
    if (e->status <= CL_COMPLETE)
        return;
    e->status = status < 0 ? status : CL_COMPLETE;
    dist_sched_unlink_event(e);
    dist_sched_big_done(e); /* (a CMA transfer's) */
    trace_received(e);      /* (a CMA read's) */
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
    if (dist_sched_nfills > 0)
        dist_sched_fill_drop(e->id);
    for (int r = 0; r < DIST_MAX_RANKS; r++)
        if (e->subs & (1ull << r))
            dist_sched_notify(r, e->id, e->status);
    dag_done(e);
    for (struct dist_event_cb *cb = e->cbs; cb != NULL; cb = cb->next) {
        struct pending_cb *p = malloc(sizeof *p);
        if (p == NULL)
            continue;
        *p = (struct pending_cb){cb, e, e->status < 0 ? e->status : cb->type, dist_sched_to_call};
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        dist_sched_to_call = p;
    }
    e->cbs = NULL;
    if (e->queue != NULL)
        e->queue->inflight--;
    if (!e->user)
        dist_sched_inflight--;
    free(e->free_after);
    e->free_after = NULL;
    dist_sched_unref_locked(e); /* the in-flight reference */
    /* Waiters are woken by dist_sched_run_callbacks, after the records that died released what they held
     * (a buffer released by the program is gone when its clFinish returns). */
    dist_sched_wake_waiters = 1;
}

/* Done when its DONE arrived and rank 0's own data messages finished. */
static void maybe_complete(struct dist_event *e)
{
    if (e->done_msg && e->nreqs == 0)
        dist_sched_complete(e, e->result < 0 ? e->result : CL_COMPLETE);
}

static void on_done(int rank, const struct sluice_remote_done *d)
{
    dist_alive_heard(rank);
    struct dist_event *e = dist_sched_find(d->id);
    if (e == NULL)
        return;
    if (d->t[3] != 0) {
        uint64_t arrived = sluice_now_ns(), t[4];
        for (int i = 0; i < 4; i++)
            t[i] = (uint64_t)((int64_t)d->t[i] - dist_sched_clock_off[rank]);
        /* QUEUED and SUBMIT are rank 0's: when the program enqueued the command and when it left
         * for its rank (the rank's own stamps would omit the dispatch). START and END are the
         * device's, converted with an offset good to a few µs, and then held between the two
         * things rank 0 saw itself: not before the command left (SUBMIT), not after its DONE
         * came back, whatever the offset's error. (DAG arrows still point back now and then,
         * 11 µs once: likely nodes without device times, which start at their enqueue.) */
        t[0] = e->queued_ns != 0 ? e->queued_ns : t[0];
        t[1] = e->submit_ns > t[0] ? e->submit_ns : t[0];
        for (int i = 2; i < 4; i++)
            t[i] = t[i] > t[i - 1] ? t[i] : t[i - 1];
        for (int i = 3; i >= 2; i--)
            t[i] = t[i] < arrived ? t[i] : arrived;
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
    for (struct dist_event **p = &dist_sched_mpi_pending; *p != NULL;) {
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
            dist_sched_big_done(e);
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

void *dist_sched_main(void *arg)
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
            int rc = PMPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, SLUICE_REMOTE_TAG_DONE, comm,
                               MPI_STATUS_IGNORE);
            sluice_trace_instant(SLUICE_EV_MSG_RECV, (uint64_t)st.MPI_SOURCE, (uint64_t)count,
                                 SLUICE_REMOTE_TAG_DONE);
            if (rc != MPI_SUCCESS)
                dist_fault_peer(st.MPI_SOURCE, rc, "receiving completions");
            pthread_mutex_lock(&dist_sched_lock);
            for (size_t i = 0; i < n; i++)
                on_done(st.MPI_SOURCE, &buf[i]);
            pthread_mutex_unlock(&dist_sched_lock);
            progress = 1;
        }
        int moved = 0;
        size_t n = sluice_engine_progress(local, 64, &moved);
        pthread_mutex_lock(&dist_sched_lock);
        if (dist_sched_win != NULL && dist_sched_window_due(sluice_now_ns()))
            dist_sched_window_close_locked(); /* nothing waits longer than that for the window */
        for (size_t i = 0; i < n; i++)
            on_done(0, &local[i]);
        progress |= moved | (n > 0) | test_mpi();
        if (progress)
            dist_sched_retire();
        int idle = dist_sched_inflight == 0 && dist_sched_mpi_pending == NULL;
        int data = dist_sched_nbig > 0 || sluice_engine_data_active();
        int stop = dist_sched_stopping && idle;
        pthread_mutex_unlock(&dist_sched_lock);
        dist_sched_run_callbacks();
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
