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

/* A turn that did nothing spins, yields or naps. */
static void idle_turn(struct wait_turns *w)
{
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

/* One turn of a wait: while sluice has work under way, its pollers; else an idle turn. */
static void help_once(struct wait_turns *w)
{
    if (sluice_mpi_should_help() && sluice_progress_help() != 0)
        return;
    idle_turn(w);
}

int sluice_mpi_wait_quietly(MPI_Request *req)
{
    int done = 0, rc;
    struct wait_turns w = {0};
    while ((rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        idle_turn(&w);
    return rc;
}

int sluice_quiet_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc = PMPI_Iallreduce(in, out, count, type, op, comm, &r);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_quietly(&r) : rc;
}

int sluice_quiet_allgather(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                           MPI_Datatype outtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = PMPI_Iallgather(in, incount, intype, out, outcount, outtype, comm, &r);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_quietly(&r) : rc;
}

int sluice_quiet_allgatherv(const void *in, int incount, MPI_Datatype intype, void *out, const int *counts,
                            const int *displs, MPI_Datatype outtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = PMPI_Iallgatherv(in, incount, intype, out, counts, displs, outtype, comm, &r);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_quietly(&r) : rc;
}

int sluice_quiet_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = PMPI_Ibcast(buf, count, type, root, comm, &r);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_quietly(&r) : rc;
}

int sluice_quiet_comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    MPI_Request r;
    int rc = PMPI_Comm_idup(comm, out, &r);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_quietly(&r) : rc;
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
