/* SPDX-License-Identifier: MIT */
/* Listings right after every rank closed its files, before any commit could land (no fsync):
 *
 *   mpi_list_closed DIR
 *
 * Rank r writes DIR/ckpt.<r> and DIR/r<r>/out (making DIR/r<r> first), closes both, and all
 * meet in a barrier. Then rank 0 lists DIR and DIR/r<size-1> (names sorted, sluice's own
 * containers "*.sluice" left out: the one difference a user asks for), stats every
 * DIR/ckpt.<k>, and tries rmdir of DIR/r<size-1> (not empty); every rank then lists DIR and
 * counts the names ckpt.<k> it sees. What each call returned is printed by rank 0, so that a run
 * on real folders and one under sluice can be compared line by line: under sluice the other
 * ranks' members are closed and staged by other processes of the node, not yet in a container,
 * and a listing must show them as stat does. Exit status 0, 2 on usage. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints the sorted names of folder dir (no "." and "..", no "*.sluice"); their count. */
static int list(const char *dir, int print)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (print)
            printf("list %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 4096) {
        size_t l = strlen(e->d_name);
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (l > 7 && strcmp(e->d_name + l - 7, ".sluice") == 0))
            continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        if (print)
            printf("list %s: %s\n", dir, names[i]);
        free(names[i]);
    }
    return n;
}

static int write_file(const char *path, int rank)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "rank %d wrote %s\n", rank, path);
    return fclose(f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_list_closed DIR\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    char p[4200], sub[4096];
    if (rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        printf("mkdir %s: %s\n", dir, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(sub, sizeof sub, "%s/r%d", dir, rank);
    snprintf(p, sizeof p, "%s/ckpt.%d", dir, rank);
    int rc = write_file(p, rank);
    rc |= mkdir(sub, 0755);
    snprintf(p, sizeof p, "%s/out", sub);
    rc |= write_file(p, rank);
    if (rc)
        printf("rank %d: writing failed: %s\n", rank, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        list(dir, 1);
        snprintf(sub, sizeof sub, "%s/r%d", dir, size - 1);
        list(sub, 1);
        for (int k = 0; k < size; k++) {
            struct stat st;
            snprintf(p, sizeof p, "%s/ckpt.%d", dir, k);
            if (stat(p, &st) == 0)
                printf("stat %s: %lld bytes\n", p, (long long)st.st_size);
            else
                printf("stat %s: %s\n", p, strerror(errno));
        }
        if (size > 1)
            printf("rmdir %s: %s\n", sub, rmdir(sub) == 0 ? "ok" : strerror(errno));
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every rank's view: the count of members it lists (one line each, in rank order). */
    DIR *d = opendir(dir);
    int seen = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int k;
        char tail;
        seen += sscanf(e->d_name, "ckpt.%d%c", &k, &tail) == 1 && k >= 0 && k < size;
    }
    if (d)
        closedir(d);
    int all[1024] = {0};
    MPI_Gather(&seen, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size && r < 1024; r++)
        printf("rank %d lists %d of %d members\n", r, all[r], size);
    MPI_Finalize();
    return 0;
}
