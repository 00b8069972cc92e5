/* SPDX-License-Identifier: MIT */
/* A lost node ends the job with one line naming it and its ranks (docs/CLUSTER.md, "When a node
 * fails"). Launchers end a job whose node's processes died, but not one whose node went silent (a
 * cut link, a node that hangs or loses power): MPICH's mpiexec and srun then wait for it for
 * minutes or for ever, and name neither the node nor its ranks.
 *
 * When sluice's communicator is made, the lowest rank of each node (its leader) opens a UDP socket
 * and the ranks gather every rank's node, pid and leader address. From then on each leader sends
 * a datagram to every other leader every SLUICE_NODE_TIMEOUT / 5 and notes what it hears. A node
 * heard from for SLUICE_NODE_TIMEOUT seconds is lost: the lowest node still heard (in the view of
 * each leader) prints the line `node NAME (ranks R,...) lost: ...` and aborts the job through MPI
 * (the launcher ends it); every other leader that sees a node lost ends its own node's ranks
 * (SIGKILL) if the job still runs SLUICE_NODE_TIMEOUT later, so that a node cut off from the rest
 * ends too. A leader's first finalize hook tells the others its node leaves (no loss reported for
 * it from then on). Off with SLUICE_NODE_TIMEOUT=0, on one node, and without IPv4 addresses. */
#ifndef SLUICE_MPI_NODE_WATCH_H
#define SLUICE_MPI_NODE_WATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* Nothing to call: the module registers its communicator hook from a constructor. */

#ifdef __cplusplus
}
#endif
#endif
