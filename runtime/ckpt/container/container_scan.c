/* SPDX-License-Identifier: MIT */
/* Enumerating the containers of a directory, for directory listings, restart lookups and
 * `sluice-ckpt ls|verify|extract DIR`. Names are sorted so every listing is reproducible. */
#include "ckpt/container/container_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sluice_container_scan_dir(const char *dir, sluice_container_visit fn, void *ctx)
{
    DIR *d = CIO->opendir(dir);
    if (!d)
        return -errno;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = CIO->readdir(d)) != NULL) {
        if (!sluice_container_is_name(de->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = -ENOMEM;
            break;
        }
        n++;
    }
    CIO->closedir(d);
    if (rc == 0 && n > 1)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX], msg[PATH_MAX + 256];
        int len = snprintf(path, sizeof path, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
                           names[i]);
        if (len < 0 || (size_t)len >= sizeof path) {
            rc = fn(ctx, names[i], NULL, -ENAMETOOLONG, "path too long");
            continue;
        }
        struct sluice_container *c = NULL;
        msg[0] = 0;
        int orc = sluice_container_open(path, &c, msg, sizeof msg);
        rc = fn(ctx, path, orc == 0 ? c : NULL, orc, msg);
        sluice_container_close(c);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}
