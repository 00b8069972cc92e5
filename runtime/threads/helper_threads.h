/* SPDX-License-Identifier: MIT */
/* sluice's own threads (the scheduler, progress and ping threads): named, registered while they
 * run, and moved together to the CPUs SLUICE_HELPER_CPUS decides (runtime/mpi/helper_cpus.c). */
#ifndef SLUICE_THREADS_HELPER_THREADS_H
#define SLUICE_THREADS_HELPER_THREADS_H

#include <sched.h>

/* A thread of sluice's starts (named `name` unless NULL; moved now if a placement was made, else
 * when it is) or ends. */
void sluice_helper_thread_enter(const char *name);
void sluice_helper_thread_leave(void);

/* Every registered thread, the caller too if `caller`, and every thread entering later go to
 * `cpus`; each one moved is a HELPER_CPUS trace event with the CPUs the kernel granted it and
 * `bound`, the rank's own binding. */
void sluice_helper_threads_move(const cpu_set_t *cpus, const cpu_set_t *bound, int caller);

#endif
