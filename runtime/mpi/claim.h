/* SPDX-License-Identifier: MIT */
/* Per-rank MPI claim: makes sure that at most one process of a launcher rank ever initializes
 * MPI, even when the rank is a shell that forks and execs several programs that all have
 * sluice preloaded (`mpiexec -n 4 sh -c 'a; b'`). They all inherit the launcher's connection
 * (hydra's PMI_FD socket, Open MPI's PMIx server address); a second PMI/PMIx init on one rank
 * breaks the job (measured with MPICH 4.0.2: the second MPI_Init of a rank dies with SIGPIPE).
 *
 * Mechanism: one file per rank, created with O_CREAT|O_EXCL in a node-local folder named after
 * the job, ${TMPDIR:-/tmp}/sluice-<uid>/claims/<job>/rank.<r>, holding the claimant's pid. The
 * first process to create it owns MPI for the rank for the rest of the job; the file is never
 * released, because MPI cannot be initialized again for that rank after the owner finalized.
 * Folders of jobs that are over are removed by the next job that claims on the node: where a
 * launcher process that lives as long as the job is known (hydra's proxy, Open MPI's daemon),
 * once it is gone; otherwise after a week. */
#ifndef SLUICE_MPI_CLAIM_H
#define SLUICE_MPI_CLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mpi/launcher.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SLUICE_CLAIM_OWNED,   /* this process owns MPI for its rank */
    SLUICE_CLAIM_TAKEN,   /* another process of the rank owns it (*holder is its pid) */
    SLUICE_CLAIM_UNKNOWN, /* cannot coordinate (no job key, folder not writable): see why */
} sluice_claim_result;

/* Fills key with the job key: l->job, or for hydra "hydra" plus the PMI socket's peer (the
 * hydra proxy); "@<pid>-<start time>" of the launcher process is appended where known.
 * Returns 0, or -1 if the job cannot be named. */
int sluice_claim_job_key(const struct sluice_launch *l, char *key, size_t len);

/* Claims the rank under `root` (NULL: ${TMPDIR:-/tmp}/sluice-<uid>/claims). On
 * SLUICE_CLAIM_UNKNOWN, why (if not NULL) receives one line saying what failed. */
sluice_claim_result sluice_claim_rank(const struct sluice_launch *l, const char *root, pid_t *holder,
                                      char *why, size_t whylen);

/* The job folder (on this node) in which this process owns its rank's claim; NULL if it owns
 * none. Ranks that finalize MPI mark it there for their node's watcher (node_report.h). */
const char *sluice_claim_owned_folder(void);

/* Whether the job whose key ends `name` (an entry of folder rootfd) is over on this node: its
 * launcher process is gone (or restarted), or, where none is named, the entry is a week old. A
 * job of another host is never over here. */
bool sluice_claim_job_is_over(int rootfd, const char *name);

#ifdef __cplusplus
}
#endif
#endif
