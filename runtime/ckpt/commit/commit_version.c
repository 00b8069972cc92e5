/* SPDX-License-Identifier: MIT */
/* One version of a checkpoint set, at its home, from plan to durable: which members it holds
 * (new ones, and those of the previous version carried over), their layout, the new file under
 * a random temporary name with its header, the carried members copied, the writers started
 * (two-phase or direct), then the index and footer, fsync and the rename over the previous
 * version. The previous version is never written; a version that cannot be decoded is set aside,
 * never replaced. The sets, their notices and when a version starts are commit_home.c's. */
#include "ckpt/commit/commit_home_internal.h"

#include "ckpt/commit/commit_array.h"

#include "ckpt/twophase/planner.h"
#include "ckpt/twophase/stripe.h"
#include "common/align.h"
#include "common/host_name.h"
#include "common/hugebuf.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "config/config.h"
#include "sluice_version.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_header(struct hcommit *c, const struct sluice_container_meta *meta);

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
    commit_array_record(c, meta->array_record, sizeof meta->array_record);
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

/* All writers reported: index, footer, durability, atomic replacement. */
void commit_version_finish(struct hcommit *c)
{
    if (c->err) {
        commit_home_complete(c, c->err);
        return;
    }
    int err = 0;
    struct sluice_container_meta meta;
    fill_meta(c, &meta);
    /* A member that vanished while its bytes moved (unlinked by another rank) changes the
     * description (the partial flag): the header must say what the footer says, or the version
     * reads as torn. */
    if (meta.flags != c->header_flags)
        err = write_header(c, &meta);

    void *tail = NULL;
    size_t tail_size = 0;
    if (err == 0)
        err = commit_index_tail(c, &meta, &tail, &tail_size);
    if (err == 0)
        err = commit_fs_pwrite_full(c->fd, tail, tail_size, c->index_offset);
    if (err == 0)
        commit_trace_write(c->tmp, c->index_offset, tail_size);
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
        err = commit_fs_fsync_dir(c->dir, c->tmp);
    sluice_hugebuf_free(tail, tail_size);
    if (err == 0) {
        c->set->last_version = c->version;
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_COMMIT_DURABLE, 0, c->t0, commit_home_now_ns() - c->t0,
                                sluice_trace_string(c->set->key), c->version, 0);
    }
    commit_home_complete(c, err);
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

struct gm *commit_version_add_member(struct hcommit *c)
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
    const char *tmp; /* the new version's file, for the trace */
};

static int carry_sink(void *ctx, uint64_t logical, const void *buf, size_t len)
{
    struct carry_ctx *cc = ctx;
    if (!buf)
        return 0; /* a hole stays a hole: the new file reads zeros there */
    int rc = commit_fs_pwrite_full(cc->fd, buf, len, cc->base + logical);
    if (rc == 0)
        commit_trace_write(cc->tmp, cc->base + logical, len);
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
            commit_trace_write(c->tmp, (uint64_t)out - (uint64_t)n, (uint64_t)n);
            left -= (uint64_t)n;
        }
    }
    if (kernel)
        return 0;
    struct carry_ctx cc = {c->fd, g->offset, c->tmp};
    return sluice_container_read_member(c->old, (uint32_t)g->old_index, carry_sink, &cc, err, errlen);
}

/* Hands the kept members to the two-phase writer; returns its participant count (0: direct).
 * Each new member's writer comes back with it: -1 shuffled, else the rank that copies it. */
static int start_twophase(struct hcommit *c)
{
    struct commit_tp_member *tm = calloc(c->nmem ? c->nmem : 1, sizeof(*tm));
    size_t *which = calloc(c->nmem ? c->nmem : 1, sizeof(*which));
    if (!tm || !which) {
        free(tm);
        free(which);
        return -ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->nmem; i++) {
        const struct gm *g = &c->mem[i];
        if (g->keep) {
            tm[n] = (struct commit_tp_member){g->seq, g->offset, g->size, g->src, g->member_rank, 0, 0, -1};
            which[n++] = i;
        }
    }
    int k = commit_twophase_start(c->id, c->tmp, c->dir, c->block, tm, n, c->ranks, c->nranks, c->array);
    for (size_t x = 0; x < n; x++)
        c->mem[which[x]].writer = tm[x].writer;
    free(tm);
    free(which);
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

/* The stripe unit a set's data is aligned to, or 0 when it is not. Over MPI a set of at least
 * one stripe of data starts at the first stripe boundary after the header and its index at the
 * first one after the data, so that no stripe is written in pieces by two processes (the home's
 * header or index and an aggregator's data: on Lustre they would contend for the stripe's lock,
 * and a partial stripe is a read-modify-write). The rest of stripe 0 and of the last data stripe
 * are holes, never written. A smaller set (or one process) is packed: header, data and index in
 * one or two stripes, for a file that costs one lock round trip or two either way. */
/* v rounded up to a stripe boundary (a stripe unit need not be a power of two: Lustre's are
 * multiples of 64 KiB). */
static uint64_t stripe_up(uint64_t v, uint64_t unit)
{
    return (v + unit - 1) / unit * unit;
}

static uint64_t stripe_aligned_unit(const struct hcommit *c, const struct sluice_plan_member *pm, size_t n)
{
    if (!commit_g.use_mpi || commit_g.size < 2)
        return 0;
    uint64_t unit = sluice_stripe_unit(c->dir, sluice_config.STRIPING_UNIT, c->block, NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += pm[i].size;
    return total >= unit ? unit : 0;
}

/* The previous version cannot be decoded (damaged, or not a container): the next version must
 * neither replace nor remove it, since its members would go with it. It is kept beside the
 * container as .NAME.damaged-tNS (as sluice-ckpt salvage keeps what it repairs), with one line
 * that says where; the new version then holds only what the ranks staged. 0 or -errno. */
static int set_aside_damaged(struct hcommit *c, const char *why)
{
    char aside[PATH_MAX], tag[32];
    snprintf(tag, sizeof tag, "t%lld", (long long)commit_home_wall_ns());
    int rc = sluice_container_damaged_name(c->container, tag, aside, sizeof aside);
    if (rc == 0)
        rc = commit_fs_rename(c->container, aside);
    if (rc == 0)
        rc = commit_fs_fsync_dir(c->dir, NULL);
    if (rc) {
        sluice_log_error("%s; it cannot be set aside (%s): version not committed, the file is left as it is",
                         why, strerror(-rc));
        return rc;
    }
    sluice_log_error("%s; kept as %s (sluice-ckpt salvage reads what is intact in it), the next version "
                     "holds only the members written since",
                     why, aside);
    return 0;
}

/* Names the set's container and its folder, and opens its previous version (c->old; NULL when
 * there is none, or when it is damaged and was set aside). 0 or -errno: the commit fails and the
 * previous version stays. */
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
    if (rc == 0 || rc == -ENOENT) {
        if (rc)
            c->old = NULL;
        return 0;
    }
    c->old = NULL;
    if (rc != -EIO) {
        /* Not the file's fault (no descriptor, no memory, no permission): this commit fails and
         * the previous version stays where it is, for the next attempt. */
        sluice_log_error("%s (version not committed; the previous one is left as it is)", err);
        return rc;
    }
    return set_aside_damaged(c, err);
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
        struct gm *g = commit_version_add_member(c);
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
        rc = commit_fs_fsync_dir(c->dir, NULL);
    return rc;
}

/* The block-aligned offsets of the kept members (the planner's direct layout) and where the
 * index goes. 0 or -errno. */
static int plan_layout(struct hcommit *c, size_t nkeep)
{
    c->block = (uint32_t)sluice_config.BLOCK_SIZE;
    if (c->block < SLUICE_CONTAINER_BLOCK_MIN || c->block > SLUICE_CONTAINER_BLOCK_MAX)
        c->block = 4096;
    int arr = commit_array_plan(c, nkeep);
    if (arr)
        return arr < 0 ? arr : 0;
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
    uint64_t unit = rc == 0 ? stripe_aligned_unit(c, pm, nkeep) : 0;
    uint64_t start = sluice_container_data_start(c->set->key, c->block);
    if (unit)
        start = stripe_up(start, unit);
    if (rc == 0)
        rc = sluice_plan_direct(pm, nkeep, start, c->block, &p);
    if (rc == 0) {
        for (size_t w = 0; w < p.nwrites; w++)
            c->mem[which[p.writes[w].member]].offset = p.writes[w].offset;
        c->index_offset = unit ? stripe_up(p.data_end, unit) : sluice_pad8(p.data_end);
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

/* Writes the header describing meta at offset 0 of the new version. 0 or -errno. */
static int write_header(struct hcommit *c, const struct sluice_container_meta *meta)
{
    size_t hsize = sluice_container_header_size(c->set->key) + SLUICE_CONTAINER_ARRAY_MAX;
    void *hbuf = calloc(1, hsize);
    long hn = hbuf ? sluice_container_encode_header(meta, hbuf, hsize) : -ENOMEM;
    int rc = hn < 0 ? (int)hn : commit_fs_pwrite_full(c->fd, hbuf, (size_t)hn, 0);
    free(hbuf);
    if (rc == 0) {
        c->header_flags = meta->flags;
        commit_trace_write(c->tmp, 0, (uint64_t)hn);
    }
    return rc;
}

/* The new version's header, as planned; finish() rewrites it if the members changed since. */
/* The version's header, from the description as planned (also in *meta, for the index). */
static int plan_write_header(struct hcommit *c, struct sluice_container_meta *meta)
{
    c->created_ns = commit_home_wall_ns();
    fill_meta(c, meta);
    return write_header(c, meta);
}

static void plan_trace(const struct hcommit *c, size_t nkeep)
{
    if (!sluice_trace_active())
        return;
    uint32_t sid = sluice_trace_string(c->set->key);
    sluice_trace_instant(SLUICE_EV_COMMIT_FILE, sid, c->version, sluice_trace_string(c->tmp));
    if (c->lock.fd >= 0) /* taken before the version had a file: recorded now, at its time */
        commit_trace_meta_at(c->lock_ns, "open", c->dir, c->tmp);
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

/* Direct path: each writer (its node's aggregator: direct_writers.c) is sent the members it
 * copies (MSG_WRITE: owner, offsets, staging file names) and moves their bytes; returns how
 * many writers were sent one, each answering MSG_WRITTEN. -ENOMEM. */
static int plan_send_writes(struct hcommit *c)
{
    int *count = calloc((size_t)commit_g.size, sizeof(int));
    if (!count)
        return -ENOMEM;
    for (size_t i = 0; i < c->nmem; i++)
        if (c->mem[i].keep && c->mem[i].src >= 0 && c->mem[i].writer >= 0 && c->mem[i].writer < commit_g.size)
            count[c->mem[i].writer]++;
    int writers = 0;
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
            if (g->keep && g->src >= 0 && g->writer == r) {
                cmsg_put_u32(&m, (uint32_t)g->src);
                cmsg_put_u64(&m, g->seq);
                cmsg_put_u64(&m, g->offset);
                cmsg_put_u64(&m, g->size);
                cmsg_put_str(&m, g->stage);
            }
        }
        /* A one-rank set laid out as an array: its member gets chunk checksums as the two-phase
         * writer's members do (direct_write.c). */
        cmsg_put_u32(&m, c->array ? COMMIT_ARRAY_CHUNK : 0);
        writers++;
        commit_send(r, &m);
    }
    free(count);
    return writers;
}

/* Plans a commit of the gathered members and starts it: the members and their layout, the new
 * version's file and header, the carried-over members, then the writers (two-phase or direct).
 * A failed step completes the commit with its error; the previous version stays. */
void commit_version_plan(struct hcommit *c)
{
    if (c->nmem == 0 && c->ndrops == 0) {
        commit_home_complete(c, 0); /* nothing new: the committed version stays */
        return;
    }
    size_t nkeep = 0;
    int rc = plan_open_old(c);
    if (rc == 0)
        rc = plan_members(c, &nkeep);
    if (rc) {
        commit_home_complete(c, rc);
        return;
    }
    uint64_t old_version = c->old ? c->old->meta.version : 0;
    c->version = (old_version > c->set->last_version ? old_version : c->set->last_version) + 1;
    uint64_t kept = commit_level_kept_max(c->set->key); /* node-local versions come before it */
    if (kept >= c->version)
        c->version = kept + 1;
    if (nkeep == 0) {
        commit_home_complete(c, plan_remove_container(c));
        return;
    }
    struct sluice_container_meta meta;
    rc = plan_layout(c, nkeep);
    if (rc == 0)
        rc = plan_create_temp(c);
    if (rc == 0)
        rc = plan_write_header(c, &meta);
    if (rc == 0) {
        commit_index_ahead(c, &meta); /* array sets: while the data moves */
        plan_trace(c, nkeep);
        rc = plan_carry(c);
    }
    if (rc) {
        commit_home_complete(c, rc);
        return;
    }
    /* Two-phase path: aggregators write the shuffled members (twophase_home.c); the others
     * (all of them on the direct path) are copied by their node's writer. */
    int participants = start_twophase(c);
    if (participants < 0) {
        commit_home_complete(c, participants);
        return;
    }
    if (c->array && c->array->nprocs > 1 && participants == 0) {
        /* Its members are extents of the array: only the two-phase writer places them. */
        sluice_log_error("checkpoint commit: %s: the two-phase writer of its array did not start",
                         c->set->key);
        commit_home_complete(c, -EIO);
        return;
    }
    /* Set before any answer can arrive: messages go out from the progress thread, later. */
    c->awaiting_written = participants;
    int writers = plan_send_writes(c);
    if (writers < 0) {
        commit_home_complete(c, writers); /* the shares sent are answered to a commit gone */
        return;
    }
    c->awaiting_written += writers;
    if (c->awaiting_written == 0)
        commit_version_finish(c);
}
