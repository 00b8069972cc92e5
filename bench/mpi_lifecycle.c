/* SPDX-License-Identifier: MIT */
/* What sluice costs a plain MPI program per rank: the time MPI_Init and MPI_Finalize take, the
 * threads the process has, its resident memory, and the CPU share of sluice's progress thread
 * (found by its name in /proc/self/task; its schedstat run time) while the program sleeps or busy-polls in
 * MPI. A plain MPI program: sluice comes in only through LD_PRELOAD (bench/scale.sh runs it both ways).
 *
 *   sluice-bench-mpi_lifecycle [idle-seconds (default 2)] [sleep|poll]
 *
 * Each rank prints one line after MPI_Finalize (nothing is collective after it):
 *   rank init_us finalize_us threads rss_kib progress_cpu_pct */
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* CPU time (ns, from schedstat: exact, where stat's ticks are 10 ms) of the threads named
 * `name`, and the number of threads of the process. */
static long long threads_cpu_ns(const char *name, int *nthreads)
{
    DIR *d = opendir("/proc/self/task");
    long long ns = 0;
    *nthreads = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        (*nthreads)++;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        f = fopen(path, "r");
        long long run = 0;
        if (f && fscanf(f, "%lld", &run) == 1)
            ns += run;
        if (f)
            fclose(f);
    }
    closedir(d);
    return ns;
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    double idle_s = argc > 1 ? atof(argv[1]) : 2.0;
    int poll = argc > 2 && strcmp(argv[2], "poll") == 0;

    /* LIFECYCLE_THREAD_MULTIPLE=1: start MPI as sluice does for itself (its "plain-mt" mode). */
    const char *mt = getenv("LIFECYCLE_THREAD_MULTIPLE");
    int provided;
    uint64_t t0 = now_ns();
    if (mt && mt[0] == '1')
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    uint64_t t1 = now_ns();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Idle spell: the program sleeps, or spins in MPI as a waiting rank in a barrier does. */
    MPI_Barrier(MPI_COMM_WORLD);
    int nthreads = 0;
    long long c0 = threads_cpu_ns("sluice-progress", &nthreads);
    uint64_t w0 = now_ns();
    if (poll) {
        while ((double)(now_ns() - w0) < idle_s * 1e9) {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    } else {
        struct timespec ts = {(time_t)idle_s, (long)((idle_s - (double)(time_t)idle_s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    long long c1 = threads_cpu_ns("sluice-progress", &nthreads);
    double wall = (double)(now_ns() - w0) / 1e9;
    double pct = 100.0 * (double)(c1 - c0) / 1e9 / wall;
    long rss = rss_kib();

    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t2 = now_ns();
    MPI_Finalize();
    uint64_t t3 = now_ns();
    printf("%d %.0f %.0f %d %ld %.3f\n", rank, (double)(t1 - t0) / 1e3, (double)(t3 - t2) / 1e3, nthreads,
           rss, pct);
    return 0;
}
