/* SPDX-License-Identifier: MIT */
/* An MPI program that checkpoints and then waits in MPI the way many codes do: every rank
 * writes DIR/ckpt.<rank> (SIZE bytes, plain POSIX calls) and closes it; then every rank but the
 * last enters MPI_Barrier, where the MPI library spins on the processor, while the last rank
 * stays out of MPI and watches DIR (raw getdents64, as a monitoring tool would) for the set's
 * container (ckpt.@r.sluice) for at most WAIT seconds before it joins the barrier. The version
 * can become durable only if the ranks inside MPI_Barrier let sluice's commit progress.
 *
 *   mpi_ckpt_busy_wait DIR SIZE WAIT [sleep]
 *
 * With "sleep" the waiting ranks sleep instead (MPI_Ibarrier, then MPI_Test every 10 ms): the
 * reference, where sluice's threads have the processors to themselves.
 * The last rank prints "durable_in_barrier yes|no" and "waited_s <seconds>" on stdout.
 * Exit status: 0 ok (either answer), 2 usage, 3 an I/O call failed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int container_exists(const char *dir)
{
    int fd = (int)syscall(SYS_open, dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    char buf[16384];
    int found = 0;
    long n;
    while (!found && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
            unsigned short reclen = *(unsigned short *)(buf + off + 16);
            if (strcmp(buf + off + 19, "ckpt.@r.sluice") == 0)
                found = 1;
            off += reclen;
        }
    syscall(SYS_close, fd);
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "sleep") == 0)) {
        fprintf(stderr, "usage: mpi_ckpt_busy_wait DIR SIZE WAIT [sleep]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = strtoull(argv[2], NULL, 10);
    double wait = atof(argv[3]);

    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", argv[1], rank);
    unsigned char *buf = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(i * 31 + (size_t)rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, bytes) != (ssize_t)bytes || close(fd) != 0) {
        perror(path);
        return 3;
    }
    free(buf);

    if (rank == size - 1) {
        double t0 = now_s();
        int found = 0;
        while (!(found = container_exists(argv[1])) && now_s() - t0 < wait)
            usleep(10000);
        printf("durable_in_barrier %s\nwaited_s %.2f\n", found ? "yes" : "no", now_s() - t0);
        fflush(stdout);
    }
    if (argc == 5) {
        MPI_Request req;
        int done = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
            usleep(10000);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
