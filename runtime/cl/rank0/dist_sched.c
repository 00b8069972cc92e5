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
 * offset measured at start (Cristian's method: the sample of least round trip of 8 pings).
 *
 * This file: the scheduler's state, its records and user events, start and end; its other files
 * are listed in dist_sched_internal.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

#define BUCKETS 4096

pthread_mutex_t dist_sched_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t dist_sched_done; /* broadcast when commands complete */
struct sluice_dag *dist_sched_dag;
static struct dist_event *table[BUCKETS];
uint64_t dist_sched_last_id;
long dist_sched_inflight;
int dist_sched_started, dist_sched_stopping;
static pthread_t thread;

void dist_sched_insert(struct dist_event *e)
{
    e->hnext = table[e->id % BUCKETS];
    table[e->id % BUCKETS] = e;
}

struct dist_event *dist_sched_find(uint64_t id)
{
    for (struct dist_event *e = table[id % BUCKETS]; e != NULL; e = e->hnext)
        if (e->id == id)
            return e;
    return NULL;
}

void dist_sched_unlink_event(struct dist_event *e)
{
    for (struct dist_event **p = &table[e->id % BUCKETS]; *p != NULL; p = &(*p)->hnext)
        if (*p == e) {
            *p = e->hnext;
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

void dist_sched_retire(void)
{
    sluice_dag_retire(dist_sched_dag, sluice_trace_active() ? emit : NULL, NULL);
}

void dist_sched_start_locked(void)
{
    if (dist_sched_started)
        return;
    dist_sched_started = 1;
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&dist_sched_done, &a);
    pthread_condattr_destroy(&a);
    dist_sched_dag = sluice_dag_create();
    dist_sched_measure_clocks();
    sluice_mpi_on_finalize(dist_sched_drain);
    if (pthread_create(&thread, NULL, dist_sched_main, NULL) != 0)
        dist_sched_started = 2; /* no thread: waits progress themselves (see wait_until) */
}

/* --- records ------------------------------------------------------------------------------- */

struct dist_event *dist_sched_new_record(struct dist_queue *q, struct dist_context *ctx, int rank,
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
    struct dist_event *e = dist_sched_new_record(q, q->ctx, q->dev->rank, type);
    if (e != NULL)
        e->status = CL_COMPLETE;
    return e;
}

void dist_sched_unref_locked(struct dist_event *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* Freed by dist_sched_run_callbacks, outside the lock: releasing a queue or buffer talks to other ranks.
     */
    e->mnext = dist_sched_graveyard;
    dist_sched_graveyard = e;
}

void dist_sched_release(struct dist_event *e)
{
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_unref_locked(e);
    int dead = dist_sched_graveyard != NULL;
    pthread_mutex_unlock(&dist_sched_lock);
    if (dead) /* now: the queue it held may be the context's last reference */
        dist_sched_run_callbacks();
}

/* --- events the program sees (dist_event.c calls these) ------------------------------------ */

struct dist_event *dist_sched_user_event(struct dist_context *ctx);
struct dist_event *dist_sched_user_event(struct dist_context *ctx)
{
    struct dist_event *e = dist_sched_new_record(NULL, ctx, -1, CL_COMMAND_USER);
    if (e == NULL)
        return NULL;
    e->user = 1;
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_start_locked();
    e->id = ++dist_sched_last_id;
    struct sluice_dag_cmd dc = {.id = e->id, .rank = 0, .kind = SLUICE_DAG_USER_EVENT};
    sluice_dag_add(dist_sched_dag, &dc, sluice_now_ns(), NULL);
    sluice_dag_dispatch(dist_sched_dag, e->id, sluice_now_ns());
    dist_sched_insert(e);
    e->refs++; /* until set */
    pthread_mutex_unlock(&dist_sched_lock);
    return e;
}

cl_int dist_sched_set_user(struct dist_event *e, cl_int status);
cl_int dist_sched_set_user(struct dist_event *e, cl_int status)
{
    SLUICE_RETURN_ERROR_ON(status > CL_COMPLETE, CL_INVALID_VALUE, "status > CL_COMPLETE");
    pthread_mutex_lock(&dist_sched_lock);
    cl_int r = CL_SUCCESS;
    if (!e->user)
        r = CL_INVALID_EVENT;
    else if (e->status <= CL_COMPLETE)
        r = CL_INVALID_OPERATION;
    else {
        e->t[0] = e->t[1] = e->t[2] = e->t[3] = sluice_now_ns();
        e->done_msg = 1;
        dist_sched_complete(e, status);
    }
    pthread_mutex_unlock(&dist_sched_lock);
    dist_sched_run_callbacks();
    return r;
}

int dist_sched_peek_done(struct dist_event *e)
{
    pthread_mutex_lock(&dist_sched_lock);
    int d = e->status == CL_COMPLETE ? 1 : e->status < 0 ? -1 : 0;
    pthread_mutex_unlock(&dist_sched_lock);
    return d;
}

cl_int dist_sched_status(struct dist_event *e);
cl_int dist_sched_status(struct dist_event *e)
{
    pthread_mutex_lock(&dist_sched_lock);
    cl_int st = e->status;
    pthread_mutex_unlock(&dist_sched_lock);
    return st;
}

/* Copies the four times (rank 0's clock); CL_PROFILING_INFO_NOT_AVAILABLE until done or when
 * the queue does not profile. */
cl_int dist_sched_times(struct dist_event *e, uint64_t t[4]);
cl_int dist_sched_times(struct dist_event *e, uint64_t t[4])
{
    pthread_mutex_lock(&dist_sched_lock);
    cl_int r = (e->status == CL_COMPLETE && e->has_times) ? CL_SUCCESS : CL_PROFILING_INFO_NOT_AVAILABLE;
    if (r == CL_SUCCESS)
        memcpy(t, e->t, sizeof e->t);
    pthread_mutex_unlock(&dist_sched_lock);
    return r;
}

/* --- end ----------------------------------------------------------------------------------- */

void dist_sched_drain(void)
{
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_window_close_locked();
    if (dist_sched_started != 1 || dist_sched_stopping) {
        pthread_mutex_unlock(&dist_sched_lock);
        return;
    }
    /* User events nobody set: their waiters can never run. Fail them so that everything ends. */
    for (int i = 0; i < BUCKETS; i++)
        for (struct dist_event *e = table[i], *n; e != NULL; e = n) {
            n = e->hnext;
            if (e->user && e->status > CL_COMPLETE) {
                e->done_msg = 1;
                dist_sched_complete(e, CL_DEVICE_NOT_AVAILABLE);
            }
        }
    dist_sched_stopping = 1;
    pthread_mutex_unlock(&dist_sched_lock);
    sluice_engine_wake();
    pthread_join(thread, NULL);
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_retire();
    pthread_mutex_unlock(&dist_sched_lock);
    dist_sched_run_callbacks();
}
