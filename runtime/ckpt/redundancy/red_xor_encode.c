/* SPDX-License-Identifier: MIT */
/* XOR parity of node-local versions, while the job runs (docs/REDUNDANCY.md, "XOR parity"):
 * once every rank of a node recorded its part of a version (red_encode.c counts them), the
 * node's leader reads its part as one stream (red_stream.h), SLUICE_RED_FILL_BUF at a time,
 * and sends each piece to the member of its set whose parity takes it (red_xor.h), at most
 * RED_XWINDOW pieces unanswered (bounded memory). Each member XORs what it is given into a
 * parity file under a temporary name; when
 * every other member of its set said it sent all and its own part was listed, it seals the
 * file (block checksums, the set's layout), renames it into place and tells rank 0
 * (commit_red_stored): the version is protected only once every node of every set did.
 * Progress thread only (handlers of the commit transport). */
#include "ckpt/redundancy/red_xor_encode.h"
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/red_nodes.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "progress/progress.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RED_XWINDOW 4
enum { XK_META = 1, XK_PIECE, XK_END, XK_ABORT };

/* This node's stream into its set's parities. */
struct xout {
    char key[PATH_MAX];
    uint64_t version, off;
    int first, S, pos, inflight, phase; /* phase: 0 sending, 4 sent, 5 aborted */
    unsigned char *buf;                 /* SLUICE_RED_FILL_BUF, read into, then sent */
    struct sluice_red_stream st;
    struct xout *next;
};

/* This node's parity of a version, being received. */
struct xin {
    char key[PATH_MAX];
    uint64_t version, t0; /* t0: its first piece came, or this node's own part began */
    int first, S, pos, ends, own, err, closed;
    int fd;
    char tmp[PATH_MAX + 32], path[PATH_MAX];
    struct sluice_red_xor_meta *x;
    struct xin *next;
};

static struct xout *outs;
static struct xin *ins;
static int outs_active;

int red_xor_busy(void)
{
    return __atomic_load_n(&outs_active, __ATOMIC_ACQUIRE) != 0;
}

/* The set of this node: its first node, size; this node's position. -1 where there is none. */
static int my_set(const struct red_nodes *n, int *first, int *S)
{
    if (!n || n->nnodes < 2)
        return -1;
    int want = (int)sluice_config.REDUNDANCY_SET;
    return sluice_red_xor_set(n->nnodes, want < 2 ? 2 : want, n->mine, first, S);
}

static void put_head(struct cmsg *m, const char *key, uint64_t version, uint32_t kind, int pos)
{
    cmsg_init(m, MSG_RED_XOR);
    cmsg_put_str(m, key);
    cmsg_put_u64(m, version);
    cmsg_put_u32(m, kind);
    cmsg_put_u32(m, (uint32_t)pos);
}

/* ---- the receiving side ---------------------------------------------------------------------- */

static struct xin **in_find(const char *key, uint64_t version)
{
    struct xin **pp = &ins;
    while (*pp && ((*pp)->version != version || strcmp((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    return pp;
}

static struct xin *in_get(const struct red_nodes *n, const char *key, uint64_t version)
{
    struct xin **pp = in_find(key, version);
    if (*pp)
        return *pp;
    struct xin *s = calloc(1, sizeof *s);
    struct sluice_red_xor_meta *x = calloc(1, sizeof *x);
    const char *dir = sluice_stage_dir();
    if (!s || !x) {
        free(s);
        free(x);
        return NULL;
    }
    s->x = x;
    s->fd = -1;
    snprintf(s->key, sizeof s->key, "%s", key);
    s->version = version;
    s->t0 = sluice_now_ns();
    s->pos = my_set(n, &s->first, &s->S);
    x->version = version;
    x->S = s->S;
    x->pos = s->pos;
    snprintf(x->key, sizeof x->key, "%s", key);
    if (!dir || s->pos < 0 || s->S > SLUICE_RED_XOR_MAX_SET ||
        sluice_red_xor_path(dir, key, version, s->path, sizeof s->path) != 0)
        s->err = ENAMETOOLONG;
    if (!s->err)
        s->err = sluice_red_tmp_open(s->path, s->tmp, sizeof s->tmp, &s->fd);
    s->next = ins;
    ins = s;
    return s;
}

static void in_free(struct xin **pp)
{
    struct xin *s = *pp;
    if (s->fd >= 0)
        SLUICE_REAL(close)(s->fd);
    if (!s->closed)
        SLUICE_REAL(unlink)(s->tmp);
    if (s->x)
        sluice_red_xor_meta_free(s->x);
    free(s->x);
    *pp = s->next;
    free(s);
}

/* Every other member sent all and this node's own part is known: seal and rename. */
static void in_try_finish(const struct red_nodes *n, struct xin *s)
{
    if (s->closed || s->err || !s->own || s->ends != s->S - 1)
        return;
    struct sluice_red_xor_meta *x = s->x;
    x->plen = 0;
    for (int i = 0; i < s->S; i++)
        if (i != s->pos && sluice_red_xor_chunk(x->m[i].len, s->S) > x->plen)
            x->plen = sluice_red_xor_chunk(x->m[i].len, s->S);
    int rc = sluice_red_xor_seal(s->fd, x);
    if (SLUICE_REAL(close)(s->fd) != 0 && rc == 0)
        rc = -errno;
    s->fd = -1;
    if (rc == 0 && SLUICE_REAL(rename)(s->tmp, s->path) != 0)
        rc = -errno;
    s->closed = 1;
    if (rc) {
        SLUICE_REAL(unlink)(s->tmp);
        sluice_log_warn("checkpoint %s version %llu: not protected: this node's XOR parity could not be "
                        "stored (%s)",
                        s->key, (unsigned long long)s->version, strerror(-rc));
        return;
    }
    commit_red_stored(n, s->key, s->version, x->plen, s->t0);
}

static void on_meta(const struct red_nodes *n, struct xin *s, int p, struct cmsg *m)
{
    struct sluice_red_xor_member *mb = &s->x->m[p];
    snprintf(mb->host, sizeof mb->host, "%s", cmsg_get_str(m));
    mb->len = cmsg_get_u64(m);
    s->x->nprocs = (int)cmsg_get_u32(m);
    uint32_t nr = cmsg_get_u32(m);
    free(mb->ranks);
    mb->ranks = nr <= SLUICE_RED_MAX_RANKS ? calloc((size_t)nr + 1, sizeof *mb->ranks) : NULL;
    mb->nranks = mb->ranks ? (int)nr : 0;
    for (int k = 0; k < mb->nranks; k++)
        mb->ranks[k] = (int)cmsg_get_u32(m);
    if (!mb->ranks || m->bad)
        s->err = EBADMSG;
    (void)n;
}

static void send_xack(int dst, const char *key, uint64_t version, int status)
{
    struct cmsg a;
    cmsg_init(&a, MSG_RED_XACK);
    cmsg_put_str(&a, key);
    cmsg_put_u64(&a, version);
    cmsg_put_u32(&a, (uint32_t)status);
    commit_send(dst, &a);
}

static void on_xor(int src, struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    uint32_t kind = cmsg_get_u32(m);
    int p = (int)cmsg_get_u32(m);
    const struct red_nodes *n = red_nodes();
    if (m->bad || !n)
        return;
    struct xin *s = in_get(n, key, version);
    if (!s || p < 0 || p >= s->S || p == s->pos) {
        if (kind == XK_PIECE)
            send_xack(src, key, version, s ? EPROTO : ENOMEM);
        return;
    }
    if (kind == XK_META && !s->closed)
        on_meta(n, s, p, m);
    else if (kind == XK_PIECE) {
        uint64_t at = cmsg_get_u64(m);
        uint32_t len = 0;
        const unsigned char *bytes = cmsg_get_bytes(m, &len);
        if (!s->err && !s->closed && !m->bad) {
            int rc = sluice_red_xor_into(s->fd, at, bytes, len);
            s->err = rc ? -rc : 0;
        }
        send_xack(src, key, version, s->closed ? 0 : s->err);
    } else if (kind == XK_END) {
        s->ends++;
        in_try_finish(n, s);
    } else if (kind == XK_ABORT && !s->closed) {
        s->err = ECANCELED; /* the parity misses that member's part: never sealed */
        SLUICE_REAL(close)(s->fd);
        s->fd = -1;
        SLUICE_REAL(unlink)(s->tmp);
        s->closed = 1;
    }
}

/* ---- the sending side ------------------------------------------------------------------------ */

static void out_free(struct xout *s)
{
    __atomic_sub_fetch(&outs_active, 1, __ATOMIC_RELEASE);
    sluice_progress_mpi_busy(-1);
    sluice_red_stream_close(&s->st);
    free(s->buf);
    free(s);
}

static void send_all(const struct red_nodes *n, struct xout *s, uint32_t kind)
{
    for (int p = 0; p < s->S; p++) {
        if (p == s->pos)
            continue;
        struct cmsg m;
        put_head(&m, s->key, s->version, kind, s->pos);
        if (kind == XK_META) {
            cmsg_put_str(&m, s->st.h->host);
            cmsg_put_u64(&m, s->st.length);
            cmsg_put_u32(&m, (uint32_t)s->st.h->nprocs);
            cmsg_put_u32(&m, (uint32_t)s->st.h->nranks);
            for (int k = 0; k < s->st.h->nranks; k++)
                cmsg_put_u32(&m, (uint32_t)s->st.h->ranks[k]);
        }
        commit_send(n->leader[s->first + p], &m);
    }
}

static void abort_out(const struct red_nodes *n, struct xout *s, const char *why)
{
    sluice_log_warn("checkpoint %s version %llu: not protected: this node's part could not be encoded "
                    "into XOR parity (%s); it stays staged",
                    s->key, (unsigned long long)s->version, why);
    send_all(n, s, XK_ABORT);
    s->phase = 5;
}

/* Sends pieces, each cut where a chunk ends, until RED_XWINDOW are unanswered or all is sent. */
static void pump(const struct red_nodes *n, struct xout *s)
{
    unsigned char *buf = s->buf;
    while (buf && s->phase == 0 && s->inflight < RED_XWINDOW) {
        long len = sluice_red_stream_fill(&s->st, buf, SLUICE_RED_FILL_BUF);
        if (len <= 0) {
            abort_out(n, s, len < 0 ? strerror((int)-len) : "a piece did not fit");
            break;
        }
        for (uint64_t done = 0; done < (uint64_t)len;) {
            int p = 0;
            uint64_t at = 0, k = sluice_red_xor_route(s->st.length, s->S, s->pos, s->off, &p, &at);
            k = k < (uint64_t)len - done ? k : (uint64_t)len - done;
            if (k == 0) { /* longer than listed: it changed while it was read */
                abort_out(n, s, "a staging file changed while it was read");
                break;
            }
            struct cmsg m;
            put_head(&m, s->key, s->version, XK_PIECE, s->pos);
            cmsg_put_u64(&m, at);
            cmsg_put_bytes(&m, buf + done, (uint32_t)k);
            commit_send(n->leader[s->first + p], &m);
            s->inflight++;
            s->off += k;
            done += k;
        }
        if (s->phase == 0 && s->st.phase == 4) {
            if (s->off != s->st.length) {
                abort_out(n, s, "the part's length changed while it was read");
                break;
            }
            send_all(n, s, XK_END);
            s->phase = 4;
        }
    }
    if (!buf && s->phase == 0)
        abort_out(n, s, strerror(ENOMEM));
}

void red_xor_start(const struct red_nodes *n, const char *key, uint64_t version, int nprocs)
{
    const char *dir = sluice_stage_dir();
    struct xout *s = calloc(1, sizeof *s);
    struct sluice_red_header *h = calloc(1, sizeof *h);
    if (!s || !h || !dir) {
        free(s);
        free(h);
        return;
    }
    __atomic_add_fetch(&outs_active, 1, __ATOMIC_RELEASE);
    /* Its pieces move only while this end calls MPI too: a receiver's MPI_Mrecv spun 25-240 ms
     * per 256 KiB piece while this thread slept between polls (docs/REDUNDANCY.md). */
    sluice_progress_mpi_busy(1);
    snprintf(s->key, sizeof s->key, "%s", key);
    s->version = version;
    s->pos = my_set(n, &s->first, &s->S);
    h->version = version;
    h->nprocs = nprocs;
    memcpy(h->host, n->host[n->mine], 17);
    snprintf(h->key, sizeof h->key, "%s", key);
    for (int r = 0; r < n->size; r++)
        if (n->node_of[r] == n->mine && h->nranks < SLUICE_RED_MAX_RANKS)
            h->ranks[h->nranks++] = r;
    int rc = s->pos < 0 ? -EINVAL : sluice_red_stream_open(&s->st, dir, h);
    if (s->pos < 0)
        free(h);
    if (rc) {
        sluice_log_warn("checkpoint %s version %llu: not protected: this node's part could not be listed "
                        "(%s); it stays staged",
                        key, (unsigned long long)version, strerror(-rc));
        out_free(s);
        return;
    }
    /* This node's own entry of its parity's set layout. */
    struct xin *in = in_get(n, key, version);
    if (in && !in->closed) {
        struct sluice_red_xor_member *mb = &in->x->m[in->pos];
        memcpy(mb->host, h->host, 17);
        mb->len = s->st.length;
        in->x->nprocs = nprocs;
        free(mb->ranks);
        mb->ranks = calloc((size_t)h->nranks + 1, sizeof *mb->ranks);
        mb->nranks = mb->ranks ? h->nranks : 0;
        if (mb->ranks)
            memcpy(mb->ranks, h->ranks, (size_t)h->nranks * sizeof *h->ranks);
        in->own = mb->ranks != NULL;
    }
    send_all(n, s, XK_META);
    s->next = outs;
    outs = s;
    s->buf = malloc(SLUICE_RED_FILL_BUF);
    pump(n, s);
    if (s->inflight == 0 && s->phase >= 4) { /* aborted before any piece went: no answer comes */
        outs = s->next;
        out_free(s);
    }
    if (in)
        in_try_finish(n, in);
}

static void on_xack(int src, struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    int status = (int)cmsg_get_u32(m);
    const struct red_nodes *n = red_nodes();
    (void)src;
    for (struct xout **pp = &outs; !m->bad && n && *pp; pp = &(*pp)->next) {
        struct xout *s = *pp;
        if (s->version != version || strcmp(s->key, key) != 0)
            continue;
        s->inflight--;
        if (status && s->phase == 0)
            abort_out(n, s, strerror(status));
        if (s->phase == 0)
            pump(n, s);
        if (s->inflight == 0 && s->phase >= 4) {
            *pp = s->next;
            out_free(s);
        }
        return;
    }
}

void red_xor_drained(const char *key, uint64_t version)
{
    for (struct xin **pp = &ins; *pp;) {
        if ((*pp)->version <= version && strcmp((*pp)->key, key) == 0 && ((*pp)->closed || (*pp)->err))
            in_free(pp);
        else
            pp = &(*pp)->next;
    }
}

static void xor_handle(int src, uint32_t type, struct cmsg *m)
{
    if (type == MSG_RED_XOR)
        on_xor(src, m);
    else if (type == MSG_RED_XACK)
        on_xack(src, m);
}

void red_xor_handlers(void)
{
    commit_transport_on(MSG_RED_XOR, xor_handle);
    commit_transport_on(MSG_RED_XACK, xor_handle);
}
