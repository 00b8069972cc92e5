/* SPDX-License-Identifier: MIT */
/* Rank and size as the launcher announced them in the environment. The trace reads them
 * itself rather than through mpi/roles.h so that it works before, and without, the MPI part
 * (its constructor runs first) and never initializes MPI. */
#include <stdlib.h>

#include "trace/state.h"

static int env_int(const char *const *names, int fallback)
{
    for (const char *const *n = names; *n; n++) {
        const char *v = getenv(*n);
        if (v && *v) {
            char *end;
            long x = strtol(v, &end, 10);
            if (*end == '\0' && x >= 0 && x < (1L << 30))
                return (int)x;
        }
    }
    return fallback;
}

int sluice_trace_env_rank(void)
{
    static const char *const names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID",
                                        NULL};
    return env_int(names, 0);
}

int sluice_trace_env_size(void)
{
    static const char *const names[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL};
    return env_int(names, 1);
}
