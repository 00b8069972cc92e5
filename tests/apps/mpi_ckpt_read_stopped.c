/* SPDX-License-Identifier: MIT */
/* An MPI program that restarts from a checkpoint while one rank is stopped (SIGSTOP), written
 * without sluice in mind: every rank writes ckpt.<rank> in the working directory (fopen,
 * fwrite, fsync, fclose), all read one back, then rank STOPPED stops itself and rank READER
 * opens the checkpoint of rank OTHER with fopen, timing it, then continues rank STOPPED.
 *
 *   mpi_ckpt_read_stopped STOPPED READER OTHER
 * Prints (rank READER) "reread ok" or "reread failed: <strerror> after <s> s". Exit 0 unless
 * a call other than that fopen failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Is process pid stopped ("T" in /proc/<pid>/stat)? */
static int stopped(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && p[2] == 'T';
}

static int check(FILE *f, int rank)
{
    char buf[64], want[64];
    snprintf(want, sizeof want, "checkpoint of rank %d\n", rank);
    size_t n = fread(buf, 1, sizeof buf, f);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int stop = atoi(argv[1]), reader = atoi(argv[2]), other = atoi(argv[3]);
    char path[64];
    snprintf(path, sizeof path, "ckpt.%d", rank);
    FILE *f = fopen(path, "w");
    if (f == NULL || fprintf(f, "checkpoint of rank %d\n", rank) < 0 || fflush(f) != 0 ||
        fsync(fileno(f)) != 0 || fclose(f) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof path, "ckpt.%d", other);
    f = fopen(path, "r");
    if (f == NULL || !check(f, other)) {
        fprintf(stderr, "rank %d: first read of %s failed\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fclose(f);
    int pid = (int)getpid();
    int *pids = calloc((size_t)size, sizeof *pids);
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    if (rank == stop) {
        raise(SIGSTOP); /* the reader continues us */
    } else if (rank == reader) {
        while (!stopped(pids[stop]))
            usleep(1000);
        double t0 = now();
        f = fopen(path, "r");
        double dt = now() - t0;
        if (f != NULL && check(f, other))
            printf("reread ok\n");
        else
            printf("reread failed: %s after %.0f s\n", f ? "wrong bytes" : strerror(errno), dt);
        fflush(stdout);
        if (f != NULL)
            fclose(f);
        kill(pids[stop], SIGCONT);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
