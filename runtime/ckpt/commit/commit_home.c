/* SPDX-License-Identifier: MIT */
/* Commit engine, home side. Each set has a home rank (hash of its key); the home collects
 * "member closed" notices, decides when the set is committed, plans the new container, asks
 * the writers to move their bytes (commit_data.c), then writes the index and footer, makes the
 * file durable and renames it over the previous version.
 *
 * When a set is committed:
 *   - complete: every rank of the job closed a member of it since its last commit;
 *   - forced: a rank waits for it (fsync, a read, an unlink) or the job is exiting;
 *   - stale: it has waited COMMIT_INCOMPLETE_DELAY_NS without completing (some ranks never
 *     write it), and is committed with the members it has.
 * One commit per set is in flight at a time; notices that arrive meanwhile start the next one.
 *
 * A new version always goes to a fresh temporary file beside the container; the committed
 * file is never written, so a crash or a full disk at any point leaves the previous version
 * whole. Members of the previous version that no rank re-staged are carried over. */
#include "ckpt/commit/commit_internal.h"
#include "common/align.h"

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
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

struct waiter {
    int rank;
    uint64_t req;
    struct waiter *next;
};

/* A member gathered for a commit: new (src >= 0: staged on rank src) or carried over from the
 * previous version (src < 0, old_index into it). */
struct gm {
    uint64_t seq;
    char *path;
    int src, member_rank, writer_rank;
    uint64_t size, offset;
    int64_t mtime_ns;
    uint32_t crc;
    unsigned mode; /* the program's permissions for it (new members; 0: unknown) */
    int keep;
    long old_index;
    struct commit_run *runs; /* its data runs as its writer stored them (NULL: one, dense) */
    uint32_t nruns;
};

struct hset;

struct hcommit {
    uint32_t id;
    struct hset *set;
    int awaiting_members, awaiting_written;
    struct gm *mem;
    size_t nmem, cap;
    int *ranks; /* ranks asked for their members */
    int nranks;
    char **drops; /* paths unlinked by the program: not carried over */
    size_t ndrops;
    char **paths; /* paths announced closed that this commit collects (answers MSG_QUERY) */
    size_t npaths;
    uint64_t *upto; /* per rank: the last notice this commit collects */
    char container[PATH_MAX], tmp[PATH_MAX], dir[PATH_MAX];
    struct sluice_container *old;
    int fd;
    int lockfd; /* folder lock held for this commit, -1 none */
    uint64_t version, index_offset, t0;
    int64_t created_ns;
    uint32_t block;
    int err;
    struct waiter *waiters;
    struct hcommit *next;
};

struct hset {
    char *key;
    unsigned char *pending; /* one byte per rank: closed a member since the last collection */
    int npending;
    unsigned char *opened; /* one byte per rank: holds a member open for writing (MSG_OPENED) */
    int nopened;
    char **paths; /* paths announced closed since the last collection */
    size_t npaths;
    uint64_t *upto; /* per rank: number of its last CLOSED notice the next collection takes */
    /* Once every rank has closed a member (the step is complete) the collection is fixed:
     * notices that arrive before it starts (a fast rank already closed the next step) wait
     * for the next one, so that a version never mixes two steps. */
    int latched;
    unsigned char *later; /* per rank: a notice arrived while latched */
    uint64_t *later_upto;
    char **later_paths;
    size_t nlater_paths;
    uint64_t first_pending_ns;
    int force;
    int gather;        /* forced by an fsync: wait for the ranks holding open members */
    uint64_t force_ns; /* when the first waiter forced it */
    struct hcommit *inflight;
    struct waiter *next_waiters;
    char **drops;
    size_t ndrops;
    uint64_t last_version;
    UT_hash_handle hh;
};

static struct hset *sets;
static struct hcommit *active;
static uint32_t commit_ids;
static int final_on;
static uint64_t final_expected, closed_received;
static int quiet_flag;

static uint64_t now_ns(void)
{
    return sluice_now_ns();
}

static int64_t wall_ns(void)
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
        !(s->later_upto = calloc((size_t)commit_g.size, sizeof(uint64_t))))
        sluice_fatal(1, "checkpoint commit: out of memory for set %s", key);
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
    free(s->key);
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

static void maybe_start(struct hset *s);

/* The header and the footer of one version carry the same description. */
static void fill_meta(const struct hcommit *c, struct sluice_container_meta *meta)
{
    memset(meta, 0, sizeof(*meta));
    meta->set_key = c->set->key;
    meta->block_size = c->block;
    meta->version = c->version;
    meta->created_ns = c->created_ns;
    meta->writer_nprocs = (uint32_t)commit_g.size;
    meta->writer_pid = (uint32_t)getpid();
    sluice_host_name(meta->writer_host);
    snprintf(meta->writer_software, sizeof meta->writer_software, "sluice %s", SLUICE_VERSION_STRING);
    /* Partial: some rank of the job has no member in this version (new or carried over). */
    int contributors = 0;
    unsigned char *seen = calloc((size_t)commit_g.size, 1);
    for (size_t i = 0; seen && i < c->nmem; i++) {
        int w = c->mem[i].writer_rank;
        if (c->mem[i].keep && w >= 0 && w < commit_g.size && !seen[w]) {
            seen[w] = 1;
            contributors++;
        }
    }
    free(seen);
    if (contributors < commit_g.size)
        meta->flags |= SLUICE_CONTAINER_F_PARTIAL;
}

/* ---- the end of a commit ---------------------------------------------------------------- */

static void commit_free(struct hcommit *c)
{
    for (struct hcommit **pp = &active; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    for (size_t i = 0; i < c->nmem; i++) {
        free(c->mem[i].path);
        free(c->mem[i].runs);
    }
    for (size_t i = 0; i < c->ndrops; i++)
        free(c->drops[i]);
    free(c->drops);
    free_paths(c->paths, c->npaths);
    free(c->upto);
    free(c->mem);
    free(c->ranks);
    if (c->old)
        sluice_container_close(c->old);
    if (c->lockfd >= 0)
        commit_fs_close(c->lockfd); /* releases the folder lock */
    free(c);
}

static void complete(struct hcommit *c, int err)
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

static const struct gm *order_base; /* progress thread only */
static int order_cmp(const void *a, const void *b)
{
    const struct gm *x = &order_base[*(const size_t *)a], *y = &order_base[*(const size_t *)b];
    if (x->member_rank != y->member_rank)
        return x->member_rank < y->member_rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The extents of member g in the new file (written to ext unless NULL; returns the count):
 * the data runs its writer stored, a carried member's extents in the previous version, else
 * one dense extent. Holes are never written and read as zeros (docs/FORMAT.md). */
static uint32_t member_extents(const struct hcommit *c, const struct gm *g, struct sluice_extent *ext)
{
    if (g->size == 0)
        return 0;
    if (g->src < 0 && g->old_index >= 0 && c->old) {
        const struct sluice_member *om = &c->old->members[g->old_index];
        for (uint32_t e = 0; ext && e < om->n_extents; e++)
            ext[e] = (struct sluice_extent){om->extents[e].logical, g->offset + om->extents[e].logical,
                                            om->extents[e].length};
        return om->n_extents;
    }
    if (g->runs == NULL) {
        if (ext)
            ext[0] = (struct sluice_extent){0, g->offset, g->size};
        return 1;
    }
    for (uint32_t r = 0; ext && r < g->nruns; r++)
        ext[r] =
            (struct sluice_extent){g->runs[r].logical, g->offset + g->runs[r].logical, g->runs[r].length};
    return g->nruns;
}

/* All writers reported: index, footer, durability, atomic replacement. */
static void finish(struct hcommit *c)
{
    if (c->err) {
        complete(c, c->err);
        return;
    }
    size_t nkeep = 0, next = 0;
    for (size_t i = 0; i < c->nmem; i++) {
        nkeep += c->mem[i].keep;
        next += c->mem[i].keep ? member_extents(c, &c->mem[i], NULL) : 0;
    }
    struct sluice_member *mm = calloc(nkeep ? nkeep : 1, sizeof(*mm));
    struct sluice_extent *ext = calloc(next ? next : 1, sizeof(*ext));
    size_t *order = calloc(nkeep ? nkeep : 1, sizeof(*order));
    int err = (mm && ext && order) ? 0 : -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; err == 0 && i < c->nmem; i++)
        if (c->mem[i].keep)
            order[k++] = i;
    /* The index lists members in rank order, like the data. */
    order_base = c->mem;
    if (err == 0)
        qsort(order, nkeep, sizeof(*order), order_cmp);
    k = 0;
    size_t e0 = 0;
    for (size_t o = 0; err == 0 && o < nkeep; o++) {
        struct gm *g = &c->mem[order[o]];
        uint32_t ne = member_extents(c, g, &ext[e0]);
        mm[k] = (struct sluice_member){.path = g->path,
                                       .member_rank = g->member_rank,
                                       .writer_rank = g->writer_rank,
                                       .size = g->size,
                                       .mtime_ns = g->mtime_ns,
                                       .crc32c = g->crc,
                                       .n_extents = ne,
                                       .extents = ne ? &ext[e0] : NULL};
        e0 += ne;
        k++;
    }

    struct sluice_container_meta meta;
    fill_meta(c, &meta);

    void *tail = NULL;
    size_t tail_size = 0;
    if (err == 0) {
        tail_size = sluice_container_tail_size(mm, (uint32_t)nkeep);
        tail = malloc(tail_size);
        if (!tail)
            err = -ENOMEM;
    }
    if (err == 0) {
        long n = sluice_container_encode_tail(&meta, mm, (uint32_t)nkeep, c->index_offset, tail, tail_size);
        if (n < 0) {
            err = (int)n;
            sluice_log_error("%s: cannot encode the index of version %llu", c->container,
                             (unsigned long long)c->version);
        }
    }
    if (err == 0)
        err = commit_fs_pwrite_full(c->fd, tail, tail_size, c->index_offset);
    if (err == 0)
        commit_trace_write(c->index_offset, tail_size);
    if (err == 0)
        err = commit_fs_fsync(c->fd, c->tmp);
    if (err == 0)
        err = commit_fs_close(c->fd);
    else
        commit_fs_close(c->fd);
    c->fd = -1;
    if (err == 0)
        err = commit_fs_rename(c->tmp, c->container);
    if (err)
        commit_fs_unlink(c->tmp);
    else
        err = commit_fs_fsync_dir(c->dir);
    free(tail);
    free(mm);
    free(ext);
    free(order);
    if (err == 0) {
        c->set->last_version = c->version;
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_COMMIT_DURABLE, 0, c->t0, now_ns() - c->t0,
                                sluice_trace_string(c->set->key), c->version, 0);
    }
    complete(c, err);
}

/* ---- planning ------------------------------------------------------------------------------ */

static int gm_cmp(const void *a, const void *b)
{
    const struct gm *x = a, *y = b;
    int r = strcmp(x->path, y->path);
    if (r)
        return r;
    return x->mtime_ns < y->mtime_ns ? -1 : (x->mtime_ns > y->mtime_ns);
}

static int dropped(const struct hcommit *c, const char *path)
{
    for (size_t i = 0; i < c->ndrops; i++)
        if (strcmp(c->drops[i], path) == 0)
            return 1;
    return 0;
}

static struct gm *gm_add(struct hcommit *c)
{
    if (c->nmem == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct gm *m = realloc(c->mem, cap * sizeof(*m));
        if (!m)
            return NULL;
        c->mem = m;
        c->cap = cap;
    }
    struct gm *g = &c->mem[c->nmem++];
    memset(g, 0, sizeof(*g));
    g->old_index = -1;
    return g;
}

struct carry_ctx {
    int fd;
    uint64_t base;
};

static int carry_sink(void *ctx, uint64_t logical, const void *buf, size_t len)
{
    struct carry_ctx *cc = ctx;
    if (!buf)
        return 0; /* a hole stays a hole: the new file reads zeros there */
    int rc = commit_fs_pwrite_full(cc->fd, buf, len, cc->base + logical);
    if (rc == 0)
        commit_trace_write(cc->base + logical, len);
    return rc;
}

/* Copies one member of the previous version into the new file at its planned offset. The
 * kernel copies (copy_file_range: a reflink or a server-side copy where the file system can)
 * and the member keeps the checksum it was verified against when written; where the kernel
 * cannot, the bytes come through user space and are verified on the way. */
static int carry_member(struct hcommit *c, struct gm *g, char *err, size_t errlen)
{
    const struct sluice_member *om = &c->old->members[g->old_index];
    int kernel = c->old->fd >= 0;
    for (uint32_t e = 0; kernel && e < om->n_extents; e++) {
        loff_t in = (loff_t)om->extents[e].file_offset;
        loff_t out = (loff_t)(g->offset + om->extents[e].logical);
        uint64_t left = om->extents[e].length;
        while (left > 0) {
            ssize_t n = SLUICE_REAL(copy_file_range)(c->old->fd, &in, c->fd, &out, left, 0);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                if (e == 0 && left == om->extents[e].length)
                    kernel = 0; /* not supported here: copy through user space instead */
                else
                    return n < 0 ? -errno : -EIO;
                break;
            }
            commit_trace_write((uint64_t)out - (uint64_t)n, (uint64_t)n);
            left -= (uint64_t)n;
        }
    }
    if (kernel)
        return 0;
    struct carry_ctx cc = {c->fd, g->offset};
    return sluice_container_read_member(c->old, (uint32_t)g->old_index, carry_sink, &cc, err, errlen);
}

/* Hands the kept members to the two-phase writer; returns its participant count (0: direct). */
static int start_twophase(struct hcommit *c)
{
    struct commit_tp_member *tm = calloc(c->nmem ? c->nmem : 1, sizeof(*tm));
    if (!tm)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < c->nmem; i++) {
        const struct gm *g = &c->mem[i];
        if (g->keep)
            tm[n++] = (struct commit_tp_member){g->seq, g->offset, g->size, g->src, g->member_rank, 0, 0};
    }
    int k = commit_twophase_start(c->id, c->tmp, c->dir, c->block, tm, n, c->ranks, c->nranks);
    free(tm);
    return k;
}

/* The new version's permissions: the most restrictive of what the program's files would have
 * been and of the previous version's file, so never more open than either (docs/FORMAT.md). */
static mode_t container_mode(const struct hcommit *c)
{
    mode_t mode = 0, known = 0;
    for (size_t i = 0; i < c->nmem; i++) {
        if (c->mem[i].keep && c->mem[i].src >= 0 && c->mem[i].mode) {
            mode = known ? (mode & c->mem[i].mode) : c->mem[i].mode;
            known = 1;
        }
    }
    if (!known)
        mode = 0666 & ~sluice_process_umask();
    struct stat st;
    if (c->old && c->old->fd >= 0 && SLUICE_REAL(fstat)(c->old->fd, &st) == 0)
        mode &= st.st_mode & 07777;
    return mode & 07777;
}

/* Where member data starts. Over MPI, a set of at least 16 stripes starts at the first stripe
 * boundary after the header, so that the first data stripe goes out whole like the others (the
 * header is alone in stripe 0, one small write; the rest of stripe 0 is a hole, never written). */
static uint64_t data_start(const struct hcommit *c, const struct sluice_plan_member *pm, size_t n)
{
    uint64_t start = sluice_container_data_start(c->set->key, c->block);
    if (!commit_g.use_mpi || commit_g.size < 2)
        return start;
    uint64_t unit = sluice_stripe_unit(c->dir, sluice_config.STRIPING_UNIT, c->block, NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += pm[i].size;
    return unit > start && total / 16 >= unit ? unit : start;
}

/* Names the set's container and its folder, and opens its previous version (c->old; NULL when
 * there is none or it cannot be read, which a warning says). 0 or -errno. */
static int plan_open_old(struct hcommit *c)
{
    const struct hset *s = c->set;
    char err[2 * PATH_MAX];
    if (sluice_container_name(s->key, c->container, sizeof c->container) != 0 ||
        sluice_container_dir(s->key, c->dir, sizeof c->dir) != 0) {
        sluice_log_error("checkpoint set %s: cannot name its container", s->key);
        return -ENAMETOOLONG;
    }
    int rc = sluice_container_open(c->container, &c->old, err, sizeof err);
    if (rc != 0) {
        c->old = NULL;
        if (rc != -ENOENT)
            sluice_log_warn("%s (its members that were not rewritten are lost in the next version)", err);
    }
    return 0;
}

/* The members of the new version: of several versions of one path (two ranks wrote the same
 * member) the newest is kept; members of the previous version that were neither rewritten nor
 * dropped are carried over. *nkeep gets how many are kept. 0 or -ENOMEM. */
static int plan_members(struct hcommit *c, size_t *nkeep)
{
    if (c->nmem > 1)
        qsort(c->mem, c->nmem, sizeof(*c->mem), gm_cmp);
    for (size_t i = 0; i < c->nmem; i++)
        c->mem[i].keep = !(i + 1 < c->nmem && strcmp(c->mem[i].path, c->mem[i + 1].path) == 0);
    size_t nnew = c->nmem;
    for (uint32_t k = 0; c->old && k < c->old->n_members; k++) {
        const struct sluice_member *om = &c->old->members[k];
        int again = 0;
        for (size_t i = 0; i < nnew && !again; i++)
            again = strcmp(c->mem[i].path, om->path) == 0;
        if (again || dropped(c, om->path))
            continue;
        struct gm *g = gm_add(c);
        if (!g || !(g->path = strdup(om->path)))
            return -ENOMEM;
        g->src = -1;
        g->member_rank = om->member_rank;
        g->writer_rank = om->writer_rank;
        g->size = om->size;
        g->mtime_ns = om->mtime_ns;
        g->crc = om->crc32c;
        g->keep = 1;
        g->old_index = (long)k;
    }
    *nkeep = 0;
    for (size_t i = 0; i < c->nmem; i++)
        *nkeep += c->mem[i].keep;
    return 0;
}

/* Every member was unlinked: the container goes away with them. 0 or -errno. */
static int plan_remove_container(struct hcommit *c)
{
    int rc = commit_fs_unlink(c->container);
    if (rc == 0 || rc == -ENOENT)
        rc = commit_fs_fsync_dir(c->dir);
    return rc;
}

/* The block-aligned offsets of the kept members (the planner's direct layout) and where the
 * index goes. 0 or -errno. */
static int plan_layout(struct hcommit *c, size_t nkeep)
{
    c->block = (uint32_t)sluice_config.BLOCK_SIZE;
    if (c->block < SLUICE_CONTAINER_BLOCK_MIN || c->block > SLUICE_CONTAINER_BLOCK_MAX)
        c->block = 4096;
    struct sluice_plan_member *pm = calloc(nkeep, sizeof(*pm));
    size_t *which = calloc(nkeep, sizeof(*which));
    struct sluice_plan p = {0};
    int rc = (pm && which) ? 0 : -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < c->nmem; i++) {
        if (!c->mem[i].keep)
            continue;
        pm[k] = (struct sluice_plan_member){c->mem[i].size, c->mem[i].src, c->mem[i].member_rank};
        which[k++] = i;
    }
    if (rc == 0)
        rc = sluice_plan_direct(pm, nkeep, data_start(c, pm, nkeep), c->block, &p);
    if (rc == 0) {
        for (size_t w = 0; w < p.nwrites; w++)
            c->mem[which[p.writes[w].member]].offset = p.writes[w].offset;
        c->index_offset = sluice_pad8(p.data_end);
    }
    sluice_plan_free(&p);
    free(pm);
    free(which);
    return rc;
}

/* The new version's file (c->fd, c->tmp) under a random name, created exclusively and never
 * through a link: the folder may be shared, and another job (or user) may be writing there too
 * (docs/SECURITY.md). 0, or -errno with c->fd -1. */
static int plan_create_temp(struct hcommit *c)
{
    c->fd = -EEXIST;
    for (int tries = 0; c->fd == -EEXIST && tries < 16; tries++) {
        if (sluice_container_temp_name(c->container, (unsigned long)sluice_random_u64(), c->tmp,
                                       sizeof c->tmp)) {
            c->fd = -ENAMETOOLONG;
            break;
        }
        c->fd = commit_fs_open(c->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    }
    if (c->fd >= 0 && SLUICE_REAL(fchmod)(c->fd, container_mode(c)) != 0) {
        int rc = -errno;
        commit_fs_close(c->fd);
        commit_fs_unlink(c->tmp);
        c->fd = rc;
    }
    if (c->fd >= 0)
        return 0;
    int rc = c->fd;
    c->fd = -1;
    return rc;
}

/* Writes the new version's header at offset 0. 0 or -errno. */
static int plan_write_header(struct hcommit *c)
{
    struct sluice_container_meta meta;
    c->created_ns = wall_ns();
    fill_meta(c, &meta);
    size_t hsize = sluice_container_header_size(c->set->key);
    void *hbuf = calloc(1, hsize);
    long hn = hbuf ? sluice_container_encode_header(&meta, hbuf, hsize) : -ENOMEM;
    int rc = hn < 0 ? (int)hn : commit_fs_pwrite_full(c->fd, hbuf, (size_t)hn, 0);
    free(hbuf);
    if (rc == 0)
        commit_trace_write(0, (uint64_t)hn);
    return rc;
}

static void plan_trace(const struct hcommit *c, size_t nkeep)
{
    if (!sluice_trace_active())
        return;
    uint32_t sid = sluice_trace_string(c->set->key);
    sluice_trace_instant(SLUICE_EV_COMMIT_BEGIN, sid, c->version, nkeep);
    for (size_t i = 0; i < c->nmem; i++)
        if (c->mem[i].keep)
            sluice_trace_instant(SLUICE_EV_COMMIT_MEMBER, (uint64_t)c->mem[i].member_rank, c->mem[i].size,
                                 sluice_trace_string(c->mem[i].path));
}

/* Carried-over members: the home copies them from the previous version. One that fails its
 * checksum is left out of the new version with a line. 0 or -errno. */
static int plan_carry(struct hcommit *c)
{
    char err[2 * PATH_MAX];
    for (size_t i = 0; i < c->nmem; i++) {
        struct gm *g = &c->mem[i];
        if (!g->keep || g->src >= 0 || !g->size)
            continue;
        int rc = carry_member(c, g, err, sizeof err);
        if (rc == -EIO) {
            sluice_log_error("%s (not carried into version %llu)", err, (unsigned long long)c->version);
            g->keep = 0;
        } else if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Direct path: each writer rank is sent its own members' offsets (MSG_WRITE) and moves their
 * bytes; c->awaiting_written counts the answers to wait for. 0 or -ENOMEM. */
static int plan_send_writes(struct hcommit *c)
{
    int *count = calloc((size_t)commit_g.size, sizeof(int));
    if (!count)
        return -ENOMEM;
    for (size_t i = 0; i < c->nmem; i++)
        if (c->mem[i].keep && c->mem[i].src >= 0)
            count[c->mem[i].src]++;
    c->awaiting_written = 0;
    for (int r = 0; r < commit_g.size; r++) {
        if (!count[r])
            continue;
        struct cmsg m;
        cmsg_init(&m, MSG_WRITE);
        cmsg_put_u32(&m, c->id);
        cmsg_put_str(&m, c->tmp);
        cmsg_put_u32(&m, (uint32_t)count[r]);
        for (size_t i = 0; i < c->nmem; i++) {
            const struct gm *g = &c->mem[i];
            if (g->keep && g->src == r) {
                cmsg_put_u64(&m, g->seq);
                cmsg_put_u64(&m, g->offset);
                cmsg_put_u64(&m, g->size);
            }
        }
        c->awaiting_written++;
        commit_send(r, &m);
    }
    free(count);
    return 0;
}

/* Plans a commit of the gathered members and starts it: the members and their layout, the new
 * version's file and header, the carried-over members, then the writers (two-phase or direct).
 * A failed step completes the commit with its error; the previous version stays. */
static void plan(struct hcommit *c)
{
    if (c->nmem == 0 && c->ndrops == 0) {
        complete(c, 0); /* nothing new: the committed version stays */
        return;
    }
    size_t nkeep = 0;
    int rc = plan_open_old(c);
    if (rc == 0)
        rc = plan_members(c, &nkeep);
    if (rc) {
        complete(c, rc);
        return;
    }
    uint64_t old_version = c->old ? c->old->meta.version : 0;
    c->version = (old_version > c->set->last_version ? old_version : c->set->last_version) + 1;
    if (nkeep == 0) {
        complete(c, plan_remove_container(c));
        return;
    }
    rc = plan_layout(c, nkeep);
    if (rc == 0)
        rc = plan_create_temp(c);
    if (rc == 0)
        rc = plan_write_header(c);
    if (rc == 0) {
        plan_trace(c, nkeep);
        rc = plan_carry(c);
    }
    if (rc) {
        complete(c, rc);
        return;
    }
    /* Two-phase path: aggregators write the members (twophase_home.c); else the direct path. */
    int participants = start_twophase(c);
    if (participants > 0) {
        c->awaiting_written = participants;
        return;
    }
    rc = plan_send_writes(c);
    if (rc)
        complete(c, rc);
    else if (c->awaiting_written == 0)
        finish(c);
}

/* ---- starting a commit ----------------------------------------------------------------------- */

static void start_commit(struct hset *s)
{
    struct hcommit *c = calloc(1, sizeof(*c));
    if (!c)
        sluice_fatal(1, "checkpoint commit: out of memory");
    c->id = ++commit_ids;
    if (c->id == 0)
        c->id = ++commit_ids; /* 0 means "not in flight" on the rank side */
    c->set = s;
    c->fd = -1;
    c->lockfd = -1;
    c->t0 = now_ns();
    c->ranks = calloc((size_t)commit_g.size, sizeof(int));
    if (!c->ranks)
        sluice_fatal(1, "checkpoint commit: out of memory");
    for (int r = 0; r < commit_g.size; r++) {
        if (s->pending[r]) {
            c->ranks[c->nranks++] = r;
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
    s->first_pending_ns = s->npending ? now_ns() : 0;
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
        plan(c);
}

static int final_ready(void)
{
    return final_on && closed_received >= final_expected;
}

/* Several processes may commit the same set on their own: without MPI (e.g. a rank's second
 * program, after the first one owned MPI), or the homes of two jobs writing members of one set
 * in one folder at once, or a forked child of a rank (it commits alone, over the loopback)
 * while the rank's MPI home commits. Each reads the previous version, adds its members and renames. An
 * exclusive lock on the folder, held from before reading the previous version until after the rename, keeps
 * those read-modify-renames from losing each other's members. Never blocks (the progress thread must go on
 * serving): -EWOULDBLOCK when busy, an fd to close when taken, or -1 where the file system has no locks. */
static int lock_folder(const char *key)
{
    char dir[PATH_MAX];
    if (sluice_container_dir(key, dir, sizeof dir) != 0)
        return -1;
    int fd = commit_fs_open(dir, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    int busy = errno == EWOULDBLOCK;
    commit_fs_close(fd);
    return busy ? -EWOULDBLOCK : -1;
}

/* A forced commit may start: the gathering time has passed and, for an fsync, every rank
 * holding an open member of the set has closed or synced it (or the bound has passed). */
static int gathered(const struct hset *s, uint64_t now)
{
    uint64_t waited = now - s->force_ns;
    if (waited < COMMIT_FORCE_GATHER_NS)
        return 0;
    if (!s->gather || waited >= (uint64_t)sluice_config.FSYNC_GATHER * 1000000ull)
        return 1;
    for (int r = 0; r < commit_g.size; r++)
        if (s->opened[r] && !s->pending[r])
            return 0;
    return 1;
}

static void maybe_start(struct hset *s)
{
    if (s->inflight)
        return;
    if (s->npending == 0 && s->ndrops == 0) {
        /* Nothing to commit: whoever waits for the next version already has it. */
        reply_all(s->next_waiters, 0, s->last_version);
        s->next_waiters = NULL;
        return;
    }
    uint64_t now = now_ns();
    if (!(s->npending == commit_g.size || final_ready() || (s->force && gathered(s, now)) ||
          (s->first_pending_ns && now - s->first_pending_ns >= COMMIT_INCOMPLETE_DELAY_NS)))
        return;
    /* MPI homes too: another job may commit the same set in the same folder at the same time. */
    int lockfd = lock_folder(s->key);
    if (lockfd == -EWOULDBLOCK)
        return; /* another commit in this folder: the poller tries again shortly */
    start_commit(s);
    if (s->inflight)
        s->inflight->lockfd = lockfd;
    else if (lockfd >= 0)
        commit_fs_close(lockfd);
}

/* ---- messages ------------------------------------------------------------------------------- */

static void force(struct hset *s)
{
    if (!s->force)
        s->force_ns = now_ns();
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
        struct gm *g = gm_add(c);
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
        g->keep = 1;
        if (!g->path) {
            c->nmem--;
            c->err = -ENOMEM;
            break;
        }
    }
    commit_twophase_note_node(src, cmsg_get_u64(in));
    if (in->bad)
        c->err = -EPROTO;
    if (--c->awaiting_members == 0) {
        if (c->err)
            complete(c, c->err);
        else
            plan(c);
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

static void on_written(int src, struct cmsg *in)
{
    struct hcommit *c = find_active(cmsg_get_u32(in));
    if (!c)
        return;
    int err = (int)cmsg_get_u32(in);
    uint32_t n = cmsg_get_u32(in);
    if (err && !c->err)
        c->err = err;
    for (uint32_t i = 0; i < n && !in->bad; i++) {
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
        for (size_t k = 0; k < c->nmem; k++) {
            struct gm *g = &c->mem[k];
            if (g->src == src && g->seq == seq) {
                g->crc = crc;
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
    }
    if (in->bad && !c->err)
        c->err = -EPROTO;
    if (--c->awaiting_written == 0)
        finish(c);
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
            s->first_pending_ns = now_ns();
        maybe_start(s);
        break;
    }
    case MSG_FLUSH: {
        struct hset *s = set_get(cmsg_get_str(m));
        uint64_t req = cmsg_get_u64(m);
        if (s->npending || s->ndrops) {
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
        else
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
        on_written(src, m);
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
    HASH_ITER(hh, sets, s, tmp)
    {
        if (!s->inflight && (s->npending || s->ndrops)) {
            maybe_start(s);
            done += s->inflight != NULL;
        }
        if (s->inflight || s->npending || s->ndrops || s->next_waiters)
            busy = 1;
        else if (s->nopened && !final_on)
            continue; /* members open somewhere: an fsync's commit will wait for them */
        else if (!final_on || final_ready())
            set_free(s); /* idle: the version on disk is the state; a later notice recreates it */
    }
    if (final_ready() && !busy)
        __atomic_store_n(&quiet_flag, 1, __ATOMIC_RELAXED);
    return done;
}

void commit_home_reset_counts(void)
{
    closed_received = 0;
    final_expected = 0;
}

void commit_home_forget_all(void)
{
    /* The parent's commits in flight go on in the parent. Their descriptors must not live on
     * here: the folder lock belongs to the open file description, which this copy would keep
     * locked after the parent is done (and then block this process's own commits). */
    for (struct hcommit *c = active; c; c = c->next) {
        if (c->lockfd >= 0)
            SLUICE_REAL(close)(c->lockfd);
        if (c->fd >= 0)
            SLUICE_REAL(close)(c->fd);
    }
    sets = NULL;
    active = NULL;
    final_on = 0;
    final_expected = closed_received = 0;
    quiet_flag = 0;
}
