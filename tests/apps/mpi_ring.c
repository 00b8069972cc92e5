/* SPDX-License-Identifier: MIT */
/* A plain MPI program (knows nothing of sluice): passes a token around a ring, sums the ranks
 * with MPI_Allreduce, gathers one line per rank on rank 0 and prints everything from rank 0 in
 * a fixed order. Usage: mpi_ring [exit-status]; the status is returned after MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 128

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the token gains rank+1 at every hop */
    long token = 0;
    if (size == 1) {
        token = 1;
    } else if (rank == 0) {
        token = 1;
        MPI_Send(&token, 1, MPI_LONG, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_LONG, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank + 1;
        MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, 7, MPI_COMM_WORLD);
    }

    long mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    char line[LINE];
    memset(line, 0, sizeof line);
    snprintf(line, sizeof line, "rank %d of %d: sum of ranks %ld", rank, size, sum);
    char *all = rank == 0 ? calloc((size_t)size, LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ring of %d: token %ld\n", size, token);
        for (int r = 0; r < size; r++)
            printf("%s\n", all + (size_t)r * LINE);
        free(all);
        fflush(stdout);
    }
    MPI_Finalize();
    return argc > 1 ? atoi(argv[1]) : 0;
}
