/* SPDX-License-Identifier: MIT */
/* A small MPI program for the trace tests, written without sluice in mind except for one
 * optional hook: if the process has a `sluice_trace_mark` symbol (sluice preloaded), it marks
 * each phase; otherwise it runs the same and prints the same. Rank 0 prints the results. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

__attribute__((noinline)) static void mark(const char *label)
{
    static void (*fn)(const char *);
    static int looked;
    if (!looked) {
        *(void **)&fn = dlsym(RTLD_DEFAULT, "sluice_trace_mark");
        looked = 1;
    }
    if (fn)
        fn(label);
}

__attribute__((noinline)) static double compute_phase(int rank, int step)
{
    mark("compute");
    double x = 0;
    for (int i = 1; i <= 1000; i++)
        x += (double)(rank + 1) * step / i;
    return x;
}

__attribute__((noinline)) static long exchange_phase(long value)
{
    long sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    mark("allreduce");
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int step = 1; step <= 5; step++) {
        double x = compute_phase(rank, step);
        long sum = exchange_phase((long)x);
        if (rank == 0)
            printf("step %d: sum %ld over %d ranks\n", step, sum, size);
    }
    MPI_Finalize();
    return 0;
}
