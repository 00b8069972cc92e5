/* SPDX-License-Identifier: MIT */
/* See wait_help.h. */
#include "mpi/wait_help.h"

#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "config/config.h"
#include "mpi/roles.h"
#include "progress/progress.h"
#include "trace/trace.h"

bool sluice_mpi_should_help(void)
{
    return sluice_config.any_set && sluice_mpi_ready() && sluice_progress_wants_help();
}

bool sluice_mpi_barrier_waits(void)
{
    return sluice_config.any_set; /* the same on every rank: the job's environment */
}

/* A wait spins for its first SPIN_NS (a barrier among ranks that arrive together: 0.9 us, as
 * before), then yields the processor on each idle turn, as MPICH's own waits do, and after
 * YIELD_NS naps NAP_NS per idle turn. A rank waiting that long waits for a straggler, and on a
 * node with more ranks than cores its spin took the straggler's processor: 3 ranks on 2 cores,
 * the last rank's write of its member into /dev/shm while the others waited in MPI_Barrier took
 * 0.03-0.32 s spinning, 0.07-0.17 s yielding, 0.06-0.08 s napping after 1 ms (plain MPI:
 * 0.05-0.09 s). A nap lasts 5 % of the wait so far, NAP_NS to NAP_MAX_NS: it adds at most 5 % to
 * the wait, and 127 ranks waiting on 2 cores do not wake thousands of times a second each (each
 * MPI_Test polls every peer): their checkpoint was durable after 1.2-5.3 s, 19.5-21.6 s with
 * naps of at most 1 ms or none (1.8-2.7 s with the program's ranks asleep). */
#define SPIN_NS 50000L
#define YIELD_NS 1000000L
#define NAP_NS 50000L
#define NAP_MAX_NS 10000000L

struct wait_turns {
    uint64_t started; /* 0 until the first idle turn */
};

/* One turn of a wait: while sluice has work under way, its pollers; a turn that did nothing
 * spins, yields or naps. */
static void help_once(struct wait_turns *w)
{
    if (sluice_mpi_should_help() && sluice_progress_help() != 0)
        return;
    uint64_t now = sluice_now_ns();
    if (w->started == 0)
        w->started = now;
    uint64_t waited = now - w->started;
    if (waited < (uint64_t)SPIN_NS)
        return;
    if (waited < (uint64_t)YIELD_NS) {
        sched_yield();
        return;
    }
    uint64_t ns = waited / 20; /* 5 % of the wait so far: a long wait wakes its rank less often */
    if (ns < (uint64_t)NAP_NS)
        ns = NAP_NS;
    if (ns > (uint64_t)NAP_MAX_NS)
        ns = NAP_MAX_NS;
    struct timespec nap = {0, (long)ns};
    nanosleep(&nap, NULL);
}

int sluice_mpi_wait_helping(MPI_Request *req, MPI_Status *status)
{
    int done = 0, rc;
    struct wait_turns w = {0};
    while ((rc = PMPI_Test(req, &done, status)) == MPI_SUCCESS && !done)
        help_once(&w);
    return rc;
}

int sluice_mpi_waitall_helping(int count, MPI_Request *reqs, MPI_Status *statuses)
{
    int done = 0, rc;
    struct wait_turns w = {0};
    while ((rc = PMPI_Testall(count, reqs, &done, statuses)) == MPI_SUCCESS && !done)
        help_once(&w);
    return rc;
}
