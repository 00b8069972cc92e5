/* SPDX-License-Identifier: MIT */
/* A program thread waiting in a blocking MPI call helps sluice's progress: on a node
 * where the program's ranks spin inside MPI_Barrier on every core, sluice's progress threads
 * starved (a version became durable after 9.8 s at 64 ranks on 2 cores, 1.7 s with the ranks
 * asleep). shim/mpi_wait.c turns the blocking calls into their nonblocking form and waits here:
 * while sluice has work under way (sluice_progress_wants_help) the thread runs the commit's
 * pollers as it waits (sluice_progress_help). A turn with nothing to do spins for the first
 * 50 us, then yields the processor, and after 1 ms naps for 5 % of the wait so far (50 us to
 * 10 ms): a rank that long in a wait waits for a straggler, which may need its core (wait_help.c
 * has the figures). */
#ifndef SLUICE_MPI_WAIT_HELP_H
#define SLUICE_MPI_WAIT_HELP_H

#include "common/mpi_c.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a blocking MPI call of the program should wait by helping now. */
bool sluice_mpi_should_help(void);
/* Whether the program's MPI_Barrier runs as MPI_Ibarrier and a wait here: the same answer on
 * every rank, all along (a blocking and a nonblocking barrier never match). */
bool sluice_mpi_barrier_waits(void);
/* Completes one request (or all `count`, with statuses as MPI_Testall), helping meanwhile. */
int sluice_mpi_wait_helping(MPI_Request *req, MPI_Status *status);
int sluice_mpi_waitall_helping(int count, MPI_Request *reqs, MPI_Status *statuses);

#ifdef __cplusplus
}
#endif
#endif
