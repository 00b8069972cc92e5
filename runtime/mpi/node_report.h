/* SPDX-License-Identifier: MIT */
/* A node whose processes all die at once names itself through `sluice --watch-nodes`, the
 * launcher's wrapper (docs/CLUSTER.md, "When a node fails"). Under MPICH's hydra such a death
 * ends the job within milliseconds (mpiexec sees the node's proxy gone, and the other proxies
 * SIGKILL their ranks), so no rank lives to say which node it was. The wrapper sets
 * SLUICE_NODE_REPORT; each node's leader then starts a watcher process on its node (the sluice
 * launcher in its hidden --node-helper mode, in a session of its own, so that the proxies' kill
 * does not reach it) that connects to the wrapper, names the node and its ranks, and says "end"
 * once every rank of its node has ended. A connection that closes without "end" is a node whose
 * processes all died, the watcher with them: the wrapper prints the line. */
#ifndef SLUICE_MPI_NODE_REPORT_H
#define SLUICE_MPI_NODE_REPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Called by a node's leader once the ranks' nodes are known (node_watch.c): starts the node's
 * watcher if SLUICE_NODE_REPORT is set and the launcher is not Slurm's (whose step end kills the
 * watcher with the ranks; srun keeps the other ranks alive, so the node watch names the node).
 * host: the node's name; ranks and pids: its ranks and their processes, n of each. Waits at most
 * a few seconds (the watcher's connection); one warning line if it cannot start. */
void sluice_node_report_start(const char *host, const int *ranks, const int *pids, int n);

#ifdef __cplusplus
}
#endif
#endif
