/* SPDX-License-Identifier: MIT */
/* A node's part as one stream (red_stream.h). Every file call goes to the real libc. */
#include "ckpt/redundancy/red_stream.h"

#include "ckpt/redundancy/level_record.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sluice_red_sfile {
    char name[NAME_MAX + 1];
    uint64_t size;
    int is_record;
};

static int add_file(struct sluice_red_stream *s, const char *name, uint64_t size, int is_record)
{
    struct sluice_red_sfile *f = realloc(s->f, (size_t)(s->nf + 1) * sizeof *f);
    if (!f)
        return -ENOMEM;
    s->f = f;
    snprintf(f[s->nf].name, sizeof f[s->nf].name, "%s", name);
    f[s->nf].size = size;
    f[s->nf++].is_record = is_record;
    /* An entry's head (tag, name length, name, size, crc32c), then its chunks with 8-byte heads. */
    s->length += SLUICE_RED_ENTRY_LEN(strlen(name)) + size +
                 SLUICE_RED_CHUNK_HEAD * ((size + SLUICE_RED_CHUNK - 1) / SLUICE_RED_CHUNK);
    return 0;
}

int sluice_red_stream_open(struct sluice_red_stream *s, const char *dir, struct sluice_red_header *h)
{
    memset(s, 0, sizeof *s);
    s->h = h;
    s->fd = -1;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    unsigned char *scratch = malloc(SLUICE_RED_STREAM_BUF);
    size_t hl = scratch ? sluice_red_put_header(scratch, SLUICE_RED_STREAM_BUF, h) : 0;
    free(scratch);
    if (!hl)
        return -ENOMEM;
    s->hl = hl;
    s->length = hl + SLUICE_RED_END_LEN; /* the header and the end */
    for (int i = 0; i < h->nranks; i++) {
        char path[PATH_MAX];
        struct sluice_level_record rec;
        struct stat st;
        if (sluice_level_record_path(dir, h->key, h->version, h->ranks[i], path, sizeof path) != 0 ||
            SLUICE_REAL(stat)(path, &st) != 0 || sluice_level_record_read(path, &rec) != 0)
            return -ENOENT;
        int rc = add_file(s, strrchr(path, '/') + 1, (uint64_t)st.st_size, 1);
        for (uint32_t k = 0; rc == 0 && k < rec.n; k++)
            rc = add_file(s, rec.m[k].data, rec.m[k].size, 0);
        sluice_level_record_free(&rec);
        if (rc)
            return rc;
    }
    return 0;
}

static int open_file(struct sluice_red_stream *s);

/* The next piece whole (next() drops what a seek skips of it). */
static long next_piece(struct sluice_red_stream *s, unsigned char *buf, size_t cap)
{
    if (s->phase == 0) {
        s->phase = s->nf ? 1 : 3;
        return (long)sluice_red_put_header(buf, cap, s->h);
    }
    if (s->phase == 1) {
        struct sluice_red_sfile *f = &s->f[s->fi];
        int rc = open_file(s);
        if (rc)
            return rc; /* a newer version replaced it meanwhile */
        s->foff = 0;
        s->phase = 2;
        return (long)sluice_red_put_entry(buf, cap, f->name, f->size, f->is_record);
    }
    if (s->phase == 2) {
        struct sluice_red_sfile *f = &s->f[s->fi];
        uint64_t left = f->size - s->foff;
        uint32_t len = left < SLUICE_RED_CHUNK ? (uint32_t)left : SLUICE_RED_CHUNK;
        long rc = 0;
        if (len) {
            ssize_t k = SLUICE_REAL(pread)(s->fd, buf + SLUICE_RED_CHUNK_HEAD, len, (off_t)s->foff);
            if (k != (ssize_t)len)
                return k < 0 ? -errno : -ENODATA; /* shorter than its record says */
            rc = (long)sluice_red_put_chunk(buf, cap, buf + SLUICE_RED_CHUNK_HEAD, len);
            s->foff += len;
        }
        if (s->foff == f->size) {
            SLUICE_REAL(close)(s->fd);
            s->fd = -1;
            s->phase = ++s->fi < s->nf ? 1 : 3;
        }
        return rc ? rc : next_piece(s, buf, cap);
    }
    if (s->phase == 3) {
        s->phase = 4;
        return (long)sluice_red_put_end(buf, cap, (uint32_t)s->nf);
    }
    return 0;
}

long sluice_red_stream_next(struct sluice_red_stream *s, unsigned char *buf, size_t cap)
{
    long k = next_piece(s, buf, cap);
    if (k > 0 && s->skip) {
        uint64_t drop = s->skip < (uint64_t)k ? s->skip : (uint64_t)k;
        memmove(buf, buf + drop, (size_t)((uint64_t)k - drop));
        k -= (long)drop;
        s->skip = 0;
    }
    return k;
}

long sluice_red_stream_fill(struct sluice_red_stream *s, unsigned char *buf, size_t cap)
{
    size_t len = 0;
    while (s->phase < 4 && cap - len >= SLUICE_RED_STREAM_BUF) {
        long k = sluice_red_stream_next(s, buf + len, cap - len);
        if (k < 0)
            return k;
        if (k == 0)
            break; /* did not fit: the caller's next call says so */
        len += (size_t)k;
    }
    return (long)len;
}

int sluice_red_stream_clone(struct sluice_red_stream *dst, const struct sluice_red_stream *src)
{
    memset(dst, 0, sizeof *dst);
    dst->fd = -1;
    dst->h = malloc(sizeof *dst->h);
    dst->f = malloc((size_t)(src->nf ? src->nf : 1) * sizeof *dst->f);
    if (!dst->h || !dst->f) {
        sluice_red_stream_close(dst);
        return -ENOMEM;
    }
    memcpy(dst->h, src->h, sizeof *dst->h);
    memcpy(dst->f, src->f, (size_t)src->nf * sizeof *dst->f);
    snprintf(dst->dir, sizeof dst->dir, "%s", src->dir);
    dst->nf = src->nf;
    dst->length = src->length;
    dst->hl = src->hl;
    return 0;
}

static int open_file(struct sluice_red_stream *s)
{
    char path[PATH_MAX + NAME_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", s->dir, s->f[s->fi].name);
    s->fd = SLUICE_REAL(open)(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    return s->fd < 0 ? -errno : 0;
}

int sluice_red_stream_seek(struct sluice_red_stream *s, uint64_t off)
{
    if (s->phase != 0 || s->fd >= 0 || off > s->length)
        return -EINVAL;
    /* The lengths next_piece gives: the header, then per file its entry and its chunks (each
     * with its head), then the end (red_copy.h). */
    uint64_t at = s->hl;
    if (off < at) {
        s->skip = off;
        return 0;
    }
    for (s->fi = 0; s->fi < s->nf; s->fi++) {
        const struct sluice_red_sfile *f = &s->f[s->fi];
        uint64_t head = SLUICE_RED_ENTRY_LEN(strlen(f->name));
        if (off < at + head) {
            s->phase = 1;
            s->skip = off - at;
            return 0;
        }
        at += head;
        for (uint64_t c = 0; c < f->size; c += SLUICE_RED_CHUNK) {
            uint64_t piece =
                SLUICE_RED_CHUNK_HEAD + (f->size - c < SLUICE_RED_CHUNK ? f->size - c : SLUICE_RED_CHUNK);
            if (off < at + piece) {
                s->phase = 2;
                s->foff = c;
                s->skip = off - at;
                return open_file(s);
            }
            at += piece;
        }
    }
    s->phase = off < s->length ? 3 : 4;
    s->skip = off - at;
    return 0;
}

void sluice_red_stream_close(struct sluice_red_stream *s)
{
    if (s->fd >= 0)
        SLUICE_REAL(close)(s->fd);
    free(s->f);
    free(s->h);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
