/* SPDX-License-Identifier: MIT */
/* An MPI program that fails the way most do: every rank writes its file ckpt.<rank> in DIR
 * (if DIR is given), then rank 1 calls exit(1) without MPI_Finalize while the others wait in
 * MPI_Barrier. Usage: mpi_exit_early [DIR [stop]]; with "stop", rank 0 writes nothing and, once
 * every rank has written (a barrier), stops itself (SIGSTOP) as a hung peer would. Without sluice the
 * launcher ends the job at once. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int stop = argc > 2;
    if (argc > 1 && !(stop && rank == 0)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ckpt.%d", argv[1], rank);
        FILE *f = fopen(path, "w");
        if (f == NULL || fprintf(f, "rank %d\n", rank) < 0 || fclose(f) != 0) {
            perror(path);
            return 2;
        }
    }
    if (stop) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            raise(SIGSTOP);
        usleep(300000);
    }
    if (rank == 1) {
        fprintf(stderr, "rank 1 fails\n");
        exit(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
