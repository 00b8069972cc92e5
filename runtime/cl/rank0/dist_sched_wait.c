/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: the program's waits for commands (clWaitForEvents, clFinish, blocking
 * calls), which poll briefly, then sleep, and check that the rank waited on is still there. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

/* --- waiting ------------------------------------------------------------------------------- */

/* A wait of the program's thread: until *hot (first WAIT_HOT_NS) it polls dist_sched_wake_gen, yielding the
 * core, and only then sleeps on dist_sched_done. A remote command's DONE is usually due within tens of
 * microseconds, and waking a thread asleep on a condition variable (a futex wake, then the
 * kernel putting it back on a core) costs several microseconds of a 30 us round trip. A yield
 * that took over YIELD_BUSY_NS means that another thread wanted this core (an oversubscribed
 * node, measured: 2 cores for 2 ranks and other jobs, round trips of 1-2 ms instead of 0.05-0.8
 * when the waiter kept polling): the wait sleeps from then on. A wait polls only while the last
 * wait ended within WAIT_HOT_NS (wait_hot): on a loaded node where commands take a millisecond
 * the poll would only burn 100 us of a core per blocking call (integration.dist_api_objects on 2
 * cores at load 18: 140-146 s against 94-126 s without the poll). Called and returns with
 * dist_sched_lock held; 0 when the job is ending. */
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
        unsigned gen = __atomic_load_n(&dist_sched_wake_gen, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&dist_sched_lock);
        while (__atomic_load_n(&dist_sched_wake_gen, __ATOMIC_ACQUIRE) == gen && now < *hot) {
            sched_yield();
            uint64_t then = now;
            now = sluice_now_ns();
            if (now - then > YIELD_BUSY_NS)
                *hot = 0;
        }
        pthread_mutex_lock(&dist_sched_lock);
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
    pthread_cond_timedwait(&dist_sched_done, &dist_sched_lock, &ts);
    sluice_time_leave(prev);
    return !dist_fault_ending(); /* the job is ending: stop waiting */
}

/* Whether the rank waited on is still there (dist_alive.c); without the lock, since ending the
 * job runs exit work that takes it. */
static void alive_check_unlocked(int rank, uint64_t since, const char *what)
{
    pthread_mutex_unlock(&dist_sched_lock);
    dist_alive_check(rank, since, what);
    pthread_mutex_lock(&dist_sched_lock);
}

cl_int dist_sched_wait_event(struct dist_event *e)
{
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_window_close_locked();
    uint64_t t0 = sluice_now_ns(), hot = wait_hot(t0);
    char what[96];
    snprintf(what, sizeof what, "the end of command %llu (OpenCL command type 0x%x)",
             (unsigned long long)e->id, (unsigned)e->type);
    while (e->status > CL_COMPLETE && dist_sched_started && wait_locked(&hot))
        alive_check_unlocked(e->rank, t0, what);
    wait_ended(t0);
    cl_int st = e->status > CL_COMPLETE ? CL_COMPLETE : e->status;
    pthread_mutex_unlock(&dist_sched_lock);
    return st;
}

cl_int dist_sched_finish(struct dist_queue *q)
{
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_window_close_locked();
    uint64_t t0 = sluice_now_ns(), hot = wait_hot(t0);
    while (q->inflight > 0 && dist_sched_started && wait_locked(&hot))
        alive_check_unlocked(q->dev->rank, t0, "clFinish of a queue of its device");
    wait_ended(t0);
    pthread_mutex_unlock(&dist_sched_lock);
    return CL_SUCCESS;
}
