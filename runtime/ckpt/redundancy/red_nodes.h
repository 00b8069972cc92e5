/* SPDX-License-Identifier: MIT */
/* The nodes of a job, for redundancy across them (docs/REDUNDANCY.md, "Redundancy"): made once
 * when sluice's communicator is made (every rank sends its host id, common/host_id.h). Nodes are
 * numbered by their lowest rank; that rank is the node's leader, which encodes what the node
 * holds of a version; node i's partner is node i+1 (mod the node count). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_NODES_H
#define SLUICE_CKPT_REDUNDANCY_RED_NODES_H

#include "common/mpi_c.h"

struct red_nodes {
    int size, rank;   /* on sluice's communicator */
    int nnodes, mine; /* node count, this rank's node */
    int *node_of;     /* per rank */
    int *leader;      /* per node: its lowest rank */
    int *nranks;      /* per node */
    char (*host)[17]; /* per node */
};

/* Collective over comm. Publishes the map (NULL on failure: no redundancy then). */
void red_nodes_make(MPI_Comm comm);
/* The map, NULL before red_nodes_make or where it failed. Immutable once published. */
const struct red_nodes *red_nodes(void);

#endif
