/* SPDX-License-Identifier: MIT */
/* The nodes of a job (red_nodes.h): one MPI_Allgather of the host ids. */
#include "ckpt/redundancy/red_nodes.h"

#include "common/host_id.h"
#include "mpi/wait_help.h"

#include <stdlib.h>
#include <string.h>

static struct red_nodes *_Atomic published;

const struct red_nodes *red_nodes(void)
{
    return __atomic_load_n(&published, __ATOMIC_ACQUIRE);
}

static void nodes_free(struct red_nodes *n)
{
    if (!n)
        return;
    free(n->node_of);
    free(n->leader);
    free(n->nranks);
    free(n->host);
    free(n);
}

void red_nodes_make(MPI_Comm comm)
{
    int size = 0, rank = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    char mine[SLUICE_HOST_ID_LEN + 1] = {0}, *all = malloc((size_t)size * 17);
    struct red_nodes *n = calloc(1, sizeof *n);
    int ok = all && n;
    if (n) {
        n->node_of = calloc((size_t)size, sizeof *n->node_of);
        n->leader = calloc((size_t)size, sizeof *n->leader);
        n->nranks = calloc((size_t)size, sizeof *n->nranks);
        n->host = calloc((size_t)size, sizeof *n->host);
        ok = ok && n->node_of && n->leader && n->nranks && n->host;
    }
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    sluice_host_id(mine);
    if (ok && sluice_quiet_allgather(mine, 17, MPI_CHAR, all, 17, MPI_CHAR, comm) == MPI_SUCCESS) {
        n->size = size;
        n->rank = rank;
        for (int r = 0; r < size; r++) { /* ranks ascending: a node's first rank is its lowest */
            int k = 0;
            while (k < n->nnodes && memcmp(n->host[k], all + (size_t)r * 17, 16) != 0)
                k++;
            if (k == n->nnodes) {
                memcpy(n->host[k], all + (size_t)r * 17, 16);
                n->leader[k] = r;
                n->nnodes++;
            }
            n->node_of[r] = k;
            n->nranks[k]++;
        }
        n->mine = n->node_of[rank];
        nodes_free(__atomic_exchange_n(&published, n, __ATOMIC_ACQ_REL));
        n = NULL;
    }
    nodes_free(n);
    free(all);
}
