/* SPDX-License-Identifier: MIT */
/* Benchmark: raw MPI point-to-point between ranks 0 and 1, the yardstick for sluice's remote
 * OpenCL figures (bench/dist_opencl.sh prints them side by side). Plain MPI, blocking
 * MPI_Send/MPI_Recv between ranks 0 and 1; further ranks only take part in MPI_Init/Finalize.
 *
 *   mpiexec -n 2 sluice-bench-dist_mpi_pingpong [common options]   (dist_bench.h lists them)
 *
 *   latency: a 0-byte ping-pong, --lat-reps round trips after 10 warm-ups (median, p10, p90 of one
 *            round trip): what a remote command's request and reply cost at the least;
 *   send:    rank 0 sends SIZE bytes to rank 1, which answers with 0 bytes: the shape of a
 *            blocking remote write (data out, completion back);
 *   recv:    rank 0 sends 0 bytes, rank 1 answers with SIZE bytes: a blocking remote read.
 * Repetitions per size as dist_opencl (dist_reps_for), one warm-up each, GB/s (10^9 B/s) from
 * the median. Rank 0 prints on stdout, one fact per line:
 *   mpi <first line of MPI_Get_library_version>
 *   latency_us <median> <p10> <p90> <reps>
 *   send <bytes> <reps> <GB/s> <median us>     (and recv ...)
 * Never passes or fails on timing. */
#include "dist_bench.h"
#include "dist_mpi_pair.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "sluice-bench-dist_mpi_pingpong"

/* Ranks 0 and 1 only, so that extra ranks never block a barrier. */
static MPI_Comm pair = MPI_COMM_NULL;

/* One exchange as rank 0 sees it: `out` bytes to rank 1, `in` bytes back. Rank 1 mirrors it. */
static void exchange(int rank, char *buf, size_t out, size_t in)
{
    if (rank == 0) {
        MPI_Send(buf, (int)out, MPI_BYTE, 1, 0, pair);
        MPI_Recv(buf, (int)in, MPI_BYTE, 1, 0, pair, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, (int)out, MPI_BYTE, 0, 0, pair, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)in, MPI_BYTE, 0, 0, pair);
    }
}

/* Times `reps` exchanges after `warm` untimed ones; the statistics are rank 0's. */
static struct dist_stats timed(int rank, char *buf, size_t out, size_t in, int warm, int reps)
{
    double *dt = malloc((size_t)reps * sizeof *dt);
    MPI_Barrier(pair);
    for (int i = -warm; i < reps; i++) {
        double t0 = dist_now();
        exchange(rank, buf, out, in);
        if (i >= 0)
            dt[i] = dist_now() - t0;
    }
    struct dist_stats s = dist_stats_of(dt, reps);
    free(dt);
    return s;
}

static void sweep(int rank, char *buf, const struct dist_opts *o, int send)
{
    for (int s = 0; s < o->nsizes; s++) {
        size_t size = o->sizes[s];
        int reps = dist_reps_for(o, size);
        struct dist_stats st = timed(rank, buf, send ? size : 0, send ? 0 : size, 1, reps);
        if (rank == 0) {
            printf("%s %zu %d %.3f %.1f\n", send ? "send" : "recv", size, reps,
                   (double)size / st.median / 1e9, st.median * 1e6);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct dist_opts o;
    dist_default_opts(&o);
    for (int i = 1; i < argc; i++)
        if (dist_common_opt(&o, argc, argv, &i, PROG) != 1)
            return dist_mpi_refuse(rank, "usage: mpiexec -n 2 " PROG " [options]\n%s", dist_common_usage);
    if (nranks < 2)
        return dist_mpi_refuse(rank, PROG ": needs 2 ranks (mpiexec -n 2)\n");
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(ver, &len);
        ver[strcspn(ver, "\n")] = '\0';
        printf("mpi %s\n", ver);
    }
    pair = dist_mpi_pair(rank);
    if (rank <= 1) {
        size_t max = 0;
        for (int s = 0; s < o.nsizes; s++)
            max = o.sizes[s] > max ? o.sizes[s] : max;
        char *buf = malloc(max);
        if (!buf) {
            fprintf(stderr, PROG ": no memory for %zu bytes\n", max);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(buf, 0x5a, max); /* touch every page before timing */
        struct dist_stats lat = timed(rank, buf, 0, 0, 10, o.lat_reps);
        if (rank == 0)
            printf("latency_us %.1f %.1f %.1f %d\n", lat.median * 1e6, lat.p10 * 1e6, lat.p90 * 1e6,
                   o.lat_reps);
        sweep(rank, buf, &o, 1);
        sweep(rank, buf, &o, 0);
        free(buf);
        MPI_Comm_free(&pair);
    }
    MPI_Finalize();
    return 0;
}
