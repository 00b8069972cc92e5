/* SPDX-License-Identifier: MIT */
/* A per-rank checkpoint writer with sizes chosen on the command line, written without sluice in
 * mind (plain POSIX, no MPI: the launcher's rank and size say who it is, launcher_env.h). Used by
 * the two-phase tests to put member boundaries where they want relative to the stripe unit.
 *
 *   ckpt_sized write DIR[,DIR...] SIZE...    rank r writes DIR/ckpt.<r> with SIZE[r % count]
 *                                            bytes, in odd-sized write() calls, then closes it;
 *                                            with several folders it writes all the files
 *                                            (one checkpoint set per folder) and closes them
 *                                            together, so that their commits overlap
 *   ckpt_sized verify DIR NMEMBERS SIZE...   each rank reads members r, r + size, ... below
 *                                            NMEMBERS and checks every byte and the length
 * Each byte depends on the member and its offset, so a byte in the wrong place is caught.
 * Exit status: 0 ok, 1 wrong data, 2 usage, 3 an I/O call failed (message on stderr). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher_env.h"

#define CHUNK ((1u << 20) + 17u)

static unsigned char byte_at(int member, uint64_t off)
{
    uint64_t x = off * 0x9E3779B1u + (uint64_t)member * 0x85EBCA77u + (off >> 13);
    return (unsigned char)(x ^ (x >> 17));
}

static uint64_t size_of(int member, char **sizes, int nsizes)
{
    return strtoull(sizes[member % nsizes], NULL, 0);
}

#define MAX_DIRS 8

static int do_write(char *dirs, int rank, uint64_t size)
{
    char path[MAX_DIRS][4096];
    int fd[MAX_DIRS], n = 0;
    for (char *save = NULL, *d = strtok_r(dirs, ",", &save); d && n < MAX_DIRS;
         d = strtok_r(NULL, ",", &save), n++) {
        snprintf(path[n], sizeof path[n], "%s/ckpt.%d", d, rank);
        fd[n] = open(path[n], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd[n] < 0) {
            fprintf(stderr, "ckpt_sized: open %s: %s\n", path[n], strerror(errno));
            return 3;
        }
    }
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return 3;
    for (uint64_t done = 0; done < size;) {
        size_t len = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
        for (size_t i = 0; i < len; i++)
            buf[i] = byte_at(rank, done + i);
        for (int k = 0; k < n; k++) {
            if (write(fd[k], buf, len) != (ssize_t)len) {
                fprintf(stderr, "ckpt_sized: write %s: %s\n", path[k], strerror(errno));
                return 3;
            }
        }
        done += len;
    }
    free(buf);
    for (int k = 0; k < n; k++) {
        if (close(fd[k]) != 0) {
            fprintf(stderr, "ckpt_sized: close %s: %s\n", path[k], strerror(errno));
            return 3;
        }
    }
    return 0;
}

static int do_verify(const char *dir, int member, uint64_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", dir, member);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "ckpt_sized: open %s: %s\n", path, strerror(errno));
        return 3;
    }
    unsigned char *buf = malloc(CHUNK);
    uint64_t done = 0;
    int rc = buf ? 0 : 3;
    while (rc == 0) {
        ssize_t r = read(fd, buf, CHUNK);
        if (r < 0) {
            fprintf(stderr, "ckpt_sized: read %s: %s\n", path, strerror(errno));
            rc = 3;
            break;
        }
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++) {
            if (done + (uint64_t)i >= size || buf[i] != byte_at(member, done + (uint64_t)i)) {
                fprintf(stderr, "ckpt_sized: %s: wrong byte at offset %llu\n", path,
                        (unsigned long long)(done + (uint64_t)i));
                rc = 1;
                break;
            }
        }
        done += (uint64_t)r;
    }
    if (rc == 0 && done != size) {
        fprintf(stderr, "ckpt_sized: %s: %llu bytes, expected %llu\n", path, (unsigned long long)done,
                (unsigned long long)size);
        rc = 1;
    }
    free(buf);
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    int rank = launcher_rank(), nprocs = launcher_size();
    if (argc >= 4 && strcmp(argv[1], "write") == 0)
        return do_write(argv[2], rank, size_of(rank, argv + 3, argc - 3));
    if (argc >= 5 && strcmp(argv[1], "verify") == 0) {
        int n = atoi(argv[3]), worst = 0;
        for (int m = rank; m < n; m += nprocs) {
            int rc = do_verify(argv[2], m, size_of(m, argv + 4, argc - 4));
            worst = rc > worst ? rc : worst;
        }
        return worst;
    }
    fprintf(stderr, "usage: ckpt_sized write DIR SIZE... | ckpt_sized verify DIR NMEMBERS SIZE...\n");
    return 2;
}
