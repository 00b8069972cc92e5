/* SPDX-License-Identifier: MIT */
/* A program that makes one checkpoint durable with fsync and then dies by SIGKILL while a
 * second one is still open, as a crash in the middle of a run would. Written without sluice
 * in mind; capture_fsync.sh checks what survives.
 *
 *   ckpt_fsync_crash DIR   writes DIR/ckpt.0 (1 MiB + 3, fsync'ed) and DIR/ckpt.1 (64 KiB,
 *                          written, not closed), then kills itself */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fill(char *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)((i * 31 + (size_t)seed * 7) ^ (i >> 9));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    size_t n0 = (1u << 20) + 3, n1 = 64u << 10;
    char *buf = malloc(n0);
    snprintf(path, sizeof path, "%s/ckpt.0", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    fill(buf, n0, 0);
    if (fd < 0 || write(fd, buf, n0) != (ssize_t)n0 || fsync(fd) != 0) {
        perror(path);
        return 1;
    }
    snprintf(path, sizeof path, "%s/ckpt.1", argv[1]);
    int fd1 = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    fill(buf, n1, 1);
    if (fd1 < 0 || write(fd1, buf, n1) != (ssize_t)n1) {
        perror(path);
        return 1;
    }
    printf("fsync done, dying\n");
    fflush(stdout);
    raise(SIGKILL);
    return 0;
}
