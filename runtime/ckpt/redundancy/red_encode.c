/* SPDX-License-Identifier: MIT */
/* Partner redundancy of node-local versions, while the job runs (docs/REDUNDANCY.md,
 * "Redundancy"): each rank tells its node's leader (red_nodes.h) when its record of a version
 * is written; once every rank of the node did, the leader streams the node's part (its records
 * and the staging files they name, red_copy.h) to the next node's leader over the commit
 * transport, in messages of SLUICE_RED_FILL_BUF of the stream (read from the staging files
 * straight into the message) with at most RED_WINDOW unanswered (bounded memory).
 * The partner stores it under a temporary name, renames it into place when whole and tells rank
 * 0; when rank 0 has heard from every node, the version is protected and each leader writes its
 * mark. The file work (reading the part into messages, writing the partner's pieces) runs on
 * the process's I/O threads (io_worker.h: reads on lane OUT, writes on lane IN), in order per
 * stream, so that the progress thread only moves messages: on one thread the four copies of a
 * part (read, checksum, socket out, socket in, write) were in series (docs/REDUNDANCY.md).
 * Progress thread only (handlers of the commit transport, commit_red_poll). */
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/io_worker.h"
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_nodes.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor_encode.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "progress/progress.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RED_WINDOW 4
#define PIECE_FIRST 1u
#define PIECE_LAST 2u
#define PIECE_ABORT 4u

/* A count kept per (key, version): records of the node (leader), stored copies (rank 0). */
struct tally {
    char key[PATH_MAX];
    uint64_t version;
    int count;
    struct tally *next;
};

/* A piece of a stream read on the I/O thread: the message's head and bytes. */
struct fill {
    struct sluice_io_task io; /* first: fill_run finds the piece */
    struct out_stream *s;
    struct cmsg m;
    long len; /* > 0: bytes; 0: the stream had ended; < 0: -errno */
    int last;
};

/* The leader's stream of its node's part to its partner. */
struct out_stream {
    char key[PATH_MAX];
    uint64_t version;
    int dst, inflight, sent_first;
    int phase; /* 0 sending, 4 sent, 5 aborted */
    uint64_t bytes;
    struct sluice_red_stream st; /* the I/O thread's while pieces are being read */
    struct sluice_io_fifo fills; /* pieces being read */
    struct out_stream *next;
};

/* A received piece written on the I/O thread; its message owns the bytes. */
struct wpiece {
    struct sluice_io_task io; /* first: write_run finds the piece */
    struct in_stream *s;
    struct cmsg m;
    const unsigned char *p;
    uint32_t len, flags;
    int err; /* the stream's write error once this piece was written (the I/O thread's) */
};

/* A copy being received from the partner before us. */
struct in_stream {
    int src;
    char key[PATH_MAX];
    uint64_t version, bytes, t0; /* t0: its first piece came */
    int fd, err;                 /* err: the progress thread's view (pieces' errors as answered) */
    int werr;                    /* the I/O thread's: once a write failed, the rest is skipped */
    int aborted;                 /* the sender gave up: dropped once its queued pieces are done */
    char tmp[PATH_MAX + 32], path[PATH_MAX];
    struct sluice_io_fifo w; /* pieces being written */
    struct in_stream *next;
};

static struct tally *recorded, *stored;
/* Per key, the newest version heard durable (its version field): an encoding of a version up to
 * it that ends later (its last piece written after the drain removed the copies) keeps nothing,
 * or its copy and mark would stay in the stage folder after the job. */
static struct tally *drained;
/* Versions this leader started to encode and has not yet heard protected (nor drained). */
static struct tally *pending;
static int pending_n; /* their number, read by commit_red_awaiting */
static struct out_stream *outs;
static int outs_active; /* streams not yet answered in full; read by the exit without the lock */
static int ins_writing; /* received pieces not yet written; read by the exit without the lock */

int commit_red_busy(void)
{
    return __atomic_load_n(&outs_active, __ATOMIC_ACQUIRE) != 0 ||
           __atomic_load_n(&ins_writing, __ATOMIC_ACQUIRE) != 0 || red_xor_busy();
}

int commit_red_awaiting(void)
{
    return __atomic_load_n(&pending_n, __ATOMIC_ACQUIRE) != 0 || commit_red_busy();
}
static struct in_stream *ins;

static int enabled(const struct red_nodes **n)
{
    *n = red_nodes();
    return *n && (*n)->nnodes >= 2 && sluice_config.REDUNDANCY &&
           (strcmp(sluice_config.REDUNDANCY, "partner") == 0 || strcmp(sluice_config.REDUNDANCY, "xor") == 0);
}

/* Adds one to the tally of (key, version); returns the new count. */
static int tally_add(struct tally **list, const char *key, uint64_t version)
{
    for (struct tally *t = *list; t; t = t->next)
        if (t->version == version && strcmp(t->key, key) == 0)
            return ++t->count;
    struct tally *t = calloc(1, sizeof *t);
    if (!t)
        return 0;
    snprintf(t->key, sizeof t->key, "%s", key);
    t->version = version;
    t->count = 1;
    t->next = *list;
    *list = t;
    return 1;
}

/* Drops the tallies of key up to version upto; returns how many. */
static int tally_drop(struct tally **list, const char *key, uint64_t upto)
{
    int n = 0;
    for (struct tally **pp = list; *pp;) {
        struct tally *t = *pp;
        if (t->version <= upto && strcmp(t->key, key) == 0) {
            *pp = t->next;
            free(t);
            n++;
        } else {
            pp = &t->next;
        }
    }
    return n;
}

/* While a version this node encodes awaits protection, the thread polls MPI without sleeping
 * (MPI-busy mode, bounded by its window): the partner's first piece, the answers and rank 0's
 * notices each come within milliseconds, and each waited out a back-off sleep of up to 2 ms;
 * on 8 nodes of 16 idle cores those hops were half of a 16 MiB version's 45 ms until protected
 * (docs/REDUNDANCY.md). */
static void pending_add(const char *key, uint64_t version)
{
    if (tally_add(&pending, key, version) == 1) {
        __atomic_add_fetch(&pending_n, 1, __ATOMIC_RELEASE);
        sluice_progress_mpi_busy(1);
    }
}

static void pending_drop(const char *key, uint64_t upto)
{
    int n = tally_drop(&pending, key, upto);
    if (n) {
        __atomic_sub_fetch(&pending_n, n, __ATOMIC_RELEASE);
        sluice_progress_mpi_busy(-n);
    }
}

void commit_red_recorded(const char *key, uint64_t version, int nprocs)
{
    const struct red_nodes *n;
    if (!enabled(&n))
        return;
    struct cmsg m;
    cmsg_init(&m, MSG_RED_RECORDED);
    cmsg_put_str(&m, key);
    cmsg_put_u64(&m, version);
    cmsg_put_u32(&m, (uint32_t)nprocs);
    commit_send(n->leader[n->mine], &m);
}

/* ---- the leader's stream ------------------------------------------------------------------- */

static void out_free(struct out_stream *s)
{
    __atomic_sub_fetch(&outs_active, 1, __ATOMIC_RELEASE);
    sluice_progress_mpi_busy(-1);
    sluice_red_stream_close(&s->st);
    free(s);
}

/* The node's part: per rank of the node (ascending), its record and the staging files it names. */
static int list_part(struct out_stream *s, const struct red_nodes *n, int nprocs)
{
    const char *dir = sluice_stage_dir();
    struct sluice_red_header *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->version = s->version;
    h->nprocs = nprocs;
    memcpy(h->host, n->host[n->mine], 17);
    snprintf(h->key, sizeof h->key, "%s", s->key);
    for (int r = 0; r < n->size; r++)
        if (n->node_of[r] == n->mine && h->nranks < SLUICE_RED_MAX_RANKS)
            h->ranks[h->nranks++] = r;
    if (!dir) {
        free(h);
        return -ENOENT;
    }
    return sluice_red_stream_open(&s->st, dir, h);
}

static void piece_head(struct cmsg *m, const struct out_stream *s)
{
    cmsg_init(m, MSG_RED_PIECE);
    cmsg_put_str(m, s->key);
    cmsg_put_u64(m, s->version);
}

/* The partner drops what it holds of the copy (never answered). */
static void send_abort(struct out_stream *s)
{
    struct cmsg m;
    piece_head(&m, s);
    cmsg_put_bytes(&m, "", 0);
    cmsg_put_u32(&m, PIECE_ABORT);
    commit_send(s->dst, &m);
    s->phase = 5;
}

/* I/O thread: the stream's next piece, SLUICE_RED_FILL_BUF of it read straight into the message. */
static void fill_run(struct sluice_io_task *t)
{
    struct fill *f = (struct fill *)t;
    struct out_stream *s = f->s;
    if (s->st.phase >= 4) {
        f->len = 0; /* queued ahead of the piece that turned out last */
        return;
    }
    piece_head(&f->m, s);
    unsigned char *p = cmsg_bytes_begin(&f->m, SLUICE_RED_FILL_BUF);
    long len = p ? sluice_red_stream_fill(&s->st, p, SLUICE_RED_FILL_BUF) : -ENOMEM;
    f->len = len == 0 ? -EMSGSIZE : len; /* 0 before the end: a piece did not fit */
    if (len > 0) {
        cmsg_bytes_end(&f->m, (uint32_t)len);
        f->last = s->st.phase == 4;
    }
}

/* Queues reads of pieces until RED_WINDOW are read or unanswered (bounded memory). */
static void pump(struct out_stream *s)
{
    while (s->phase < 4 && s->inflight + s->fills.n < RED_WINDOW) {
        struct fill *f = calloc(1, sizeof *f);
        if (!f) {
            if (s->inflight + s->fills.n == 0)
                send_abort(s); /* nothing will call pump again */
            return;
        }
        f->s = s;
        f->io.run = fill_run;
        sluice_io_fifo_submit(&s->fills, SLUICE_IO_OUT, &f->io);
    }
}

/* Sends the pieces read, in order; an error aborts the stream. */
static void send_filled(struct out_stream *s)
{
    struct fill *f;
    while ((f = (struct fill *)sluice_io_fifo_take(&s->fills)) != NULL) {
        if (s->phase < 4 && f->len < 0) {
            sluice_log_warn("checkpoint %s version %llu: not protected: this node's part changed while it "
                            "was encoded (%s); it stays staged",
                            s->key, (unsigned long long)s->version,
                            f->len == -EMSGSIZE ? "a piece did not fit" : strerror((int)-f->len));
            send_abort(s);
        } else if (s->phase < 4 && f->len > 0) {
            if (f->last)
                s->phase = 4;
            cmsg_put_u32(&f->m, (s->sent_first ? 0 : PIECE_FIRST) | (f->last ? PIECE_LAST : 0));
            s->sent_first = 1;
            commit_send(s->dst, &f->m);
            s->inflight++;
            s->bytes += (uint64_t)f->len;
        }
        cmsg_free(&f->m);
        free(f);
    }
}

/* The stream is over (sent and answered, or aborted) and nothing of it is left on the I/O
 * thread. */
static int out_over(const struct out_stream *s)
{
    return s->inflight == 0 && s->fills.n == 0 && s->phase >= 4;
}

/* Frees the stream at *pp once it is over, unlinking it; 1 if it did. */
static int out_reap(struct out_stream **pp)
{
    struct out_stream *s = *pp;
    if (!out_over(s))
        return 0;
    *pp = s->next;
    out_free(s);
    return 1;
}

static void start_stream(const struct red_nodes *n, const char *key, uint64_t version, int nprocs)
{
    struct out_stream *s = calloc(1, sizeof *s);
    if (!s)
        return;
    __atomic_add_fetch(&outs_active, 1, __ATOMIC_RELEASE);
    /* Its pieces move only while this end calls MPI too: a receiver's MPI_Mrecv spun 25-240 ms
     * per 256 KiB piece while this thread slept between polls (docs/REDUNDANCY.md). */
    sluice_progress_mpi_busy(1);
    snprintf(s->key, sizeof s->key, "%s", key);
    s->version = version;
    s->dst = n->leader[(n->mine + 1) % n->nnodes];
    s->st.fd = -1;
    int rc = list_part(s, n, nprocs);
    if (rc) {
        sluice_log_warn("checkpoint %s version %llu: not protected: this node's part could not be listed "
                        "(%s); it stays staged",
                        key, (unsigned long long)version, strerror(-rc));
        out_free(s);
        return;
    }
    s->next = outs;
    outs = s;
    pump(s);
    out_reap(&outs); /* aborted before any piece was read */
}

static void on_recorded(struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    int nprocs = (int)cmsg_get_u32(m);
    const struct red_nodes *n;
    if (m->bad || !enabled(&n))
        return;
    if (tally_add(&recorded, key, version) == n->nranks[n->mine]) {
        tally_drop(&recorded, key, version);
        pending_add(key, version);
        if (strcmp(sluice_config.REDUNDANCY, "xor") == 0)
            red_xor_start(n, key, version, nprocs);
        else
            start_stream(n, key, version, nprocs);
    }
}

static void on_ack(struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    int status = (int)cmsg_get_u32(m);
    for (struct out_stream **pp = &outs; !m->bad && *pp; pp = &(*pp)->next) {
        struct out_stream *s = *pp;
        if (s->version != version || strcmp(s->key, key) != 0)
            continue;
        s->inflight--;
        if (status && s->phase < 4) {
            sluice_log_warn("checkpoint %s version %llu: not protected: the partner node could not store "
                            "this node's part (%s)",
                            key, (unsigned long long)version, strerror(status));
            send_abort(s);
        }
        if (s->phase < 4)
            pump(s);
        out_reap(pp);
        return;
    }
}

/* ---- the partner's side -------------------------------------------------------------------- */

static void in_close(struct in_stream **pp, int keep)
{
    struct in_stream *s = *pp;
    if (s->fd >= 0 && SLUICE_REAL(close)(s->fd) != 0 && !s->err)
        s->err = errno;
    if (keep && !s->err && SLUICE_REAL(rename)(s->tmp, s->path) != 0)
        s->err = errno;
    if (!keep || s->err)
        SLUICE_REAL(unlink)(s->tmp);
    *pp = s->next;
    free(s);
}

static void send_ack(int dst, const char *key, uint64_t version, int status)
{
    struct cmsg a;
    cmsg_init(&a, MSG_RED_ACK);
    cmsg_put_str(&a, key);
    cmsg_put_u64(&a, version);
    cmsg_put_u32(&a, (uint32_t)status);
    commit_send(dst, &a);
}

static struct in_stream *in_open(const struct red_nodes *n, int src, const char *key, uint64_t version)
{
    struct in_stream *s = calloc(1, sizeof *s);
    const char *dir = sluice_stage_dir();
    if (!s)
        return NULL;
    s->src = src;
    s->version = version;
    s->t0 = sluice_now_ns();
    s->fd = -1;
    snprintf(s->key, sizeof s->key, "%s", key);
    if (!dir ||
        sluice_red_copy_path(dir, key, version, n->host[n->node_of[src]], s->path, sizeof s->path) != 0)
        s->err = ENAMETOOLONG;
    if (!s->err)
        s->err = sluice_red_tmp_open(s->path, s->tmp, sizeof s->tmp, &s->fd);
    s->werr = s->err; /* before any piece is queued: the I/O thread skips what cannot be stored */
    s->next = ins;
    ins = s;
    return s;
}

void commit_red_stored(const struct red_nodes *n, const char *key, uint64_t version, uint64_t bytes,
                       uint64_t t0)
{
    const char *dir = sluice_stage_dir();
    if (sluice_trace_active()) {
        uint64_t now = sluice_now_ns();
        sluice_trace_record(SLUICE_EV_CKPT_RED_STORED, 0, t0, now > t0 ? now - t0 : 0,
                            sluice_trace_string(key), version, bytes);
    }
    /* Copies of versions no kept version needs go (as the staged copies do, SLUICE_KEEP). */
    if (dir && version > sluice_config.KEEP)
        sluice_red_remove(dir, key, version - sluice_config.KEEP);
    struct cmsg m;
    cmsg_init(&m, MSG_RED_STORED);
    cmsg_put_str(&m, key);
    cmsg_put_u64(&m, version);
    commit_send(n->leader[0], &m);
}

/* I/O thread: the piece goes to the copy's temporary file (after the stream's earlier ones). */
static void write_run(struct sluice_io_task *t)
{
    struct wpiece *w = (struct wpiece *)t;
    struct in_stream *s = w->s;
    for (size_t off = 0; !s->werr && off < w->len;) {
        ssize_t k = SLUICE_REAL(write)(s->fd, w->p + off, w->len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            s->werr = k < 0 ? errno : EIO;
        else
            off += (size_t)k;
    }
    w->err = s->werr;
}

static void on_piece(int src, struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    uint32_t len = 0;
    const unsigned char *p = cmsg_get_bytes(m, &len);
    uint32_t flags = cmsg_get_u32(m);
    const struct red_nodes *n = red_nodes();
    if (m->bad || !n)
        return;
    struct in_stream **pp = &ins;
    while (*pp && ((*pp)->src != src || (*pp)->version != version || strcmp((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    if (!*pp && commit_red_drained_covers(key, version)) {
        if (!(flags & PIECE_ABORT))
            send_ack(src, key, version, 0); /* durable already: nothing of it is kept */
        return;
    }
    if (flags & PIECE_ABORT) {
        if (*pp && (*pp)->w.n)
            (*pp)->aborted = 1; /* dropped once its queued pieces are written (commit_red_poll) */
        else if (*pp)
            in_close(pp, 0);
        return;
    }
    if (!*pp && (flags & PIECE_FIRST) && in_open(n, src, key, version))
        pp = &ins;
    struct in_stream *s = *pp;
    if (!s)
        return; /* the rest of a stream this node failed to open: answered at its first piece */
    struct wpiece *w = calloc(1, sizeof *w);
    if (!w) /* as the transport does for a message's few bytes */
        sluice_fatal(1, "checkpoint commit: out of memory receiving a redundancy piece");
    w->s = s;
    w->m = *m; /* the piece keeps the received bytes (p points into them) */
    memset(m, 0, sizeof *m);
    w->p = p;
    w->len = len;
    w->flags = flags;
    w->io.run = write_run;
    __atomic_add_fetch(&ins_writing, 1, __ATOMIC_RELEASE);
    sluice_io_fifo_submit(&s->w, SLUICE_IO_IN, &w->io);
}

/* The pieces written: answered in order; a copy whose last piece is written is renamed into
 * place and reported stored. */
static int in_poll(void)
{
    const struct red_nodes *n = red_nodes();
    int did = 0;
    for (struct in_stream **pp = &ins; *pp;) {
        struct in_stream *s = *pp;
        int closed = 0;
        struct wpiece *w;
        while ((w = (struct wpiece *)sluice_io_fifo_take(&s->w)) != NULL) {
            __atomic_sub_fetch(&ins_writing, 1, __ATOMIC_RELEASE);
            s->bytes += w->len;
            if (w->err && !s->err)
                s->err = w->err;
            int err = s->err, src = s->src;
            uint64_t version = s->version, bytes = s->bytes, t0 = s->t0;
            char key[PATH_MAX];
            snprintf(key, sizeof key, "%s", s->key);
            uint32_t flags = w->flags;
            cmsg_free(&w->m);
            free(w);
            did++;
            if ((flags & PIECE_LAST) && !s->aborted) {
                int keep = !commit_red_drained_covers(key, version);
                in_close(pp, keep);
                closed = 1;
                if (!err && keep && n)
                    commit_red_stored(n, key, version, bytes, t0);
            }
            send_ack(src, key, version, err); /* every piece: the sender counts them, aborted or not */
            if (closed)
                break;
        }
        if (!closed && s->aborted && !s->w.n) {
            in_close(pp, 0);
            closed = 1;
        }
        if (!closed)
            pp = &s->next;
    }
    return did;
}

int commit_red_poll(void)
{
    int did = in_poll() + red_xor_poll();
    for (struct out_stream **pp = &outs; *pp;) {
        struct out_stream *s = *pp;
        did += s->fills.n != 0;
        send_filled(s);
        if (s->phase < 4)
            pump(s);
        if (!out_reap(pp))
            pp = &s->next;
    }
    return did;
}

/* ---- protection ---------------------------------------------------------------------------- */

static void on_stored(struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    const struct red_nodes *n = red_nodes();
    if (m->bad || !n || tally_add(&stored, key, version) != n->nnodes)
        return;
    tally_drop(&stored, key, version);
    for (int k = 0; k < n->nnodes; k++) {
        struct cmsg p;
        cmsg_init(&p, MSG_RED_PROTECTED);
        cmsg_put_str(&p, key);
        cmsg_put_u64(&p, version);
        cmsg_put_u32(&p, (uint32_t)n->nnodes);
        commit_send(n->leader[k], &p);
    }
}

static void on_protected(struct cmsg *m)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(m));
    uint64_t version = cmsg_get_u64(m);
    int nodes = (int)cmsg_get_u32(m);
    const char *dir = sluice_stage_dir();
    if (m->bad || !dir)
        return;
    pending_drop(key, version); /* (an older version never protected is past waiting for) */
    if (commit_red_drained_covers(key, version))
        return; /* durable already: its copies are gone, a mark would stay behind */
    int rc = sluice_red_mark_write(dir, key, version, sluice_config.REDUNDANCY, nodes);
    if (rc)
        sluice_log_warn("checkpoint %s version %llu: protection mark not written (%s)", key,
                        (unsigned long long)version, strerror(-rc));
    else if (sluice_trace_active()) {
        sluice_trace_instant(SLUICE_EV_CKPT_LEVEL, sluice_trace_string(key), version, SLUICE_LEVEL_PROTECTED);
        sluice_trace_instant(SLUICE_EV_CKPT_PROTECTED, sluice_trace_string(key), version, (uint64_t)nodes);
    }
}

int commit_red_drained_covers(const char *key, uint64_t version)
{
    for (struct tally *t = drained; t; t = t->next)
        if (strcmp(t->key, key) == 0)
            return version <= t->version;
    return 0;
}

void commit_red_drained(const char *key, uint64_t version)
{
    struct tally *t = drained;
    while (t && strcmp(t->key, key) != 0)
        t = t->next;
    if (!t && (t = calloc(1, sizeof *t)) != NULL) {
        snprintf(t->key, sizeof t->key, "%s", key);
        t->next = drained;
        drained = t;
    }
    if (t && version > t->version)
        t->version = version;
    const struct red_nodes *n = red_nodes();
    const char *dir = sluice_stage_dir();
    if (n && dir && n->leader[n->mine] == n->rank)
        sluice_red_remove(dir, key, version);
    tally_drop(&stored, key, version);
    pending_drop(key, version);
    red_xor_drained(key, version);
}

static void red_handle(int src, uint32_t type, struct cmsg *m)
{
    switch (type) {
    case MSG_RED_RECORDED:
        on_recorded(m);
        break;
    case MSG_RED_PIECE:
        on_piece(src, m);
        break;
    case MSG_RED_ACK:
        on_ack(m);
        break;
    case MSG_RED_STORED:
        on_stored(m);
        break;
    case MSG_RED_PROTECTED:
        on_protected(m);
        break;
    default:
        break;
    }
}

void commit_red_handlers(void)
{
    static const uint32_t types[] = {MSG_RED_RECORDED, MSG_RED_PIECE, MSG_RED_ACK, MSG_RED_STORED,
                                     MSG_RED_PROTECTED};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        commit_transport_on(types[i], red_handle);
    red_xor_handlers();
}
