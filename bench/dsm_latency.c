/* SPDX-License-Identifier: MIT */
/* DSM acquire/release latency against an MPI ping-pong of the same size on the same ranks
 * (run by bench/dsm.sh under mpiexec -n 3; rank 0 measures, rank 1 owns, rank 2 is the home).
 *   hit          READ + RELEASE of a chunk rank 0 holds (no message)
 *   read miss    READ of a chunk rank 0 dropped (sluice_dsm_free), home has it (1 round trip)
 *   read recall  READ of a chunk rank 1 just wrote: the home recalls it first
 *   write miss   WRITE of a chunk rank 1 just wrote: ownership moves 1 -> 0 through the home
 *   mpi rtt      MPI_Send + MPI_Recv of the same size, rank 0 <-> rank 2 (the home), measured once
 *                the DSM has been quiet for 20 ms (its progress thread no longer probing MPI)
 * Prints one line per size: medians in microseconds (best of ROUNDS rounds) and each miss in MPI
 * round trips.   usage: sluice-bench-dsm_latency [ITERS [ROUNDS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice_dsm.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static int rank, size;

/* The chunk's home must be rank 2 (address mod 3 servers). */
static unsigned long addr_homed_on(int home, unsigned long k)
{
    return (unsigned long)home + 3ul * k;
}

/* Medians of one round for one size: hit, read miss, read recall, write miss, MPI rtt. */
static void bench_size(size_t bytes, int iters, double out[5])
{
    double *t = calloc((size_t)iters, sizeof *t);
    unsigned long a = addr_homed_on(2, bytes);
    double hit = 0, miss = 0, recall = 0, wmiss = 0, rtt = 0;
    /* hit */
    sluice_dsm_chain *c = sluice_dsm_malloc(a, bytes, SLUICE_DSM_MESI);
    if (rank == 2) {
        memset(sluice_dsm_write(c), 1, bytes);
        sluice_dsm_release(c);
    }
    sluice_dsm_barrier(1, 3);
    if (rank == 0) {
        sluice_dsm_read(c);
        sluice_dsm_release(c);
        for (int i = 0; i < iters; i++) {
            double t0 = now_us();
            sluice_dsm_read(c);
            sluice_dsm_release(c);
            t[i] = now_us() - t0;
        }
        hit = median(t, iters);
        /* read miss: the local copy is dropped before each read */
        for (int i = 0; i < iters; i++) {
            sluice_dsm_free(c);
            c = sluice_dsm_malloc(a, bytes, SLUICE_DSM_MESI);
            double t0 = now_us();
            sluice_dsm_read(c);
            sluice_dsm_release(c);
            t[i] = now_us() - t0;
        }
        miss = median(t, iters);
    }
    sluice_dsm_barrier(1, 3);
    /* read after rank 1's write, and write after rank 1's write: alternate with rendezvous */
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < iters; i++) {
            if (rank == 1) {
                unsigned char *p = sluice_dsm_write(c);
                p[0] = (unsigned char)i;
                sluice_dsm_release(c);
                sluice_dsm_wakeup(10);
                sluice_dsm_sleep(11);
            } else if (rank == 0) {
                sluice_dsm_sleep(10);
                double t0 = now_us();
                unsigned char *p = kind == 0 ? sluice_dsm_read(c) : sluice_dsm_write(c);
                if (p[0] != (unsigned char)i)
                    fprintf(stderr, "dsm_latency: stale read %u, want %u\n", p[0], (unsigned char)i);
                sluice_dsm_release(c);
                t[i] = now_us() - t0;
                sluice_dsm_wakeup(11);
            }
        }
        if (rank == 0)
            *(kind == 0 ? &recall : &wmiss) = median(t, iters);
        sluice_dsm_barrier(1, 3);
    }
    /* MPI ping-pong of the same size between rank 0 and the home, once the DSM is quiet: for
     * SLUICE_DSM_SPIN (2 ms) after its last message the progress thread keeps probing MPI, which
     * slowed a 64-byte ping-pong measured right after the DSM phases from 1.2-1.4 us to 1.5-2.6 us
     * (the GPU machine) and made every miss look closer to it than it is. */
    unsigned char *buf = calloc(1, bytes);
    struct timespec quiet = {0, 20 * 1000 * 1000};
    nanosleep(&quiet, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            double t0 = now_us();
            MPI_Send(buf, (int)bytes, MPI_BYTE, 2, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t[i] = now_us() - t0;
        } else if (rank == 2) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        rtt = median(t, iters);
        double v[5] = {hit, miss, recall, wmiss, rtt};
        memcpy(out, v, sizeof v);
    }
    free(buf);
    free(t);
    sluice_dsm_free(c);
    sluice_dsm_barrier(1, 3);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (sluice_dsm_init() != 0)
        return 1;
    rank = sluice_dsm_rank();
    size = sluice_dsm_size();
    if (size != 3) {
        if (rank == 0)
            fprintf(stderr, "dsm_latency: run with 3 ranks (measuring, owner, home)\n");
        return 2;
    }
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    size_t sizes[] = {64, 4096, 65536, 1 << 20};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double best[NS][5];
    /* Rounds interleave the sizes and the DSM with MPI; each cell keeps its best round, so
     * that a noisy neighbour on a shared node hurts both columns alike. */
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NS; i++) {
            double v[5];
            bench_size(sizes[i], sizes[i] >= (1 << 20) ? iters / 4 + 1 : iters, v);
            for (int k = 0; k < 5; k++)
                if (r == 0 || v[k] < best[i][k])
                    best[i][k] = v[k];
        }
    if (rank == 0) {
        printf("| bytes | hit | read miss | read recall | write miss | MPI rtt | miss / rtt | recall / rtt | "
               "write miss / rtt |\n");
        printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < NS; i++) {
            const double *b = best[i];
            printf("| %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", sizes[i], b[0], b[1],
                   b[2], b[3], b[4], b[1] / b[4], b[2] / b[4], b[3] / b[4]);
        }
    }
    sluice_dsm_finalize();
    MPI_Finalize();
    return 0;
}
