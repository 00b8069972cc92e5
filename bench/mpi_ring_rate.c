/* SPDX-License-Identifier: MIT */
/* The network's bound for partner redundancy on the machine it runs on: every rank streams M MiB
 * to the next rank in pieces of P KiB, at most W unanswered (as sluice's partner streams do),
 * while it receives as much from the previous one. Plain MPI, no sluice. Rank 0 prints the
 * slowest rank's rate, MB/s per rank (the time from a barrier to that rank's last piece in and
 * last answer back), best of R runs.
 *   sluice-bench-mpi_ring_rate [MIB] [PIECE_KIB] [WINDOW] [RUNS]   (16 1024 4 5) */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double one_run(int rank, int size, long bytes, int piece, int window, char *out, char *in)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long npieces = (bytes + piece - 1) / piece;
    MPI_Request *sreq = calloc((size_t)window, sizeof *sreq), *areq = calloc((size_t)window, sizeof *areq);
    char ack[window], acks[window];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    long sent = 0, answered = 0, got = 0;
    for (int k = 0; k < window; k++)
        sreq[k] = areq[k] = MPI_REQUEST_NULL;
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (npieces)
        MPI_Irecv(in, piece, MPI_BYTE, prev, 1, MPI_COMM_WORLD, &rreq);
    while (answered < npieces || got < npieces) {
        while (sent < npieces && sent - answered < window) {
            int slot = (int)(sent % window);
            MPI_Isend(out + (sent * piece) % bytes, piece, MPI_BYTE, next, 1, MPI_COMM_WORLD, &sreq[slot]);
            MPI_Irecv(&acks[slot], 1, MPI_BYTE, next, 2, MPI_COMM_WORLD, &areq[slot]);
            sent++;
        }
        int flag = 0, moved = 0;
        if (answered < sent) {
            int slot = (int)(answered % window);
            MPI_Test(&areq[slot], &flag, MPI_STATUS_IGNORE);
            if (flag) {
                MPI_Wait(&sreq[slot], MPI_STATUS_IGNORE);
                answered++;
                moved = 1;
            }
        }
        if (got < npieces) {
            MPI_Test(&rreq, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                ack[got % window] = 1;
                MPI_Send(&ack[got % window], 1, MPI_BYTE, prev, 2, MPI_COMM_WORLD);
                if (++got < npieces)
                    MPI_Irecv(in, piece, MPI_BYTE, prev, 1, MPI_COMM_WORLD, &rreq);
                moved = 1;
            }
        }
        if (!moved)
            sched_yield(); /* more ranks than cores: let the peers run (sluice's waits do too) */
    }
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    free(sreq);
    free(areq);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long mib = argc > 1 ? atol(argv[1]) : 16;
    int piece = (argc > 2 ? atoi(argv[2]) : 1024) << 10, window = argc > 3 ? atoi(argv[3]) : 4;
    int runs = argc > 4 ? atoi(argv[4]) : 5;
    if (mib < 1 || piece < 1024 || window < 1 || window > 64 || runs < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_ring_rate: usage: [MIB >= 1] [PIECE_KIB >= 1] [WINDOW 1-64] [RUNS >= 1], 2 "
                            "ranks or more\n");
        MPI_Finalize();
        return 2;
    }
    long bytes = mib << 20;
    char *out = malloc((size_t)bytes), *in = malloc((size_t)piece);
    if (!out || !in)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(out, rank, (size_t)bytes);
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t = one_run(rank, size, bytes, piece, window, out, in);
        best = t < best ? t : best;
    }
    if (rank == 0)
        printf("ring %d ranks, %ld MiB per rank in pieces of %d KiB, window %d: %.1f MB/s per rank (best of "
               "%d: %.4f s)\n",
               size, mib, piece >> 10, window, (double)bytes / best / 1e6, runs, best);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
