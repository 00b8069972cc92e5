/* SPDX-License-Identifier: MIT */
/* Fault handling of distributed OpenCL (docs/FAULTS.md): what happens when a serving rank dies, an MPI
 * call between ranks fails, or rank 0 ends. A fault that MPI cannot survive ends the whole job
 * with one line on stderr naming the rank (and the devices it served) and a documented exit code,
 * never a hang. docs/FAULTS.md describes every case. */
#ifndef SLUICE_CL_RANK0_DIST_FAULT_H
#define SLUICE_CL_RANK0_DIST_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit code of a job ended by sluice because a rank of distributed OpenCL failed (the code given
 * to MPI_Abort; docs/FAULTS.md says what the launcher makes of it). */
#define SLUICE_DIST_FAULT_EXIT 86

/* An MPI call between this process and `rank` failed with `mpi_rc` (MPI_SUCCESS when the peer was
 * found dead some other way) while doing `what` (a short phrase: "receiving a reply"). Prints one
 * line naming the rank, the devices it served when known and what failed, then ends the job with
 * MPI_Abort on sluice's communicator (every rank, so none waits forever). Only the first call
 * prints and aborts: concurrent and later calls wait for the end. Thread-safe. */
__attribute__((noreturn)) void dist_fault_peer(int rank, int mpi_rc, const char *what);

/* The names of the devices `rank` serves, for a line about it ("unknown" before enumeration). */
const char *dist_fault_devices(int rank);

/* Rank 0 has waited on `rank` since `since` (sluice_now_ns) for `what` ("the reply to a call"):
 * pings it after 2 s, says in one line when it stays silent for 5 s (even a busy rank answers its
 * pings), ends the job after SLUICE_DIST_TIMEOUT of silence (dist_alive.c). Called every 100 ms
 * or so by waits of rank 0; nothing for rank 0 itself or on serving ranks. */
void dist_alive_check(int rank, uint64_t since, const char *what);
/* A message came from `rank` (its DONE records): after a line about its silence, one more says it
 * answers again. */
void dist_alive_heard(int rank);
/* The end of the job (dist_role.c): no more pings; returns how many went to `rank`. */
uint64_t dist_alive_stop(int rank);
/* Receives what is left of the `sent` pongs `rank` says it sent (its answer to END), for at most
 * 5 s, so that none is left unreceived at MPI_Finalize. */
void dist_alive_drain(int rank, uint64_t sent);

/* Rank 0's enumeration: device `name` belongs to `rank`. Kept so that a fault line names what the
 * rank served. */
void dist_fault_note_device(int rank, const char *name);

/* A serving rank, before it serves: asks the real loader for its devices' names and installs
 * handlers for the fatal signals (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM) that print
 * the rank's one line and let the signal end it, chaining to the handler that was there (the
 * trace core's writes the trace first). A SIGTERM from the launcher (the job being ended) prints
 * nothing. An exit with a non-zero status (the driver calling exit(1)) prints the line too. */
void dist_fault_serving(int rank);

/* The _exit and _Exit wrappers, on any process, with the exit status: on rank 0 of a distributed
 * run, does for MPI what exit() would (the servers are told to end, MPI is finalized), so that the
 * servers end cleanly and the job's exit code is the program's. On a serving rank, a non-zero
 * status prints the rank's line. Nothing elsewhere. */
void dist_fault_before_exit(int status);

/* True once a fault is being handled (the job is ending): waits stop instead of waiting on. */
bool dist_fault_ending(void);

#ifdef __cplusplus
}
#endif
#endif
