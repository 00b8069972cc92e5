/* SPDX-License-Identifier: MIT */
/* The rank and size a launcher gives a process, for sample programs that need only these to name
 * their files (no MPI): MPICH's hydra (PMI_RANK, PMI_SIZE), Open MPI's mpirun
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), a Slurm step (SLURM_PROCID, SLURM_NTASKS). A
 * program that read PMI_RANK alone was rank 0 on every rank under Open MPI. */
#ifndef SLUICE_TESTS_LAUNCHER_ENV_H
#define SLUICE_TESTS_LAUNCHER_ENV_H

#include <stdlib.h>

/* The first of names that is set and not empty, else NULL. */
static inline const char *launcher_env_first(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return NULL;
}

/* The rank as the launcher wrote it, NULL when not under a launcher. */
static inline const char *launcher_rank_string(void)
{
    static const char *const names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", NULL};
    return launcher_env_first(names);
}

static inline int launcher_rank(void)
{
    const char *v = launcher_rank_string();
    return v ? atoi(v) : 0;
}

static inline int launcher_size(void)
{
    static const char *const names[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL};
    const char *v = launcher_env_first(names);
    return v ? atoi(v) : 1;
}

#endif
