/* SPDX-License-Identifier: MIT */
/* Progress engine: one background thread per process that serves sluice's own messages and
 * background work, waiting by micro-sleeping with adaptive back-off (never busy polling).
 *
 * Contract (the progress part owns the implementation):
 *  - Pollers are called repeatedly from the progress thread; a poller returns the number of
 *    things it did (>0 resets the back-off to its shortest sleep, 0 lets it grow up to
 *    SLUICE_PROGRESS_SLEEP_MAX microseconds).
 *  - Posted work items run once, in posting order, on the progress thread.
 *  - sluice_progress_wake() cuts the current sleep short (e.g. after posting work).
 *  - The thread starts on first use, not at load; a forked child has no progress thread
 *    until it uses one itself. */
#ifndef SLUICE_PROGRESS_PROGRESS_H
#define SLUICE_PROGRESS_PROGRESS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*sluice_poller_fn)(void *arg);

int sluice_progress_add_poller(sluice_poller_fn fn, void *arg); /* returns an id */
/* The same, for a poller that may also run on a program thread waiting in a blocking MPI call
 * (sluice_progress_help): never on two threads at once, but not always on the progress thread.
 * For pollers whose work must go on while the program's threads spin in MPI (the commit's). */
int sluice_progress_add_poller_any_thread(sluice_poller_fn fn, void *arg);
void sluice_progress_remove_poller(int id);
void sluice_progress_post(void (*fn)(void *arg), void *arg);
void sluice_progress_wake(void);
/* Blocks the caller until every work item posted before the call has run. */
void sluice_progress_drain(void);
/* Counts transfers in flight that progress only inside MPI calls (+1 when one starts, -1 when
 * it ends): while any are, the thread polls instead of backing off (engine.c, MPI-busy mode). */
void sluice_progress_mpi_busy(int delta);
/* Counts answers this process awaits from other ranks (+1 when it starts waiting, -1 when it
 * stops): while any are, the thread's idle sleeps stay at SLUICE_PROGRESS_SLEEP_MAX instead of
 * growing to SLUICE_PROGRESS_IDLE_SLEEP, so that an answer is noticed within that bound (a
 * commit's "member written" and "durable" answers come after quiet spells of 100 ms and more). */
void sluice_progress_expect(int delta);
/* Counts program threads blocked until this process's commits are done (+1 when one starts
 * waiting, -1 when it stops): while any are, an idle thread polls every 100 us where a core is
 * free, as in the MPI-busy mode past its window, so that the "durable" answer reaches them
 * without the back-off's up to SLUICE_PROGRESS_SLEEP_MAX. */
void sluice_progress_urgent(int delta);
/* True on the progress thread itself. */
int sluice_progress_is_self(void);
/* Whether the engine has work under way (an MPI transfer in flight, or work found in the last
 * 100 ms): a program thread about to wait in MPI then calls sluice_progress_help while it waits,
 * so that a program spinning in MPI on every core cannot starve sluice's progress. */
bool sluice_progress_wants_help(void);
/* Runs the any-thread pollers once on the calling thread, unless another thread runs them now;
 * returns what they did. No-op on the progress thread and inside a poller. */
int sluice_progress_help(void);

#ifdef __cplusplus
}
#endif
#endif
