/* SPDX-License-Identifier: MIT */
/* Home side of node-local versions (docs/REDUNDANCY.md): with SLUICE_DRAIN_EVERY=M above 1, a
 * complete step whose version number is not a multiple of M is kept in node-local storage
 * (its ranks keep their staged members and record them) instead of being written to the
 * container; the next drain collects what it needs of them. Progress thread only. */
#include "ckpt/commit/commit_home_internal.h"
#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_agree.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/level_table.h"
#include "config/config.h"
#include "trace/trace.h"

#include <stdio.h>
#include <string.h>

uint64_t commit_level_kept_max(const char *key)
{
    const char *dir = sluice_stage_dir();
    uint64_t here = dir ? sluice_level_max_version(dir, key) : 0;
    uint64_t anywhere = sluice_level_table_max(commit_level_agreed(), key); /* other nodes' too */
    return anywhere > here ? anywhere : here;
}

/* The number the next version of s takes: after the container's, this job's and those this
 * node keeps. */
static uint64_t next_version(const struct hset *s)
{
    uint64_t v = s->last_version;
    char container[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    if (sluice_container_name(s->key, container, sizeof container) == 0 &&
        sluice_container_open(container, &c, err, sizeof err) == 0) {
        if (c->meta.version > v)
            v = c->meta.version;
        sluice_container_close(c);
    }
    uint64_t kept = commit_level_kept_max(s->key);
    return (kept > v ? kept : v) + 1;
}

uint64_t commit_level_may_seal(const struct hset *s, int final)
{
    /* Only a whole step nobody waits for: an fsync, a flush, an unlink and the exit want the
     * file system, and a partial step is no version a restart could use alone. */
    if (sluice_config.DRAIN_EVERY <= 1 || final || s->force || s->ndrops || s->next_waiters ||
        s->npending != commit_g.size)
        return 0;
    uint64_t v = next_version(s);
    return v % sluice_config.DRAIN_EVERY == 0 ? 0 : v;
}

void commit_level_seal(struct hcommit *c, uint64_t version)
{
    struct hset *s = c->set;
    for (int i = 0; i < c->nranks; i++) {
        int r = c->ranks[i];
        struct cmsg m;
        cmsg_init(&m, MSG_SEAL);
        cmsg_put_str(&m, s->key);
        cmsg_put_u64(&m, c->upto[r]);
        cmsg_put_u64(&m, version);
        cmsg_put_u32(&m, (uint32_t)commit_g.size);
        commit_send(r, &m);
        s->nsealed += !s->sealed[r];
        s->sealed[r] = 1;
        /* The next drain collects these members too, however little the rank writes next. */
        if (s->upto[r] < c->upto[r])
            s->upto[r] = c->upto[r];
    }
    s->last_version = version;
    if (sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_CKPT_LEVEL, sluice_trace_string(s->key), version, SLUICE_LEVEL_STAGED);
}
