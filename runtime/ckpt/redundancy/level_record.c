/* SPDX-License-Identifier: MIT */
/* Node-local version records: encoding, decoding and the scans of a stage folder
 * (level_record.h). Every file call goes to the real libc (SLUICE_REAL) or a raw system call. */
#include "ckpt/redundancy/level_record.h"

#include "ckpt/commit/stage.h"
#include "common/pid_alive.h"
#include "common/real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX (64u << 20) /* a record of a million members is ~ 4 GiB of paths: refused */

const char *sluice_level_name(int level)
{
    switch (level) {
    case SLUICE_LEVEL_STAGED:
        return "staged";
    case SLUICE_LEVEL_PROTECTED:
        return "protected";
    case SLUICE_LEVEL_DURABLE:
        return "durable";
    default:
        return "unknown";
    }
}

uint64_t sluice_level_key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int sluice_level_record_path(const char *dir, const char *key, uint64_t version, int rank, char *out,
                             size_t cap)
{
    int n =
        snprintf(out, cap, "%s/" SLUICE_LEVEL_PREFIX "%016" PRIx64 "-%020" PRIu64 "-%d" SLUICE_LEVEL_SUFFIX,
                 dir, sluice_level_key_hash(key), version, rank);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The prefix every record of key starts with ("lv-<hash>-"). */
static void key_prefix(const char *key, char *out, size_t cap)
{
    snprintf(out, cap, SLUICE_LEVEL_PREFIX "%016" PRIx64 "-", sluice_level_key_hash(key));
}

static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -EINVAL;
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return 0;
        }
        size_t ncap = *cap * 2 + (size_t)n;
        char *b = realloc(*buf, ncap);
        if (!b)
            return -ENOMEM;
        *buf = b;
        *cap = ncap;
    }
}

static int encode(const struct sluice_level_record *r, char **out, size_t *outlen)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap), esc[2 * PATH_MAX + 1];
    if (!buf)
        return -ENOMEM;
    int rc = sluice_stage_escape_(r->set_key, esc, sizeof esc) < 0 ? -ENAMETOOLONG : 0;
    if (rc == 0)
        rc = put(&buf, &len, &cap,
                 SLUICE_LEVEL_MAGIC "\nset_key %s\nversion %" PRIu64
                                    "\nnprocs %d\nrank %d\npid %ld\nlevel %s\n"
                                    "members %" PRIu32 "\n",
                 esc, r->version, r->nprocs, r->rank, r->pid, sluice_level_name(r->level), r->n);
    for (uint32_t i = 0; rc == 0 && i < r->n; i++) {
        const struct sluice_level_member *m = &r->m[i];
        if (sluice_stage_escape_(m->path, esc, sizeof esc) < 0 || strchr(m->data, '/') || !m->data[0])
            rc = -EINVAL;
        else
            rc = put(&buf, &len, &cap, "member %d %" PRIu64 " %" PRId64 " %o %s\npath %s\n", m->member_rank,
                     m->size, m->mtime_ns, m->mode & 07777, m->data, esc);
    }
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

int sluice_level_record_write(const char *dir, const struct sluice_level_record *r)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    int rc = sluice_level_record_path(dir, r->set_key, r->version, r->rank, path, sizeof path);
    if (rc)
        return rc;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    char *buf;
    size_t len;
    if ((rc = encode(r, &buf, &len)) != 0)
        return rc;
    int fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(buf);
        return -errno;
    }
    for (size_t off = 0; rc == 0 && off < len;) {
        ssize_t w = SLUICE_REAL(write)(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = w < 0 ? -errno : -EIO;
        else
            off += (size_t)w;
    }
    /* Node-local storage that outlives the process (a disk, not only tmpfs) keeps it whole. */
    if (rc == 0 && SLUICE_REAL(fdatasync)(fd) != 0)
        rc = -errno;
    SLUICE_REAL(close)(fd);
    free(buf);
    if (rc == 0 && SLUICE_REAL(rename)(tmp, path) != 0)
        rc = -errno;
    if (rc)
        SLUICE_REAL(unlink)(tmp);
    return rc;
}

static int num(const char *s, long long lo, long long hi, long long *out)
{
    return sluice_stage_num_(s, lo, hi, out);
}

static int parse_member(const char *buf, size_t len, size_t *pos, struct sluice_level_member *m)
{
    char v[2 * PATH_MAX];
    if (sluice_stage_line_(buf, len, pos, "member", v, sizeof v) != 0)
        return -1;
    long long rank, mtime;
    unsigned long long size;
    unsigned mode;
    int used = 0;
    if (sscanf(v, "%lld %llu %lld %o %n", &rank, &size, &mtime, &mode, &used) != 4 || used <= 0 || rank < 0 ||
        rank > 0x7fffffff || size > 0x7fffffffffffffffull || mode > 07777)
        return -1;
    const char *name = v + used;
    if (!name[0] || strchr(name, '/') || strchr(name, ' ') || strlen(name) > NAME_MAX)
        return -1;
    m->member_rank = (int)rank;
    m->size = size;
    m->mtime_ns = mtime;
    m->mode = mode;
    snprintf(m->data, sizeof m->data, "%s", name);
    if (sluice_stage_line_(buf, len, pos, "path", m->path, sizeof m->path) != 0 || m->path[0] != '/')
        return -1;
    return 0;
}

static int decode(const char *buf, size_t len, struct sluice_level_record *r)
{
    size_t pos = strlen(SLUICE_LEVEL_MAGIC) + 1;
    char v[2 * PATH_MAX];
    long long n;
    memset(r, 0, sizeof *r);
    if (len < pos || memcmp(buf, SLUICE_LEVEL_MAGIC "\n", pos) != 0)
        return -1;
    if (sluice_stage_line_(buf, len, &pos, "set_key", r->set_key, sizeof r->set_key) != 0 ||
        r->set_key[0] != '/')
        return -1;
    if (sluice_stage_line_(buf, len, &pos, "version", v, sizeof v) != 0 || num(v, 1, INT64_MAX, &n) != 0)
        return -1;
    r->version = (uint64_t)n;
    if (sluice_stage_line_(buf, len, &pos, "nprocs", v, sizeof v) != 0 || num(v, 1, 0x7fffffff, &n) != 0)
        return -1;
    r->nprocs = (int)n;
    if (sluice_stage_line_(buf, len, &pos, "rank", v, sizeof v) != 0 || num(v, 0, r->nprocs - 1, &n) != 0)
        return -1;
    r->rank = (int)n;
    if (sluice_stage_line_(buf, len, &pos, "pid", v, sizeof v) != 0 || num(v, 1, 0x7fffffff, &n) != 0)
        return -1;
    r->pid = (long)n;
    if (sluice_stage_line_(buf, len, &pos, "level", v, sizeof v) != 0)
        return -1;
    for (int l = SLUICE_LEVEL_STAGED; l <= SLUICE_LEVEL_DURABLE; l++)
        if (strcmp(v, sluice_level_name(l)) == 0)
            r->level = l;
    if (r->level == 0)
        return -1;
    /* Each member takes at least 20 bytes: the count is bounded by the record before allocating. */
    if (sluice_stage_line_(buf, len, &pos, "members", v, sizeof v) != 0 ||
        num(v, 0, (long long)(len / 20), &n) != 0)
        return -1;
    r->n = (uint32_t)n;
    r->m = calloc(r->n ? r->n : 1, sizeof(*r->m));
    if (!r->m)
        return -1;
    for (uint32_t i = 0; i < r->n; i++)
        if (parse_member(buf, len, &pos, &r->m[i]) != 0)
            return -1;
    return pos == len ? 0 : -1;
}

int sluice_level_record_read(const char *file, struct sluice_level_record *r)
{
    /* Cleared before anything can fail: another rank may remove the file between the caller's
     * readdir and this read, and the failure path frees r->m. */
    memset(r, 0, sizeof *r);
    size_t cap = 1 << 16;
    char *buf = NULL;
    long n;
    for (;;) { /* grows until the whole record fits */
        char *b = realloc(buf, cap);
        if (!b) {
            free(buf);
            return -ENOMEM;
        }
        buf = b;
        n = sluice_stage_read_own(file, buf, cap, NULL);
        if (n < 0 || (size_t)n < cap || cap >= RECORD_MAX)
            break;
        cap *= 4;
    }
    int rc = n < 0 ? (int)n : (size_t)n >= cap ? -EFBIG : decode(buf, (size_t)n, r) == 0 ? 0 : -EINVAL;
    free(buf);
    if (rc) {
        free(r->m);
        r->m = NULL;
        r->n = 0;
    }
    return rc;
}

void sluice_level_record_free(struct sluice_level_record *r)
{
    free(r->m);
    r->m = NULL;
    r->n = 0;
}

/* Calls fn on every record of key in dir (read and checked); fn returns nonzero to stop. */
typedef int (*record_fn)(void *ctx, const char *file, struct sluice_level_record *r);
static void each_record(const char *dir, const char *key, record_fn fn, void *ctx)
{
    char prefix[64];
    key_prefix(key, prefix, sizeof prefix);
    DIR *d = SLUICE_REAL(opendir)(dir);
    if (!d)
        return;
    struct dirent *e;
    size_t pl = strlen(prefix), sl = strlen(SLUICE_LEVEL_SUFFIX);
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= pl + sl || strncmp(e->d_name, prefix, pl) != 0 ||
            strcmp(e->d_name + l - sl, SLUICE_LEVEL_SUFFIX) != 0)
            continue;
        char file[PATH_MAX];
        if (snprintf(file, sizeof file, "%s/%s", dir, e->d_name) >= (int)sizeof file)
            continue;
        struct sluice_level_record r;
        if (sluice_level_record_read(file, &r) != 0)
            continue;
        int stop = strcmp(r.set_key, key) == 0 ? fn(ctx, file, &r) : 0; /* a hash collision is another set */
        sluice_level_record_free(&r);
        if (stop)
            break;
    }
    SLUICE_REAL(closedir)(d);
}

struct versions_ctx {
    struct sluice_level_version *v;
    int n, cap;
};

static int add_version(void *ctx, const char *file, struct sluice_level_record *r)
{
    (void)file;
    struct versions_ctx *c = ctx;
    for (int i = 0; i < c->n; i++) {
        if (c->v[i].version == r->version) {
            c->v[i].nrecords++; /* one file per (version, rank): names are unique per rank */
            if (r->level < c->v[i].level)
                c->v[i].level = r->level;
            return 0;
        }
    }
    if (c->n == c->cap)
        return 0;
    c->v[c->n++] = (struct sluice_level_version){r->version, r->nprocs, 1, r->level};
    return 0;
}

static int version_desc(const void *a, const void *b)
{
    const struct sluice_level_version *x = a, *y = b;
    return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

int sluice_level_versions(const char *dir, const char *key, struct sluice_level_version *out, int cap)
{
    struct versions_ctx c = {out, 0, cap};
    each_record(dir, key, add_version, &c);
    qsort(out, (size_t)c.n, sizeof *out, version_desc);
    return c.n;
}

uint64_t sluice_level_max_version(const char *dir, const char *key)
{
    struct sluice_level_version v[64];
    return sluice_level_versions(dir, key, v, 64) > 0 ? v[0].version : 0;
}

struct find_ctx {
    const char *dir, *path;
    uint64_t lo, hi; /* versions considered: (lo, hi] */
    struct sluice_level_hit *hit;
    int found;
};

static int find_in(void *ctx, const char *file, struct sluice_level_record *r)
{
    (void)file;
    struct find_ctx *c = ctx;
    if (r->version <= c->lo || r->version > c->hi || (c->found && r->version <= c->hit->version))
        return 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct sluice_level_member *m = &r->m[i];
        char data[PATH_MAX];
        struct stat st;
        if (strcmp(m->path, c->path) != 0 ||
            snprintf(data, sizeof data, "%s/%s", c->dir, m->data) >= (int)sizeof data ||
            SLUICE_REAL(stat)(data, &st) != 0 || (uint64_t)st.st_size != m->size)
            continue;
        c->hit->version = r->version;
        c->hit->size = m->size;
        c->hit->mtime_ns = m->mtime_ns;
        c->hit->mode = m->mode;
        c->hit->member_rank = m->member_rank;
        snprintf(c->hit->data, sizeof c->hit->data, "%s", data);
        c->found = 1;
    }
    return 0;
}

uint64_t sluice_level_complete(const char *dir, const char *key, uint64_t above)
{
    struct sluice_level_version v[64];
    int n = sluice_level_versions(dir, key, v, 64);
    for (int i = 0; i < n; i++)
        if (v[i].version > above && v[i].nrecords >= v[i].nprocs)
            return v[i].version;
    return 0;
}

int sluice_level_find_upto(const char *dir, const char *key, const char *path, uint64_t above,
                           uint64_t newest, struct sluice_level_hit *hit)
{
    if (newest <= above)
        return 0;
    struct find_ctx c = {dir, path, above, newest, hit, 0};
    each_record(dir, key, find_in, &c);
    return c.found;
}

int sluice_level_find(const char *dir, const char *key, const char *path, uint64_t above,
                      struct sluice_level_hit *hit)
{
    return sluice_level_find_upto(dir, key, path, above, sluice_level_complete(dir, key, above), hit);
}

struct remove_ctx {
    const char *dir;
    uint64_t upto;
    int rank, removed;
    long own_pid;
    int dead_too;
};

static int remove_one(void *ctx, const char *file, struct sluice_level_record *r)
{
    struct remove_ctx *c = ctx;
    if (r->version > c->upto)
        return 0;
    int dead = c->dead_too && r->pid != c->own_pid && !sluice_pid_running(r->pid, 0);
    if (!(dead || (c->rank >= 0 && r->rank == c->rank && r->pid == c->own_pid)))
        return 0;
    /* A dead job's staging files are gone with its record: a newer version is durable. Own
     * members are removed by the engine, which still holds them. */
    for (uint32_t i = 0; dead && i < r->n; i++) {
        char data[PATH_MAX], meta[PATH_MAX];
        size_t l = strlen(r->m[i].data), dl = strlen(SLUICE_STAGE_DATA_SUFFIX);
        if (l <= dl || snprintf(data, sizeof data, "%s/%s", c->dir, r->m[i].data) >= (int)sizeof data)
            continue;
        snprintf(meta, sizeof meta, "%s/%.*s%s", c->dir, (int)(l - dl), r->m[i].data,
                 SLUICE_STAGE_META_SUFFIX);
        SLUICE_REAL(unlink)(data);
        SLUICE_REAL(unlink)(meta);
    }
    if (SLUICE_REAL(unlink)(file) == 0)
        c->removed++;
    return 0;
}

int sluice_level_remove(const char *dir, const char *key, uint64_t upto, int rank, long own_pid, int dead_too)
{
    struct remove_ctx c = {dir, upto, rank, 0, own_pid, dead_too};
    each_record(dir, key, remove_one, &c);
    return c.removed;
}
