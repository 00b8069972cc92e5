/* SPDX-License-Identifier: MIT */
/* Writes one checkpoint file the way a program would that checks every call, written without
 * sluice in mind: on a file system without room the call that fails says so and the program
 * exits 1, leaving what it wrote. Used with a full stage folder (commit_stage_full.sh).
 *
 *   ckpt_fill HOW PATH SIZE SEED
 *     HOW: write (write(2) in 64 KiB calls), pwrite, writev, fprintf, fwrite (then fflush),
 *          fclose (one stdio buffer as large as the file: the bytes reach the file system only
 *          in fclose's flush)
 *   PATH may contain %r: the launcher's rank (launcher_env.h). Byte i is
 *   so two versions of a file differ everywhere; 1 + (SEED * 131 + i * 7) % 251, never 0.
 * Exit status: 0 written and closed, 1 a call failed (its name and error on stderr), 2 usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "launcher_env.h"

#define PIECE 65536

static int failed(const char *call, const char *path)
{
    fprintf(stderr, "ckpt_fill: %s %s: %s\n", call, path, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return fprintf(stderr, "usage: ckpt_fill HOW PATH SIZE SEED\n"), 2;
    const char *how = argv[1], *rank = launcher_rank_string();
    char path[4096];
    const char *r = strstr(argv[2], "%r");
    if (r != NULL)
        snprintf(path, sizeof path, "%.*s%s%s", (int)(r - argv[2]), argv[2], rank ? rank : "0", r + 2);
    else
        snprintf(path, sizeof path, "%s", argv[2]);
    size_t size = strtoull(argv[3], NULL, 10);
    unsigned seed = (unsigned)atoi(argv[4]);
    char *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 2;
    for (size_t i = 0; i < size; i++)
        buf[i] = (char)(1 + (seed * 131 + i * 7) % 251); /* never 0: fprintf "%.*s" stops there */

    if (strcmp(how, "write") == 0 || strcmp(how, "pwrite") == 0 || strcmp(how, "writev") == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return failed("open", path);
        for (size_t off = 0; off < size;) {
            size_t n = size - off < PIECE ? size - off : PIECE;
            ssize_t w;
            if (how[0] == 'w' && how[5] == 'v') {
                struct iovec v[2] = {{buf + off, n / 2}, {buf + off + n / 2, n - n / 2}};
                w = writev(fd, v, 2);
            } else if (how[0] == 'p') {
                w = pwrite(fd, buf + off, n, (off_t)off);
            } else {
                w = write(fd, buf + off, n);
            }
            if (w < 0)
                return failed(how, path);
            off += (size_t)w; /* a short write is retried: the next call says why */
        }
        if (close(fd) != 0)
            return failed("close", path);
        return 0;
    }
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return failed("fopen", path);
    char *big =
        strcmp(how, "fclose") == 0 ? malloc(size + 1) : NULL; /* glibc ignores a size without a buffer */
    if (big != NULL && setvbuf(f, big, _IOFBF, size + 1) != 0)
        return failed("setvbuf", path);
    for (size_t off = 0; off < size; off += PIECE) {
        size_t n = size - off < PIECE ? size - off : PIECE;
        if (strcmp(how, "fprintf") == 0) {
            if (fprintf(f, "%.*s", (int)n, buf + off) < 0)
                return failed("fprintf", path);
        } else if (fwrite(buf + off, 1, n, f) != n) {
            return failed("fwrite", path);
        }
    }
    if (strcmp(how, "fclose") != 0 && fflush(f) != 0)
        return failed("fflush", path);
    if (fclose(f) != 0)
        return failed("fclose", path);
    return 0;
}
