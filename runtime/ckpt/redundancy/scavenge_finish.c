/* SPDX-License-Identifier: MIT */
/* The finishing step of a scavenge (scavenge.h): the parts of every node merged into the
 * container's next version, the one a drain of that version would have written. */
#include "ckpt/redundancy/scavenge.h"
#include "ckpt/redundancy/scavenge_internal.h"

#include "ckpt/commit/folder_lock.h"
#include "ckpt/commit/recover.h"
#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_record.h"
#include "common/host_name.h"
#include "common/private_dir.h"
#include "sluice_version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void list_parts(const char *root, struct scavenge_parts *p)
{
    p->n = 0;
    DIR *d = opendir(root);
    if (!d)
        return;
    struct dirent *e;
    size_t sl = strlen(SLUICE_SCAVENGE_PART_SUFFIX);
    while ((e = readdir(d)) != NULL && p->n < SCAVENGE_MAX_PARTS) {
        size_t l = strlen(e->d_name);
        if (l <= sl || strcmp(e->d_name + l - sl, SLUICE_SCAVENGE_PART_SUFFIX) != 0 ||
            snprintf(p->dir[p->n], PATH_MAX, "%s/%s", root, e->d_name) >= PATH_MAX)
            continue;
        snprintf(p->name[p->n], NAME_MAX + 1, "%.*s", (int)(l - sl), e->d_name);
        p->n++;
    }
    p->nodes = p->n;
    closedir(d);
}

/* Versions above `durable` over all parts, newest first, with the ranks recorded. */
static int merge_versions(const struct scavenge_parts *p, const char *key, uint64_t durable,
                          struct scavenge_version *mv)
{
    int n = 0;
    for (int i = 0; i < p->n; i++) {
        struct sluice_level_version v[SCAVENGE_MAX_VERSIONS];
        int k = sluice_level_versions(p->dir[i], key, v, SCAVENGE_MAX_VERSIONS);
        for (int j = 0; j < k; j++) {
            if (v[j].version <= durable || v[j].nprocs <= 0)
                continue;
            int at = 0;
            while (at < n && mv[at].version != v[j].version)
                at++;
            if (at == n) {
                if (n == SCAVENGE_MAX_VERSIONS)
                    continue;
                mv[n] = (struct scavenge_version){v[j].version, v[j].nprocs, calloc((size_t)v[j].nprocs, 1)};
                n++;
            }
            char file[PATH_MAX];
            for (int r = 0; r < mv[at].nprocs && mv[at].have; r++)
                if (!mv[at].have[r] &&
                    sluice_level_record_path(p->dir[i], key, v[j].version, r, file, sizeof file) == 0)
                    mv[at].have[r] = access(file, F_OK) == 0;
        }
    }
    for (int i = 0; i < n; i++) /* newest first */
        for (int j = i + 1; j < n; j++)
            if (mv[j].version > mv[i].version) {
                struct scavenge_version t = mv[i];
                mv[i] = mv[j];
                mv[j] = t;
            }
    return n;
}

/* The member path of rank r in key ("%r" written as r). */
static void member_of(const char *key, int r, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *k = key; *k && o + 12 < cap; k++) {
        if (k[0] == '%' && k[1] == 'r') {
            o += (size_t)snprintf(out + o, cap - o, "%d", r);
            k++;
        } else {
            out[o++] = *k;
        }
    }
    out[o] = 0;
}

/* One line naming what an incomplete version lacks: the ranks without a record in any part. */
static void say_incomplete(const char *key, const struct scavenge_version *m, const struct scavenge_parts *p,
                           FILE *report)
{
    if (!report)
        return;
    fprintf(report,
            "sluice-ckpt scavenge: %s: version %" PRIu64
            " is incomplete over the surviving nodes: no record of",
            key, m->version);
    int missing = 0;
    for (int r = 0; r < m->nprocs && m->have; r++) {
        char path[PATH_MAX];
        if (m->have[r] || ++missing > 8)
            continue;
        member_of(key, r, path, sizeof path);
        fprintf(report, "%s rank %d (%s)", missing > 1 ? "," : "", r, path);
    }
    if (missing > 8)
        fprintf(report, " and %d more", missing - 8);
    fprintf(report, " of its %d ranks in the parts of %d node%s (", m->nprocs, p->nodes,
            p->nodes == 1 ? "" : "s");
    for (int i = 0; i < p->nodes; i++)
        fprintf(report, "%s%s", i ? ", " : "", p->name[i]);
    /* The rebuild from partner copies and XOR parity (scavenge_rebuild.c) ran before: nothing
     * restores them. */
    fprintf(report, "): their node did not take part and no partner copy or XOR parity in the parts rebuilds "
                    "them\n");
}

struct sources {
    struct sluice_container_source *src;
    int *fds;
    char **paths; /* owned copies of the member paths */
    size_t n, cap;
    uint64_t local, bytes;
};

static int add_source(struct sources *s, const char *path, int rank, int64_t mtime, int fd, uint64_t size)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        void *a = realloc(s->src, cap * sizeof *s->src), *b = realloc(s->fds, cap * sizeof *s->fds),
             *c = realloc(s->paths, cap * sizeof *s->paths);
        if (a)
            s->src = a;
        if (b)
            s->fds = b;
        if (c)
            s->paths = c;
        if (!a || !b || !c)
            return -ENOMEM;
        s->cap = cap;
    }
    s->paths[s->n] = strdup(path);
    if (!s->paths[s->n])
        return -ENOMEM;
    s->fds[s->n] = fd;
    s->src[s->n] = (struct sluice_container_source){.path = s->paths[s->n],
                                                    .member_rank = rank,
                                                    .writer_rank = -1,
                                                    .mtime_ns = mtime,
                                                    .fd = fd,
                                                    .size = size};
    s->n++;
    s->bytes += size;
    return 0;
}

static int has_source(const struct sources *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->paths[i], path) == 0)
            return 1;
    return 0;
}

/* Each member named by the parts' records of versions (durable, v]: its newest bytes over all
 * parts (a member a version did not rewrite comes from the older version that holds it). */
static int add_local(struct sources *s, const struct scavenge_parts *p, const char *key, uint64_t durable,
                     uint64_t v, int nprocs, mode_t *mode)
{
    for (int i = 0; i < p->n; i++) {
        struct sluice_level_version lv[SCAVENGE_MAX_VERSIONS];
        int k = sluice_level_versions(p->dir[i], key, lv, SCAVENGE_MAX_VERSIONS);
        for (int j = 0; j < k; j++) {
            if (lv[j].version <= durable || lv[j].version > v)
                continue;
            for (int r = 0; r < nprocs; r++) {
                char file[PATH_MAX];
                struct sluice_level_record rec;
                if (sluice_level_record_path(p->dir[i], key, lv[j].version, r, file, sizeof file) != 0 ||
                    sluice_level_record_read(file, &rec) != 0)
                    continue;
                for (uint32_t m = 0; m < rec.n; m++) {
                    if (has_source(s, rec.m[m].path))
                        continue;
                    struct sluice_level_hit best = {0}, hit;
                    for (int q = 0; q < p->n; q++)
                        if (sluice_level_find_upto(p->dir[q], key, rec.m[m].path, durable, v, &hit) &&
                            hit.version > best.version)
                            best = hit;
                    int fd = best.version ? open(best.data, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
                    if (fd < 0) {
                        sluice_level_record_free(&rec);
                        return -EIO;
                    }
                    if (best.mode)
                        *mode &= best.mode;
                    int rc = add_source(s, rec.m[m].path, best.member_rank, best.mtime_ns, fd, best.size);
                    if (rc != 0) {
                        close(fd);
                        sluice_level_record_free(&rec);
                        return rc;
                    }
                    s->local++;
                }
                sluice_level_record_free(&rec);
            }
        }
    }
    return 0;
}

/* The container's members that no node-local version rewrote, through a verified private copy. */
static int add_carried(struct sources *s, const struct sluice_container *old, FILE *report)
{
    for (uint32_t k = 0; old && k < old->n_members; k++) {
        const struct sluice_member *om = &old->members[k];
        if (has_source(s, om->path))
            continue;
        int fd = memfd_create("sluice-scavenge", MFD_CLOEXEC);
        if (fd < 0)
            return -errno;
        char err[2 * PATH_MAX + 64];
        if (sluice_container_copy_member(old, k, fd, err, sizeof err) != 0) {
            close(fd);
            if (report)
                fprintf(report, "sluice-ckpt scavenge: %s (the scavenged version goes without it)\n", err);
            return -EIO;
        }
        int rc = add_source(s, om->path, om->member_rank, om->mtime_ns, fd, om->size);
        if (rc != 0) {
            close(fd);
            return rc;
        }
    }
    return 0;
}

static void free_sources(struct sources *s)
{
    for (size_t i = 0; i < s->n; i++) {
        close(s->fds[i]);
        free(s->paths[i]);
    }
    free(s->src);
    free(s->fds);
    free(s->paths);
}

/* Writes version v of key from the parts (and the old container's other members). */
static int write_scavenged(const char *key, const char *container, const char *dir,
                           const struct scavenge_parts *p, const struct sluice_container *old, uint64_t v,
                           int nprocs, FILE *report)
{
    uint64_t durable = old ? old->meta.version : 0;
    mode_t mode = 0666 & ~(mode_t)sluice_process_umask();
    struct stat st;
    if (old && fstat(old->fd, &st) == 0)
        mode &= st.st_mode & 07777;
    struct sources s = {0};
    int rc = add_local(&s, p, key, durable, v, nprocs, &mode);
    if (rc == 0)
        rc = add_carried(&s, old, report);
    char err[2 * PATH_MAX + 64] = "";
    if (rc == 0) {
        struct sluice_container_meta meta = {.set_key = key,
                                             .block_size = old ? old->meta.block_size : 4096,
                                             .version = v,
                                             .writer_nprocs = (uint32_t)nprocs,
                                             .writer_pid = (uint32_t)getpid()};
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        meta.created_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        sluice_host_name(meta.writer_host);
        snprintf(meta.writer_software, sizeof meta.writer_software, "sluice %s scavenge",
                 SLUICE_VERSION_STRING);
        rc = sluice_recover_write_version(container, dir, mode, &meta, s.src, s.n, err, sizeof err);
    }
    if (report && rc == 0)
        fprintf(report,
                "sluice-ckpt scavenge: %s: version %" PRIu64 " is durable in %s: %zu members, %" PRIu64
                " from node-local storage of %d node%s, %zu carried from version %" PRIu64 ", %" PRIu64
                " bytes\n",
                key, v, container, s.n, s.local, p->nodes, p->nodes == 1 ? "" : "s", s.n - (size_t)s.local,
                durable, s.bytes);
    else if (report)
        fprintf(report, "sluice-ckpt scavenge: %s: version %" PRIu64 " not written: %s\n", key, v,
                err[0] ? err : strerror(-rc));
    free_sources(&s);
    return rc;
}

static void remove_parts(const char *root, const struct scavenge_parts *p)
{
    for (int i = 0; i < p->n; i++)
        sluice_scavenge_remove_folder(p->dir[i]);
    rmdir(root); /* only once empty: a part being written keeps it */
}

int sluice_scavenge_finish(const char *key, FILE *report)
{
    char root[PATH_MAX], container[PATH_MAX], dir[PATH_MAX], err[2 * PATH_MAX];
    if (sluice_scavenge_root(key, root, sizeof root) != 0 ||
        sluice_container_name(key, container, sizeof container) ||
        sluice_container_dir(key, dir, sizeof dir) != 0) {
        if (report)
            fprintf(report, "sluice-ckpt scavenge: %s: cannot name its container\n", key);
        return 1;
    }
    static struct scavenge_parts p;
    list_parts(root, &p);
    struct sluice_folder_lock lock;
    sluice_recover_wait_lock(dir, &lock, report);
    struct sluice_container *old = NULL;
    int rc = sluice_container_open(container, &old, err, sizeof err);
    if (rc != 0 && rc != -ENOENT) {
        if (report)
            fprintf(report, "sluice-ckpt scavenge: %s: its container is unreadable (%s); nothing written\n",
                    key, err);
        sluice_folder_lock_release(&lock);
        return 1;
    }
    uint64_t durable = old ? old->meta.version : 0;
    struct scavenge_version mv[SCAVENGE_MAX_VERSIONS];
    int n = merge_versions(&p, key, durable, mv), chosen = -1;
    /* Lost nodes' parts rebuilt from the partner copies or XOR parity in the survivors' parts,
     * into one more folder that the merge then counts (removed at the end: the redundancy can
     * rebuild it again). */
    char rebuilt[PATH_MAX];
    int rebuild = p.n < SCAVENGE_MAX_PARTS && snprintf(rebuilt, sizeof rebuilt, "%s/rebuilt.%ld", root,
                                                       (long)getpid()) < (int)sizeof rebuilt;
    if (rebuild && (rebuild = scavenge_rebuild(key, &p, mv, n, rebuilt, report)) > 0) {
        snprintf(p.dir[p.n], PATH_MAX, "%s", rebuilt);
        snprintf(p.name[p.n], NAME_MAX + 1, "rebuilt");
        p.n++;
        for (int i = 0; i < n; i++)
            free(mv[i].have);
        n = merge_versions(&p, key, durable, mv);
    }
    for (int i = 0; i < n && chosen < 0; i++) {
        int whole = mv[i].have != NULL;
        for (int r = 0; whole && r < mv[i].nprocs; r++)
            whole = mv[i].have[r];
        if (whole)
            chosen = i;
        else
            say_incomplete(key, &mv[i], &p, report);
    }
    int status = 0;
    if (chosen >= 0) {
        status = write_scavenged(key, container, dir, &p, old, mv[chosen].version, mv[chosen].nprocs, report)
                     ? 1
                     : 0;
    } else if (n > 0) {
        if (report)
            fprintf(report,
                    "sluice-ckpt scavenge: %s: no node-local version newer than the durable %" PRIu64
                    " is complete over the %d part%s; the container stays at version %" PRIu64 "\n",
                    key, durable, p.nodes, p.nodes == 1 ? "" : "s", durable);
        status = 1;
    } else if (report) {
        fprintf(report,
                "sluice-ckpt scavenge: %s: nothing to scavenge: the %d part%s hold no version newer than the "
                "container's %" PRIu64 "\n",
                key, p.nodes, p.nodes == 1 ? "" : "s", durable);
    }
    if (rebuild > 0) {
        sluice_scavenge_remove_folder(rebuilt);
        p.n--;
    }
    if (status == 0) /* the container holds everything the parts do */
        remove_parts(root, &p);
    for (int i = 0; i < n; i++)
        free(mv[i].have);
    if (old)
        sluice_container_close(old);
    sluice_folder_lock_release(&lock);
    return status;
}
