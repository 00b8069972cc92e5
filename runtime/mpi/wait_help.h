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

/* Completes a request with the same spin, yield and nap, never running sluice's pollers (for
 * sluice's own calls, which may hold its locks). */
int sluice_mpi_wait_quietly(MPI_Request *req);
/* sluice's own collectives at MPI's start and exit, as their nonblocking forms and a quiet
 * wait: MPICH's blocking collectives spin, and with more ranks than cores the ranks out of
 * MPI_Init first took the cores of those still in it (MPI_Init with capture on, 64 ranks on 16
 * cores: 1178 ms against 711 plain; docs/PERFORMANCE.md). Same arguments as MPI's. */
int sluice_quiet_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int sluice_quiet_allgather(const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
                           MPI_Datatype outtype, MPI_Comm comm);
int sluice_quiet_allgatherv(const void *in, int incount, MPI_Datatype intype, void *out, const int *counts,
                            const int *displs, MPI_Datatype outtype, MPI_Comm comm);
int sluice_quiet_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int sluice_quiet_comm_dup(MPI_Comm comm, MPI_Comm *out);

#ifdef __cplusplus
}
#endif
#endif
