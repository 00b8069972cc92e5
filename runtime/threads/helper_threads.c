/* SPDX-License-Identifier: MIT */
#include "threads/helper_threads.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cpulist.h"
#include "common/fd_guard.h"
#include "trace/trace.h"

#define MAX_HELPERS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t helpers[MAX_HELPERS]; /* thread ids of sluice's running threads */
static int nhelpers;
static int placed;       /* 1: threads go to `target` */
static cpu_set_t target; /* where sluice's threads run */
static cpu_set_t bound;  /* the rank's own binding, for the trace */

static pid_t my_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* Moves thread `tid` (0: the caller) and records where the kernel put it. */
static void move(pid_t tid)
{
    cpu_set_t now;
    if (sched_setaffinity(tid, sizeof target, &target) != 0 || sched_getaffinity(tid, sizeof now, &now) != 0)
        return; /* outside the job's cpuset, or the thread ended: it stays where it was */
    sluice_trace_instant(SLUICE_EV_HELPER_CPUS, (uint64_t)(tid ? tid : my_tid()), sluice_cpulist_mask64(&now),
                         sluice_cpulist_mask64(&bound));
}

void sluice_helper_threads_move(const cpu_set_t *cpus, const cpu_set_t *own, int caller)
{
    pthread_mutex_lock(&lock);
    target = *cpus;
    bound = *own;
    placed = 1;
    if (caller)
        move(0);
    for (int i = 0; i < nhelpers; i++)
        move(helpers[i]);
    pthread_mutex_unlock(&lock);
}

void sluice_helper_thread_enter(const char *name)
{
    sluice_fd_guard_thread_enter();
    if (name != NULL)
        pthread_setname_np(pthread_self(), name);
    pid_t tid = my_tid();
    pthread_mutex_lock(&lock);
    if (nhelpers < MAX_HELPERS)
        helpers[nhelpers++] = tid;
    if (placed)
        move(tid);
    pthread_mutex_unlock(&lock);
}

void sluice_helper_thread_leave(void)
{
    pid_t tid = my_tid();
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nhelpers; i++)
        if (helpers[i] == tid) {
            helpers[i] = helpers[--nhelpers];
            break;
        }
    pthread_mutex_unlock(&lock);
}

/* A fork child has none of the parent's other threads, and its MPI is not its own. */
static void forget_in_child(void)
{
    pthread_mutex_init(&lock, NULL);
    nhelpers = 0;
    placed = 0;
}

__attribute__((constructor)) static void helper_threads_init(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}
