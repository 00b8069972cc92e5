/* SPDX-License-Identifier: MIT */
/* Commit engine, rank side: members closed but not yet handed to the engine, kept until it
 * starts (commit_member.c's commit_members_adopt_locked hands them over): those whose close was
 * deferred (a process that has not used MPI yet), and those the image that exec'ed this one
 * closed and had not committed, found by their sidecars. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/stage.h"
#include "common/host_id.h"
#include "common/real.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sluice_staged_member *adopted; /* closed members waiting for the engine's start */
static size_t nadopted;

/* exec keeps the pid but not the commit engine's memory: members that the previous image of
 * this process closed and had not committed yet would stay staged until `recover`. The new
 * image finds them by their sidecars (closed, our pid on our host: in a stage folder shared by
 * nodes, another node's process has the same pid) and takes them over. */
void commit_members_find_adopted(void)
{
    const char *dir = sluice_stage_dir();
    if (!dir)
        return;
    char prefix[SLUICE_STAGE_PREFIX_MAX];
    sluice_stage_prefix(prefix, (long)getpid());
    size_t plen = strlen(prefix);
    DIR *d = SLUICE_REAL(opendir)(dir);
    if (!d)
        return;
    char *buf = malloc(SLUICE_STAGE_META_MAX);
    struct dirent *e;
    while (buf && (e = SLUICE_REAL(readdir)(d)) != NULL) {
        char meta[PATH_MAX], data[PATH_MAX];
        if (strncmp(e->d_name, prefix, plen) != 0 ||
            !sluice_stage_sidecar(dir, e->d_name, meta, sizeof meta, data, sizeof data))
            continue;
        ssize_t n = sluice_stage_read_meta(meta, buf, SLUICE_STAGE_META_MAX);
        struct sluice_stage_meta sm;
        if (n <= 0 || sluice_stage_meta_parse(buf, (size_t)n, &sm) != 0 || !sm.closed ||
            sm.pid != (long)getpid() || !sluice_host_id_is_mine(sm.host))
            continue;
        snprintf(sm.m.stage_path, sizeof sm.m.stage_path, "%s", data);
        struct sluice_staged_member *v = realloc(adopted, (nadopted + 1) * sizeof(*v));
        if (!v)
            break;
        adopted = v;
        adopted[nadopted++] = sm.m;
    }
    free(buf);
    SLUICE_REAL(closedir)(d);
}

int commit_members_defer_locked(const struct sluice_staged_member *m)
{
    struct sluice_staged_member *v = realloc(adopted, (nadopted + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    adopted = v;
    adopted[nadopted++] = *m;
    return 0;
}

int commit_members_adopted_pending(void)
{
    return nadopted != 0;
}

/* A waiting member of this path takes the mode. 1 if found (lock held). */
int commit_adopted_chmod(const char *path, unsigned mode)
{
    for (size_t i = nadopted; i > 0; i--) {
        if (strcmp(adopted[i - 1].path, path) == 0) {
            adopted[i - 1].mode = mode;
            return 1;
        }
    }
    return 0;
}

/* The waiting members (freed by the caller), none left here. */
struct sluice_staged_member *commit_adopted_take(size_t *n)
{
    struct sluice_staged_member *v = adopted;
    *n = nadopted;
    adopted = NULL;
    nadopted = 0;
    return v;
}
