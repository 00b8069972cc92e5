/* SPDX-License-Identifier: MIT */
/* A restart that re-opens its existing checkpoint for writing, the access pattern of common
 * I/O verifiers, written without sluice in mind. No MPI: the rank is the launcher's
 * (launcher_env.h; 0 without one).
 *
 *   ckpt_restart_rw write DIR
 *       rank r writes DIR/ckpt.<r> (an odd size that depends on r) with plain POSIX calls.
 *   ckpt_restart_rw rw DIR
 *       rank r opens DIR/ckpt.<r> O_WRONLY|O_CREAT and closes it (with RW_GEN=g > 0 in the
 *       environment: rewrites it in place with generation g's bytes), then forks a worker; the
 *       worker opens DIR/ckpt.<r> O_WRONLY|O_CREAT (no O_TRUNC) and
 *       closes it without writing, then opens it O_RDWR|O_CREAT, reads it whole and checks
 *       every byte; the parent waits for it.
 *   ckpt_restart_rw check DIR NMEMBERS
 *       checks DIR/ckpt.0 .. ckpt.<NMEMBERS-1> (e.g. extracted files) against what write wrote
 *       (RW_GEN=g: against generation g).
 * Exit status: 0 ok, 1 wrong data (first bad offset on stderr), 2 usage, 3 an I/O call failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher_env.h"

static uint64_t member_size(int rank)
{
    return 200000 + (uint64_t)rank * 4099 + 13;
}

static int gen; /* which generation of the bytes: 0 as written by `write` */

static unsigned char byte_at(int rank, uint64_t i)
{
    return (unsigned char)(i * 7 + (uint64_t)rank * 29 + (uint64_t)gen * 53 + (i >> 11) + 1);
}

static int die_io(const char *what, const char *path)
{
    fprintf(stderr, "ckpt_restart_rw: %s %s: %s\n", what, path, strerror(errno));
    return 3;
}

static int do_write(const char *path, int rank, int flags)
{
    uint64_t n = member_size(rank);
    unsigned char *buf = malloc(n);
    if (!buf)
        return 3;
    for (uint64_t i = 0; i < n; i++)
        buf[i] = byte_at(rank, i);
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return die_io("open", path);
    if (write(fd, buf, n) != (ssize_t)n)
        return die_io("write", path);
    if (close(fd) != 0)
        return die_io("close", path);
    free(buf);
    return 0;
}

/* Reads fd whole and compares it with rank's bytes. */
static int check_fd(int fd, const char *path, int rank)
{
    uint64_t n = member_size(rank);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return die_io("fstat", path);
    if ((uint64_t)st.st_size != n) {
        fprintf(stderr, "ckpt_restart_rw: %s: size %lld, expected %llu\n", path, (long long)st.st_size,
                (unsigned long long)n);
        return 1;
    }
    unsigned char *buf = malloc(n);
    if (!buf)
        return 3;
    uint64_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? die_io("read", path) : 1;
        got += (uint64_t)r;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (buf[i] != byte_at(rank, i)) {
            fprintf(stderr, "ckpt_restart_rw: %s: wrong byte at offset %llu (0x%02x, expected 0x%02x)\n",
                    path, (unsigned long long)i, buf[i], byte_at(rank, i));
            free(buf);
            return 1;
        }
    }
    free(buf);
    return 0;
}

static int worker(const char *path, int rank)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        return die_io("open O_WRONLY|O_CREAT", path);
    if (close(fd) != 0)
        return die_io("close", path);
    fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0)
        return die_io("open O_RDWR|O_CREAT", path);
    int rc = check_fd(fd, path, rank);
    if (close(fd) != 0)
        return die_io("close", path);
    return rc;
}

static int do_rw(const char *path, int rank)
{
    if (gen > 0) { /* rewritten in place; its commit runs while the worker reads */
        int rc = do_write(path, rank, O_WRONLY | O_CREAT);
        if (rc)
            return rc;
    } else { /* "does it exist? then it stays" */
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0 || close(fd) != 0)
            return die_io("open O_WRONLY|O_CREAT", path);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return die_io("fork", path);
    if (pid == 0)
        exit(worker(path, rank));
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return die_io("waitpid", path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int rank = launcher_rank();
    char path[4096];
    const char *g = getenv("RW_GEN");
    gen = g && *g ? atoi(g) : 0;
    if (strcmp(argv[1], "check") == 0 && argc == 4) {
        int rc = 0;
        for (int r = 0; r < atoi(argv[3]) && rc == 0; r++) {
            snprintf(path, sizeof path, "%s/ckpt.%d", argv[2], r);
            int fd = open(path, O_RDONLY);
            if (fd < 0)
                return die_io("open", path);
            rc = check_fd(fd, path, r);
            close(fd);
        }
        return rc;
    }
    snprintf(path, sizeof path, "%s/ckpt.%d", argv[2], rank);
    if (strcmp(argv[1], "write") == 0)
        return do_write(path, rank, O_WRONLY | O_CREAT | O_TRUNC);
    if (strcmp(argv[1], "rw") == 0)
        return do_rw(path, rank);
    return 2;
}
