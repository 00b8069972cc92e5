/* SPDX-License-Identifier: MIT */
/* Commit engine, home side. Each set has a home rank (hash of its key); the home collects
 * "member closed" notices, decides when the set is committed, and hands the version to
 * commit_version.c, which plans the new container, asks the writers to move their bytes
 * (commit_data.c, twophase_exec.c), then writes the index and footer, makes the file durable
 * and renames it over the previous version.
 *
 * When a set is committed:
 *   - complete: every rank of the job closed a member of it since its last commit;
 *   - forced: a rank waits for it (fsync, a read, an unlink) or the job is exiting;
 *   - stale: it has waited COMMIT_INCOMPLETE_DELAY_NS without completing (some ranks never
 *     write it; longer while a rank known to hold a member open has not closed it), and is
 *     committed with the members it has.
 * One commit per set is in flight at a time; notices that arrive meanwhile start the next one.
 *
 * A new version always goes to a fresh temporary file beside the container; the committed
 * file is never written, so a crash or a full disk at any point leaves the previous version
 * whole. Members of the previous version that no rank re-staged are carried over. */
#include "ckpt/commit/commit_home_internal.h"
#include "common/align.h"

#include "ckpt/commit/commit_array.h"
#include "ckpt/container/container.h"
#include "ckpt/twophase/planner.h"
#include "ckpt/twophase/stripe.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "config/config.h"
#include "sluice_version.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

static struct hset *sets;
static struct hcommit *active;
static uint32_t commit_ids;
static int final_on;
static uint64_t final_expected, closed_received;
static int quiet_flag;
static int home_busy; /* a set pending or a version in flight here (commit_home_poll) */

uint64_t commit_home_now_ns(void)
{
    return sluice_now_ns();
}

int64_t commit_home_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void free_paths(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
    free(p);
}

static int has_path(char *const *p, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i], path) == 0)
            return 1;
    return 0;
}

static void add_path(char ***p, size_t *n, const char *path)
{
    if (has_path(*p, *n, path))
        return;
    char **v = realloc(*p, (*n + 1) * sizeof(char *));
    if (!v)
        return;
    *p = v;
    if ((v[*n] = strdup(path)) != NULL)
        (*n)++;
}

static struct hset *set_get(const char *key)
{
    struct hset *s;
    HASH_FIND_STR(sets, key, s);
    if (s)
        return s;
    s = calloc(1, sizeof(*s));
    if (!s || !(s->key = strdup(key)) || !(s->pending = calloc((size_t)commit_g.size, 1)) ||
        !(s->opened = calloc((size_t)commit_g.size, 1)) || !(s->later = calloc((size_t)commit_g.size, 1)) ||
        !(s->upto = calloc((size_t)commit_g.size, sizeof(uint64_t))) ||
        !(s->later_upto = calloc((size_t)commit_g.size, sizeof(uint64_t))) ||
        !(s->sealed = calloc((size_t)commit_g.size, 1)))
        sluice_fatal(1, "checkpoint commit: out of memory for set %s", key);
    char dir[PATH_MAX];
    if (sluice_container_dir(key, dir, sizeof dir) == 0)
        s->dir = strdup(dir);
    s->blocks = commit_array_blocks(key);
    HASH_ADD_KEYPTR(hh, sets, s->key, strlen(s->key), s);
    return s;
}

static void set_free(struct hset *s)
{
    HASH_DEL(sets, s);
    for (size_t i = 0; i < s->ndrops; i++)
        free(s->drops[i]);
    free(s->drops);
    free_paths(s->paths, s->npaths);
    free_paths(s->later_paths, s->nlater_paths);
    free(s->upto);
    free(s->later);
    free(s->later_upto);
    free(s->opened);
    free(s->pending);
    free(s->sealed);
    free(s->key);
    free(s->dir);
    free(s);
}

static void reply_flushed(int rank, uint64_t req, int err, uint64_t version)
{
    struct cmsg m;
    cmsg_init(&m, MSG_FLUSHED);
    cmsg_put_u64(&m, req);
    cmsg_put_u32(&m, (uint32_t)err);
    cmsg_put_u64(&m, version);
    commit_send(rank, &m);
}

static void reply_all(struct waiter *w, int err, uint64_t version)
{
    while (w) {
        struct waiter *n = w->next;
        reply_flushed(w->rank, w->req, err, version);
        free(w);
        w = n;
    }
}

static void add_waiter(struct waiter **list, int rank, uint64_t req)
{
    struct waiter *w = calloc(1, sizeof(*w));
    if (!w)
        sluice_fatal(1, "checkpoint commit: out of memory");
    w->rank = rank;
    w->req = req;
    w->next = *list;
    *list = w;
}

/* ---- the end of a commit (its plan, writes and durability: commit_version.c) --------------- */

static void maybe_start(struct hset *s);

static void commit_free(struct hcommit *c)
{
    for (struct hcommit **pp = &active; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    commit_index_forget(c); /* before the paths its records point at */
    for (size_t i = 0; i < c->nmem; i++) {
        free(c->mem[i].path);
        free(c->mem[i].stage);
        free(c->mem[i].runs);
        free(c->mem[i].chunk_crc);
    }
    for (size_t i = 0; i < c->ndrops; i++)
        free(c->drops[i]);
    free(c->drops);
    free_paths(c->paths, c->npaths);
    free(c->upto);
    free(c->mem);
    free(c->ranks);
    free(c->array);
    if (c->old)
        sluice_container_close(c->old);
    sluice_folder_lock_release(&c->lock);
    free(c);
}

void commit_home_complete(struct hcommit *c, int err)
{
    struct hset *s = c->set;
    if (c->fd >= 0) {
        commit_fs_close(c->fd);
        c->fd = -1;
        if (err)
            commit_fs_unlink(c->tmp);
    }
    for (int i = 0; i < c->nranks; i++) {
        struct cmsg m;
        cmsg_init(&m, MSG_DONE);
        cmsg_put_u32(&m, c->id);
        cmsg_put_u32(&m, (uint32_t)err);
        cmsg_put_u64(&m, c->version);
        commit_send(c->ranks[i], &m);
    }
    if (err && c->ndrops) {
        /* The unlinks were not applied: keep them for the next version. */
        char **d = realloc(s->drops, (s->ndrops + c->ndrops) * sizeof(char *));
        if (d) {
            memcpy(d + s->ndrops, c->drops, c->ndrops * sizeof(char *));
            s->drops = d;
            s->ndrops += c->ndrops;
            c->ndrops = 0;
        }
    }
    reply_all(c->waiters, err, err ? 0 : s->last_version);
    c->waiters = NULL;
    s->inflight = NULL;
    commit_free(c);
    maybe_start(s);
}

/* ---- starting a commit ----------------------------------------------------------------------- */

/* seal_version: 0 drains the collection to the file system (a container version); else it is
 * kept node-local as that version (redundancy/level_home.c). */
static void start_commit(struct hset *s, uint64_t seal_version)
{
    struct hcommit *c = calloc(1, sizeof(*c));
    if (!c)
        sluice_fatal(1, "checkpoint commit: out of memory");
    c->id = ++commit_ids;
    if (c->id == 0)
        c->id = ++commit_ids; /* 0 means "not in flight" on the rank side */
    c->set = s;
    c->fd = -1;
    c->lock.fd = -1;
    c->t0 = commit_home_now_ns();
    c->ranks = calloc((size_t)commit_g.size, sizeof(int));
    if (!c->ranks)
        sluice_fatal(1, "checkpoint commit: out of memory");
    for (int r = 0; r < commit_g.size; r++) {
        /* A drain also collects what earlier node-local versions left with their ranks. */
        if (s->pending[r] || (!seal_version && s->sealed[r])) {
            c->ranks[c->nranks++] = r;
            s->nsealed -= !seal_version && s->sealed[r];
            s->sealed[r] &= seal_version != 0;
            s->nopened -= s->opened[r];
            s->opened[r] = 0; /* what it held open is closed or synced now */
        }
    }
    c->upto = calloc((size_t)commit_g.size, sizeof(uint64_t));
    if (!c->upto)
        sluice_fatal(1, "checkpoint commit: out of memory");
    memcpy(c->upto, s->upto, (size_t)commit_g.size * sizeof(uint64_t));
    /* What arrived after the step completed is the next collection's. */
    memcpy(s->pending, s->later, (size_t)commit_g.size);
    memcpy(s->upto, s->later_upto, (size_t)commit_g.size * sizeof(uint64_t));
    memset(s->later, 0, (size_t)commit_g.size);
    s->npending = 0;
    for (int r = 0; r < commit_g.size; r++)
        s->npending += s->pending[r];
    s->first_pending_ns = s->npending ? commit_home_now_ns() : 0;
    s->latched = s->npending == commit_g.size;
    s->force = 0;
    s->gather = 0;
    c->paths = s->paths;
    c->npaths = s->npaths;
    s->paths = s->later_paths;
    s->npaths = s->nlater_paths;
    s->later_paths = NULL;
    s->nlater_paths = 0;
    c->drops = s->drops;
    c->ndrops = s->ndrops;
    s->drops = NULL;
    s->ndrops = 0;
    c->waiters = s->next_waiters;
    s->next_waiters = NULL;
    s->inflight = c;
    c->next = active;
    active = c;
    if (seal_version) {
        commit_level_seal(c, seal_version);
        s->inflight = NULL;
        commit_free(c);
        return;
    }

    c->awaiting_members = c->nranks;
    for (int i = 0; i < c->nranks; i++) {
        struct cmsg m;
        cmsg_init(&m, MSG_COLLECT);
        cmsg_put_u32(&m, c->id);
        cmsg_put_str(&m, s->key);
        cmsg_put_u64(&m, c->upto[c->ranks[i]]);
        commit_send(c->ranks[i], &m);
    }
    if (c->nranks == 0)
        commit_version_plan(c);
}

static int final_ready(void)
{
    return final_on && closed_received >= final_expected;
}

/* Several processes may commit the same set on their own: without MPI (e.g. a rank's second
 * program, after the first one owned MPI), or the homes of two jobs writing members of one set
 * in one folder at once (on different nodes too), or a forked child of a rank (it commits alone,
 * over the loopback) while the rank's MPI home commits. Each reads the previous version, adds
 * its members and renames. The folder's lock (folder_lock.h: a lock file, not flock, which
 * need not be coherent across nodes), held from before reading the previous version until after
 * the rename, keeps those read-modify-renames from losing each other's members. Never blocks
 * (the progress thread must go on serving): -EWOULDBLOCK when busy, 0 when taken, another
 * -errno where no lock file can be made (the commit goes on without). */
static int lock_folder(const char *key, struct sluice_folder_lock *l)
{
    char dir[PATH_MAX];
    l->fd = -1;
    if (sluice_container_dir(key, dir, sizeof dir) != 0)
        return -EINVAL;
    /* Not traced here: the commit records it once its version has a file (plan_trace). */
    return sluice_folder_lock_try(dir, l, NULL, 0);
}

/* Some member of this step is still to come: a rank announced an open member of the set and
 * has not closed it since, or an array set lacks a block (a rank that has not even opened its
 * member yet: one slow to start). */
static int member_awaited(const struct hset *s)
{
    if (s->blocks && s->npending < s->blocks)
        return 1;
    if (s->nopened == 0)
        return 0;
    for (int r = 0; r < commit_g.size; r++)
        if (s->opened[r] && !s->pending[r])
            return 1;
    return 0;
}

/* A forced commit may start: the gathering time has passed and, for an fsync, no member of the
 * step is still awaited (or the bound has passed). */
static int gathered(const struct hset *s, uint64_t now)
{
    uint64_t waited = now - s->force_ns;
    if (waited < COMMIT_FORCE_GATHER_NS)
        return 0;
    if (!s->gather || waited >= (uint64_t)sluice_config.FSYNC_GATHER * 1000000ull)
        return 1;
    return !member_awaited(s);
}

/* A set that cannot complete is committed with what it has (the stale rule, commit_internal.h). */
static int stale(const struct hset *s, uint64_t now)
{
    if (!s->first_pending_ns)
        return 0;
    uint64_t waited = now - s->first_pending_ns;
    if (waited < COMMIT_INCOMPLETE_DELAY_NS)
        return 0;
    return waited >= COMMIT_INCOMPLETE_OPEN_DELAY_NS || !member_awaited(s);
}

static void maybe_start(struct hset *s)
{
    if (s->inflight)
        return;
    if (s->npending == 0 && s->ndrops == 0 && !(s->nsealed && (final_ready() || s->next_waiters))) {
        /* Nothing to commit: whoever waits for the next version already has it. */
        reply_all(s->next_waiters, 0, s->last_version);
        s->next_waiters = NULL;
        return;
    }
    uint64_t now = commit_home_now_ns();
    if (!(s->npending == commit_g.size || final_ready() || (s->force && gathered(s, now)) || stale(s, now)))
        return;
    uint64_t seal = commit_level_may_seal(s, final_ready());
    if (seal) {
        start_commit(s, seal);
        return;
    }
    /* A version of another set in the same folder is in flight here: it holds the folder's lock,
     * so trying it would only open and close the folder on every pass of the poller. */
    for (struct hcommit *c = active; s->dir && c; c = c->next)
        if (c->set != s && c->set->dir && strcmp(c->set->dir, s->dir) == 0)
            return;
    /* MPI homes too: another job may commit the same set in the same folder at the same time. */
    uint64_t lock_ns = sluice_now_ns();
    struct sluice_folder_lock lock;
    if (lock_folder(s->key, &lock) == -EWOULDBLOCK)
        return; /* another commit in this folder: the poller tries again shortly */
    start_commit(s, 0);
    if (s->inflight) {
        s->inflight->lock = lock;
        s->inflight->lock_ns = lock_ns;
    } else
        sluice_folder_lock_release(&lock);
}

/* ---- messages ------------------------------------------------------------------------------- */

static void force(struct hset *s)
{
    if (!s->force)
        s->force_ns = commit_home_now_ns();
    s->force = 1;
}

static struct hcommit *find_active(uint32_t id)
{
    for (struct hcommit *c = active; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void on_members(int src, struct cmsg *in)
{
    struct hcommit *c = find_active(cmsg_get_u32(in));
    if (!c)
        return;
    uint32_t n = cmsg_get_u32(in);
    for (uint32_t i = 0; i < n && !in->bad; i++) {
        struct gm *g = commit_version_add_member(c);
        if (!g) {
            c->err = -ENOMEM;
            break;
        }
        g->src = src;
        g->seq = cmsg_get_u64(in);
        g->path = strdup(cmsg_get_str(in));
        g->member_rank = (int)cmsg_get_u32(in);
        g->writer_rank = (int)cmsg_get_u32(in);
        g->size = cmsg_get_u64(in);
        g->mtime_ns = (int64_t)cmsg_get_u64(in);
        g->mode = cmsg_get_u32(in);
        g->stage = strdup(cmsg_get_str(in));
        g->keep = 1;
        if (!g->path || !g->stage) {
            free(g->path);
            free(g->stage);
            c->nmem--;
            c->err = -ENOMEM;
            break;
        }
    }
    commit_twophase_note_node(src, cmsg_get_u64(in));
    commit_direct_note(src, cmsg_get_u64(in));
    if (in->bad)
        c->err = -EPROTO;
    if (--c->awaiting_members == 0) {
        if (c->err)
            commit_home_complete(c, c->err);
        else
            commit_version_plan(c);
    }
}

/* Runs in order, inside the member, none empty: what the index may say. */
static int runs_fit(const struct commit_run *runs, uint32_t n, uint64_t size)
{
    uint64_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (runs[i].length == 0 || runs[i].logical < next || runs[i].logical > size ||
            runs[i].length > size - runs[i].logical)
            return 0;
        next = runs[i].logical + runs[i].length;
    }
    return 1;
}

/* A member's chunk checksums from MSG_WRITTEN (malloc'ed, NULL for none); in->bad when the
 * message claims more than it holds. */
static uint32_t *get_chunks(struct cmsg *in, uint32_t *chunk_size, uint32_t *n)
{
    *chunk_size = cmsg_get_u32(in);
    *n = cmsg_get_u32(in);
    if (in->bad || (uint64_t)*n * 4 > in->len - in->rd) {
        in->bad = 1;
        return NULL;
    }
    uint32_t *crc = *n ? malloc(*n * sizeof *crc) : NULL;
    for (uint32_t k = 0; k < *n; k++) {
        uint32_t v = cmsg_get_u32(in);
        if (crc)
            crc[k] = v;
    }
    return crc;
}

/* Chunk checksums the format allows for a member of size bytes: one per chunk. */
static int chunks_fit(uint64_t size, uint64_t cs, uint64_t n)
{
    return cs >= SLUICE_CONTAINER_CHUNK_MIN && cs <= SLUICE_CONTAINER_CHUNK_MAX && !(cs & (cs - 1)) &&
           n == (size + cs - 1) / cs;
}

static void on_written(struct cmsg *in)
{
    struct hcommit *c = find_active(cmsg_get_u32(in));
    if (!c)
        return;
    int err = (int)cmsg_get_u32(in);
    uint32_t n = cmsg_get_u32(in);
    if (err && !c->err)
        c->err = err;
    for (uint32_t i = 0; i < n && !in->bad; i++) {
        int owner = (int)cmsg_get_u32(in); /* a node's writer answers for its members too */
        uint64_t seq = cmsg_get_u64(in);
        uint32_t crc = cmsg_get_u32(in);
        uint32_t vanished = cmsg_get_u32(in);
        uint32_t nruns = cmsg_get_u32(in);
        struct commit_run *runs = nruns <= COMMIT_MAX_RUNS ? calloc(nruns ? nruns : 1, sizeof(*runs)) : NULL;
        if (runs == NULL) {
            in->bad = 1;
            break;
        }
        for (uint32_t r = 0; r < nruns; r++) {
            runs[r].logical = cmsg_get_u64(in);
            runs[r].length = cmsg_get_u64(in);
        }
        uint32_t csize, nch;
        uint32_t *chunks = get_chunks(in, &csize, &nch);
        for (size_t k = 0; k < c->nmem; k++) {
            struct gm *g = &c->mem[k];
            if (g->src == owner && g->seq == seq) {
                g->crc = crc;
                if (chunks && c->array && !g->chunk_crc && chunks_fit(g->size, csize, nch)) {
                    g->chunk_crc = chunks;
                    g->chunk_size = csize;
                    g->nchunks = nch;
                    chunks = NULL;
                }
                if (vanished)
                    g->keep = 0; /* unlinked meanwhile: left out of the index */
                if (!runs_fit(runs, nruns, g->size)) {
                    in->bad = 1;
                } else if (g->runs == NULL) {
                    g->runs = runs;
                    g->nruns = nruns;
                    runs = NULL;
                }
            }
        }
        free(runs);
        free(chunks);
    }
    if (in->bad && !c->err)
        c->err = -EPROTO;
    if (--c->awaiting_written == 0)
        commit_version_finish(c);
}

static void home_handle(int src, uint32_t type, struct cmsg *m)
{
    __atomic_store_n(&quiet_flag, 0, __ATOMIC_RELAXED);
    switch (type) {
    case MSG_CLOSED: {
        struct hset *s = set_get(cmsg_get_str(m));
        const char *path = cmsg_get_str(m);
        uint64_t n = cmsg_get_u64(m);
        closed_received++;
        if (s->latched) {
            s->later[src] = 1;
            s->later_upto[src] = n;
            add_path(&s->later_paths, &s->nlater_paths, path);
            maybe_start(s);
            break;
        }
        add_path(&s->paths, &s->npaths, path);
        s->upto[src] = n;
        if (!s->pending[src]) {
            s->pending[src] = 1;
            s->npending++;
        }
        if (s->npending == commit_g.size)
            s->latched = 1;
        if (!s->first_pending_ns)
            s->first_pending_ns = commit_home_now_ns();
        maybe_start(s);
        break;
    }
    case MSG_FLUSH: {
        struct hset *s = set_get(cmsg_get_str(m));
        uint64_t req = cmsg_get_u64(m);
        if (s->npending || s->ndrops || s->nsealed) {
            add_waiter(&s->next_waiters, src, req);
            force(s);
            s->gather = 1;
            maybe_start(s);
        } else if (s->inflight) {
            add_waiter(&s->inflight->waiters, src, req);
        } else {
            reply_flushed(src, req, 0, s->last_version);
        }
        break;
    }
    case MSG_UNLINK: {
        struct hset *s = set_get(cmsg_get_str(m));
        const char *path = cmsg_get_str(m);
        uint64_t req = cmsg_get_u64(m);
        char **d = realloc(s->drops, (s->ndrops + 1) * sizeof(char *));
        if (!d || !(d[s->ndrops] = strdup(path))) {
            if (d)
                s->drops = d;
            reply_flushed(src, req, -ENOMEM, 0);
            break;
        }
        s->drops = d;
        s->ndrops++;
        add_waiter(&s->next_waiters, src, req);
        force(s);
        maybe_start(s);
        break;
    }
    case MSG_QUERY: {
        /* A reader asks for path: wait for the commit that collects a closed version of it
         * (the next one if it is pending, the one in flight if that has it), never force. */
        struct hset *s = set_get(cmsg_get_str(m));
        const char *path = cmsg_get_str(m);
        uint64_t req = cmsg_get_u64(m);
        int wait = 1;
        if (has_path(s->paths, s->npaths, path))
            add_waiter(&s->next_waiters, src, req);
        else if (s->inflight && has_path(s->inflight->paths, s->inflight->npaths, path))
            add_waiter(&s->inflight->waiters, src, req);
        else if (s->nsealed && !s->inflight) {
            /* Node-local versions are read on their own node only: a reader elsewhere gets
             * them through a drain (redundancy/level_home.c). */
            add_waiter(&s->next_waiters, src, req);
            force(s);
            maybe_start(s);
        } else
            wait = 0;
        /* Either way at once: the answer, or word that this home is alive and a commit is
         * coming (the reader tells an unresponsive home from a long commit by it). */
        reply_flushed(src, req, wait ? COMMIT_QUERY_PENDING : 0, s->last_version);
        break;
    }
    case MSG_OPENED: {
        struct hset *s = set_get(cmsg_get_str(m));
        s->nopened += !s->opened[src];
        s->opened[src] = 1;
        break;
    }
    case MSG_MEMBERS:
        on_members(src, m);
        break;
    case MSG_WRITTEN:
        on_written(m);
        break;
    default:
        break;
    }
}

void commit_home_register(void)
{
    static const uint32_t types[] = {MSG_CLOSED, MSG_FLUSH,   MSG_UNLINK, MSG_QUERY,
                                     MSG_OPENED, MSG_MEMBERS, MSG_WRITTEN};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        commit_transport_on(types[i], home_handle);
}

/* ---- timers and exit -------------------------------------------------------------------------- */

void commit_home_final(uint64_t expected)
{
    final_expected = expected;
    final_on = 1;
    __atomic_store_n(&quiet_flag, 0, __ATOMIC_RELAXED);
}

int commit_home_quiet(void)
{
    return __atomic_load_n(&quiet_flag, __ATOMIC_RELAXED);
}

int commit_home_poll(void)
{
    int done = 0, busy = 0;
    struct hset *s, *tmp;
    for (struct hcommit *c = active; c; c = c->next)
        sluice_folder_lock_touch(&c->lock); /* alive, for waiters on other nodes (folder_lock.h) */
    HASH_ITER(hh, sets, s, tmp)
    {
        /* Sealed versions alone drain when asked (a FLUSH, a reader elsewhere) or at the exit:
         * the asked drain waits for its gathering time, so it is tried again here. */
        if (!s->inflight && (s->npending || s->ndrops || (s->nsealed && (final_on || s->next_waiters)))) {
            maybe_start(s);
            done += s->inflight != NULL;
        }
        if (s->inflight || s->npending || s->ndrops || s->next_waiters || (s->nsealed && final_on))
            busy = 1;
        else if (s->nsealed || (s->nopened && !final_on))
            continue; /* members open somewhere: an fsync's commit will wait for them */
        else if (!final_on || final_ready())
            set_free(s); /* idle: the version on disk is the state; a later notice recreates it */
    }
    if (final_ready() && !busy)
        __atomic_store_n(&quiet_flag, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&home_busy, busy, __ATOMIC_RELAXED);
    return done;
}

int commit_home_busy(void)
{
    return __atomic_load_n(&home_busy, __ATOMIC_RELAXED);
}

void commit_home_reset_counts(void)
{
    closed_received = 0;
    final_expected = 0;
}

void commit_home_forget_all(void)
{
    /* The parent's commits in flight go on in the parent, which holds their folder locks: the
     * copies here are closed, never released (that would remove the parent's lock files). */
    for (struct hcommit *c = active; c; c = c->next) {
        sluice_folder_lock_forget(&c->lock);
        if (c->fd >= 0)
            SLUICE_REAL(close)(c->fd);
    }
    sets = NULL;
    active = NULL;
    final_on = 0;
    final_expected = closed_received = 0;
    quiet_flag = 0;
    home_busy = 0;
}
