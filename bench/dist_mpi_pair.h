/* SPDX-License-Identifier: MIT */
/* What the two MPI benchmarks between ranks 0 and 1 (dist_mpi_pingpong.c, dist_write_bound.c)
 * share: refusing a bad command line or too few ranks, and the communicator of ranks 0 and 1
 * (further ranks only take part in MPI_Init/Finalize, so that they never block a barrier).
 * Header-only: every bench source is its own executable. */
#ifndef SLUICE_BENCH_DIST_MPI_PAIR_H
#define SLUICE_BENCH_DIST_MPI_PAIR_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

/* Rank 0 prints the line, every rank finalizes MPI; returns main's status for a usage error. */
static inline int dist_mpi_refuse(int rank, const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    MPI_Finalize();
    return 2;
}

/* The communicator of ranks 0 and 1 (MPI_COMM_NULL on the others). */
static inline MPI_Comm dist_mpi_pair(int rank)
{
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &pair);
    return pair;
}

#endif
