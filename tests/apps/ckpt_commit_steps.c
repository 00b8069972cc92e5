/* SPDX-License-Identifier: MIT */
/* A checkpointing program written without sluice in mind: every rank (the launcher's, or 0:
 * launcher_env.h) writes its own file DIR/ckpt.<rank> with plain POSIX calls, step after step,
 * and a later run reads every member back and checks each byte. No MPI: ranks agree through
 * marker files.
 *
 *   ckpt_commit_steps write DIR STEPS [--fsync] [--big RANK] [--kill-at STEP]
 *       writes steps 1..STEPS; sizes are uneven (0 bytes, 1 byte, a few MiB, non-round);
 *       --fsync: fsync each member before closing it and wait for every rank between steps
 *       (not at the --kill-at step, whose commit must start on its own);
 *       --big RANK: that rank's member is 48 MiB (a long commit);
 *       --kill-at STEP: at that step the --big rank, once its member is closed, waits until a
 *       container commit is under way (a temporary container name appears in DIR) and then
 *       kills itself with SIGKILL.
 *   ckpt_commit_steps partial DIR
 *       only even ranks write members of the set DIR/part.%r (rank 0 writes two: its own and
 *       member 1000), in different orders; then every rank waits, without exiting, until the
 *       set's container exists (at most 60 s): a set that cannot complete is committed anyway.
 *   ckpt_commit_steps verify DIR STEP NMEMBERS
 *       each rank checks members r, r+size, ... < NMEMBERS against step STEP's bytes.
 * Exit status: 0 ok, 1 wrong data, 2 usage, 3 an I/O call failed (message on stderr). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launcher_env.h"

static int big_rank = -1;

static uint64_t member_size(int rank, int step)
{
    if (rank == big_rank)
        return (48u << 20) + (uint64_t)step;
    switch (rank % 4) {
    case 0:
        return rank == 0 ? 0 : 4096; /* empty member, and an exact block */
    case 1:
        return 1; /* one byte */
    case 2:
        return (3u << 20) + 12345 + (uint64_t)step; /* a few MiB, not round */
    default:
        return 100000 + (uint64_t)rank * 7 + (uint64_t)step;
    }
}

static unsigned char byte_at(int rank, int step, uint64_t i)
{
    return (unsigned char)(i * 31 + (uint64_t)rank * 17 + (uint64_t)step * 101 + (i >> 9));
}

static void fill(unsigned char *buf, size_t n, int rank, int step, uint64_t off)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = byte_at(rank, step, off + i);
}

static char abort_marker[4200];

/* Like MPI_Abort: the other ranks see the marker at their next barrier and stop too. */
static int die_io(const char *what, const char *path)
{
    fprintf(stderr, "ckpt_commit_steps: %s %s: %s\n", what, path, strerror(errno));
    if (abort_marker[0])
        close(open(abort_marker, O_WRONLY | O_CREAT, 0644));
    exit(3);
}

/* Marker-file barrier: no MPI in this program. */
static void barrier(const char *dir, const char *name, int rank, int size)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/.bar.%s.%d", dir, name, rank);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die_io("create", p);
    close(fd);
    for (int r = 0; r < size; r++) {
        snprintf(p, sizeof p, "%s/.bar.%s.%d", dir, name, r);
        while (access(p, F_OK) != 0) {
            if (access(abort_marker, F_OK) == 0)
                exit(3);
            usleep(2000);
        }
    }
}

/* True once a temporary container name (".<name>.sluice.tmp.<n>") exists in dir. Lists the
 * folder with the raw system call, as a monitoring tool would. */
static int commit_in_flight(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    char buf[8192];
    int found = 0;
    long n;
    while (!found && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            unsigned short reclen = *(unsigned short *)(buf + off + 16);
            const char *name = buf + off + 19;
            if (name[0] == '.' && strstr(name, ".sluice.tmp."))
                found = 1;
            off += reclen;
        }
    }
    close(fd);
    return found;
}

static int do_write(const char *dir, int steps, int do_fsync, int kill_at, int rank, int size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", dir, rank);
    snprintf(abort_marker, sizeof abort_marker, "%s/.bar.abort", dir);
    size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    for (int step = 1; step <= steps; step++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            die_io("open", path);
        uint64_t n = member_size(rank, step);
        /* Uneven request sizes, like a real code writing its arrays one by one. */
        for (uint64_t off = 0; off < n;) {
            size_t want = (size_t)(n - off < chunk ? n - off : chunk - (off % 977));
            fill(buf, want, rank, step, off);
            ssize_t w = write(fd, buf, want);
            if (w < 0)
                die_io("write", path);
            off += (uint64_t)w;
        }
        int sync_now = do_fsync && step != kill_at;
        if (sync_now && fsync(fd) != 0)
            die_io("fsync", path);
        if (close(fd) != 0)
            die_io("close", path);
        if (step == kill_at && rank == big_rank) {
            while (!commit_in_flight(dir))
                ;
            raise(SIGKILL);
        }
        if (sync_now) {
            char name[32];
            snprintf(name, sizeof name, "step%d", step);
            barrier(dir, name, rank, size);
        }
    }
    free(buf);
    return 0;
}

static int do_verify(const char *dir, int step, int nmembers, int rank, int size)
{
    char path[4096];
    int bad = 0;
    unsigned char *buf = malloc(1 << 20), *want = malloc(1 << 20);
    for (int m = rank; m < nmembers; m += size) {
        snprintf(path, sizeof path, "%s/ckpt.%d", dir, m);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            die_io("open", path);
        struct stat st;
        if (fstat(fd, &st) != 0)
            die_io("fstat", path);
        uint64_t n = member_size(m, step), off = 0;
        if ((uint64_t)st.st_size != n) {
            fprintf(stderr, "%s: size %lld, expected %llu\n", path, (long long)st.st_size,
                    (unsigned long long)n);
            bad = 1;
        }
        for (;;) {
            ssize_t r = read(fd, buf, 1 << 20);
            if (r < 0)
                die_io("read", path);
            if (r == 0)
                break;
            fill(want, (size_t)r, m, step, off);
            if (off + (uint64_t)r > n || memcmp(buf, want, (size_t)r) != 0) {
                fprintf(stderr, "%s: wrong bytes in [%llu, %llu)\n", path, (unsigned long long)off,
                        (unsigned long long)(off + (uint64_t)r));
                bad = 1;
                break;
            }
            off += (uint64_t)r;
        }
        if (off != n && !bad) {
            fprintf(stderr, "%s: read %llu bytes, expected %llu\n", path, (unsigned long long)off,
                    (unsigned long long)n);
            bad = 1;
        }
        close(fd);
    }
    free(buf);
    free(want);
    return bad;
}

static int do_partial(const char *dir, int rank)
{
    char path[4096];
    int ids[2] = {rank, rank == 0 ? 1000 : -1};
    if (rank % 2 == 0) {
        for (int k = 0; k < 2; k++) {
            int id = ids[rank == 0 ? 1 - k : k];
            if (id < 0)
                continue;
            snprintf(path, sizeof path, "%s/part.%d", dir, id);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0)
                die_io("open", path);
            char line[64];
            int n = snprintf(line, sizeof line, "member %d\n", id);
            if (write(fd, line, (size_t)n) != n)
                die_io("write", path);
            if (close(fd) != 0)
                die_io("close", path);
        }
    }
    snprintf(path, sizeof path, "%s/part.@r.sluice", dir);
    for (int i = 0; i < 6000; i++) {
        struct stat st;
        if (stat(path, &st) == 0)
            return 0;
        usleep(10000);
    }
    fprintf(stderr, "ckpt_commit_steps: %s did not appear while the job ran\n", path);
    return 1;
}

int main(int argc, char **argv)
{
    int rank = launcher_rank(), size = launcher_size();
    if (argc >= 4 && strcmp(argv[1], "write") == 0) {
        int do_fsync = 0, kill_at = 0;
        for (int i = 4; i < argc; i++) {
            if (strcmp(argv[i], "--fsync") == 0)
                do_fsync = 1;
            else if (strcmp(argv[i], "--big") == 0 && i + 1 < argc)
                big_rank = atoi(argv[++i]);
            else if (strcmp(argv[i], "--kill-at") == 0 && i + 1 < argc)
                kill_at = atoi(argv[++i]);
            else
                return 2;
        }
        return do_write(argv[2], atoi(argv[3]), do_fsync, kill_at, rank, size);
    }
    if (argc == 3 && strcmp(argv[1], "partial") == 0)
        return do_partial(argv[2], rank);
    if (argc >= 5 && strcmp(argv[1], "verify") == 0) {
        for (int i = 5; i < argc; i++)
            if (strcmp(argv[i], "--big") == 0 && i + 1 < argc)
                big_rank = atoi(argv[++i]);
        return do_verify(argv[2], atoi(argv[3]), atoi(argv[4]), rank, size);
    }
    fprintf(stderr, "usage: ckpt_commit_steps write DIR STEPS [--fsync] [--big R] [--kill-at S]\n"
                    "       ckpt_commit_steps partial DIR\n"
                    "       ckpt_commit_steps verify DIR STEP NMEMBERS [--big R]\n");
    return 2;
}
