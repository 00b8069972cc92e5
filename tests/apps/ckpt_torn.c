/* SPDX-License-Identifier: MIT */
/* A program that rewrites its state file the way many simulations do (open with O_TRUNC, the
 * second half first, then the first half, close), slowly enough that a SIGKILL from outside
 * lands before the close at random points. Written without sluice in mind; commit_torn.sh
 * kills it and checks what `sluice-ckpt recover` makes of it.
 *
 *   ckpt_torn write DIR V US   rewrites DIR/state.0 with 128 KiB of byte V, sleeping US
 *                              microseconds after each write; creates DIR.opened after the
 *                              open and DIR.closed after the close (plain files)
 *   ckpt_torn check DIR        prints "value V" if DIR/state.0 is 128 KiB of byte V, else
 *                              "torn" (with the first differing offset) or "missing" */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HALF (64 * 1024)

static void mark(const char *dir, const char *what)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", dir, what);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

static int write_state(const char *dir, int v, useconds_t us)
{
    char path[4096], buf[HALF];
    snprintf(path, sizeof path, "%s/state.0", dir);
    memset(buf, v, sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    mark(dir, "opened");
    if (pwrite(fd, buf, HALF, HALF) != HALF)
        return perror("pwrite"), 1;
    usleep(us);
    if (pwrite(fd, buf, HALF, 0) != HALF)
        return perror("pwrite"), 1;
    usleep(us);
    if (close(fd) != 0)
        return perror("close"), 1;
    mark(dir, "closed");
    usleep(us);
    return 0;
}

static int check_state(const char *dir)
{
    char path[4096];
    static unsigned char buf[2 * HALF + 1];
    snprintf(path, sizeof path, "%s/state.0", dir);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf(errno == ENOENT ? "missing\n" : "unreadable\n");
        return 0;
    }
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, sizeof buf - n)) > 0)
        n += (size_t)r;
    close(fd);
    for (size_t i = 0; i < n; i++)
        if (buf[i] != buf[0]) {
            printf("torn (%zu bytes, byte %zu differs)\n", n, i);
            return 0;
        }
    if (n != 2 * HALF)
        printf("torn (%zu bytes)\n", n);
    else
        printf("value %d\n", buf[0]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "write") == 0)
        return write_state(argv[2], atoi(argv[3]), (useconds_t)atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "check") == 0)
        return check_state(argv[2]);
    fprintf(stderr, "usage: %s write DIR V US | check DIR\n", argv[0]);
    return 2;
}
