/* SPDX-License-Identifier: MIT */
/* Per-rank folders whose files another rank removes (the shape of md-workbench: each rank
 * keeps its objects in DIR/<rank>_0, its neighbour reads and deletes some of them, then each
 * rank deletes the rest and removes its folder, rank 0 the top folder; and again).
 *
 *   mpi_vdir_unlink DIR OBJS ROUNDS
 *
 * Every round: rank 0 makes DIR; rank r makes DIR/<r>_0 and writes file-0 .. file-<OBJS-1>
 * in it (fsync'ed, so that no commit is still running when the neighbour deletes); rank r
 * deletes the even-numbered files of rank r+1's folder; rank r lists its own folder and
 * stats each of its files (the two must agree), then deletes the odd-numbered ones (the
 * ones the neighbour left, as md-workbench's cleanup does); odd rounds first try to delete
 * every file, then look; it lists again, removes the folder and stats it; rank 0 lists DIR (every name,
 * hidden ones too) and removes it. What each call returned is printed, rank by rank, by rank 0, so that a run
 * on real folders and one under sluice can be compared line by line. Exit status 0, 2 on usage. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char out[1 << 16];
static size_t used;

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + used, sizeof out - used, fmt, ap);
    va_end(ap);
    if (n > 0 && used + (size_t)n < sizeof out)
        used += (size_t)n;
}

static const char *result(int rc)
{
    static char buf[32];
    if (rc == 0)
        return "ok";
    switch (errno) {
    case ENOENT:
        return "ENOENT";
    case ENOTEMPTY:
        return "ENOTEMPTY";
    case EEXIST:
        return "EEXIST";
    default:
        snprintf(buf, sizeof buf, "errno %d", errno);
        return buf;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every name in folder d but "." and "..", sorted, on one line. */
static void list(const char *what, const char *d)
{
    DIR *dir = opendir(d);
    if (dir == NULL) {
        say("%s: opendir %s\n", what, result(-1));
        return;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n < 256)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            names[n++] = strdup(e->d_name);
    closedir(dir);
    qsort(names, (size_t)n, sizeof *names, by_name);
    say("%s:", what);
    for (int i = 0; i < n; i++) {
        say(" %s", names[i]);
        free(names[i]);
    }
    say(" (%d)\n", n);
}

static int write_file(const char *path, int rank, int i)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    char buf[64];
    int n = snprintf(buf, sizeof buf, "object %d of rank %d\n", i, rank);
    int rc = write(fd, buf, (size_t)n) == n && fsync(fd) == 0 ? 0 : -1;
    return close(fd) == 0 ? rc : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_vdir_unlink DIR OBJS ROUNDS\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    int objs = atoi(argv[2]), rounds = atoi(argv[3]);
    char mine[4096], next[4096], path[4200];
    snprintf(mine, sizeof mine, "%s/%d_0", dir, rank);
    snprintf(next, sizeof next, "%s/%d_0", dir, (rank + 1) % size);
    for (int round = 0; round < rounds; round++) {
        say("round %d\n", round);
        if (rank == 0)
            say("mkdir top: %s\n", result(mkdir(dir, 0755)));
        MPI_Barrier(MPI_COMM_WORLD);
        say("mkdir own: %s\n", result(mkdir(mine, 0755)));
        int ok = 0;
        for (int i = 0; i < objs; i++) {
            snprintf(path, sizeof path, "%s/file-%d", mine, i);
            ok += write_file(path, rank, i) == 0;
        }
        say("written: %d\n", ok);
        MPI_Barrier(MPI_COMM_WORLD);
        ok = 0;
        for (int i = 0; i < objs; i += 2) {
            snprintf(path, sizeof path, "%s/file-%d", next, i);
            ok += unlink(path) == 0;
        }
        say("deleted in the neighbour's folder: %d\n", ok);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Even rounds look first (listing, stat), odd rounds delete first. */
        for (int pass = 0; pass < 2; pass++) {
            if (pass == round % 2) {
                list("own folder", mine);
                for (int i = 0; i < objs; i++) {
                    struct stat st;
                    snprintf(path, sizeof path, "%s/file-%d", mine, i);
                    int rc = stat(path, &st);
                    say("stat file-%d: %s\n", i, rc == 0 ? "exists" : result(rc));
                }
            } else {
                /* Even rounds delete only what the neighbour left (md-workbench's cleanup). */
                for (int i = round % 2 == 0 ? 1 : 0; i < objs; i += round % 2 == 0 ? 2 : 1) {
                    snprintf(path, sizeof path, "%s/file-%d", mine, i);
                    say("unlink file-%d: %s\n", i, result(unlink(path)));
                }
            }
        }
        list("own folder emptied", mine);
        say("rmdir own: %s\n", result(rmdir(mine)));
        struct stat st;
        say("stat own: %s\n", result(stat(mine, &st)));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            list("top folder", dir);
            say("rmdir top: %s\n", result(rmdir(dir)));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Rank 0 prints everyone's lines, rank by rank. */
    int len = (int)used, *lens = NULL, *offs = NULL;
    char *all = NULL;
    if (rank == 0)
        lens = calloc((size_t)size, sizeof *lens), offs = calloc((size_t)size, sizeof *offs);
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            offs[r] = total, total += lens[r];
        all = malloc((size_t)total + 1);
    }
    MPI_Gatherv(out, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            char *p = all + offs[r], *end = p + lens[r];
            while (p < end) {
                char *nl = memchr(p, '\n', (size_t)(end - p));
                printf("rank %d: %.*s\n", r, (int)(nl - p), p);
                p = nl + 1;
            }
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
