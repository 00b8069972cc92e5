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

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*sluice_poller_fn)(void *arg);

int sluice_progress_add_poller(sluice_poller_fn fn, void *arg); /* returns an id */
void sluice_progress_remove_poller(int id);
void sluice_progress_post(void (*fn)(void *arg), void *arg);
void sluice_progress_wake(void);
/* Blocks the caller until every work item posted before the call has run. */
void sluice_progress_drain(void);
/* Counts transfers in flight that progress only inside MPI calls (+1 when one starts, -1 when
 * it ends): while any are, the thread polls instead of backing off (engine.c, MPI-busy mode). */
void sluice_progress_mpi_busy(int delta);
/* True on the progress thread itself. */
int sluice_progress_is_self(void);

#ifdef __cplusplus
}
#endif
#endif
