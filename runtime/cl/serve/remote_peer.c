/* SPDX-License-Identifier: MIT */
/* The peer hooks of the transport and the engine (remote_peer.h). */
#include "cl/serve/remote_peer.h"

#include <stdatomic.h>
#include <stddef.h>

#include "common/log.h"

static _Atomic(const struct sluice_remote_peer_ops *) peer_ops;

void sluice_remote_peer_ops_set(const struct sluice_remote_peer_ops *ops)
{
    atomic_store(&peer_ops, ops);
}

void sluice_remote_peer_failed(int rank, int mpi_rc, const char *what)
{
    const struct sluice_remote_peer_ops *ops = atomic_load(&peer_ops);
    if (ops != NULL && ops->failed != NULL)
        ops->failed(rank, mpi_rc, what);
    sluice_fatal(1,
                 "distributed OpenCL: an MPI call with rank %d failed while %s (MPI error %d), and no "
                 "fault handler is registered",
                 rank, what, mpi_rc);
}

void sluice_remote_peer_silent(int rank, uint64_t since, const char *what)
{
    const struct sluice_remote_peer_ops *ops = atomic_load(&peer_ops);
    if (ops != NULL && ops->silent != NULL)
        ops->silent(rank, since, what);
}
