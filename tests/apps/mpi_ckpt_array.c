/* SPDX-License-Identifier: MIT */
/* A program of the first seed's shape: an NZ x NY x NX array of doubles, block-decomposed over
 * the grid MPI_Dims_create(size, 3) gives (MPI_Cart_create, no reordering); each rank writes
 * DIR/ckpt.<rank> as a header of H bytes followed by its block in C order, or reads it back on
 * restart and checks every value (a function of the global index) and the header.
 *
 *   mpi_ckpt_array write|read DIR NZ NY NX H
 *
 * CKPT_ARRAY_LATE_MS=N: every rank but 0 waits N ms before it opens its member, each step (a
 * rank slow to start or a loaded node: the other members come late).
 * CKPT_ARRAY_WRITERS=W: only ranks 0..W-1 hold blocks (the grid is MPI_Dims_create(W)); the
 * others write and read nothing (ranks that serve, not compute).
 *
 * Exit 0 when every rank's check passed; a mismatch names the rank, element and values. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double value(long z, long y, long x, long NY, long NX)
{
    return (double)((z * NY + y) * NX + x) + 0.25;
}

static void header(unsigned char *h, long H, long NZ, long NY, long NX)
{
    for (long i = 0; i < H; i++)
        h[i] = (unsigned char)(i * 7 + 3);
    if (H >= 40)
        snprintf((char *)h, 40, "ckpt_array %ldx%ldx%ld", NZ, NY, NX);
}

int main(int argc, char **argv)
{
    if (argc != 7 && !(argc == 8 && strcmp(argv[1], "write") == 0)) {
        fprintf(stderr, "usage: mpi_ckpt_array write|read DIR NZ NY NX H  |  write DIR NZ NY NX H STEPS\n");
        return 2;
    }
    /* STEPS > 1: that many checkpoints, each made durable by fsync before its close (one version
     * each); step s adds (STEPS - 1 - s) * 1000 to every value, so that only the last step's
     * checkpoint holds the values a restart checks. */
    long steps = argc == 8 ? atol(argv[7]) : 1;
    MPI_Init(&argc, &argv);
    int rank, size, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *w = getenv("CKPT_ARRAY_WRITERS");
    int writers = w && atoi(w) > 0 && atoi(w) < size ? atoi(w) : size;
    MPI_Dims_create(writers, 3, dims);
    MPI_Comm cart; /* MPI_COMM_NULL on the ranks past the writers */
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    long N[3] = {atol(argv[3]), atol(argv[4]), atol(argv[5])}, H = atol(argv[6]);
    long lo[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    if (rank < writers) {
        MPI_Cart_coords(cart, rank, 3, coords);
        for (int d = 0; d < 3; d++) {
            lo[d] = N[d] * coords[d] / dims[d];
            n[d] = N[d] * (coords[d] + 1) / dims[d] - lo[d];
        }
    }
    size_t count = (size_t)(n[0] * n[1] * n[2]);
    double *blk = malloc((count ? count : 1) * sizeof(double));
    unsigned char *h = malloc((size_t)H + 1), *h2 = malloc((size_t)H + 1);
    header(h, H, N[0], N[1], N[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", argv[2], rank);
    int bad = 0;
    const char *late = getenv("CKPT_ARRAY_LATE_MS");
    if (rank >= writers) {
        for (long s = 0; s < steps && strcmp(argv[1], "write") == 0; s++)
            if (steps > 1)
                MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(argv[1], "write") == 0) {
        for (long s = 0; s < steps && !bad; s++) {
            if (late && rank > 0)
                usleep((useconds_t)atol(late) * 1000);
            size_t i = 0;
            for (long z = 0; z < n[0]; z++)
                for (long y = 0; y < n[1]; y++)
                    for (long x = 0; x < n[2]; x++)
                        blk[i++] = value(lo[0] + z, lo[1] + y, lo[2] + x, N[1], N[2]) +
                                   (double)(steps - 1 - s) * 1000;
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(h, 1, (size_t)H, f) != (size_t)H ||
                fwrite(blk, sizeof(double), count, f) != count || fflush(f) != 0 ||
                (steps > 1 && fsync(fileno(f)) != 0) || fclose(f) != 0) {
                fprintf(stderr, "rank %d: cannot write %s (step %ld)\n", rank, path, s);
                bad = 1;
            }
            if (steps > 1)
                MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
            bad = 1;
        } else {
            size_t got = fread(h2, 1, (size_t)H, f);
            if (got != (size_t)H || memcmp(h, h2, (size_t)H) != 0) {
                fprintf(stderr, "rank %d: header differs (%zu of %ld bytes read)\n", rank, got, H);
                bad = 1;
            }
            got = fread(blk, sizeof(double), count, f);
            char extra;
            if (got != count || fread(&extra, 1, 1, f) != 0) {
                fprintf(stderr, "rank %d: block of %zu values, read %zu (or more after it)\n", rank, count,
                        got);
                bad = 1;
            }
            size_t i = 0;
            for (long z = 0; !bad && z < n[0]; z++)
                for (long y = 0; !bad && y < n[1]; y++)
                    for (long x = 0; !bad && x < n[2]; x++, i++) {
                        double want = value(lo[0] + z, lo[1] + y, lo[2] + x, N[1], N[2]);
                        if (blk[i] != want) {
                            fprintf(stderr, "rank %d: element (%ld,%ld,%ld) is %g, want %g\n", rank,
                                    lo[0] + z, lo[1] + y, lo[2] + x, blk[i], want);
                            bad = 1;
                        }
                    }
            fclose(f);
        }
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(blk);
    free(h);
    free(h2);
    if (cart != MPI_COMM_NULL)
        MPI_Comm_free(&cart);
    MPI_Finalize();
    return any ? 1 : 0;
}
