/* SPDX-License-Identifier: MIT */
/* XOR parity of node-local versions, while the job runs (docs/REDUNDANCY.md, "XOR parity"):
 * once every rank of a node recorded its part of a version (red_encode.c counts them), the
 * node's leader reads its part as one stream (red_stream.h), SLUICE_RED_FILL_BUF at a time,
 * and sends each piece to the member of its set whose parity takes it (red_xor.h), at most
 * RED_XWINDOW pieces unanswered (bounded memory). The S-1 chunks of the part are read side by
 * side (a reader per chunk, RED_XACTIVE at a time, taking turns), so that every parity of the
 * set receives the same offsets of its S-1 chunks at about the same time: its blocks complete
 * in memory one after another (red_xor_accum.h), where chunk after chunk held every block of a
 * parity until the last member's chunk came. Each member XORs what it is given into a
 * parity file under a temporary name; when
 * every other member of its set said it sent all and its own part was listed, it seals the
 * file (block checksums, the set's layout), renames it into place and tells rank 0
 * (commit_red_stored): the version is protected only once every node of every set did.
 * Reading the part into pieces and XORing the pieces received into the parity run on the
 * process's I/O threads (io_worker.h: reads on lane OUT, XORs on lane IN), each in order, so
 * that the progress thread only moves messages. The parity is XORed together in memory a block
 * at a time and each block written once (red_xor_accum.h); a member's part length reaches the
 * accumulator through the same lane, ahead of its pieces.
 * Progress thread only (handlers of the commit transport, red_xor_poll). */
#include "ckpt/redundancy/red_xor_encode.h"
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/io_worker.h"
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/red_nodes.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor.h"
#include "ckpt/redundancy/red_xor_accum.h"
#include "common/bufpool.h"
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
#define RED_XACTIVE 8 /* chunks read at a time (a reader each) */
enum { XK_META = 1, XK_PIECE, XK_END, XK_ABORT };

struct xout;

/* SLUICE_RED_FILL_BUF of the part read on the I/O thread and cut where the parities' chunks
 * end: one message per parity holder it goes to. */
struct xfill {
    struct sluice_io_task io; /* first: fill_run finds it */
    struct xout *s;
    unsigned char *buf;
    struct cmsg *m; /* nm messages, m[k] for set position dst[k] */
    int *dst;
    int nm, last;
    const char *err; /* why the part could not be read (a constant string) */
    int errnum;
};

/* A reader of chunk k of the part: stream bytes [k C, end). */
struct xcur {
    struct sluice_red_stream st;
    uint64_t off, end;
    int opened, done;
};

/* This node's stream into its set's parities. */
struct xout {
    char key[PATH_MAX];
    uint64_t version;
    int first, S, pos, inflight, phase; /* phase: 0 sending, 4 sent, 5 aborted */
    struct sluice_red_stream st;        /* the listing (its length, header and files) */
    /* The I/O thread's while fills are queued: */
    struct xcur *cur;            /* S-1 readers */
    int left, turn;              /* readers not done; the next one's turn */
    struct sluice_io_fifo fills; /* pieces being read */
    struct xout *next;
};

/* A piece received, XORed into the parity on the I/O thread; its message owns the bytes. Or
 * (member >= 0) a member's part length, told to the accumulator in order with the pieces. */
struct xpiece {
    struct sluice_io_task io; /* first: xor_run finds it */
    struct xin *s;
    struct cmsg m;
    const unsigned char *p;
    uint64_t at; /* a member's: its part's length */
    uint32_t len;
    int src, err; /* err: the parity's XOR error once this piece was in (the I/O thread's) */
    int member;   /* -1: a piece */
};

/* This node's parity of a version, being received. */
struct xin {
    char key[PATH_MAX];
    uint64_t version, t0;                      /* t0: its first piece came, or this node's own part began */
    int first, S, pos, ends, own, err, closed; /* err: the progress thread's view */
    int werr;                                  /* the I/O thread's: after a failed XOR, skip the rest */
    int aborted;                               /* a member gave up: dropped once pieces are done */
    int fd;
    char tmp[PATH_MAX + 32], path[PATH_MAX];
    struct sluice_red_xor_meta *x;
    struct sluice_red_xor_accum *acc; /* the I/O thread's while pieces are queued */
    struct sluice_io_fifo w;          /* pieces being XORed in */
    struct xin *next;
};

static struct xout *outs;
static struct xin *ins;
static int outs_active;
static int ins_xoring; /* received pieces not yet XORed in; read by the exit without the lock */

int red_xor_busy(void)
{
    return __atomic_load_n(&outs_active, __ATOMIC_ACQUIRE) != 0 ||
           __atomic_load_n(&ins_xoring, __ATOMIC_ACQUIRE) != 0;
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
    if (!s->err && !(s->acc = sluice_red_xor_accum_new(s->fd, s->S, s->pos)))
        s->err = ENOMEM;
    s->werr = s->err; /* before any piece is queued: the I/O thread skips what cannot be stored */
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
    sluice_red_xor_accum_free(s->acc);
    *pp = s->next;
    free(s);
}

/* A member gave up: the parity is dropped once no piece of it is on the I/O thread. */
static void abort_in(struct xin *s)
{
    if (s->closed || s->w.n)
        return;
    s->err = ECANCELED;
    SLUICE_REAL(close)(s->fd);
    s->fd = -1;
    sluice_red_xor_accum_free(s->acc); /* its held blocks: nothing is queued that uses them */
    s->acc = NULL;
    SLUICE_REAL(unlink)(s->tmp);
    s->closed = 1;
}

/* Every other member sent all and this node's own part is known: seal and rename. */
static void in_try_finish(const struct red_nodes *n, struct xin *s)
{
    if (s->w.n || s->closed || s->err || !s->own || s->ends != s->S - 1)
        return;
    if (commit_red_drained_covers(s->key, s->version)) {
        abort_in(s); /* durable already: a parity sealed now would stay behind */
        return;
    }
    struct sluice_red_xor_meta *x = s->x;
    x->plen = 0;
    for (int i = 0; i < s->S; i++)
        if (i != s->pos && sluice_red_xor_chunk(x->m[i].len, s->S) > x->plen)
            x->plen = sluice_red_xor_chunk(x->m[i].len, s->S);
    int rc = sluice_red_xor_seal_accum(s->fd, x, s->acc);
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

static void xor_run(struct sluice_io_task *t);

/* A piece from src (member < 0; m owns its bytes p), or member's part length (at), queued on
 * the I/O thread after what came before. */
static void queue_in(struct xin *s, int member, int src, struct cmsg *m, uint64_t at)
{
    struct xpiece *w = calloc(1, sizeof *w);
    if (!w) /* as the transport does for a message's few bytes */
        sluice_fatal(1, "checkpoint commit: out of memory receiving a redundancy piece");
    w->s = s;
    w->src = src;
    w->member = member;
    w->at = at;
    if (m) {
        w->p = cmsg_get_bytes(m, &w->len);
        if (m->bad)
            w->len = 0;
        w->m = *m; /* the piece keeps the received bytes (p points into them) */
        memset(m, 0, sizeof *m);
    }
    w->io.run = xor_run;
    __atomic_add_fetch(&ins_xoring, 1, __ATOMIC_RELEASE);
    sluice_io_fifo_submit(&s->w, SLUICE_IO_IN, &w->io);
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
    if (!mb->ranks || m->bad) {
        s->err = EBADMSG;
        return;
    }
    queue_in(s, p, -1, NULL, mb->len);
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

/* I/O thread: the piece XORed into the parity, or the member's length told (after what came
 * before it). */
static void xor_run(struct sluice_io_task *t)
{
    struct xpiece *w = (struct xpiece *)t;
    struct xin *s = w->s;
    if (!s->werr && !s->closed && (w->len || w->member >= 0)) {
        int rc = w->member >= 0 ? sluice_red_xor_accum_member(s->acc, w->member, w->at)
                                : sluice_red_xor_accum_add(s->acc, w->at, w->p, w->len);
        s->werr = rc ? -rc : 0;
    }
    w->err = s->werr;
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
    if (!*in_find(key, version) && commit_red_drained_covers(key, version)) {
        if (kind == XK_PIECE)
            send_xack(src, key, version, 0); /* durable already: no parity of it is kept */
        return;
    }
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
        queue_in(s, -1, src, m, at);
    } else if (kind == XK_END) {
        s->ends++;
        in_try_finish(n, s);
    } else if (kind == XK_ABORT && !s->closed) {
        s->aborted = 1; /* the parity misses that member's part: never sealed (xin_poll) */
        abort_in(s);
    }
}

/* Pieces XORed in: answered in order; a parity whose pieces are all in is sealed. */
static int xin_poll(const struct red_nodes *n)
{
    int did = 0;
    for (struct xin *s = ins; s; s = s->next) {
        struct xpiece *w;
        while ((w = (struct xpiece *)sluice_io_fifo_take(&s->w)) != NULL) {
            __atomic_sub_fetch(&ins_xoring, 1, __ATOMIC_RELEASE);
            if (w->err && !s->err)
                s->err = w->err;
            if (w->member < 0) /* a member's length is not answered */
                send_xack(w->src, s->key, s->version, s->closed || s->aborted ? 0 : s->err);
            cmsg_free(&w->m);
            free(w);
            did++;
        }
        if (!s->w.n && s->aborted)
            abort_in(s);
        else if (!s->w.n)
            in_try_finish(n, s);
    }
    return did;
}

/* ---- the sending side ------------------------------------------------------------------------ */

static void out_free(struct xout *s)
{
    __atomic_sub_fetch(&outs_active, 1, __ATOMIC_RELEASE);
    sluice_progress_mpi_busy(-1);
    sluice_red_stream_close(&s->st);
    for (int k = 0; s->cur && k < s->S - 1; k++)
        if (s->cur[k].opened)
            sluice_red_stream_close(&s->cur[k].st);
    free(s->cur);
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

/* A new message of the fill for the parity at set position pos, its bytes to be put at `at`:
 * its head is put, the bytes are the caller's. NULL where memory ran out. */
static struct cmsg *fill_msg(struct xfill *f, const struct xout *s, int pos, uint64_t at)
{
    struct cmsg *m = realloc(f->m, (size_t)(f->nm + 1) * sizeof *m);
    if (m)
        f->m = m;
    int *dst = m ? realloc(f->dst, (size_t)(f->nm + 1) * sizeof *dst) : NULL;
    if (!dst)
        return NULL;
    f->dst = dst;
    put_head(&f->m[f->nm], s->key, s->version, XK_PIECE, s->pos);
    cmsg_put_u64(&f->m[f->nm], at);
    f->dst[f->nm] = pos;
    return &f->m[f->nm++];
}

/* I/O thread: the reader whose turn it is among the first RED_XACTIVE not done, opened and
 * sought to its chunk at its first turn. NULL where every reader is done. */
static struct xcur *next_reader(struct xfill *f, struct xout *s)
{
    int n = s->S - 1, lo = 0;
    while (lo < n && s->cur[lo].done)
        lo++;
    if (lo == n)
        return NULL;
    int k = s->turn < lo || s->turn >= n ? lo : s->turn;
    while (s->cur[k].done || k >= lo + RED_XACTIVE)
        k = k + 1 >= n || k + 1 >= lo + RED_XACTIVE ? lo : k + 1;
    s->turn = k + 1;
    struct xcur *c = &s->cur[k];
    if (!c->opened) {
        int rc = sluice_red_stream_clone(&c->st, &s->st);
        c->opened = rc == 0;
        if (rc == 0)
            rc = sluice_red_stream_seek(&c->st, c->off);
        if (rc) {
            f->err = "";
            f->errnum = -rc;
            return NULL;
        }
    }
    return c;
}

/* I/O thread: the next SLUICE_RED_FILL_BUF of one chunk of the part, the chunks in turn. Where
 * the chunk has room for a whole piece of the stream, the part is read straight into the
 * message; only near a chunk's end does it go through a buffer and get cut there (the bytes
 * after are the next chunk's reader's). */
static void fill_run(struct sluice_io_task *t)
{
    struct xfill *f = (struct xfill *)t;
    struct xout *s = f->s;
    if (s->left == 0)
        return; /* queued ahead of the fill that turned out last: nothing */
    struct xcur *c = next_reader(f, s);
    if (!c)
        return;
    int p = 0;
    uint64_t at = 0, room = sluice_red_xor_route(s->st.length, s->S, s->pos, c->off, &p, &at);
    room = room < c->end - c->off ? room : c->end - c->off;
    long len;
    if (room >= SLUICE_RED_STREAM_BUF) {
        struct cmsg *m = fill_msg(f, s, p, at);
        uint32_t cap = room < SLUICE_RED_FILL_BUF ? (uint32_t)room : SLUICE_RED_FILL_BUF;
        unsigned char *b = m ? cmsg_bytes_begin(m, cap) : NULL;
        len = b ? sluice_red_stream_fill(&c->st, b, cap) : -ENOMEM;
        if (len > 0)
            cmsg_bytes_end(m, (uint32_t)len);
    } else {
        size_t bcap = 0;
        f->buf = sluice_bufpool_get(SLUICE_RED_FILL_BUF, &bcap);
        len = f->buf ? sluice_red_stream_fill(&c->st, f->buf, SLUICE_RED_FILL_BUF) : -ENOMEM;
        if (len > 0 && (uint64_t)len > room)
            len = (long)room; /* the rest is the next chunk's */
        struct cmsg *m = len > 0 ? fill_msg(f, s, p, at) : NULL;
        if (m)
            cmsg_put_bytes(m, f->buf, (uint32_t)len);
        else if (len > 0)
            len = -ENOMEM;
    }
    if (len <= 0) {
        f->err = len < 0 ? "" : "a piece did not fit"; /* "": say strerror(errnum) */
        f->errnum = len < 0 ? (int)-len : 0;
        return;
    }
    c->off += (uint64_t)len;
    if (c->off < c->end)
        return;
    c->done = 1;
    if (c->end == s->st.length && c->st.phase != 4)
        f->err = "the part's length changed while it was read";
    if (--s->left == 0)
        f->last = 1;
}

static void fill_free(struct xfill *f)
{
    for (int k = 0; k < f->nm; k++)
        cmsg_free(&f->m[k]);
    free(f->m);
    free(f->dst);
    sluice_bufpool_put(f->buf, SLUICE_RED_FILL_BUF);
    free(f);
}

/* Queues reads of the part until RED_XWINDOW pieces are read or unanswered (bounded memory). */
static void pump(const struct red_nodes *n, struct xout *s)
{
    while (s->phase == 0 && s->inflight + s->fills.n < RED_XWINDOW) {
        struct xfill *f = calloc(1, sizeof *f);
        if (!f) {
            if (s->inflight + s->fills.n == 0)
                abort_out(n, s, strerror(ENOMEM)); /* nothing will call pump again */
            return;
        }
        f->s = s;
        f->io.run = fill_run;
        sluice_io_fifo_submit(&s->fills, SLUICE_IO_OUT, &f->io);
    }
}

/* Sends the pieces read, in order; an error aborts the stream. */
static void send_filled(const struct red_nodes *n, struct xout *s)
{
    struct xfill *f;
    while ((f = (struct xfill *)sluice_io_fifo_take(&s->fills)) != NULL) {
        if (s->phase == 0 && f->err && !f->last) {
            abort_out(n, s, *f->err ? f->err : strerror(f->errnum));
        } else if (s->phase == 0) {
            for (int k = 0; k < f->nm; k++) {
                commit_send(n->leader[s->first + f->dst[k]], &f->m[k]);
                s->inflight++;
            }
            f->nm = 0;
            if (f->err) /* the last piece, but the part's length changed */
                abort_out(n, s, f->err);
            else if (f->last) {
                send_all(n, s, XK_END);
                s->phase = 4;
            }
        }
        fill_free(f);
    }
}

static int out_over(const struct xout *s)
{
    return s->inflight == 0 && s->fills.n == 0 && s->phase >= 4;
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
    if (rc == 0 && !(s->cur = calloc((size_t)s->S, sizeof *s->cur)))
        rc = -ENOMEM;
    if (rc) {
        sluice_log_warn("checkpoint %s version %llu: not protected: this node's part could not be listed "
                        "(%s); it stays staged",
                        key, (unsigned long long)version, strerror(-rc));
        out_free(s);
        return;
    }
    /* Its S-1 chunks' readers (opened at their first turn). */
    uint64_t C = sluice_red_xor_chunk(s->st.length, s->S);
    for (int k = 0; k < s->S - 1; k++) {
        uint64_t b = (uint64_t)k * C, e = b + C < s->st.length ? b + C : s->st.length;
        s->cur[k].off = b < e ? b : e;
        s->cur[k].end = e;
        s->cur[k].done = b >= e;
        s->left += b < e;
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
    pump(n, s);
    if (out_over(s)) { /* aborted before any piece was read: no answer comes */
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
        if (out_over(s)) {
            *pp = s->next;
            out_free(s);
        }
        return;
    }
}

void red_xor_drained(const char *key, uint64_t version)
{
    for (struct xin **pp = &ins; *pp;) {
        struct xin *s = *pp;
        if (s->version <= version && strcmp(s->key, key) == 0) {
            /* Durable: its parity is of no use, finished or not (a member that never sent its
             * part, its files gone, would keep it waiting until the exit, its temporary file
             * left behind). Pieces still being XORed in close it once done (xin_poll). */
            s->aborted = 1;
            abort_in(s);
            if (!s->w.n) {
                in_free(pp);
                continue;
            }
        }
        pp = &s->next;
    }
}

int red_xor_poll(void)
{
    const struct red_nodes *n = red_nodes();
    if (!n)
        return 0;
    int did = xin_poll(n);
    for (struct xout **pp = &outs; *pp;) {
        struct xout *s = *pp;
        if (!s->fills.n) {
            pp = &s->next;
            continue;
        }
        send_filled(n, s);
        if (s->phase == 0)
            pump(n, s);
        did++;
        if (out_over(s)) {
            *pp = s->next;
            out_free(s);
        } else {
            pp = &s->next;
        }
    }
    return did;
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
