/* SPDX-License-Identifier: MIT */
/* Node-local versions agreed over all nodes: the summaries and their merge (level_table.h).
 * A summary is binary, integers little-endian as the machine's (the job's processes share
 * one architecture), strings as a u32 length then the bytes:
 *   host (SLUICE_HOST_ID_LEN bytes), u32 records, then per record: u64 version, u32 nprocs,
 *   u32 rank, key, u32 n, n x member path (the count makes a cut summary detectable). */
#include "ckpt/redundancy/level_table.h"

#include "ckpt/redundancy/level_record.h"
#include "common/bytebuf.h"
#include "common/host_id.h"
#include "common/real.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct trec {
    char *key;
    uint64_t version;
    int nprocs, rank;
    char host[SLUICE_HOST_ID_LEN + 1];
    uint32_t n;
    char **paths;
};

struct sluice_level_table {
    struct trec *r;
    size_t n, cap;
};

/* ---- encoding ------------------------------------------------------------------------------ */

/* Every staging file the record names is present and of its size: the record is usable. */
static int record_whole(const char *dir, const struct sluice_level_record *r)
{
    for (uint32_t i = 0; i < r->n; i++) {
        char data[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(data, sizeof data, "%s/%s", dir, r->m[i].data) >= sizeof data ||
            SLUICE_REAL(stat)(data, &st) != 0 || (uint64_t)st.st_size != r->m[i].size)
            return 0;
    }
    return 1;
}

static void encode_record(struct sluice_bytebuf *b, const struct sluice_level_record *r)
{
    sluice_bytebuf_put(b, &r->version, sizeof r->version);
    sluice_bytebuf_u32(b, (uint32_t)r->nprocs);
    sluice_bytebuf_u32(b, (uint32_t)r->rank);
    sluice_bytebuf_str(b, r->set_key);
    sluice_bytebuf_u32(b, r->n);
    for (uint32_t i = 0; i < r->n; i++)
        sluice_bytebuf_str(b, r->m[i].path);
}

int sluice_level_table_encode(const char *dir, const char *host, unsigned char **out, size_t *len)
{
    struct sluice_bytebuf b = {.grow_max = SIZE_MAX};
    *out = NULL;
    *len = 0;
    DIR *d = dir ? SLUICE_REAL(opendir)(dir) : NULL;
    if (!d)
        return 0;
    size_t pl = strlen(SLUICE_LEVEL_PREFIX), sl = strlen(SLUICE_LEVEL_SUFFIX);
    struct dirent *e;
    int records = 0;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL && !b.bad) {
        size_t l = strlen(e->d_name);
        char file[PATH_MAX];
        struct sluice_level_record r;
        if (l <= pl + sl || strncmp(e->d_name, SLUICE_LEVEL_PREFIX, pl) != 0 ||
            strcmp(e->d_name + l - sl, SLUICE_LEVEL_SUFFIX) != 0 ||
            (size_t)snprintf(file, sizeof file, "%s/%s", dir, e->d_name) >= sizeof file ||
            sluice_level_record_read(file, &r) != 0)
            continue;
        if (record_whole(dir, &r)) {
            if (records++ == 0) {
                sluice_bytebuf_put(&b, host, SLUICE_HOST_ID_LEN);
                sluice_bytebuf_u32(&b, 0); /* the count, set below */
            }
            encode_record(&b, &r);
        }
        sluice_level_record_free(&r);
    }
    SLUICE_REAL(closedir)(d);
    if (records && !b.bad) {
        uint32_t n = (uint32_t)records;
        memcpy(b.p + SLUICE_HOST_ID_LEN, &n, sizeof n);
    }
    if (b.bad) {
        free(b.p);
        return -ENOMEM;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

/* ---- decoding and merge ---------------------------------------------------------------------- */

/* A malloc'ed copy of the next string (at most PATH_MAX - 1 bytes), or NULL (r->bad set). */
static char *get_str(struct sluice_bytereader *r)
{
    uint32_t n = sluice_bytereader_u32(r);
    if (r->bad || n == 0 || n >= PATH_MAX || r->len - r->pos < n) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p + r->pos, n);
    s[n] = 0;
    r->pos += n;
    if (strlen(s) != n) { /* a NUL inside */
        free(s);
        r->bad = 1;
        return NULL;
    }
    return s;
}

static void trec_free(struct trec *t)
{
    free(t->key);
    for (uint32_t i = 0; i < t->n; i++)
        free(t->paths[i]);
    free(t->paths);
}

static int decode_record(struct sluice_bytereader *r, const char *host, struct trec *t)
{
    memset(t, 0, sizeof *t);
    sluice_bytereader_get(r, &t->version, sizeof t->version);
    uint32_t nprocs = sluice_bytereader_u32(r), rank = sluice_bytereader_u32(r);
    t->key = get_str(r);
    uint32_t n = sluice_bytereader_u32(r);
    /* Each path takes at least 5 bytes: the count is bounded by the summary before allocating. */
    if (r->bad || nprocs == 0 || nprocs > INT_MAX || rank >= nprocs || t->version == 0 ||
        n > (r->len - r->pos) / 5) {
        trec_free(t);
        return -1;
    }
    t->nprocs = (int)nprocs;
    t->rank = (int)rank;
    memcpy(t->host, host, SLUICE_HOST_ID_LEN);
    t->paths = calloc(n ? n : 1, sizeof *t->paths);
    for (; t->paths && t->n < n && !r->bad; t->n++)
        t->paths[t->n] = get_str(r);
    if (!t->paths || r->bad) {
        trec_free(t);
        return -1;
    }
    return 0;
}

static int known(const struct sluice_level_table *t, const struct trec *x)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].version == x->version && t->r[i].rank == x->rank && strcmp(t->r[i].key, x->key) == 0)
            return 1;
    return 0;
}

/* Adds the records of one summary; on a malformed one, takes back what it added. */
static int merge_one(struct sluice_level_table *t, const unsigned char *p, size_t len)
{
    struct sluice_bytereader r = {p, len, 0, 0};
    char host[SLUICE_HOST_ID_LEN + 1] = {0};
    size_t start = t->n;
    sluice_bytereader_get(&r, host, SLUICE_HOST_ID_LEN);
    uint32_t count = sluice_bytereader_u32(&r), got = 0;
    for (; !r.bad && got < count; got++) {
        struct trec x;
        if (decode_record(&r, host, &x) != 0)
            break;
        if (known(t, &x)) { /* another rank of the same node sent it too */
            trec_free(&x);
            continue;
        }
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 64;
            struct trec *nr = realloc(t->r, cap * sizeof *nr);
            if (!nr) {
                trec_free(&x);
                return -ENOMEM;
            }
            t->r = nr;
            t->cap = cap;
        }
        t->r[t->n++] = x;
    }
    if (r.bad || got != count || r.pos != r.len) {
        while (t->n > start)
            trec_free(&t->r[--t->n]);
    }
    return 0;
}

struct sluice_level_table *sluice_level_table_merge(const unsigned char *buf, const size_t *lens, int n)
{
    struct sluice_level_table *t = calloc(1, sizeof *t);
    size_t off = 0;
    for (int i = 0; t && i < n; off += lens[i], i++) {
        if (lens[i] && merge_one(t, buf + off, lens[i]) != 0) {
            sluice_level_table_free(t);
            return NULL;
        }
    }
    return t;
}

void sluice_level_table_free(struct sluice_level_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        trec_free(&t->r[i]);
    free(t->r);
    free(t);
}

/* ---- queries --------------------------------------------------------------------------------- */

uint64_t sluice_level_table_max(const struct sluice_level_table *t, const char *key)
{
    uint64_t v = 0;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->r[i].version > v && strcmp(t->r[i].key, key) == 0)
            v = t->r[i].version;
    return v;
}

/* Records of distinct ranks of version v of key (records are unique per rank: known()). */
static int count_ranks(const struct sluice_level_table *t, const char *key, uint64_t v, int *nprocs)
{
    int n = 0;
    for (size_t i = 0; t && i < t->n; i++) {
        if (t->r[i].version != v || strcmp(t->r[i].key, key) != 0)
            continue;
        if (n && t->r[i].nprocs != *nprocs) /* two jobs of different sizes: not one version */
            return -1;
        *nprocs = t->r[i].nprocs;
        n++;
    }
    return n;
}

int sluice_level_table_records(const struct sluice_level_table *t, const char *key, uint64_t v, int *nprocs)
{
    *nprocs = 0;
    return count_ranks(t, key, v, nprocs);
}

uint64_t sluice_level_table_complete(const struct sluice_level_table *t, const char *key, uint64_t above)
{
    uint64_t best = 0;
    for (size_t i = 0; t && i < t->n; i++) {
        const struct trec *x = &t->r[i];
        int nprocs = 0;
        if (x->version > above && x->version > best && strcmp(x->key, key) == 0 &&
            count_ranks(t, key, x->version, &nprocs) == nprocs)
            best = x->version;
    }
    return best;
}

uint64_t sluice_level_table_holder(const struct sluice_level_table *t, const char *key, const char *path,
                                   uint64_t lo, uint64_t hi, char *host)
{
    uint64_t best = 0;
    for (size_t i = 0; t && i < t->n; i++) {
        const struct trec *x = &t->r[i];
        if (x->version <= lo || x->version > hi || x->version <= best || strcmp(x->key, key) != 0)
            continue;
        for (uint32_t j = 0; j < x->n; j++) {
            if (strcmp(x->paths[j], path) == 0) {
                best = x->version;
                memcpy(host, x->host, SLUICE_HOST_ID_LEN + 1);
                break;
            }
        }
    }
    return best;
}

size_t sluice_level_table_size(const struct sluice_level_table *t)
{
    return t ? t->n : 0;
}

const char *sluice_level_table_key_at(const struct sluice_level_table *t, size_t i)
{
    return t->r[i].key;
}
