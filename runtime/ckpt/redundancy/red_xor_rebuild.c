/* SPDX-License-Identifier: MIT */
/* Rebuild of a lost node's part from XOR parity at restart (docs/REDUNDANCY.md, "XOR parity"):
 * every leader lists its protected parity files with the layout of their set (red_xor.h); every
 * rank computes the same plan. A set that lost one member x whose survivors all hold their
 * parity and records is rebuilt at the builder, the leader of the node that now runs x's first
 * missing rank: each survivor regenerates its own part's stream from its stage folder
 * (red_stream.h) and sends the bytes of its chunks that went into the parities of the others,
 * and its parity's first C_x bytes, each placed where x's chunk for that parity holder lies;
 * the builder XORs them into x's stream, which is then a partner-copy stream whose every
 * checksum is checked when its ranks are restored (red_rebuild_task). A parity block whose
 * crc32c does not match stops the rebuild of that version (one line naming the file). Two lost
 * members of one set: one line; the version is not rebuilt. Memory: one piece per rank. */
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_rebuild.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor.h"
#include "common/log.h"
#include "common/real.h"
#include "mpi/tags.h"
#include "mpi/wait_help.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARK_END UINT64_MAX
#define MARK_ERR (UINT64_MAX - 1)
#define MSG_MAX (8 + SLUICE_RED_STREAM_BUF)

struct xent {
    uint64_t h, v, plen;
    int nprocs, holder, S, pos, done;
    char file[NAME_MAX + 1];
    char host[SLUICE_RED_XOR_MAX_SET][17];
    uint64_t len[SLUICE_RED_XOR_MAX_SET];
    int nranks[SLUICE_RED_XOR_MAX_SET];
    int *ranks[SLUICE_RED_XOR_MAX_SET];
    char *key;
};

/* ---- summaries ------------------------------------------------------------------------------- */

char *red_xor_summary_line(const char *dir, const char *name, int me)
{
    uint64_t hash, v;
    int n = 0;
    size_t l = strlen(name);
    if (sscanf(name, SLUICE_RED_XOR_PREFIX "%16" SCNx64 "-%20" SCNu64 SLUICE_RED_XOR_SUFFIX "%n", &hash, &v,
               &n) != 2 ||
        (size_t)n != l)
        return NULL;
    char path[PATH_MAX];
    struct sluice_red_xor_meta *x = malloc(sizeof *x);
    if (!x || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
        sluice_red_xor_meta_read(path, x) != 0) {
        free(x);
        return NULL;
    }
    char *out = NULL;
    size_t cap = 256 + strlen(x->key), len = 0;
    for (int i = 0; i < x->S; i++)
        cap += 64 + 12 * (size_t)x->m[i].nranks;
    if (sluice_red_marked(dir, x->key, v) && x->version == v && !strchr(x->key, '\n') &&
        (out = malloc(cap)) != NULL) {
        len += (size_t)snprintf(out, cap, "X %" PRIx64 " %" PRIu64 " %d %d %d %d %" PRIu64 " %s", hash, v,
                                x->nprocs, me, x->S, x->pos, x->plen, name);
        for (int i = 0; i < x->S; i++) {
            len += (size_t)snprintf(out + len, cap - len, " %.16s %" PRIu64 " %d",
                                    x->m[i].host[0] ? x->m[i].host : "-", x->m[i].len, x->m[i].nranks);
            for (int k = 0; k < x->m[i].nranks; k++)
                len += (size_t)snprintf(out + len, cap - len, " %d", x->m[i].ranks[k]);
        }
        snprintf(out + len, cap - len, " K %s\n", x->key);
    }
    sluice_red_xor_meta_free(x);
    free(x);
    return out;
}

static void xent_free(struct xent *e)
{
    for (int i = 0; i < e->S; i++)
        free(e->ranks[i]);
    free(e->key);
}

/* One "X" line into e. 0, or -1 where it is malformed. */
static int parse_line(const char *s, const char *end, struct xent *e)
{
    int pos = 0;
    memset(e, 0, sizeof *e);
    if (sscanf(s, "X %" SCNx64 " %" SCNu64 " %d %d %d %d %" SCNu64 " %255s%n", &e->h, &e->v, &e->nprocs,
               &e->holder, &e->S, &e->pos, &e->plen, e->file, &pos) != 8 ||
        e->S < 2 || e->S > SLUICE_RED_XOR_MAX_SET || e->pos < 0 || e->pos >= e->S) {
        e->S = 0;
        return -1;
    }
    const char *q = s + pos;
    for (int i = 0; i < e->S; i++) {
        int k = 0;
        if (sscanf(q, " %16s %" SCNu64 " %d%n", e->host[i], &e->len[i], &e->nranks[i], &k) != 3 ||
            e->nranks[i] < 0 || e->nranks[i] > SLUICE_RED_MAX_RANKS)
            return -1;
        q += k;
        e->ranks[i] = calloc((size_t)e->nranks[i] + 1, sizeof *e->ranks[i]);
        if (!e->ranks[i])
            return -1;
        for (int r = 0; r < e->nranks[i]; r++)
            e->ranks[i][r] = (int)strtol(q, (char **)&q, 10);
    }
    if (strncmp(q, " K ", 3) != 0 || q + 3 > end)
        return -1;
    e->key = strndup(q + 3, (size_t)(end - q - 3));
    return e->key ? 0 : -1;
}

static int same_set(const struct xent *a, const struct xent *b)
{
    if (a->h != b->h || a->v != b->v || a->S != b->S)
        return 0;
    for (int i = 0; i < a->S; i++)
        if (strcmp(a->host[i], b->host[i]) != 0 || a->len[i] != b->len[i])
            return 0;
    return 1;
}

/* ---- one rebuild ----------------------------------------------------------------------------- */

struct sink {
    MPI_Comm comm;
    int builder, self; /* self: this rank is the builder (XOR locally) */
    int fd;
    unsigned char *msg;
    int err;
};

static void emit(struct sink *k, uint64_t off, const unsigned char *p, size_t len)
{
    if (k->self) {
        if (!k->err && sluice_red_xor_into(k->fd, off, p, len) != 0)
            k->err = EIO;
        return;
    }
    memcpy(k->msg, &off, 8);
    memcpy(k->msg + 8, p, len);
    PMPI_Send(k->msg, (int)(8 + len), MPI_BYTE, k->builder, SLUICE_TAG_REBUILD, k->comm);
}

static void emit_error(struct sink *k, const char *text, char *err, size_t cap)
{
    k->err = EBADMSG;
    if (k->self) {
        snprintf(err, cap, "%s", text);
        return;
    }
    uint64_t mark = MARK_ERR;
    memcpy(k->msg, &mark, 8);
    size_t l = strlen(text);
    memcpy(k->msg + 8, text, l);
    PMPI_Send(k->msg, (int)(8 + l), MPI_BYTE, k->builder, SLUICE_TAG_REBUILD, k->comm);
}

static void emit_cb(void *ctx, uint64_t off, const unsigned char *p, size_t len)
{
    emit(ctx, off, p, len);
}

/* Survivor e (this rank holds it) sends what lost member x's rebuild needs of it. */
static void contribute(struct sink *k, const char *dir, const struct xent *e, int x, char *err, size_t cap)
{
    char text[PATH_MAX + 160];
    if (sluice_red_xor_contribute(dir, e->file, x, emit_cb, k, text, sizeof text) != 0)
        emit_error(k, text, err, cap);
}

/* The builder: what every remote survivor sends, XORed into fd, until each said it ended. */
static void gather(struct sink *k, int remote, char *err, size_t cap, int *from)
{
    for (int ended = 0; ended < remote;) {
        MPI_Status st;
        int len = 0;
        PMPI_Recv(k->msg, (int)MSG_MAX, MPI_BYTE, MPI_ANY_SOURCE, SLUICE_TAG_REBUILD, k->comm, &st);
        PMPI_Get_count(&st, MPI_BYTE, &len);
        uint64_t off = 0;
        if (len < 8)
            continue;
        memcpy(&off, k->msg, 8);
        if (off == MARK_END) {
            ended++;
        } else if (off == MARK_ERR) {
            ended++;
            if (!k->err) {
                snprintf(err, cap, "%.*s", len - 8, (const char *)k->msg + 8);
                *from = st.MPI_SOURCE;
                k->err = EBADMSG;
            }
        } else if (!k->err && sluice_red_xor_into(k->fd, off, k->msg + 8, (size_t)len - 8) != 0) {
            snprintf(err, cap, "the rebuilt part could not be written here (%s)", strerror(errno));
            k->err = EIO;
        }
    }
}

static void list_hosts(const struct xent *e, int x, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < e->S && len + 20 < cap; i++)
        if (i != x)
            len += (size_t)snprintf(out + len, cap - len, "%s%.16s", len ? "," : "", e->host[i]);
}

/* Rebuilds member x of the set whose entries (one per survivor) are set[0..S-2]. Collective;
 * 1 when every missing rank was restored. */
static int rebuild_member(MPI_Comm comm, const struct red_nodes *n, const char *dir, struct xent **set, int x,
                          red_present_fn present, const void *ctx)
{
    const struct xent *e0 = set[0];
    int *miss = calloc((size_t)e0->nranks[x] + 1, sizeof *miss), nm = 0, ok = 1;
    struct sink k = {comm, 0, 0, -1, malloc(MSG_MAX), 0};
    char err[PATH_MAX + 160] = "", tmp[128], path[PATH_MAX + 160], from[1280], hosts[1024];
    for (int r = 0; miss && r < e0->nranks[x]; r++)
        if (!present(ctx, e0->h, e0->v, e0->ranks[x][r]))
            miss[nm++] = e0->ranks[x][r];
    if (!miss || !k.msg || nm == 0) {
        free(miss);
        free(k.msg);
        return nm == 0;
    }
    k.builder = n->leader[n->node_of[miss[0] % n->size]];
    snprintf(tmp, sizeof tmp, "rx-rebuild-%016" PRIx64 "-%020" PRIu64 ".tmp.%ld", e0->h, e0->v,
             (long)getpid());
    snprintf(path, sizeof path, "%s/%s", dir, tmp);
    list_hosts(e0, x, hosts, sizeof hosts);
    snprintf(from, sizeof from, "the XOR parity of its set of %d nodes and the parts of nodes %s", e0->S,
             hosts);
    int remote = 0, errfrom = -1;
    for (int i = 0; i < e0->S - 1; i++)
        remote += set[i]->holder != k.builder;
    if (n->rank == k.builder) {
        k.fd = SLUICE_REAL(open)(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        k.err = k.fd < 0 ? errno : 0;
        if (k.err)
            snprintf(err, sizeof err, "the rebuilt part could not be written here (%s)", strerror(k.err));
        k.self = 1;
        for (int i = 0; i < e0->S - 1; i++)
            if (set[i]->holder == n->rank && !k.err)
                contribute(&k, dir, set[i], x, err, sizeof err);
        if (k.err)
            errfrom = n->rank;
        gather(&k, remote, err, sizeof err, &errfrom);
        if (!k.err && SLUICE_REAL(ftruncate)(k.fd, (off_t)e0->len[x]) != 0)
            k.err = errno;
        if (k.fd >= 0)
            SLUICE_REAL(close)(k.fd);
        if (k.err) {
            sluice_log_warn(
                "checkpoint %s version %" PRIu64 ": ranks of lost node %.16s are not rebuilt from XOR "
                "parity: node %.16s: %s; an older version is served",
                e0->key, e0->v, e0->host[x], errfrom >= 0 ? n->host[n->node_of[errfrom]] : "?", err);
            SLUICE_REAL(unlink)(path);
        }
    } else {
        for (int i = 0; i < e0->S - 1; i++) {
            if (set[i]->holder != n->rank)
                continue;
            contribute(&k, dir, set[i], x, err, sizeof err);
            uint64_t end = MARK_END;
            if (!k.err) /* an error mark ended it already */
                PMPI_Send(&end, 8, MPI_BYTE, k.builder, SLUICE_TAG_REBUILD, comm);
            k.err = 0;
        }
    }
    ok = n->rank != k.builder || !k.err;
    sluice_quiet_bcast(&ok, 1, MPI_INT, k.builder, comm);
    if (ok) { /* the rebuilt stream goes to each node that runs a missing rank; checked there */
        int *ranks = calloc((size_t)nm + 1, sizeof *ranks);
        for (int t = 0; ranks && t < n->nnodes; t++) {
            int nr = 0;
            for (int r = 0; r < nm; r++)
                if (n->node_of[miss[r] % n->size] == t)
                    ranks[nr++] = miss[r];
            if (nr)
                ok &= red_rebuild_task(comm, n, dir, tmp, k.builder, n->leader[t], ranks, nr, from);
        }
        free(ranks);
        if (n->rank == k.builder)
            SLUICE_REAL(unlink)(path);
        sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    }
    free(miss);
    free(k.msg);
    return ok;
}

/* The members of e's set with a missing rank; the first two in lost[]. */
static int lost_members(const struct xent *e, red_present_fn present, const void *ctx, int *lost)
{
    int nl = 0;
    for (int i = 0; i < e->S; i++) {
        int gone = 0;
        for (int r = 0; r < e->nranks[i] && !gone; r++)
            gone = !present(ctx, e->h, e->v, e->ranks[i][r]);
        if (gone && nl < 2)
            lost[nl] = i;
        nl += gone;
    }
    return nl;
}

/* Per set of checkpoints, newest version first: a version that lost nothing ends the search;
 * one whose XOR sets each lost at most one member, all held, is rebuilt (an older one is tried
 * where that failed); one where a set lost two members is named once and skipped. */
static void plan_and_run(MPI_Comm comm, const struct red_nodes *n, const char *dir, struct xent *e, int ne,
                         red_present_fn present, const void *ctx)
{
    struct xent **set = calloc((size_t)SLUICE_RED_XOR_MAX_SET, sizeof *set);
    for (;;) {
        int best = -1; /* the newest version not done of a set key not finished */
        for (int i = 0; set && i < ne; i++)
            if (!e[i].done && (best < 0 || e[i].v > e[best].v || (e[i].v == e[best].v && e[i].h < e[best].h)))
                best = i;
        if (best < 0)
            break;
        uint64_t h = e[best].h, v = e[best].v;
        int lost_any = 0, fine = 1, told = 0;
        for (int i = 0; i < ne; i++) { /* each XOR set of version v */
            if (e[i].h != h || e[i].v != v || e[i].done == 2)
                continue;
            int lost[2] = {-1, -1}, nl = lost_members(&e[i], present, ctx, lost), ns = 0;
            for (int j = i; j < ne; j++)
                if (same_set(&e[i], &e[j]) && e[j].done != 2) {
                    e[j].done = 2; /* grouped */
                    if (ns < e[i].S && e[j].pos != lost[0])
                        set[ns++] = &e[j];
                }
            lost_any |= nl > 0;
            if (nl >= 2) {
                fine = 0;
                if (!told && n->rank == 0)
                    sluice_log_warn(
                        "checkpoint %s version %" PRIu64 ": nodes %.16s and %.16s of one XOR set of %d "
                        "nodes are both lost (%d lost); XOR parity rebuilds one lost node per set, so "
                        "this version and the older node-local ones are not rebuilt",
                        e[i].key, v, e[i].host[lost[0]], e[i].host[lost[1]], e[i].S, nl);
                told = 1;
            } else if (nl == 1 && ns == e[i].S - 1) {
                fine &= rebuild_member(comm, n, dir, set, lost[0], present, ctx);
            } else if (nl == 1) {
                fine = 0; /* a survivor's parity is gone too */
            }
        }
        for (int i = 0; i < ne; i++)
            if (e[i].h == h && e[i].v == v)
                e[i].done = 1;
        if (!lost_any || fine || told) /* whole, rebuilt, or beyond XOR: this set key is finished */
            for (int i = 0; i < ne; i++)
                if (e[i].h == h)
                    e[i].done = 1;
    }
    free(set);
}

void red_xor_execute(MPI_Comm comm, const struct red_nodes *n, const char *dir, const char *all, size_t len,
                     red_present_fn present, const void *ctx)
{
    int nlines = 0;
    for (size_t i = 0; i + 1 < len; i++)
        nlines += all[i] == '\n' && all[i + 1] == 'X';
    struct xent *e = calloc((size_t)nlines + 2, sizeof *e);
    int ne = 0, ok = e != NULL;
    for (size_t off = 0; e && off < len;) {
        const char *s = all + off, *nl = memchr(s, '\n', len - off);
        if (!nl)
            break;
        off = (size_t)(nl - all) + 1;
        if (s[0] == 'X' && ne < nlines + 2) {
            if (parse_line(s, nl, &e[ne]) == 0)
                ne++;
            else
                xent_free(&e[ne]);
        }
    }
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok && ne)
        plan_and_run(comm, n, dir, e, ne, present, ctx);
    for (int i = 0; i < ne; i++)
        xent_free(&e[i]);
    free(e);
}
