/* SPDX-License-Identifier: MIT */
/* What the transport and the command engine do about a peer that fails or stays silent. Ending
 * the job is rank 0's backend's decision (dist_fault.c: one line naming the rank and its devices,
 * MPI_Abort, docs/FAULTS.md), and so is the liveness check of rank 0's waits (dist_alive.c): the
 * backend registers both here before any message goes, so that the serving ranks' code never
 * includes it (docs/ARCHITECTURE.md, rule 6). */
#ifndef SLUICE_CL_SERVE_REMOTE_PEER_H
#define SLUICE_CL_SERVE_REMOTE_PEER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_remote_peer_ops {
    /* An MPI call with `rank` failed with `mpi_rc` while doing `what`: ends the job, never
     * returns. */
    void (*failed)(int rank, int mpi_rc, const char *what);
    /* Rank 0 has waited on `rank` since `since` (sluice_now_ns) for `what`; called about every
     * 100 ms of such a wait. */
    void (*silent)(int rank, uint64_t since, const char *what);
};

/* Installs `ops` (kept, not copied) for the whole process. */
void sluice_remote_peer_ops_set(const struct sluice_remote_peer_ops *ops);

/* The registered `failed`. Without one (no backend registered: a bug), one line naming the rank
 * and what failed, and the process ends with status 1. Never returns. */
__attribute__((noreturn)) void sluice_remote_peer_failed(int rank, int mpi_rc, const char *what);

/* The registered `silent`, if any. */
void sluice_remote_peer_silent(int rank, uint64_t since, const char *what);

#ifdef __cplusplus
}
#endif
#endif
