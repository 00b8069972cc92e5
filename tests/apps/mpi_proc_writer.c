/* SPDX-License-Identifier: MIT */
/* An MPI program whose per-rank checkpoint is written by another process of the rank, as
 * real programs do (written without sluice in mind):
 *   mpi_proc_writer system STEPS   system("head -c N gen.<r> > ckpt.<r>") every step
 *   mpi_proc_writer fork STEPS     a forked child writes ckpt.<r> with stdio and _exit()s
 * After each step the rank reads its checkpoint back and the ranks sum its bytes; rank 0
 * prints one line per step (the sum over all ranks and the number of ranks that read exactly
 * what was written). Sizes differ per rank and step. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t size_of(int rank, int step)
{
    return (size_t)(1000 + rank * 4099 + step * 777);
}

static unsigned char byte_at(int rank, int step, size_t i)
{
    return (unsigned char)((i * 131u + (unsigned)rank * 7u + (unsigned)step * 3u) & 0xff);
}

static int write_by_fork(const char *name, int rank, int step)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *f = fopen(name, "wb");
        if (f == NULL)
            _exit(3);
        size_t n = size_of(rank, step);
        for (size_t i = 0; i < n; i++)
            fputc(byte_at(rank, step, i), f);
        _exit(fclose(f) == 0 ? 0 : 4);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int write_by_system(const char *name, int rank, int step)
{
    /* the bytes come from a generated source so that the child only copies them */
    char src[64], cmd[256];
    snprintf(src, sizeof src, "gen.%d", rank);
    FILE *f = fopen(src, "wb");
    if (f == NULL)
        return -1;
    size_t n = size_of(rank, step);
    for (size_t i = 0; i < n; i++)
        fputc(byte_at(rank, step, i), f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "head -c %zu %s > %s", n, src, name);
    int rc = system(cmd);
    unlink(src);
    return rc == 0 ? 0 : -1;
}

/* 1 if the file holds exactly what step wrote; *sum gets the sum of its bytes. */
static int check(const char *name, int rank, int step, uint64_t *sum)
{
    FILE *f = fopen(name, "rb");
    *sum = 0;
    if (f == NULL)
        return 0;
    size_t n = 0;
    int ok = 1, c;
    while ((c = fgetc(f)) != EOF) {
        if (n >= size_of(rank, step) || (unsigned char)c != byte_at(rank, step, n))
            ok = 0;
        *sum += (unsigned)c;
        n++;
    }
    fclose(f);
    return ok && n == size_of(rank, step);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int by_fork = argc > 1 && strcmp(argv[1], "fork") == 0;
    int steps = argc > 2 ? atoi(argv[2]) : 1;
    char name[64];
    snprintf(name, sizeof name, "ckpt.%d", rank);
    for (int step = 0; step < steps; step++) {
        int wrote = (by_fork ? write_by_fork : write_by_system)(name, rank, step) == 0;
        uint64_t sum;
        int ok = wrote && check(name, rank, step, &sum);
        uint64_t tot = 0;
        int good = 0;
        MPI_Reduce(&sum, &tot, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&ok, &good, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("step %d: %d of %d ranks read back what their child wrote, byte sum %llu\n", step, good,
                   size, (unsigned long long)tot);
    }
    MPI_Finalize();
    return 0;
}
