/* SPDX-License-Identifier: MIT */
/* Redundancy copies: the stream codec and the restore of a copy into a stage folder
 * (red_copy.h). Every file call goes to the real libc (SLUICE_REAL). */
#include "ckpt/redundancy/red_copy.h"

#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_record.h"
#include "common/bytebuf.h"
#include "common/real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RC_MAGIC "SLUICERC"
#define RC_FORMAT 1u
#define TAG_RECORD 0x31434552u /* "REC1" */
#define TAG_DATA 0x31544144u   /* "DAT1" */
#define TAG_END 0x31444e45u    /* "END1" */
#define RECORD_MAX (64u << 20)

/* ---- writing the stream ---------------------------------------------------------------------- */

/* The crc32c of everything written so far, appended. */
static size_t wseal(struct sluice_bytebuf *b)
{
    uint32_t crc = b->bad ? 0 : sluice_crc32c_update(0, b->p, b->len);
    sluice_bytebuf_u32(b, crc);
    return b->bad ? 0 : b->len;
}

size_t sluice_red_put_header(unsigned char *out, size_t cap, const struct sluice_red_header *h)
{
    struct sluice_bytebuf b = {out, 0, cap, 0, h->nranks < 0 || h->nranks > SLUICE_RED_MAX_RANKS};
    sluice_bytebuf_put(&b, RC_MAGIC, 8);
    sluice_bytebuf_u32(&b, RC_FORMAT);
    sluice_bytebuf_u64(&b, h->version);
    sluice_bytebuf_u32(&b, (uint32_t)h->nprocs);
    sluice_bytebuf_put(&b, h->host, 16);
    sluice_bytebuf_str(&b, h->key);
    sluice_bytebuf_u32(&b, (uint32_t)h->nranks);
    for (int i = 0; i < h->nranks && !b.bad; i++)
        sluice_bytebuf_u32(&b, (uint32_t)h->ranks[i]);
    return wseal(&b);
}

size_t sluice_red_put_entry(unsigned char *out, size_t cap, const char *name, uint64_t size, int is_record)
{
    struct sluice_bytebuf b = {out, 0, cap, 0, 0};
    sluice_bytebuf_u32(&b, is_record ? TAG_RECORD : TAG_DATA);
    sluice_bytebuf_str(&b, name);
    sluice_bytebuf_u64(&b, size);
    return wseal(&b);
}

size_t sluice_red_put_chunk(unsigned char *out, size_t cap, const void *data, uint32_t len)
{
    struct sluice_bytebuf b = {out, 0, cap, 0,
                               len > SLUICE_RED_CHUNK || cap < SLUICE_RED_CHUNK_HEAD + (size_t)len};
    sluice_bytebuf_u32(&b, len);
    sluice_bytebuf_u32(&b, sluice_crc32c_update(0, data, len));
    if (data != out + SLUICE_RED_CHUNK_HEAD) /* read in place already (red_stream.c): no copy onto itself */
        sluice_bytebuf_put(&b, data, len);
    else if (!b.bad)
        b.len += len;
    return b.bad ? 0 : b.len;
}

size_t sluice_red_put_end(unsigned char *out, size_t cap, uint32_t nentries)
{
    struct sluice_bytebuf b = {out, 0, cap, 0, 0};
    sluice_bytebuf_u32(&b, TAG_END);
    sluice_bytebuf_u32(&b, nentries);
    return wseal(&b);
}

/* ---- names ------------------------------------------------------------------------------------ */

int sluice_red_copy_path(const char *dir, const char *key, uint64_t v, const char *host, char *out,
                         size_t cap)
{
    int n = snprintf(
        out, cap, "%s/" SLUICE_RED_COPY_PREFIX "%016" PRIx64 "-%020" PRIu64 "-%.16s" SLUICE_RED_COPY_SUFFIX,
        dir, sluice_level_key_hash(key), v, host);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int sluice_red_tmp_open(const char *path, char *tmp, size_t cap, int *fd)
{
    *fd = -1;
    int n = snprintf(tmp, cap, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= cap)
        return ENAMETOOLONG;
    *fd = SLUICE_REAL(open)(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    return *fd < 0 ? errno : 0;
}

int sluice_red_mark_path(const char *dir, const char *key, uint64_t v, char *out, size_t cap)
{
    int n =
        snprintf(out, cap, "%s/" SLUICE_RED_MARK_PREFIX "%016" PRIx64 "-%020" PRIu64 SLUICE_RED_MARK_SUFFIX,
                 dir, sluice_level_key_hash(key), v);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* ---- reading the stream ----------------------------------------------------------------------- */

struct reader {
    int fd;
    uint32_t crc; /* of the bytes read since the last seal */
    uint64_t off;
    int bad; /* -errno or -EBADMSG */
};

static void rget(struct reader *r, void *v, size_t n)
{
    unsigned char *p = v;
    for (size_t got = 0; !r->bad && got < n;) {
        ssize_t k = SLUICE_REAL(read)(r->fd, p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            r->bad = k < 0 ? -errno : -EBADMSG; /* cut short */
        else
            got += (size_t)k;
    }
    if (r->bad) {
        memset(v, 0, n);
        return;
    }
    r->crc = sluice_crc32c_update(r->crc, v, n);
    r->off += n;
}
static uint32_t ru32(struct reader *r)
{
    uint32_t v;
    rget(r, &v, 4);
    return v;
}
static uint64_t ru64(struct reader *r)
{
    uint64_t v;
    rget(r, &v, 8);
    return v;
}
/* Reads the stored crc32c of what came since the last seal and checks it. */
static int rseal(struct reader *r)
{
    uint32_t want = r->crc, got;
    rget(r, &got, 4);
    if (!r->bad && got != want)
        r->bad = -EBADMSG;
    r->crc = 0;
    return r->bad;
}

static int read_header(struct reader *r, struct sluice_red_header *h)
{
    char magic[8];
    memset(h, 0, sizeof *h);
    rget(r, magic, 8);
    uint32_t format = ru32(r);
    h->version = ru64(r);
    h->nprocs = (int)ru32(r);
    rget(r, h->host, 16);
    uint32_t klen = ru32(r);
    if (!r->bad && (memcmp(magic, RC_MAGIC, 8) != 0 || format != RC_FORMAT || klen >= sizeof h->key))
        r->bad = -EBADMSG;
    rget(r, h->key, r->bad ? 0 : klen);
    uint32_t nr = ru32(r);
    if (!r->bad && nr > SLUICE_RED_MAX_RANKS)
        r->bad = -EBADMSG;
    for (uint32_t i = 0; !r->bad && i < nr; i++)
        h->ranks[i] = (int)ru32(r);
    h->nranks = (int)nr;
    return rseal(r);
}

int sluice_red_copy_header(const char *file, struct sluice_red_header *h)
{
    struct reader r = {SLUICE_REAL(open)(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), 0, 0, 0};
    if (r.fd < 0)
        return -errno;
    int rc = read_header(&r, h);
    SLUICE_REAL(close)(r.fd);
    return rc;
}

/* ---- restore ---------------------------------------------------------------------------------- */

/* What one restore wrote so far (removed on failure). */
struct written {
    char (*names)[NAME_MAX + 1];
    int n, cap;
};

static int safe_name(const char *s)
{
    return s[0] && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && !strchr(s, '/');
}

/* The rank of a record file name "lv-<hash>-<version>-<rank>.rec", -1 if none. */
static int record_rank(const char *name)
{
    const char *dash = strrchr(name, '-');
    return dash ? atoi(dash + 1) : -1;
}

static int wanted(const int *ranks, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (ranks[i] == rank)
            return 1;
    return n == 0;
}

/* Writes len bytes to dir/name through a temporary name; remembers the name. */
static int put_file(const char *dir, const char *name, int tmpfd, const char *tmp, struct written *w)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int rc = SLUICE_REAL(close)(tmpfd) == 0 ? 0 : -errno;
    if (rc == 0 && SLUICE_REAL(rename)(tmp, path) != 0)
        rc = -errno;
    if (rc) {
        SLUICE_REAL(unlink)(tmp);
        return rc;
    }
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        void *p = realloc(w->names, (size_t)cap * sizeof *w->names);
        if (!p) {
            SLUICE_REAL(unlink)(path);
            return -ENOMEM;
        }
        w->names = p;
        w->cap = cap;
    }
    snprintf(w->names[w->n++], sizeof *w->names, "%s", name);
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t k = SLUICE_REAL(write)(fd, (const char *)p + off, n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        off += (size_t)k;
    }
    return 0;
}

/* One entry's chunks: checked, and written to fd when fd >= 0 (or kept in *keep). */
static int copy_chunks(struct reader *r, uint64_t size, int fd, unsigned char *buf, unsigned char **keep,
                       const char *name, char *err, size_t cap)
{
    uint64_t done = 0;
    for (uint32_t chunk = 0; done < size; chunk++) {
        uint32_t len = ru32(r), crc = ru32(r);
        if (!r->bad && (len == 0 || len > SLUICE_RED_CHUNK || len > size - done))
            r->bad = -EBADMSG;
        rget(r, buf, r->bad ? 0 : len);
        if (!r->bad && sluice_crc32c_update(0, buf, len) != crc) {
            snprintf(err, cap, "crc32c mismatch in chunk %u of %s", chunk, name);
            return -EBADMSG;
        }
        if (r->bad)
            break;
        int rc = fd >= 0 ? write_all(fd, buf, len) : 0;
        if (rc)
            return rc;
        if (keep)
            memcpy(*keep + done, buf, len);
        done += len;
        r->crc = 0;
    }
    if (r->bad)
        snprintf(err, cap, "%s in %s", r->bad == -EBADMSG ? "malformed or cut short" : strerror(-r->bad),
                 name);
    return r->bad;
}

/* Writes the record kept in memory (the group's files are in place already). */
static int put_record(const char *dir, const char *name, const unsigned char *rec, uint64_t size,
                      struct written *w)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/%s.tmp.rebuild.%ld", dir, name, (long)getpid()) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, rec, size);
    if (rc) {
        SLUICE_REAL(close)(fd);
        SLUICE_REAL(unlink)(tmp);
        return rc;
    }
    return put_file(dir, name, fd, tmp, w);
}

struct restore {
    const char *dir;
    const int *ranks;
    int n;
    struct written w;
    unsigned char *rec; /* the current group's record, written when the group ends */
    uint64_t rec_size;
    char rec_name[NAME_MAX + 1];
    int want; /* the current group is restored */
    int64_t bytes;
};

static int end_group(struct restore *s)
{
    int rc = 0;
    if (s->rec && s->want) {
        rc = put_record(s->dir, s->rec_name, s->rec, s->rec_size, &s->w);
        s->bytes += (int64_t)s->rec_size;
    }
    free(s->rec);
    s->rec = NULL;
    return rc;
}

/* One entry of the stream after its tag. */
static int restore_entry(struct reader *r, struct restore *s, uint32_t tag, unsigned char *buf, char *err,
                         size_t cap)
{
    char name[NAME_MAX + 1];
    uint32_t nlen = ru32(r);
    if (!r->bad && nlen >= sizeof name)
        r->bad = -EBADMSG;
    rget(r, name, r->bad ? 0 : nlen);
    name[r->bad ? 0 : nlen] = '\0';
    uint64_t size = ru64(r);
    if (rseal(r) || !safe_name(name) || (tag == TAG_RECORD && size > RECORD_MAX)) {
        snprintf(err, cap, "a malformed entry header at byte %" PRIu64, r->off);
        return r->bad ? r->bad : -EBADMSG;
    }
    if (tag == TAG_RECORD) {
        int rc = end_group(s);
        if (rc)
            return rc;
        s->want = wanted(s->ranks, s->n, record_rank(name));
        s->rec = malloc(size ? size : 1);
        if (!s->rec)
            return -ENOMEM;
        s->rec_size = size;
        snprintf(s->rec_name, sizeof s->rec_name, "%s", name);
        return copy_chunks(r, size, -1, buf, &s->rec, name, err, cap);
    }
    if (!s->rec) {
        snprintf(err, cap, "staging file %s before any record", name);
        return -EBADMSG;
    }
    char tmp[PATH_MAX];
    int fd = -1;
    if (s->want) {
        if (snprintf(tmp, sizeof tmp, "%s/%s.tmp.rebuild.%ld", s->dir, name, (long)getpid()) >=
            (int)sizeof tmp)
            return -ENAMETOOLONG;
        fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return -errno;
    }
    int rc = copy_chunks(r, size, fd, buf, NULL, name, err, cap);
    if (fd >= 0 && rc) {
        SLUICE_REAL(close)(fd);
        SLUICE_REAL(unlink)(tmp);
    } else if (fd >= 0) {
        rc = put_file(s->dir, name, fd, tmp, &s->w);
        s->bytes += (int64_t)size;
    }
    return rc;
}

static int restore_stream(struct reader *r, struct restore *s, char *err, size_t cap)
{
    struct sluice_red_header *h = malloc(sizeof *h);
    unsigned char *buf = malloc(SLUICE_RED_CHUNK);
    int rc = h && buf ? read_header(r, h) : -ENOMEM;
    if (rc && rc != -ENOMEM)
        snprintf(err, cap, "a malformed header");
    uint32_t entries = 0;
    while (rc == 0) {
        uint32_t tag = ru32(r);
        if (r->bad) {
            snprintf(err, cap, "cut short at byte %" PRIu64, r->off);
            rc = r->bad;
        } else if (tag == TAG_END) {
            uint32_t n = ru32(r);
            rc = rseal(r) || n != entries ? -EBADMSG : end_group(s);
            if (rc == -EBADMSG)
                snprintf(err, cap, "a malformed end (%u entries of %u)", entries, n);
            break;
        } else if (tag == TAG_RECORD || tag == TAG_DATA) {
            rc = restore_entry(r, s, tag, buf, err, cap);
            entries++;
        } else {
            snprintf(err, cap, "an unknown entry at byte %" PRIu64, r->off);
            rc = -EBADMSG;
        }
    }
    free(h);
    free(buf);
    return rc;
}

int64_t sluice_red_copy_restore(const char *copy, const char *dir, const int *ranks, int n, char *err,
                                size_t cap)
{
    snprintf(err, cap, "%s", "");
    struct reader r = {SLUICE_REAL(open)(copy, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), 0, 0, 0};
    if (r.fd < 0) {
        int e = errno;
        snprintf(err, cap, "cannot open it: %s", strerror(e));
        return -e;
    }
    struct restore s = {.dir = dir, .ranks = ranks, .n = n};
    int rc = restore_stream(&r, &s, err, cap);
    SLUICE_REAL(close)(r.fd);
    free(s.rec);
    if (rc && !err[0])
        snprintf(err, cap, "%s", strerror(-rc));
    for (int i = 0; rc && i < s.w.n; i++) { /* nothing half-restored stays */
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, s.w.names[i]) < (int)sizeof path)
            SLUICE_REAL(unlink)(path);
    }
    free(s.w.names);
    return rc ? rc : s.bytes;
}

/* ---- protection marks ------------------------------------------------------------------------- */

int sluice_red_mark_write(const char *dir, const char *key, uint64_t v, const char *scheme, int nodes)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32], body[PATH_MAX + 128];
    int rc = sluice_red_mark_path(dir, key, v, path, sizeof path);
    if (rc)
        return rc;
    int len = snprintf(body, sizeof body, "sluice-protected 1\nversion %" PRIu64 "\nscheme %s\nnodes %d\n", v,
                       scheme, nodes);
    int fd;
    rc = sluice_red_tmp_open(path, tmp, sizeof tmp, &fd);
    if (rc)
        return -rc;
    rc = write_all(fd, body, (size_t)len);
    if (SLUICE_REAL(close)(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && SLUICE_REAL(rename)(tmp, path) != 0)
        rc = -errno;
    if (rc)
        SLUICE_REAL(unlink)(tmp);
    return rc;
}

int sluice_red_marked(const char *dir, const char *key, uint64_t v)
{
    char path[PATH_MAX];
    return sluice_red_mark_path(dir, key, v, path, sizeof path) == 0 && SLUICE_REAL(access)(path, F_OK) == 0;
}

int sluice_red_remove(const char *dir, const char *key, uint64_t upto)
{
    char cp[40], mp[40], xp[40];
    uint64_t h = sluice_level_key_hash(key);
    snprintf(cp, sizeof cp, SLUICE_RED_COPY_PREFIX "%016" PRIx64 "-", h);
    snprintf(mp, sizeof mp, SLUICE_RED_MARK_PREFIX "%016" PRIx64 "-", h);
    snprintf(xp, sizeof xp, "rx-%016" PRIx64 "-", h); /* XOR parity files (red_xor.h) */
    DIR *d = SLUICE_REAL(opendir)(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        size_t pl = strlen(cp);
        if (strncmp(e->d_name, cp, pl) != 0 && strncmp(e->d_name, mp, pl) != 0 &&
            strncmp(e->d_name, xp, pl) != 0)
            continue;
        uint64_t v = strtoull(e->d_name + pl, NULL, 10);
        char path[PATH_MAX];
        if (v <= upto && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            SLUICE_REAL(unlink)(path) == 0)
            n++;
    }
    SLUICE_REAL(closedir)(d);
    return n;
}
