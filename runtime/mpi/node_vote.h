/* SPDX-License-Identifier: MIT */
/* The start and exit votes (start_vote.h) of a job whose ranks all run on this node, held in
 * shared memory instead of hydra's key-value space.
 *
 * Over the launcher each vote is two PMI barriers and a get through the node's one proxy, which
 * serves its ranks one request after the other: on 16 cores `mpiexec -n N true` with capture on
 * took 1.25x, 1.45x and 1.38x of plain at 16, 64 and 128 ranks, where loading the library
 * costs nothing measurable (docs/PERFORMANCE.md, "Job steps that capture nothing"). When hydra
 * says that the proxy started every rank of the job (MPI_LOCALNRANKS = PMI_SIZE, the same
 * answer in every process), each rank's MPI owner instead counts itself in a page of
 * /dev/shm/sluice-<uid>.votes/<start|exit>-<job key> (the claims' job key, claim.h: the
 * proxy's pid and start time), mapped shared: ranks arrived and ranks that said yes, atomic
 * adds, waits on a futex that the deciding arrival wakes; the last arrival removes the file. Not
 * under TMPDIR, which a job may set per rank. No request reaches the launcher: a process that
 * votes no and finds nobody did leaves as a plain process does, without ever greeting PMI.
 *
 * Start vote: a yes needs no answer (MPI_Init's own fence then waits for the others); a no waits
 * until a yes comes or every rank has arrived. Exit vote: every rank waits until all have arrived
 * (then all_arrived, as after the PMI vote's first barrier) and reads whether any said yes. A
 * wait ends early only when the proxy is gone (the job is over): SLUICE_VOTE_FAILED, as when the
 * launcher does not answer. */
#ifndef SLUICE_MPI_NODE_VOTE_H
#define SLUICE_MPI_NODE_VOTE_H

#include <stdbool.h>

#include "mpi/launcher.h"
#include "mpi/start_vote.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sluice_node_vote_kind { SLUICE_NODE_VOTE_START = 0, SLUICE_NODE_VOTE_EXIT = 1 };

/* Whether this job votes in shared memory: hydra, and every rank on this node. */
bool sluice_node_vote_applies(const struct sluice_launch *l);

/* One vote of this rank's MPI owner in job l; launcher_pid: the proxy (0: unknown, waits are
 * then not cut short). */
enum sluice_start_vote sluice_node_vote(enum sluice_node_vote_kind kind, const struct sluice_launch *l,
                                        int launcher_pid, bool yes, void (*all_arrived)(void));

#ifdef __cplusplus
}
#endif
#endif
