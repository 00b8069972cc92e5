/* SPDX-License-Identifier: MIT */
/* The program's blocking MPI calls in which programs wait for other ranks (barriers, receives,
 * waits): they wait in runtime/mpi/wait_help.h, where the waiting thread also moves sluice's
 * commit along while sluice has work under way. Results, statuses and errors are the library's.
 * Only the MPI_ names: a tool's PMPI_ call goes to MPI.
 *
 * A receive or a wait decides on its own, call by call: while sluice has nothing under way it is
 * the library's own call. A barrier cannot: a blocking collective never matches a nonblocking one
 * (MPI 3.0, 5.12), and ranks decide at different moments, so with sluice active every rank's
 * MPI_Barrier is an MPI_Ibarrier and its wait, and only the helping is decided call by call
 * (with sluice inert it is the library's MPI_Barrier). The other collectives are left to the
 * library: their nonblocking forms use other algorithms, a cost to every program's collectives. */
#include <mpi.h>

#include "common/export.h"
#include "mpi/wait_help.h"

SLUICE_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    if (!sluice_mpi_barrier_waits())
        return PMPI_Barrier(comm);
    MPI_Request req;
    int rc = PMPI_Ibarrier(comm, &req);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_helping(&req, MPI_STATUS_IGNORE) : rc;
}

SLUICE_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                           MPI_Status *status)
{
    if (!sluice_mpi_should_help())
        return PMPI_Recv(buf, count, type, src, tag, comm, status);
    MPI_Request req;
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, &req);
    return rc == MPI_SUCCESS ? sluice_mpi_wait_helping(&req, status) : rc;
}

SLUICE_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (!sluice_mpi_should_help())
        return PMPI_Wait(req, status);
    return sluice_mpi_wait_helping(req, status);
}

SLUICE_EXPORT int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    if (!sluice_mpi_should_help())
        return PMPI_Waitall(count, reqs, statuses);
    return sluice_mpi_waitall_helping(count, reqs, statuses);
}
