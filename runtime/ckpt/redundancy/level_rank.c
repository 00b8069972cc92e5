/* SPDX-License-Identifier: MIT */
/* Rank side of node-local versions: the record of what this rank holds of a version kept in
 * node-local storage, and its removal once a newer version is durable (docs/REDUNDANCY.md).
 * Called by commit_member.c with the engine's lock held, on the progress thread; reads
 * (commit_read.c) find a member in a node-local version here. */
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/commit_term.h"
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/level_agree.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/level_table.h"
#include "common/host_id.h"
#include "common/log.h"
#include "trace/trace.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void commit_level_sealed(const char *key, uint64_t version, int nprocs, const struct commit_member *const *m,
                         size_t n)
{
    const char *dir = sluice_stage_dir();
    struct sluice_level_record r = {.version = version,
                                    .nprocs = nprocs,
                                    .rank = commit_g.rank,
                                    .pid = (long)getpid(),
                                    .level = SLUICE_LEVEL_STAGED};
    snprintf(r.set_key, sizeof r.set_key, "%s", key);
    r.m = calloc(n ? n : 1, sizeof(*r.m));
    int rc = dir && r.m ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!m[i])
            continue;
        struct sluice_level_member *lm = &r.m[r.n++];
        const char *base = strrchr(m[i]->m.stage_path, '/');
        lm->member_rank = m[i]->m.member_rank;
        lm->size = m[i]->m.size;
        lm->mtime_ns = m[i]->mtime_ns;
        lm->mode = m[i]->m.mode;
        base = base ? base + 1 : m[i]->m.stage_path;
        if (strlen(base) >= sizeof lm->data) { /* no staging file name is this long */
            rc = -ENAMETOOLONG;
            break;
        }
        memcpy(lm->data, base, strlen(base) + 1);
        snprintf(lm->path, sizeof lm->path, "%s", m[i]->m.path);
    }
    if (rc == 0)
        rc = sluice_level_record_write(dir, &r);
    if (rc == 0)
        commit_term_ready(); /* a SIGTERM now drains this version before the program ends */
    free(r.m);
    /* Without its record the version is simply incomplete: a restart serves an older one. The
     * members stay with the engine and reach the file system at the next drain. */
    if (rc)
        sluice_log_warn("checkpoint %s version %llu: node-local record not written (%s); a restart cannot "
                        "use this version before it is drained",
                        key, (unsigned long long)version, strerror(-rc));
    else {
        if (sluice_trace_active())
            sluice_trace_instant(SLUICE_EV_CKPT_LEVEL, sluice_trace_string(key), version,
                                 SLUICE_LEVEL_STAGED);
        commit_red_recorded(key, version, nprocs);
    }
}

void commit_level_drained(const char *key, uint64_t version)
{
    const char *dir = sluice_stage_dir();
    if (dir)
        sluice_level_remove(dir, key, version, commit_g.rank, (long)getpid(), 1);
    commit_red_drained(key, version);
}

void commit_level_forget(const char *key, uint64_t upto)
{
    const char *dir = sluice_stage_dir();
    if (dir && upto)
        sluice_level_remove(dir, key, upto, commit_g.rank, (long)getpid(), 0);
}

/* 1 the first time path is refused in a row (a stat and an open of one member: one line). */
static int first_report(const char *path)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char last[PATH_MAX];
    pthread_mutex_lock(&lock);
    int first = strcmp(last, path) != 0;
    if (first)
        snprintf(last, sizeof last, "%s", path);
    pthread_mutex_unlock(&lock);
    return first;
}

/* The newest version above `above` that a restart may serve: complete over all nodes (the
 * agreement) or in this node's own records. */
static uint64_t newest_servable(const char *dir, const char *key, uint64_t above)
{
    uint64_t local = sluice_level_complete(dir, key, above);
    uint64_t all = sluice_level_table_complete(commit_level_agreed(), key, above);
    return all > local ? all : local;
}

int commit_level_find(const char *key, const char *path, uint64_t above, char *data, size_t cap,
                      uint64_t *size, int64_t *mtime_ns, unsigned *mode, uint64_t *version)
{
    const char *dir = sluice_stage_dir();
    struct sluice_level_hit lh;
    uint64_t newest = dir ? newest_servable(dir, key, above) : 0;
    if (!newest)
        return 0;
    int found = sluice_level_find_upto(dir, key, path, above, newest, &lh);
    /* Its newest bytes staged on another node: the container's are older than the rest of
     * the version, so neither is served (docs/REDUNDANCY.md, "Across nodes"). */
    char host[SLUICE_HOST_ID_LEN + 1];
    uint64_t held = sluice_level_table_holder(commit_level_agreed(), key, path, above, newest, host);
    if (held && (!found || held > lh.version) && !sluice_host_id_is_mine(host)) {
        if (first_report(path))
            sluice_log_error(
                "checkpoint member %s: its version %llu is staged on another node (host %s), not "
                "this one; restart its readers on the nodes that wrote it",
                path, (unsigned long long)held, host);
        return -EIO;
    }
    if (!found || strlen(lh.data) >= cap)
        return 0;
    memcpy(data, lh.data, strlen(lh.data) + 1);
    *size = lh.size;
    *mtime_ns = lh.mtime_ns;
    *mode = lh.mode;
    *version = lh.version;
    return 1;
}
