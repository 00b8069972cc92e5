/* SPDX-License-Identifier: MIT */
/* A simulation's naive per-rank checkpoint, written without sluice in mind, and its restart-time
 * verifier. The rank comes from the launcher's environment (launcher_env.h), as in a program that
 * only needs its rank to name its files.
 *
 *   ckpt_writer write STEPS            every step writes, in the working directory:
 *       ckpt.<r>                 stdio (fopen/fprintf/fwrite/fclose), rewritten every step
 *       restart_<step>_<r>.dat   POSIX (open/write/pwrite/close), a new name every step
 *       chk_<step>/rank_<r>.bin  POSIX writev into a folder per step that the program creates
 *       rank<r>/ckpt.dat         stdio into a per-rank folder, rewritten every step
 *   ckpt_writer verify STEPS WRITERS   checks every byte of every member of WRITERS ranks
 *       (this process takes ranks r with r % size == rank), through the same names; prints one
 *       line per process and exits 1 on the first difference.
 *
 * Sizes vary by rank, kind and step over 0 bytes, 1 byte, a few MiB and non-round sizes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "launcher_env.h"

enum kind { K_STDIO, K_RESTART, K_STEPDIR, K_RANKDIR, K_COUNT };

static const size_t sizes[] = {0, 1, (3u << 20) + 12345, 777777, 4096, 65537};

static size_t member_size(int kind, int rank, int step)
{
    return sizes[(size_t)(rank + kind + step) % (sizeof sizes / sizeof sizes[0])];
}

static unsigned char byte_at(int kind, int rank, int step, size_t off)
{
    return (unsigned char)(((off * 2654435761u) >> 13) ^ (unsigned)(rank * 97 + step * 13 + kind * 5));
}

static void fill(unsigned char *buf, size_t n, int kind, int rank, int step)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = byte_at(kind, rank, step, i);
}

static void member_name(char *out, size_t cap, int kind, int rank, int step)
{
    switch (kind) {
    case K_STDIO:
        snprintf(out, cap, "ckpt.%d", rank);
        break;
    case K_RESTART:
        snprintf(out, cap, "restart_%d_%d.dat", step, rank);
        break;
    case K_STEPDIR:
        snprintf(out, cap, "chk_%d/rank_%d.bin", step, rank);
        break;
    default:
        snprintf(out, cap, "rank%d/ckpt.dat", rank);
        break;
    }
}

static void die(const char *what, const char *name)
{
    fprintf(stderr, "ckpt_writer: %s %s: %s\n", what, name, strerror(errno));
    exit(1);
}

static void write_stdio(const char *name, const unsigned char *buf, size_t n)
{
    FILE *f = fopen(name, "w");
    if (!f)
        die("fopen", name);
    /* The first bytes one by one with fputc, the rest in growing fwrite pieces. */
    size_t off = 0, piece = 1;
    for (; off < n && off < 7; off++)
        if (fputc(buf[off], f) == EOF)
            die("fputc", name);
    while (off < n) {
        size_t k = n - off < piece ? n - off : piece;
        if (fwrite(buf + off, 1, k, f) != k)
            die("fwrite", name);
        off += k;
        piece = piece * 3 + 1;
    }
    if (fclose(f) != 0)
        die("fclose", name);
}

static void write_posix(const char *name, const unsigned char *buf, size_t n)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open", name);
    size_t half = n / 2;
    /* second half first with pwrite (a hole until the first half lands), then write() */
    if (n - half > 0 && pwrite(fd, buf + half, n - half, (off_t)half) != (ssize_t)(n - half))
        die("pwrite", name);
    for (size_t off = 0; off < half;) {
        ssize_t k = write(fd, buf + off, half - off);
        if (k <= 0)
            die("write", name);
        off += (size_t)k;
    }
    if (close(fd) != 0)
        die("close", name);
}

static void write_vector(const char *name, const unsigned char *buf, size_t n)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open", name);
    struct iovec iov[3] = {
        {(void *)buf, n / 3}, {(void *)(buf + n / 3), n / 3}, {(void *)(buf + 2 * (n / 3)), n - 2 * (n / 3)}};
    size_t done = 0;
    while (done < n) {
        ssize_t k = writev(fd, iov, 3);
        if (k <= 0)
            die("writev", name);
        done += (size_t)k;
        /* advance the vector past what was written */
        size_t skip = (size_t)k;
        for (int i = 0; i < 3; i++) {
            size_t t = skip < iov[i].iov_len ? skip : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + t;
            iov[i].iov_len -= t;
            skip -= t;
        }
    }
    if (close(fd) != 0)
        die("close", name);
}

static int do_write(int rank, int steps)
{
    size_t cap = sizes[2];
    unsigned char *buf = malloc(cap);
    if (!buf)
        return 1;
    char name[256], dir[64];
    uint64_t total = 0;
    snprintf(dir, sizeof dir, "rank%d", rank);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        die("mkdir", dir);
    for (int step = 1; step <= steps; step++) {
        snprintf(dir, sizeof dir, "chk_%d", step);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            die("mkdir", dir);
        for (int kind = 0; kind < K_COUNT; kind++) {
            size_t n = member_size(kind, rank, step);
            fill(buf, n, kind, rank, step);
            member_name(name, sizeof name, kind, rank, step);
            if (kind == K_STDIO || kind == K_RANKDIR)
                write_stdio(name, buf, n);
            else if (kind == K_RESTART)
                write_posix(name, buf, n);
            else
                write_vector(name, buf, n);
            total += n;
        }
    }
    printf("rank %d wrote %d steps, %llu bytes\n", rank, steps, (unsigned long long)total);
    free(buf);
    return 0;
}

static int verify_member(const char *name, int kind, int rank, int step, unsigned char *buf, uint64_t *bytes)
{
    size_t n = member_size(kind, rank, step);
    struct stat st;
    if (stat(name, &st) != 0) {
        fprintf(stderr, "ckpt_writer: stat %s: %s\n", name, strerror(errno));
        return 1;
    }
    if ((size_t)st.st_size != n) {
        fprintf(stderr, "ckpt_writer: %s has %lld bytes, expected %zu\n", name, (long long)st.st_size, n);
        return 1;
    }
    int fd = open(name, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "ckpt_writer: open %s: %s\n", name, strerror(errno));
        return 1;
    }
    size_t got = 0;
    ssize_t k;
    while ((k = read(fd, buf + got, n + 1 - got)) > 0)
        got += (size_t)k;
    close(fd);
    if (got != n) {
        fprintf(stderr, "ckpt_writer: read %zu bytes of %s, expected %zu\n", got, name, n);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        if (buf[i] != byte_at(kind, rank, step, i)) {
            fprintf(stderr, "ckpt_writer: %s differs at byte %zu\n", name, i);
            return 1;
        }
    *bytes += n;
    return 0;
}

static int do_verify(int rank, int size, int steps, int writers)
{
    unsigned char *buf = malloc(sizes[2] + 1);
    if (!buf)
        return 1;
    char name[256];
    int members = 0;
    uint64_t bytes = 0;
    for (int r = rank; r < writers; r += size)
        for (int kind = 0; kind < K_COUNT; kind++) {
            int first = (kind == K_RESTART || kind == K_STEPDIR) ? 1 : steps;
            for (int step = first; step <= steps; step++) {
                member_name(name, sizeof name, kind, r, step);
                if (verify_member(name, kind, r, step, buf, &bytes) != 0)
                    return 1;
                members++;
            }
        }
    printf("rank %d verified %d members, %llu bytes\n", rank, members, (unsigned long long)bytes);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int rank = launcher_rank(), size = launcher_size();
    if (argc == 3 && strcmp(argv[1], "write") == 0)
        return do_write(rank, atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "verify") == 0)
        return do_verify(rank, size, atoi(argv[2]), atoi(argv[3]));
    fprintf(stderr, "usage: %s write STEPS | verify STEPS WRITERS\n", argv[0]);
    return 2;
}
