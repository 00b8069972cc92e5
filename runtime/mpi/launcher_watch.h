/* SPDX-License-Identifier: MIT */
/* A rank that ends before MPI's start-up must end the job, not leave the others waiting in it
 * (docs/FAULTS.md, "A rank that ends before MPI starts").
 *
 * Under MPICH's hydra and srun --mpi=pmi2 a rank's process that never spoke on its PMI socket
 * (PMI_FD) is a non-MPI process to the launcher: when it ends, the launcher notes its exit status
 * and waits for the others, which may sit in MPI_Init's PMI barrier for it for ever (plain MPICH
 * does the same for a rank that exits before MPI_Init). Once a process has sent one PMI command,
 * hydra counts it as an MPI process: if its socket closes before PMI's finalize, hydra's proxy
 * kills the job's processes on that node at once (its auto-cleanup, on by default), and mpiexec
 * ends with that rank's status. PMI's `abort` ends every rank on every node, under both. */
#ifndef SLUICE_MPI_LAUNCHER_WATCH_H
#define SLUICE_MPI_LAUNCHER_WATCH_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At load, under hydra only, in the rank's own process (the launcher's child, or the first
 * preloaded process of a rank whose own process has no sluice), where every rank is sure to start
 * and finalize MPI (SLUICE_OPENCL=distributed on more than one rank): sends PMI-1's first request,
 * `init`, and reads the answer, the exchange that MPI's start-up begins with and repeats later
 * without harm. From then on hydra ends the job whenever the rank's process ends without
 * finalizing MPI, whatever the cause: a crash, an _exit, a program exec'd without sluice.
 * Returns true if hydra now watches the rank. Bounded: the proxy answers at once; after 30 s
 * without an answer one line says so. */
bool sluice_launcher_watch(void);

/* From sluice_fatal and sluice_fatal_config (log.h), in any mode, before the process ends with
 * `status`: a rank that sluice stops before its MPI started aborts the job through the launcher
 * (PMI-1 `abort`, after `init` where not watched yet; hydra and srun --mpi=pmi2), once the launcher
 * has read the line that says why (at most 2 s); so does, under hydra, the process whose MPI is
 * up, so that the job ends with `status` rather than with a rank the launcher killed. No lock of
 * sluice's, no allocation. */
void sluice_launcher_watch_fatal(int status);

/* Waits (at most 2 s) until the launcher has read what this process wrote to its stdout and
 * stderr (pipes or sockets to the launcher): before anything that ends the job at once. Raw
 * system calls only. */
void sluice_launcher_drain_output(void);

#ifdef __cplusplus
}
#endif
#endif
