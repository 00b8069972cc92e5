/* SPDX-License-Identifier: MIT */
/* A node whose processes all die at once names itself through `sluice --watch-nodes`, the
 * launcher's wrapper (docs/CLUSTER.md, "When a node fails"). Under MPICH's hydra such a death
 * ends the job within milliseconds (mpiexec sees the node's proxy gone, and the other proxies
 * SIGKILL their ranks), so no rank lives to say which node it was. The wrapper sets
 * SLUICE_NODE_REPORT; each node's leader then starts a watcher process on its node (the sluice
 * launcher in its hidden --node-helper mode, in a session of its own, so that the proxies' kill
 * does not reach it) that connects to the wrapper, names the node and its ranks, and says "end"
 * once every rank of its node has ended. A connection that closes without "end" is a node whose
 * processes all died, the watcher with them: the wrapper prints the line. A rank that ends before
 * it finalized MPI while its node's watcher lives (killed alone, the OOM killer's pick) is told
 * to the wrapper too, which names the first such rank: each rank marks its MPI_Finalize with a
 * file `fin.<rank>` in its node's claim folder (claim.h), which the watcher looks for when the
 * rank's process ends; a rank that aborts the job marks that (`abort.<rank>`), and no death is
 * named then: MPI's and the caller's lines say what happened. */
#ifndef SLUICE_MPI_NODE_REPORT_H
#define SLUICE_MPI_NODE_REPORT_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called by a node's leader once the ranks' nodes are known (node_watch.c): starts the node's
 * watcher if SLUICE_NODE_REPORT is set and the launcher is not Slurm's (whose step end kills the
 * watcher with the ranks; srun keeps the other ranks alive, so the node watch names the node).
 * host: the node's name; ranks and pids: its ranks and their processes, n of each. Waits at most
 * a few seconds (the watcher's connection); one warning line if it cannot start. */
void sluice_node_report_start(const char *host, const int *ranks, const int *pids, int n);

/* Whether the wrapper's watchers are in use for this job (SLUICE_NODE_REPORT set, a launcher
 * they run under). */
bool sluice_node_report_on(void);

/* At this rank's MPI_Finalize (every rank, where sluice_node_report_on): marks it finalized for
 * its node's watcher. Raw system calls; nothing if the rank owns no claim. */
void sluice_node_report_finalized(int rank);

/* Before this rank aborts the job (MPI_Abort, the program's or sluice's own): its end and the
 * others' are then the abort's, which MPI and the caller report (`abort.<rank>`, told to the
 * wrapper as "aborted"). Raw system calls. */
void sluice_node_report_aborting(void);

#ifdef __cplusplus
}
#endif
#endif
