/* SPDX-License-Identifier: MIT */
/* See wait_help.h. */
#include "mpi/wait_help.h"

#include <sched.h>

#include "config/config.h"
#include "mpi/roles.h"
#include "progress/progress.h"

bool sluice_mpi_should_help(void)
{
    return sluice_config.any_set && sluice_mpi_ready() && sluice_progress_wants_help();
}

bool sluice_mpi_barrier_waits(void)
{
    return sluice_config.any_set; /* the same on every rank: the job's environment */
}

/* One turn of a wait: while sluice has work under way, its pollers; whenever a turn did nothing,
 * the processor goes to whoever else is runnable. MPICH's own blocking waits yield on every
 * turn of their progress loop; a wait that spun without yielding took a core's share from the
 * ranks still writing (3 ranks on 2 cores: the last rank's 15-30 MB write into /dev/shm took
 * 0.15-0.32 s instead of 0.03-0.08 s while the others waited in MPI_Barrier). */
static void help_once(void)
{
    if (!sluice_mpi_should_help() || sluice_progress_help() == 0)
        sched_yield();
}

int sluice_mpi_wait_helping(MPI_Request *req, MPI_Status *status)
{
    int done = 0, rc;
    while ((rc = PMPI_Test(req, &done, status)) == MPI_SUCCESS && !done)
        help_once();
    return rc;
}

int sluice_mpi_waitall_helping(int count, MPI_Request *reqs, MPI_Status *statuses)
{
    int done = 0, rc;
    while ((rc = PMPI_Testall(count, reqs, &done, statuses)) == MPI_SUCCESS && !done)
        help_once();
    return rc;
}
