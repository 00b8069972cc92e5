/* SPDX-License-Identifier: MIT */
/* MPI roles: who this process is (rank/size from the launcher, before and without MPI),
 * and sluice's own communicator, initialized lazily when a feature needs it.
 *
 * Contract (the mpi part owns the implementation):
 *  - sluice_launch_rank()/sluice_launch_size() read the launcher's environment (MPICH
 *    hydra PMI_RANK/PMI_SIZE, Open MPI OMPI_COMM_WORLD_*, PMIx, Slurm SLURM_PROCID/NTASKS);
 *    a process not under a launcher is rank 0 of 1. Cheap, no MPI.
 *  - sluice_comm() returns sluice's private duplicate of MPI_COMM_WORLD, initializing MPI
 *    (MPI_THREAD_MULTIPLE) first if the application has not. Returns MPI_COMM_NULL if MPI
 *    cannot be used in this process (e.g. a forked child whose parent owns the rank).
 *  - Finalize hooks run before MPI is finalized, whether the application calls
 *    MPI_Finalize or sluice finalizes at exit: checkpoint commit registers one. */
#ifndef SLUICE_MPI_ROLES_H
#define SLUICE_MPI_ROLES_H

#include "common/mpi_c.h"
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

int sluice_launch_rank(void);
int sluice_launch_size(void);
bool sluice_under_launcher(void);

MPI_Comm sluice_comm(void);
/* Where sluice_comm() returned MPI_COMM_NULL because another process of the rank owns its MPI:
 * that process's pid (0 if unknown or not the reason). */
int sluice_mpi_owner_pid(void);

/* The rank's own process: the one the launcher started (its parent is the launcher's process on
 * this node: hydra's proxy, Open MPI's daemon, slurmstepd), whatever it exec'ed into since.
 * True where there is no launcher. */
bool sluice_launcher_child(void);
/* The pid of this rank's own process among this process's ancestors (itself included), 0 if
 * none is found. */
int sluice_rank_root_pid(void);
/* The launcher's connection (hydra's PMI_FD) where this process takes part in a job that needs
 * MPI, else -1: a program that closes every descriptor before it starts a child (Python's
 * subprocess) keeps this one open, so that the child can still use the rank's MPI. Set at
 * load, read without a lock (async-signal-safe: the close runs between fork and exec). */
extern int sluice_launcher_fd;

/* Who answers on the rank's PMI socket (PMI_FD): MPICH's hydra proxy (hydra_pmi_proxy), Slurm's
 * pmi2 plugin in slurmstepd (srun --mpi=pmi2), or another or none (launcher_watch.h). */
enum sluice_pmi_server { SLUICE_PMI_OTHER, SLUICE_PMI_HYDRA, SLUICE_PMI_SLURM };
enum sluice_pmi_server sluice_pmi_server(void);
/* The launcher's process on this node that started the rank: hydra's proxy (the PMI socket's
 * peer), Open MPI's daemon; 0 if not known by pid (Slurm: recognised by name instead). */
struct sluice_launch;
int sluice_launcher_pid(const struct sluice_launch *l);

/* The parent of process pid (field 4 of /proc/<pid>/stat, read with raw system calls); 0 if
 * unknown. */
int sluice_proc_parent(int pid);
/* True if process pid has this library loaded (its /proc/<pid>/maps names it). */
bool sluice_process_preloaded(int pid);
bool sluice_mpi_ready(void); /* MPI initialized and sluice_comm usable, without initializing */
/* Nobody in this process has started MPI, nor been refused it (no lock: for the fatal path). */
bool sluice_mpi_untouched(void);

/* For the rank's own process at exit with nothing to commit: whether it must start MPI all the
 * same, because another rank starts it (MPI's start-up is collective). Capture on under hydra:
 * the job votes (start_vote.h), and where no rank starts MPI this process never will (the
 * launcher was told it is done). Elsewhere, or once MPI was touched: true. */
bool sluice_mpi_start_needed(void);

/* At the exit flush of a job whose ranks use MPI: whether any rank has something to commit
 * (busy: this one has), 1 or 0, decided by every rank at once over hydra's PMI-1 (start_vote.h)
 * where the start vote applies, without an MPI collective; -1 elsewhere (the caller asks over
 * MPI). Every rank of the job must call it, once. all_arrived (may be NULL) is called once every rank
 * has entered the vote, while the vote goes on (not called where -1 is returned). */
int sluice_mpi_exit_vote(bool busy, void (*all_arrived)(void));

/* Hooks run once, in registration order, after the application's own MPI_Init succeeded,
 * outside sluice's locks (a part that serves other ranks from then on starts there: nothing is
 * started in a process that never uses MPI). */
void sluice_mpi_on_app_init(void (*hook)(void));

/* Hooks run once, in registration order, right after sluice's communicator is made (every rank
 * at once: the MPI_Comm_dup is collective, and so may the hooks be). They get the communicator
 * and must not call sluice_comm() (its lock is held). Registered before MPI starts (a
 * constructor); one registered later never runs. */
void sluice_mpi_on_comm(void (*hook)(MPI_Comm));

/* Hooks run once, in registration order, before MPI is finalized. */
void sluice_mpi_on_finalize(void (*hook)(void));

/* For a process leaving through _exit: what exit() would do for MPI (the finalize hooks, then
 * finalizing MPI that sluice initialized). Nothing where the application owns MPI. */
void sluice_mpi_finalize_before_exit(void);

/* The job is being aborted (MPI_Abort follows): from now on sluice uses MPI no more, at exit
 * included (no finalize hooks, no finalization), since MPI calls on an aborted job fail loudly. */
void sluice_mpi_abandon(void);

#ifdef __cplusplus
}
#endif
#endif
