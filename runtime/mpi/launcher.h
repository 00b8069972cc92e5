/* SPDX-License-Identifier: MIT */
/* Launcher detection: which launcher started this process, its rank and size, and a key that
 * names the job (the same in every process of one job, different across jobs), all read from
 * the environment without MPI. Pure code: the environment is passed in, so tests can fake it. */
#ifndef SLUICE_MPI_LAUNCHER_H
#define SLUICE_MPI_LAUNCHER_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SLUICE_LAUNCHER_NONE = 0, /* not under a launcher: rank 0 of 1 */
    SLUICE_LAUNCHER_HYDRA,    /* MPICH hydra (and other PMI-1 launchers): PMI_RANK, PMI_SIZE */
    SLUICE_LAUNCHER_OMPI,     /* Open MPI mpirun/prterun: OMPI_COMM_WORLD_RANK/SIZE */
    SLUICE_LAUNCHER_PMIX,     /* any PMIx server (e.g. srun --mpi=pmix): PMIX_RANK */
    SLUICE_LAUNCHER_SLURM,    /* a Slurm job step started by srun: SLURM_PROCID/SLURM_NTASKS */
} sluice_launcher_kind;

struct sluice_launch {
    sluice_launcher_kind kind;
    int rank;       /* 0 when not under a launcher */
    int size;       /* 1 when not under a launcher; 0 if the launcher does not publish it */
    int pmi_fd;     /* hydra's inherited PMI socket (PMI_FD), -1 if none */
    int local_size; /* ranks of the job on this node (hydra's MPI_LOCALNRANKS), 0 if unknown */
    int anchor_pid; /* a launcher process that lives exactly as long as the job on this node
                     * (Open MPI: mpirun/orted, from PMIX_SERVER_TMPDIR .../pid.<N>), 0 if
                     * unknown; hydra's is found from the PMI socket instead */
    char job[96];   /* job key from the environment, file-name safe; "" if the launcher has
                     * none there (hydra: the key comes from the PMI socket, see claim.c) */
};

/* Reads the launcher variables through `get` (getenv-like; ctx is passed through). A malformed
 * value (PMI_RANK=abc, rank >= size) is skipped with one line in `warn` (may be NULL) naming
 * the variable and value, and detection goes on with the next launcher. Never fails. */
void sluice_launch_detect(const char *(*get)(const char *name, void *ctx), void *ctx,
                          struct sluice_launch *out, char *warn, unsigned long warnlen);

const char *sluice_launcher_name(sluice_launcher_kind kind);

/* srun without an MPI plugin (`srun --mpi=none`, a common site default): a Slurm step of more
 * than one task with neither PMI-1 (PMI_RANK) nor PMIx (PMIX_RANK) variables, so every task's
 * MPI would start alone, as a job of one rank. Returns true and one line in msg saying so and
 * how to launch. */
bool sluice_launch_without_pmi(const char *(*get)(const char *name, void *ctx), void *ctx,
                               const struct sluice_launch *l, char *msg, unsigned long msglen);

/* This process's launcher, detected once from its environment (roles.c). */
const struct sluice_launch *sluice_launch_current(void);

#ifdef __cplusplus
}
#endif
#endif
