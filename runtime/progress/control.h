/* SPDX-License-Identifier: MIT */
/* Control of the progress engine by the rest of sluice (not part of the public contract in
 * progress.h): stopping it before MPI is finalized, shutting it down at exit, and the
 * counters that tests and the benchmark read. */
#ifndef SLUICE_PROGRESS_CONTROL_H
#define SLUICE_PROGRESS_CONTROL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs every posted item, stops the thread and joins it. Pollers stay registered; a later
 * post or add_poller starts a new thread. No-op on the progress thread itself. */
void sluice_progress_stop(void);

/* Asks the thread to end once its queue is empty, without waiting for it: its end then overlaps
 * what the caller waits for next, and sluice_progress_stop joins it. A post or add_poller before
 * it has ended calls the stop off (the thread goes on), one after starts a new thread. */
void sluice_progress_stop_begin(void);

/* Runs fn(arg) on the calling thread, never at the same time as a posted item or a poller (on the
 * progress thread or on a program thread helping in MPI): for the last item of a thread stopped. */
void sluice_progress_run_here(void (*fn)(void *arg), void *arg);

/* sluice_progress_stop, and from now on no thread is ever started again: posted work runs at
 * once on the posting thread and pollers are no longer called. Used at process exit. */
void sluice_progress_shutdown(void);

/* Longest idle sleep in microseconds; 0 restores SLUICE_PROGRESS_SLEEP_MAX. Takes effect at
 * the next idle round, and restarts the longest_sleep_ns statistic. */
void sluice_progress_set_sleep_max_us(uint64_t us);

struct sluice_progress_stats {
    uint64_t rounds;           /* passes over the queue and the pollers */
    uint64_t sleeps;           /* idle sleeps */
    uint64_t parks;            /* of which long enough to park on the futex */
    uint64_t items_run;        /* posted work items run */
    uint64_t wakeups;          /* sleeps cut short by sluice_progress_wake/post */
    uint64_t longest_sleep_ns; /* longest sleep requested since the cap was last set */
    uint64_t last_sleep_ns;    /* the sleep requested most recently */
    int running;               /* a progress thread exists now */
    uint64_t threads_started;  /* progress threads started in this process, ever */
    uint64_t helped;           /* work done by program threads waiting in MPI (sluice_progress_help) */
};
void sluice_progress_get_stats(struct sluice_progress_stats *out);

/* CPU time consumed by the current progress thread (ns), or -1 if none runs. */
int64_t sluice_progress_thread_cpu_ns(void);

#ifdef __cplusplus
}
#endif
#endif
