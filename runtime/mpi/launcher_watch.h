/* SPDX-License-Identifier: MIT */
/* A rank that ends before MPI's start-up must end the job, not leave the others waiting in it.
 *
 * Under MPICH's hydra (and srun --mpi=pmi2) a rank's process that never spoke on its PMI socket
 * (PMI_FD) is a non-MPI process to the launcher: when it ends, the launcher notes its exit status
 * and waits for the others, which may sit in MPI_Init's PMI barrier for it forever (plain MPICH
 * does the same for a rank that exits before MPI_Init). Once a process has sent one PMI command
 * it is an MPI process: if its socket closes before PMI's finalize, hydra's proxy kills the job's
 * processes at once (its auto-cleanup, on by default) and mpiexec ends with that rank's status.
 *
 * sluice_launcher_watch() sends PMI-1's first request, `init`, and reads the answer: the same
 * exchange that MPI's start-up begins with and repeats later without harm. From then on the
 * launcher ends the job whenever the rank's process ends without finalizing MPI, whatever the
 * cause: an exit before the program's first OpenCL call, a crash, a failed exec, an _exit. */
#ifndef SLUICE_MPI_LAUNCHER_WATCH_H
#define SLUICE_MPI_LAUNCHER_WATCH_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At load, in the rank's own process (the launcher's child, or the first preloaded process of a
 * rank whose own process has no sluice), where every rank is sure to start and finalize MPI
 * (SLUICE_OPENCL=distributed on more than one rank). Returns true if the launcher now watches the
 * rank. Bounded: the launcher answers at once; after 30 s without an answer one line says so. */
bool sluice_launcher_watch(void);

/* From sluice_fatal and sluice_fatal_config (log.h), in any mode, before the process ends with
 * `status`: a rank that sluice stops before its MPI started aborts the job through the launcher
 * (PMI-1 `abort`, after `init` where not watched yet), which ends every rank on every node and
 * makes `status` the job's. Raw system calls only. */
void sluice_launcher_watch_fatal(int status);

#ifdef __cplusplus
}
#endif
#endif
