/* SPDX-License-Identifier: MIT */
/* Two-phase commit, executor: runs one rank's part of a two-phase plan on the progress thread.
 *
 *   writer      sends the pieces of its staged members, round by round, to the aggregator of
 *               the pieces' domain (MPI_Isend on sluice's communicator, one tag per commit),
 *               straight from the mapped staging file, one message per (round, aggregator)
 *               described by a datatype of the pieces' addresses (twophase_msg.h): at most two
 *               such messages are in flight (when a file cannot be mapped its pieces are read
 *               into a batch buffer: at most two round buffers);
 *   aggregator  posts one receive per writer of a round, whose datatype puts each piece straight
 *               at its offset in a round-sized buffer (no copy), zero-fills padding, and writes
 *               the round's requests: whole
 *               stripes except at the ends of its domain. Two buffers: round r+1 is received
 *               while round r is written, by the I/O thread (below). Its own pieces
 *               (mapped) are no messages: each request is written by pwritev from the round
 *               buffer and the staging mappings together, so the bytes an aggregator staged
 *               itself are copied once, into the file, as a program's own write would be.
 *   shared      a writer of the aggregator's own node sends no data: told by a GO that the
 *               round's slot is free, it copies its pieces into the aggregator's round buffer,
 *               a file both map, and sends an empty message (twophase_shm.h).
 *   direct      members the planner leaves direct are not in the share: their node's writer
 *               copies them (direct_write.c).
 *
 * Every rank that takes part answers the home with one MSG_WRITTEN carrying the CRC32C of its
 * own members (combined from the pieces' CRCs, which are computed as the pieces are read, in
 * whatever order the rounds take them), and for a set laid out as an array the CRC32C of each
 * chunk of them, from the same staged bytes (put_own_chunks). Nothing here blocks on another rank: jobs
 * advance only through MPI_Test*, so commits of several sets, with different homes and aggregators, can be in
 * flight at once without deadlock. MPI's non-overtaking rule keeps the pieces between one writer and one
 * aggregator in order, which is the order both sides derive from the plan. */
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/io_worker.h"
#include "ckpt/commit/twophase_msg.h"
#include "ckpt/commit/twophase_part.h"
#include "ckpt/commit/twophase_shm.h"
#include "mpi/tags.h"

#include "ckpt/container/container.h"
#include "ckpt/twophase/planner_twophase.h"
#include "common/full_io.h"
#include "common/hugebuf.h"
#include "common/log.h"
#include "common/real.h"
#include "mpi/roles.h"
#include "progress/progress.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct send_slot {
    unsigned char *buf;
    uint64_t len; /* capacity of buf */
    MPI_Request *reqs;
    int nreq;
    int active;
    /* A batch for an aggregator of this node waits for its GO (twophase_shm.h) holding its
     * pieces' addresses; seq orders the batches that wait. */
    int wait_go;
    uint64_t seq;
    MPI_Request go_req;
    unsigned char go_in[COMMIT_TP_GO_MAX];
    uint32_t round, dom;
    unsigned char **ptr;
    int *plen;
    size_t nsend, first; /* its pieces: mine[first..], ptr[i] the i-th's bytes */
    uint64_t bytes;
};

struct tp_job;

/* The round buffers put in place on the I/O thread while the plan is cut (a few ms for two
 * rounds of several MiB in a fresh process): shared rounds (twophase_shm.h) where writers of
 * this node send to the domain, else huge-page memory (hugebuf.h). */
struct buf_task {
    struct sluice_io_task io; /* first: run() finds the task */
    struct tp_job *job;
    int slot;
};

struct agg_slot {
    struct sluice_io_task io; /* the round's write on the I/O thread (first: run() finds the slot) */
    struct tp_job *job;
    unsigned char *buf; /* the round buffer, cap bytes, once the job's buffers came */
    size_t cap;
    struct cmsg go; /* the round's GO to the writers of this node */
    MPI_Request *go_reqs;
    int ngo;
    MPI_Request *reqs;
    int nreq, posted;
    int writing; /* handed to the I/O thread; io.done once the round is on its way to the disk */
    uint32_t round;
    size_t pbeg, pend;   /* the round's pieces in plan.pieces */
    size_t *msg_first;   /* per request: the first piece of its message (its sender) */
    uint64_t *msg_bytes; /* per request: its bytes */
};

struct tp_job {
    uint32_t id;
    int home, tag;
    char tmp[PATH_MAX];
    struct commit_tp_member *m;
    size_t n;
    uint64_t unit;
    uint32_t chunk;             /* > 0: answer my members' chunk checksums */
    struct sluice_tp_plan plan; /* this rank's share, local numbering (twophase_part.h) */
    int err;

    /* writer */
    int *fds;             /* per member: staging file of my members, else -1 */
    unsigned char **maps; /* per member: the staging file mapped read-only, or NULL */
    uint32_t *piece_crc;  /* per plan piece (mine only) */
    size_t *mine;         /* my pieces, by (round, domain, offset) */
    size_t nmine, next_mine;
    struct send_slot ss[2];
    uint64_t batches;               /* batches made so far (their seq) */
    struct commit_tp_shm *peer_shm; /* per plan domain: its aggregator's shared rounds, mapped */
    unsigned char *peer_failed;     /* per plan domain: they could not be mapped: messages */
    int *peers;                     /* ranks of this node I exchange pieces with, ascending */
    size_t npeers;

    /* aggregator */
    long dom;
    int out;
    int *slot_of;  /* per rank: its place among the senders to my domain (ascending), or -1 */
    size_t nslots; /* those senders */
    struct agg_slot as[2];
    struct buf_task get[2]; /* the slots' buffers */
    int asked;              /* get submitted */
    int shared;             /* writers of this node send here: shared rounds wanted */
    struct commit_tp_shm shm;
    uint32_t next_post, next_write, next_done;
    size_t post_cursor, req_cursor;
    int werr; /* the write-behind thread's first error (read after the last round is done) */

    uint64_t mem, peak_mem;
    struct tp_job *next;
};

static struct tp_job *jobs; /* progress thread only */
static int poller_id;

static void mem_add(struct tp_job *j, int64_t d)
{
    j->mem += (uint64_t)d;
    if (j->mem > j->peak_mem)
        j->peak_mem = j->mem;
}

/* One tag per (home, commit) so that concurrent commits never take each other's pieces; the
 * range is fixed (mpi/tags.def), below the smallest MPI_TAG_UB the standard allows. */
static int job_tag(int home, uint32_t id)
{
    uint64_t range = SLUICE_TAG_TWOPHASE_COUNT;
    return SLUICE_TAG_TWOPHASE + (int)(((uint64_t)id * (uint64_t)commit_g.size + (uint64_t)home) % range);
}

/* The tag of the job's GOs (twophase_shm.h): the same place in a range of their own. */
static int go_tag(const struct tp_job *j)
{
    return SLUICE_TAG_TWOPHASE_GO + (j->tag - SLUICE_TAG_TWOPHASE);
}

/* Whether slot s's buffer lies in the shared rounds. */
static int in_shm(const struct tp_job *j, const struct agg_slot *s)
{
    return j->shm.map && s->buf >= j->shm.map && s->buf < j->shm.map + j->shm.len;
}

static int is_peer(const struct tp_job *j, int rank)
{
    size_t lo = 0, hi = j->npeers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->peers[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < j->npeers && j->peers[lo] == rank;
}

static int by_round(const void *x, const void *y, void *arg)
{
    const struct sluice_tp_plan *p = arg;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    if (p->pieces[a].round != p->pieces[b].round)
        return p->pieces[a].round < p->pieces[b].round ? -1 : 1;
    return (a > b) - (a < b); /* plan order within a round: domain, then offset */
}

/* 1 when every request completed (completed ones become MPI_REQUEST_NULL). */
static int test_all(MPI_Request *r, int n)
{
    for (int i = 0; i < n; i++) {
        if (r[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return 0;
    }
    return 1;
}

/* ---- writer ---------------------------------------------------------------------------------- */

/* Packs and sends my next batch from slot s: my pieces for one aggregator in one round, so a
 * batch is at most one round buffer and a writer holds at most two of them. */
/* A piece this rank staged for its own domain, mapped: written from the mapping by the
 * aggregator side (write_round), never sent. Both sides of the process decide alike. */
static int local_piece(const struct tp_job *j, const struct sluice_tp_piece *pc)
{
    return j->dom >= 0 && pc->src == commit_g.rank && pc->domain == (uint32_t)j->dom &&
           pc->member != COMMIT_TP_NOT_MINE && j->maps[pc->member] != NULL;
}

/* The trace counts a batch as one message, also when it stays in this process or goes
 * through a shared round. */
static void trace_batch(const struct tp_job *j, uint64_t t_send, int to, uint64_t bytes, uint32_t r)
{
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_COMMIT_SHUFFLE, 0, t_send, 0, (uint64_t)to, bytes,
                            (uint64_t)(uint32_t)j->tag << 32 | r);
}

static void send_message(struct tp_job *j, struct send_slot *s, int to, uint32_t r, unsigned char **ptr,
                         int *len, size_t nsend, uint64_t bytes);

static void send_batch(struct tp_job *j, struct send_slot *s)
{
    size_t b = j->next_mine, e = b;
    uint64_t total = 0;
    uint32_t r = j->plan.pieces[j->mine[b]].round, d = j->plan.pieces[j->mine[b]].domain;
    while (e < j->nmine && j->plan.pieces[j->mine[e]].round == r && j->plan.pieces[j->mine[e]].domain == d)
        total += j->plan.pieces[j->mine[e++]].size;
    j->next_mine = e;
    s->nreq = 0;
    s->first = b;
    if (e == b)
        return;
    /* Pieces of mapped staging files are sent from the mapping, without a copy. */
    for (size_t k = b; k < e; k++)
        if (j->maps[j->plan.pieces[j->mine[k]].member])
            total -= j->plan.pieces[j->mine[k]].size;
    /* The slot's buffer is kept from batch to batch (grown when needed): a fresh 16 MiB
     * allocation per batch would be a fresh mapping, faulted in page by page. */
    if (total > s->len) {
        unsigned char *nb = realloc(s->buf, total);
        if (!nb)
            sluice_fatal(1, "checkpoint commit: out of memory for %llu bytes of shuffle buffer",
                         (unsigned long long)total);
        mem_add(j, (int64_t)(total - s->len));
        s->buf = nb;
        s->len = total;
    }
    /* One message for the whole batch (twophase_msg.h): its pieces' spans, in plan order, the
     * order in which the aggregator lays out its receive from this rank. */
    size_t np = e - b;
    s->reqs = calloc(1, sizeof(MPI_Request));
    unsigned char **ptr = malloc(np * sizeof *ptr);
    int *len = malloc(np * sizeof *len);
    if (!s->reqs || !ptr || !len)
        sluice_fatal(1, "checkpoint commit: out of memory for send requests");
    uint64_t pos = 0, bytes = 0;
    size_t nsend = 0;
    for (size_t k = b; k < e; k++) {
        const struct sluice_tp_piece *pc = &j->plan.pieces[j->mine[k]];
        unsigned char *p;
        int rc = 0;
        if (j->maps[pc->member]) {
            p = j->maps[pc->member] + pc->member_off;
        } else {
            p = s->buf + pos;
            pos += pc->size;
            rc = j->m[pc->member].vanished
                     ? (memset(p, 0, pc->size), 0)
                     : sluice_full_pread(j->fds[pc->member], p, pc->size, pc->member_off);
        }
        if (rc) {
            /* Still send the bytes the aggregator expects; the commit fails at the home. */
            memset(p, 0, pc->size);
            if (!j->err)
                j->err = rc;
        }
        j->piece_crc[j->mine[k]] = sluice_crc32c_update(0, p, pc->size);
        bytes += pc->size;
        if (local_piece(j, pc))
            continue; /* written from its mapping by this rank's aggregator side */
        ptr[nsend] = p;
        len[nsend++] = (int)pc->size;
    }
    int to = j->plan.domains[d].aggregator;
    s->active = 1;
    if (to != commit_g.rank && is_peer(j, to)) {
        /* An aggregator of this node: wait for its GO (twophase_shm.h), keeping the addresses. */
        s->wait_go = 1;
        s->seq = j->batches++;
        s->round = r;
        s->dom = d;
        s->ptr = ptr;
        s->plen = len;
        s->nsend = nsend;
        s->bytes = bytes;
        MPI_Irecv(s->go_in, COMMIT_TP_GO_MAX, MPI_BYTE, to, go_tag(j), sluice_comm(), &s->go_req);
        return;
    }
    send_message(j, s, to, r, ptr, len, nsend, bytes);
}

/* Sends a batch's pieces (nsend of them) as one message (twophase_msg.h) and frees ptr, len. */
static void send_message(struct tp_job *j, struct send_slot *s, int to, uint32_t r, unsigned char **ptr,
                         int *len, size_t nsend, uint64_t bytes)
{
    uint64_t t_send = sluice_now_ns(); /* (the aggregator may have the message before Isend returns) */
    if (nsend > 0) {
        struct commit_tp_msg msg;
        if (commit_tp_msg_make(ptr, len, nsend, &msg))
            sluice_fatal(1, "checkpoint commit: out of memory for a shuffle message");
        MPI_Isend(msg.buf, msg.count, msg.type, to, j->tag, sluice_comm(), &s->reqs[0]);
        s->nreq = 1;
        commit_tp_msg_done(&msg);
    }
    free(ptr);
    free(len);
    trace_batch(j, t_send, to, bytes, r);
}

/* A batch whose GO came: its pieces copied to their places in the aggregator's shared round,
 * then an empty message says they are there; where the GO names no file, or the file cannot
 * be mapped, the message as for any aggregator. */
static void deliver(struct tp_job *j, struct send_slot *s, int n)
{
    const struct sluice_tp_domain *dm = &j->plan.domains[s->dom];
    struct commit_tp_go g;
    if (commit_tp_go_decode(s->go_in, n, &g) != 0 || g.round != s->round)
        sluice_fatal(1, "checkpoint commit: rank %d sent a malformed GO for round %u of commit %u",
                     dm->aggregator, s->round, j->id);
    s->wait_go = 0;
    struct commit_tp_shm *m = &j->peer_shm[s->dom];
    if (g.path[0] && !j->peer_failed[s->dom] && !m->map && commit_tp_shm_open(m, g.path, g.len) != 0)
        j->peer_failed[s->dom] = 1;
    uint64_t wb = dm->base + (uint64_t)s->round * j->plan.round_size;
    int fits = g.path[0] && m->map != NULL;
    for (size_t i = 0; fits && i < s->nsend; i++) {
        const struct sluice_tp_piece *pc = &j->plan.pieces[j->mine[s->first + i]];
        fits = g.off + (pc->file_off - wb) + pc->size <= m->len && pc->file_off >= wb;
    }
    if (!fits) {
        send_message(j, s, dm->aggregator, s->round, s->ptr, s->plen, s->nsend, s->bytes);
        s->ptr = NULL;
        s->plen = NULL;
        return;
    }
    uint64_t t_send = sluice_now_ns();
    for (size_t i = 0; i < s->nsend; i++) {
        const struct sluice_tp_piece *pc = &j->plan.pieces[j->mine[s->first + i]];
        memcpy(m->map + g.off + (pc->file_off - wb), s->ptr[i], (size_t)s->plen[i]);
    }
    /* The aggregator reads them once the message that follows has arrived: MPI_Isend is an
     * opaque call (no copy moves past it) and MPI's own shared-memory transports order their
     * stores before the message is visible. */
    MPI_Isend(s->go_in, 0, MPI_BYTE, dm->aggregator, j->tag, sluice_comm(), &s->reqs[0]);
    s->nreq = 1;
    free(s->ptr);
    free(s->plen);
    s->ptr = NULL;
    s->plen = NULL;
    trace_batch(j, t_send, dm->aggregator, s->bytes, s->round);
}

/* Returns things done; sets *done when every round is sent and completed. */
static int writer_poll(struct tp_job *j, int *done)
{
    int did = 0;
    /* Batches waiting for a GO go in the order they were made: two for one aggregator are
     * received there in that order. */
    for (;;) {
        struct send_slot *w = NULL;
        for (int i = 0; i < 2; i++)
            if (j->ss[i].active && j->ss[i].wait_go && (!w || j->ss[i].seq < w->seq))
                w = &j->ss[i];
        int flag = 0;
        MPI_Status st;
        if (w)
            MPI_Test(&w->go_req, &flag, &st);
        if (!flag)
            break;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        deliver(j, w, n);
        did++;
    }
    for (int i = 0; i < 2; i++) {
        struct send_slot *s = &j->ss[i];
        if (!s->active || s->wait_go)
            continue;
        if (test_all(s->reqs, s->nreq)) {
            free(s->reqs);
            s->reqs = NULL;
            s->active = 0;
            did++;
        }
    }
    while (j->next_mine < j->nmine) {
        struct send_slot *s = !j->ss[0].active ? &j->ss[0] : !j->ss[1].active ? &j->ss[1] : NULL;
        if (!s)
            break;
        send_batch(j, s);
        did++;
    }
    *done = j->next_mine >= j->nmine && !j->ss[0].active && !j->ss[1].active;
    return did;
}

/* ---- aggregator ------------------------------------------------------------------------------ */

static uint64_t window_begin(const struct tp_job *j, uint32_t r)
{
    return j->plan.domains[j->dom].base + (uint64_t)r * j->plan.round_size;
}

/* Numbers the ranks that send to my domain in increasing rank order, so that each round groups
 * its pieces by sender with a counting sort (a sort by comparison took 8,192 pieces per round of
 * 16 MiB in 512-byte rows). O(ranks + pieces), once per job. */
static int sender_slots(struct tp_job *j)
{
    j->slot_of = malloc((size_t)commit_g.size * sizeof *j->slot_of);
    if (!j->slot_of)
        return -ENOMEM;
    for (int r = 0; r < commit_g.size; r++)
        j->slot_of[r] = -1;
    for (size_t k = 0; k < j->plan.npieces; k++) {
        const struct sluice_tp_piece *pc = &j->plan.pieces[k];
        if (pc->domain == (uint32_t)j->dom && pc->src >= 0 && pc->src < commit_g.size)
            j->slot_of[pc->src] = 0;
    }
    for (int r = 0; r < commit_g.size; r++)
        if (j->slot_of[r] == 0)
            j->slot_of[r] = (int)j->nslots++ + 1; /* 0 marked, so number from 1 first */
    for (int r = 0; r < commit_g.size; r++)
        if (j->slot_of[r] > 0)
            j->slot_of[r]--;
    return 0;
}

static void send_go(struct tp_job *j, struct agg_slot *s, int to)
{
    if (s->ngo == 0) {
        struct commit_tp_go g = {.round = s->round};
        if (in_shm(j, s)) {
            g.off = (uint64_t)(s->buf - j->shm.map);
            g.len = j->shm.len;
            snprintf(g.path, sizeof g.path, "%s", j->shm.path);
        }
        commit_tp_go_encode(&g, &s->go);
        if (s->go.bad)
            sluice_fatal(1, "checkpoint commit: out of memory for a GO");
    }
    MPI_Isend(s->go.p, (int)s->go.len, MPI_BYTE, to, go_tag(j), sluice_comm(), &s->go_reqs[s->ngo++]);
}

static void post_round(struct tp_job *j, struct agg_slot *s, uint32_t r)
{
    const struct sluice_tp_plan *p = &j->plan;
    size_t b = j->post_cursor;
    while (b < p->npieces && (p->pieces[b].domain < (uint32_t)j->dom ||
                              (p->pieces[b].domain == (uint32_t)j->dom && p->pieces[b].round < r)))
        b++;
    size_t e = b;
    while (e < p->npieces && p->pieces[e].domain == (uint32_t)j->dom && p->pieces[e].round == r)
        e++;
    j->post_cursor = e;
    s->pbeg = b;
    s->pend = e;
    s->round = r;
    s->nreq = 0;
    /* One message per writer (twophase_msg.h): its pieces of the round, in plan order, each at
     * its offset in the round buffer (no copy). */
    size_t np = e - b;
    size_t *o = malloc((np ? np : 1) * sizeof *o), *at = calloc(j->nslots + 1, sizeof *at);
    unsigned char **ptr = malloc((np ? np : 1) * sizeof *ptr);
    int *len = malloc((np ? np : 1) * sizeof *len);
    s->reqs = calloc(np ? np : 1, sizeof(MPI_Request));
    s->go_reqs = calloc(np ? np : 1, sizeof(MPI_Request));
    s->ngo = 0;
    s->msg_first = malloc((np ? np : 1) * sizeof *s->msg_first);
    s->msg_bytes = malloc((np ? np : 1) * sizeof *s->msg_bytes);
    if (!o || !at || !ptr || !len || !s->reqs || !s->go_reqs || !s->msg_first || !s->msg_bytes)
        sluice_fatal(1, "checkpoint commit: out of memory for receive requests");
    /* The round's pieces grouped by sender, senders ascending, plan order within each. */
    for (size_t k = b; k < e; k++)
        at[j->slot_of[p->pieces[k].src] + 1]++;
    for (size_t x = 1; x <= j->nslots; x++)
        at[x] += at[x - 1];
    for (size_t k = b; k < e; k++)
        o[at[j->slot_of[p->pieces[k].src]]++] = k;
    free(at);
    uint64_t wb = window_begin(j, r);
    for (size_t x = 0; x < np;) {
        size_t y = x, nrecv = 0;
        uint64_t bytes = 0;
        int src = p->pieces[o[x]].src;
        for (; y < np && p->pieces[o[y]].src == src; y++) {
            const struct sluice_tp_piece *pc = &p->pieces[o[y]];
            bytes += pc->size;
            if (local_piece(j, pc))
                continue; /* written from its mapping */
            ptr[nrecv] = s->buf + (pc->file_off - wb);
            len[nrecv++] = (int)pc->size;
        }
        s->msg_first[s->nreq] = o[x];
        s->msg_bytes[s->nreq] = bytes; /* as the writer's trace counts it */
        s->reqs[s->nreq] = MPI_REQUEST_NULL;
        if (nrecv > 0) {
            struct commit_tp_msg msg;
            if (commit_tp_msg_make(ptr, len, nrecv, &msg))
                sluice_fatal(1, "checkpoint commit: out of memory for a shuffle message");
            MPI_Irecv(msg.buf, msg.count, msg.type, src, j->tag, sluice_comm(), &s->reqs[s->nreq]);
            commit_tp_msg_done(&msg);
            /* A writer of this node copies its pieces here itself once told (twophase_shm.h);
             * its message is then empty, which the receive takes as well. */
            if (is_peer(j, src))
                send_go(j, s, src);
        }
        s->nreq++;
        x = y;
    }
    free(o);
    free(ptr);
    free(len);
    s->posted = 1;
}

/* One request of a round as iovecs: the round buffer (others' pieces, padding) and the staging
 * mappings of this rank's own pieces. Returns their count (at most 2 x pieces + 1). */
static int request_iov(const struct tp_job *j, const struct agg_slot *s, size_t pk, uint64_t off,
                       uint64_t end, struct iovec *iov)
{
    const struct sluice_tp_plan *p = &j->plan;
    uint64_t wb = window_begin(j, s->round), cur = off;
    int n = 0;
    for (size_t k = pk; k < s->pend && p->pieces[k].file_off < end && cur < end; k++) {
        const struct sluice_tp_piece *pc = &p->pieces[k];
        if (pc->file_off + pc->size <= cur || !local_piece(j, pc))
            continue;
        uint64_t b = pc->file_off > cur ? pc->file_off : cur;
        uint64_t e = pc->file_off + pc->size < end ? pc->file_off + pc->size : end;
        if (b > cur)
            iov[n++] = (struct iovec){s->buf + (cur - wb), b - cur};
        iov[n++] = (struct iovec){j->maps[pc->member] + pc->member_off + (b - pc->file_off), e - b};
        cur = e;
    }
    if (cur < end)
        iov[n++] = (struct iovec){s->buf + (cur - wb), end - cur};
    return n;
}

static void write_round(struct tp_job *j, struct agg_slot *s)
{
    const struct sluice_tp_plan *p = &j->plan;
    uint64_t wb = window_begin(j, s->round);
    struct iovec *iov = malloc((2 * (s->pend - s->pbeg) + 1) * sizeof(*iov));
    if (!iov && !j->werr)
        j->werr = -ENOMEM;
    size_t q = j->req_cursor;
    while (q < p->nrequests &&
           (p->requests[q].domain < (uint32_t)j->dom ||
            (p->requests[q].domain == (uint32_t)j->dom && p->requests[q].round < s->round)))
        q++;
    size_t pk = s->pbeg;
    for (; q < p->nrequests && p->requests[q].domain == (uint32_t)j->dom && p->requests[q].round == s->round;
         q++) {
        const struct sluice_tp_request *rq = &p->requests[q];
        /* Padding between members inside the request reads back as zeros. */
        uint64_t cur = rq->offset, end = rq->offset + rq->size;
        while (pk < s->pend && p->pieces[pk].file_off + p->pieces[pk].size <= cur)
            pk++;
        for (size_t k = pk; k < s->pend && p->pieces[k].file_off < end; k++) {
            if (p->pieces[k].file_off > cur)
                memset(s->buf + (cur - wb), 0, p->pieces[k].file_off - cur);
            cur = p->pieces[k].file_off + p->pieces[k].size;
        }
        if (cur < end)
            memset(s->buf + (cur - wb), 0, end - cur);
        if (j->werr || j->out < 0)
            continue; /* keep receiving so that writers finish; write nothing more */
        int niov = request_iov(j, s, pk, rq->offset, end, iov);
        long w = commit_fs_pwritev_sparse(j->out, iov, niov, rq->offset, j->tmp, j->unit);
        if (w < 0) {
            j->werr = (int)w;
            continue;
        }
    }
    free(iov);
    j->req_cursor = q;
    /* Start write-back of the round now (asynchronous, Linux): the final fdatasync then waits
     * only for the last rounds instead of flushing the whole domain at once. */
    if (!j->werr && j->out >= 0) {
        uint64_t b = wb > p->domains[j->dom].begin ? wb : p->domains[j->dom].begin;
        sync_file_range(j->out, (off64_t)b, (off64_t)p->round_size, SYNC_FILE_RANGE_WRITE);
    }
}

/* ---- write-behind ------------------------------------------------------------------------------
 * Aggregators hand each received round to the process's I/O thread (io_worker.h), so that the
 * progress thread keeps driving MPI (the next round's transfer, other commits' messages) while a
 * round is being written: a long pwrite on the progress thread would stall both. Rounds are
 * written in the order they are handed over. */

static void write_behind_run(struct sluice_io_task *t)
{
    struct agg_slot *s = (struct agg_slot *)t;
    write_round(s->job, s);
}

static void write_behind(struct tp_job *j, struct agg_slot *s)
{
    s->job = j;
    s->io.run = write_behind_run;
    sluice_io_submit(SLUICE_IO_IN, &s->io);
}

/* Every piece of mine in rounds up to r has gone through send_batch (mine is in round order). */
static int mine_batched_through(const struct tp_job *j, uint32_t r)
{
    return j->next_mine >= j->nmine || j->plan.pieces[j->mine[j->next_mine]].round > r;
}

/* Slot 0's buffer, then slot 1's: shared rounds where wanted and the stage folder has room,
 * else huge-page memory. */
static void buf_get_run(struct sluice_io_task *t)
{
    struct buf_task *b = (struct buf_task *)t;
    struct tp_job *j = b->job;
    size_t cap = j->as[0].cap;
    if (b->slot == 0 && j->shared && commit_tp_shm_create(&j->shm, j->tag, 2 * cap, cap) == 0)
        j->as[0].buf = j->shm.map;
    else if (b->slot == 1 && j->shm.map && commit_tp_shm_reserve(&j->shm, cap, cap) == 0)
        j->as[1].buf = j->shm.map + cap;
    else
        j->as[b->slot].buf = sluice_hugebuf_alloc(cap);
}

/* Both slots' buffers of cap bytes, asked of the I/O thread (the lane the rounds are written
 * on, so nothing of this job is queued before them), one at a time. */
static void ask_buffers(struct tp_job *j, uint64_t cap)
{
    j->asked = 1;
    for (int i = 0; i < 2; i++) {
        j->as[i].cap = cap;
        j->get[i].job = j;
        j->get[i].slot = i;
        j->get[i].io.run = buf_get_run;
        mem_add(j, (int64_t)cap);
        sluice_io_submit(SLUICE_IO_IN, &j->get[i].io);
    }
}

/* 1 once slot i has its buffer. */
static int buffer_ready(const struct tp_job *j, int i)
{
    if (!sluice_io_done(&j->get[i].io))
        return 0;
    if (!j->as[i].buf)
        sluice_fatal(1, "checkpoint commit: out of memory for a %llu-byte round buffer",
                     (unsigned long long)j->as[i].cap);
    return 1;
}

static int aggregator_poll(struct tp_job *j, int *done)
{
    if (j->dom < 0) {
        *done = 1;
        return 0;
    }
    const struct sluice_tp_domain *d = &j->plan.domains[j->dom];
    int did = 0;
    for (;;) {
        int progressed = 0;
        /* A round on its way to the disk frees its slot. */
        if (j->next_done < j->next_write) {
            struct agg_slot *s = &j->as[j->next_done % 2];
            if (sluice_io_done(&s->io)) {
                s->io.done = s->writing = s->posted = 0;
                j->next_done++;
                progressed = 1;
            }
        }
        /* Receives for the next rounds go into free slots (round r uses slot r % 2). */
        if (j->next_post < d->nrounds) {
            struct agg_slot *s = &j->as[j->next_post % 2];
            if (!s->posted && !s->writing && buffer_ready(j, (int)(j->next_post % 2))) {
                post_round(j, s, j->next_post++);
                progressed = 1;
            }
        }
        /* A fully received round goes to the write-behind thread, once this rank's own pieces
         * of it were batched (their checksums taken and their batch traced before its
         * receipt: the trace's flows never point back in time). */
        if (j->next_write < j->next_post) {
            struct agg_slot *s = &j->as[j->next_write % 2];
            if (s->posted && !s->writing && mine_batched_through(j, s->round) && test_all(s->reqs, s->nreq) &&
                test_all(s->go_reqs, s->ngo)) {
                for (int m = 0; m < s->nreq && sluice_trace_active(); m++)
                    sluice_trace_instant(SLUICE_EV_COMMIT_SHUFFLE_RECV,
                                         (uint64_t)j->plan.pieces[s->msg_first[m]].src, s->msg_bytes[m],
                                         (uint64_t)(uint32_t)j->tag << 32 | s->round);
                free(s->reqs);
                free(s->go_reqs);
                cmsg_free(&s->go);
                free(s->msg_first);
                free(s->msg_bytes);
                s->go_reqs = NULL;
                s->ngo = 0;
                s->reqs = NULL;
                s->msg_first = NULL;
                s->msg_bytes = NULL;
                s->writing = 1;
                j->next_write++;
                write_behind(j, s);
                progressed = 1;
            }
        }
        if (!progressed)
            break;
        did++;
    }
    *done = j->next_done >= d->nrounds;
    return did;
}

/* ---- job life ---------------------------------------------------------------------------------- */

/* The data runs of one of my members, from its staging file (the index lists only those;
 * a member whose file is gone, or that cannot be told, is one dense run). */
static void put_own_runs(struct cmsg *out, const struct tp_job *j, const struct commit_tp_member *m)
{
    struct commit_run *runs = malloc(COMMIT_MAX_RUNS * sizeof *runs);
    const char *stage = commit_member_stage_path(j->home, j->id, m->seq);
    int fd = stage && runs ? commit_fs_open(stage, O_RDONLY, 0) : -1;
    uint32_t n = 0;
    if (fd >= 0) {
        n = commit_data_runs(fd, m->size, runs);
        commit_fs_close(fd);
    } else if (runs != NULL && m->size > 0) {
        runs[n++] = (struct commit_run){0, m->size};
    }
    if (runs == NULL) {
        struct commit_run dense = {0, m->size};
        commit_put_runs(out, &dense, m->size ? 1 : 0);
    } else {
        commit_put_runs(out, runs, n);
    }
    free(runs);
}

/* The CRC32C of each j->chunk bytes of my member i (format 1.3 chunk checksums), from its
 * staged bytes as its CRC is, so that they are as end-to-end as that CRC: computed where the
 * bytes were written, before the shuffle. None (the reader then verifies whole members) when
 * not asked for, when the member vanished, or when its bytes cannot be read again. */
static void put_own_chunks(struct cmsg *out, const struct tp_job *j, size_t i)
{
    const struct commit_tp_member *m = &j->m[i];
    uint64_t cs = j->chunk, n = cs && !m->vanished && m->size ? (m->size + cs - 1) / cs : 0;
    uint32_t *crc = n && n <= UINT32_MAX ? malloc(n * sizeof *crc) : NULL;
    unsigned char *buf = n && !j->maps[i] ? malloc(cs) : NULL;
    if (!crc || (!j->maps[i] && (!buf || j->fds[i] < 0)))
        n = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t len = m->size - k * cs < cs ? m->size - k * cs : cs;
        const unsigned char *p = j->maps[i] ? j->maps[i] + k * cs : buf;
        if (!j->maps[i] && sluice_full_pread(j->fds[i], buf, len, k * cs) != 0) {
            n = 0;
            break;
        }
        crc[k] = sluice_crc32c_update(0, p, len);
    }
    cmsg_put_u32(out, (uint32_t)cs);
    cmsg_put_u32(out, (uint32_t)n);
    for (uint64_t k = 0; k < n; k++)
        cmsg_put_u32(out, crc[k]);
    free(crc);
    free(buf);
}

static void job_free(struct tp_job *j)
{
    for (size_t i = 0; j->fds && i < j->n; i++)
        if (j->fds[i] >= 0)
            commit_fs_close(j->fds[i]);
    for (size_t i = 0; j->maps && i < j->n; i++)
        if (j->maps[i])
            munmap(j->maps[i], j->m[i].size);
    free(j->maps);
    /* A job with no round to receive can end before its buffers came. */
    while (j->asked && (!sluice_io_done(&j->get[0].io) || !sluice_io_done(&j->get[1].io))) {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
    unsigned char *shm = j->shm.map;
    size_t shm_len = j->shm.len;
    if (shm)
        commit_tp_shm_remove(&j->shm);
    for (size_t d = 0; j->peer_shm && d < j->plan.ndomains; d++)
        commit_tp_shm_close(&j->peer_shm[d]);
    free(j->peer_shm);
    free(j->peer_failed);
    free(j->peers);
    for (int i = 0; i < 2; i++) {
        free(j->ss[i].buf);
        free(j->ss[i].reqs);
        free(j->ss[i].ptr);
        free(j->ss[i].plen);
        free(j->as[i].go_reqs);
        cmsg_free(&j->as[i].go);
        if (!(shm && j->as[i].buf >= shm && j->as[i].buf < shm + shm_len))
            sluice_hugebuf_free(j->as[i].buf, j->as[i].cap);
        free(j->as[i].reqs);
        free(j->as[i].msg_first);
        free(j->as[i].msg_bytes);
    }
    if (j->out >= 0)
        commit_fs_close(j->out);
    sluice_tp_plan_free(&j->plan);
    free(j->fds);
    free(j->slot_of);
    free(j->piece_crc);
    free(j->mine);
    free(j->m);
    free(j);
}

/* Every piece is sent and every round written: durability, CRCs, answer. */
static void job_finish(struct tp_job *j)
{
    if (j->werr && !j->err)
        j->err = j->werr;
    /* The home's own process leaves it to the home's fsync of the version (commit_data.c). */
    if (j->out >= 0 && j->home != commit_g.rank) {
        int rc = commit_fs_fdatasync(j->out, j->tmp);
        if (rc && !j->err)
            j->err = rc;
    }
    uint32_t nmy = 0;
    for (size_t i = 0; i < j->n; i++)
        nmy += j->m[i].src == commit_g.rank;
    /* Shuffled members: the plan lists pieces in file order, so one member's pieces come in
     * member order and fold into its CRC in one pass. */
    for (size_t k = 0; k < j->plan.npieces; k++) {
        const struct sluice_tp_piece *pc = &j->plan.pieces[k];
        if (pc->src == commit_g.rank)
            j->m[pc->member].crc =
                sluice_crc32c_combine(pc->member_off ? j->m[pc->member].crc : 0, j->piece_crc[k], pc->size);
    }
    struct cmsg out;
    cmsg_init(&out, MSG_WRITTEN);
    cmsg_put_u32(&out, j->id);
    cmsg_put_u32(&out, (uint32_t)j->err);
    cmsg_put_u32(&out, j->err ? 0 : nmy);
    for (size_t i = 0; !j->err && i < j->n; i++) {
        if (j->m[i].src != commit_g.rank)
            continue;
        cmsg_put_u32(&out, (uint32_t)commit_g.rank);
        cmsg_put_u64(&out, j->m[i].seq);
        cmsg_put_u32(&out, j->m[i].crc);
        cmsg_put_u32(&out, (uint32_t)j->m[i].vanished);
        put_own_runs(&out, j, &j->m[i]);
        put_own_chunks(&out, j, i);
    }
    commit_send(j->home, &out);
    if (sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_COMMIT_MEMORY, j->peak_mem, j->plan.round_size, j->dom >= 0 ? 1 : 0);
}

static int tp_poll(void *arg)
{
    (void)arg;
    int did = 0;
    for (struct tp_job **pp = &jobs; *pp;) {
        struct tp_job *j = *pp;
        int wdone = 0, adone = 0;
        /* An aggregator's receives are posted before its own pieces are checksummed and sent:
         * the other writers' first messages can land meanwhile. */
        did += aggregator_poll(j, &adone);
        did += writer_poll(j, &wdone);
        if (wdone && adone) {
            *pp = j->next;
            job_finish(j);
            job_free(j);
            sluice_progress_mpi_busy(-1);
            did++;
            continue;
        }
        /* Waiting on MPI is not work: the progress thread backs off (and does not spin on
         * the cores the program computes on); any completion resets its back-off. */
        pp = &j->next;
    }
    return did;
}

/* Opens and maps my members' staging files (all of them shuffled: the others are written by my
 * node's writer, direct_write.c). */
static int job_prepare(struct tp_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        if (j->m[i].src != commit_g.rank || j->m[i].size == 0) {
            j->m[i].crc = 0;
            continue;
        }
        const char *stage = commit_member_stage_path(j->home, j->id, j->m[i].seq);
        if (!stage)
            return -ENOENT;
        int fd = commit_fs_open(stage, O_RDONLY, 0);
        if (fd == -ENOENT) {
            /* Unlinked by another process of this node meanwhile: the member is dropped
             * (zeros still fill its place so that the aggregator's rounds complete). */
            j->m[i].vanished = 1;
            continue;
        }
        if (fd < 0)
            return fd;
        j->fds[i] = fd;
        /* Staged bytes are final once closed (capture never touches the file again; an
         * unlink does not truncate it), so a mapping is safe; checked against the size so
         * that a shorter file (EIO) is caught by the read path instead of SIGBUS. Every byte
         * is read (checksummed, sent or written): its pages are mapped at once (MAP_POPULATE)
         * rather than by a fault per few pages inside the rounds. */
        struct stat st;
        if (SLUICE_REAL(fstat)(fd, &st) == 0 && (uint64_t)st.st_size >= j->m[i].size) {
            void *map = SLUICE_REAL(mmap)(NULL, j->m[i].size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
            if (map != MAP_FAILED)
                j->maps[i] = map;
        }
    }
    return 0;
}

/* fork: the child has no progress thread and no pollers, and the jobs (their MPI requests,
 * their ranks) belong to the parent: the child starts with none and re-registers on use. */
static void forget_jobs_in_child(void)
{
    jobs = NULL;
    poller_id = 0;
}

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, forget_jobs_in_child);
}

/* Participant: runs its share of the plan (twophase_part.h) on the progress thread and answers
 * MSG_WRITTEN. */
static void twophase_handle(int home, uint32_t type, struct cmsg *in)
{
    (void)type;
    struct tp_job *j = calloc(1, sizeof(*j));
    if (!j)
        sluice_fatal(1, "checkpoint commit: out of memory for a two-phase job");
    j->out = -1;
    j->dom = -1;
    j->home = home;
    struct commit_tp_part part;
    int rc = commit_twophase_part_decode(in, commit_g.rank, &part);
    long dom = rc == 0 ? sluice_tp_domain_of(&part.plan, commit_g.rank) : -1;
    if (rc == 0) {
        j->peers = part.peers;
        j->npeers = part.npeers; /* none (SLUICE_CB_SHARED=off at the home): messages only */
        part.peers = NULL;
        j->tag = job_tag(home, part.id);
    }
    if (dom >= 0) {
        j->shared = j->npeers > 0;
        /* A round never holds more than the domain: a small commit under a large
         * SLUICE_CB_BUFFER_SIZE does not allocate the whole buffer. */
        const struct sluice_tp_domain *d = &part.plan.domains[dom];
        ask_buffers(j, d->end - d->base < part.plan.round_size ? d->end - d->base : part.plan.round_size);
    }
    if (rc == 0)
        rc = commit_twophase_part_cut(&part);
    if (rc)
        sluice_fatal(1, "checkpoint commit: a two-phase plan from rank %d cannot be read (%s)", home,
                     strerror(-rc));
    j->id = part.id;
    snprintf(j->tmp, sizeof j->tmp, "%s", part.tmp);
    j->unit = part.unit;
    j->chunk = part.chunk;
    j->plan = part.plan;
    j->m = part.m;
    j->n = part.n;
    j->fds = malloc((j->n ? j->n : 1) * sizeof(int));
    j->maps = calloc(j->n ? j->n : 1, sizeof(*j->maps));
    rc = (j->fds && j->maps) ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < j->n; i++)
        j->fds[i] = -1;
    if (rc == 0) {
        j->peer_shm = calloc(j->plan.ndomains ? j->plan.ndomains : 1, sizeof *j->peer_shm);
        j->peer_failed = calloc(j->plan.ndomains ? j->plan.ndomains : 1, 1);
        j->piece_crc = calloc(j->plan.npieces ? j->plan.npieces : 1, sizeof(uint32_t));
        j->mine = calloc(j->plan.npieces ? j->plan.npieces : 1, sizeof(size_t));
        rc = (j->piece_crc && j->mine && j->peer_shm && j->peer_failed) ? 0 : -ENOMEM;
    }
    if (rc == 0) {
        for (size_t k = 0; k < j->plan.npieces; k++)
            if (j->plan.pieces[k].src == commit_g.rank)
                j->mine[j->nmine++] = k;
        qsort_r(j->mine, j->nmine, sizeof(size_t), by_round, &j->plan);
        j->dom = sluice_tp_domain_of(&j->plan, commit_g.rank);
        rc = job_prepare(j);
    }
    /* Also after a failure above: the rounds are still received (and dropped). */
    if (j->dom >= 0 && sender_slots(j) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0 && j->dom >= 0) {
        /* Only aggregators open the container for the shuffled data. */
        j->out = commit_fs_open(j->tmp, O_WRONLY, 0);
        if (j->out < 0) {
            rc = j->out;
            j->out = -1;
        }
    }
    if (rc) {
        /* The protocol must still complete: pieces are sent (zeros) and received (dropped),
         * so that the other ranks of this commit are not left waiting; the home sees err. */
        j->err = rc;
        if (!j->piece_crc || !j->mine || !j->peer_shm || !j->peer_failed || (j->dom >= 0 && !j->slot_of))
            sluice_fatal(1, "checkpoint commit: cannot run the two-phase step (%s)", strerror(-rc));
    }
    j->next = jobs;
    jobs = j;
    sluice_progress_mpi_busy(1); /* its pieces move only while both ends call MPI */
    if (!poller_id) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, install_fork_handler);
        poller_id = sluice_progress_add_poller_any_thread(tp_poll, NULL);
    }
    tp_poll(NULL);
}

void commit_twophase_register(void)
{
    commit_transport_on(MSG_TWOPHASE, twophase_handle);
}
