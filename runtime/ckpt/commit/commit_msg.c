/* SPDX-License-Identifier: MIT */
/* Commit engine messages and their transport.
 *
 * Every commit message travels point-to-point on sluice's own communicator with one tag, so
 * that MPI's non-overtaking rule keeps the messages of one sender to one receiver in order
 * (a CLOSED notice always arrives before the FLUSH that follows it). Application threads only
 * queue messages; the progress thread sends them (MPI_Isend), completes them, and receives with
 * matched probes and non-blocking receives (MPI_Improbe/MPI_Imrecv), handling each message once
 * it is complete and every earlier one of its sender was handled. A job of one process uses an
 * in-process loopback instead and never initializes MPI. */
#include "ckpt/commit/commit_internal.h"
#include "mpi/tags.h"

#include "common/bufpool.h"
#include "common/log.h"
#include "mpi/roles.h"
#include "progress/progress.h"
#include "trace/trace.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define COMMIT_TAG SLUICE_TAG_COMMIT /* mpi/tags.def */

/* ---- encoding ------------------------------------------------------------------------------ */

static void cmsg_reserve(struct cmsg *m, size_t more)
{
    if (m->bad || m->len + more <= m->cap)
        return;
    size_t cap = m->cap ? m->cap : 64;
    while (cap < m->len + more)
        cap *= 2;
    if (m->len + more >= SLUICE_BUFPOOL_MIN) {
        /* A redundancy piece or a large plan: from the pool; the exact size for one large put
         * (a piece read in place, cmsg_bytes_begin), else doubled. */
        size_t got = 0, need = m->len + more;
        unsigned char *p = sluice_bufpool_get(need > 2 * m->cap ? need : cap, &got);
        if (!p) {
            m->bad = 1;
            return;
        }
        if (m->len)
            memcpy(p, m->p, m->len);
        sluice_bufpool_put(m->p, m->cap);
        m->p = p;
        m->cap = got;
        return;
    }
    unsigned char *p = realloc(m->p, cap);
    if (!p) {
        m->bad = 1;
        return;
    }
    m->p = p;
    m->cap = cap;
}

static void cmsg_put(struct cmsg *m, const void *v, size_t n)
{
    cmsg_reserve(m, n);
    if (m->bad)
        return;
    memcpy(m->p + m->len, v, n);
    m->len += n;
}

void cmsg_init(struct cmsg *m, uint32_t type)
{
    memset(m, 0, sizeof(*m));
    cmsg_put_u32(m, type);
}

void cmsg_free(struct cmsg *m)
{
    sluice_bufpool_put(m->p, m->cap); /* large buffers kept for the next messages */
    memset(m, 0, sizeof(*m));
}

void cmsg_put_u32(struct cmsg *m, uint32_t v)
{
    cmsg_put(m, &v, sizeof v);
}
void cmsg_put_u64(struct cmsg *m, uint64_t v)
{
    cmsg_put(m, &v, sizeof v);
}

void cmsg_put_str(struct cmsg *m, const char *s)
{
    uint32_t n = (uint32_t)strlen(s) + 1;
    cmsg_put_u32(m, n);
    cmsg_put(m, s, n);
}

void cmsg_put_bytes(struct cmsg *m, const void *p, uint32_t n)
{
    cmsg_put_u32(m, n);
    cmsg_put(m, p, n);
}

unsigned char *cmsg_bytes_begin(struct cmsg *m, uint32_t cap)
{
    cmsg_put_u32(m, 0); /* the length, set by cmsg_bytes_end */
    cmsg_reserve(m, cap);
    return m->bad ? NULL : m->p + m->len;
}

void cmsg_bytes_end(struct cmsg *m, uint32_t n)
{
    if (m->bad)
        return;
    memcpy(m->p + m->len - sizeof n, &n, sizeof n);
    m->len += n;
}

static int cmsg_get(struct cmsg *m, void *v, size_t n)
{
    if (m->bad || m->rd + n > m->len) {
        m->bad = 1;
        memset(v, 0, n);
        return -1;
    }
    memcpy(v, m->p + m->rd, n);
    m->rd += n;
    return 0;
}

uint32_t cmsg_get_u32(struct cmsg *m)
{
    uint32_t v;
    cmsg_get(m, &v, sizeof v);
    return v;
}

uint64_t cmsg_get_u64(struct cmsg *m)
{
    uint64_t v;
    cmsg_get(m, &v, sizeof v);
    return v;
}

const char *cmsg_get_str(struct cmsg *m)
{
    uint32_t n = cmsg_get_u32(m);
    if (m->bad || n == 0 || m->rd + n > m->len || m->p[m->rd + n - 1] != '\0') {
        m->bad = 1;
        return "";
    }
    const char *s = (const char *)m->p + m->rd;
    m->rd += n;
    return s;
}

const unsigned char *cmsg_get_bytes(struct cmsg *m, uint32_t *n)
{
    *n = cmsg_get_u32(m);
    if (m->bad || m->rd + *n > m->len) {
        m->bad = 1;
        *n = 0;
        return NULL;
    }
    const unsigned char *p = m->p + m->rd;
    m->rd += *n;
    return p;
}

/* ---- transport ----------------------------------------------------------------------------- */

struct outmsg {
    int dst;
    struct cmsg m;
    MPI_Request req;
    struct outmsg *next;
};

/* Queued by any thread (under commit_lock), sent by the progress thread. */
static struct outmsg *outbox_head, *outbox_tail;
/* Progress thread only. */
static struct outmsg *inflight;
static struct outmsg *loop_head, *loop_tail;
static MPI_Comm commit_comm = MPI_COMM_NULL;
static volatile int transport_pending; /* queued + in flight, read by exit without the lock */

/* A message being received. MPICH's UCX moves a large message only while both ends call MPI: a
 * blocking MPI_Mrecv of a 1 MiB redundancy piece held the thread 20-110 ms, and the answers of
 * the pieces before it waited until the probe loop ran dry (docs/REDUNDANCY.md). So receives
 * are posted (MPI_Imrecv) and completed by later rounds, which poll without sleeping meanwhile
 * (MPI-busy mode); several move at once, and whatever else came is handled in between. */
struct inmsg {
    int src, done;
    struct cmsg m;
    MPI_Request req;
    struct inmsg *next;
};
static struct inmsg *in_head, **in_tail = &in_head; /* in the order they were matched */
static int in_busy;                                 /* 1: counted in sluice_progress_mpi_busy */
static volatile int receiving;                      /* posted, not yet handled */
/* The outbox has its own lock: senders may hold commit_lock. */
static pthread_mutex_t outbox_lock = PTHREAD_MUTEX_INITIALIZER;

void commit_send(int dst, struct cmsg *m)
{
    struct outmsg *o = calloc(1, sizeof(*o));
    if (!o || m->bad) {
        /* Out of memory for a few bytes: the commit protocol cannot go on safely. */
        sluice_fatal(1, "checkpoint commit: out of memory for a protocol message");
    }
    o->dst = dst;
    o->m = *m;
    memset(m, 0, sizeof(*m));
    pthread_mutex_lock(&outbox_lock);
    if (outbox_tail)
        outbox_tail->next = o;
    else
        outbox_head = o;
    outbox_tail = o;
    __atomic_add_fetch(&transport_pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&outbox_lock);
    if (!sluice_progress_is_self())
        sluice_progress_wake();
}

int commit_transport_busy(void)
{
    return __atomic_load_n(&transport_pending, __ATOMIC_RELAXED) != 0 ||
           __atomic_load_n(&receiving, __ATOMIC_RELAXED) != 0;
}

static commit_handler handlers[MSG_TYPES];

void commit_transport_on(uint32_t type, commit_handler fn)
{
    if (type > 0 && type < MSG_TYPES)
        __atomic_store_n(&handlers[type], fn, __ATOMIC_RELEASE);
}

static void dispatch(int src, struct cmsg *m)
{
    uint32_t type = cmsg_get_u32(m);
    commit_handler fn = type < MSG_TYPES ? __atomic_load_n(&handlers[type], __ATOMIC_ACQUIRE) : NULL;
    if (fn)
        fn(src, type, m);
    else
        sluice_log_warn("checkpoint commit: ignored a message of unknown type %u from rank %d", type, src);
}

/* Posts a receive of every message that came (MPI_Improbe/MPI_Imrecv). */
static int post_receives(void)
{
    int done = 0;
    for (;;) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, COMMIT_TAG, commit_comm, &flag, &msg, &st);
        if (!flag)
            return done;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        struct inmsg *r = calloc(1, sizeof *r);
        if (r)
            r->m.p = sluice_bufpool_get(count > 0 ? (size_t)count : 1, &r->m.cap);
        if (!r || !r->m.p)
            sluice_fatal(1, "checkpoint commit: out of memory receiving %d bytes", count);
        r->src = st.MPI_SOURCE;
        r->m.len = (size_t)count;
        MPI_Imrecv(r->m.p, count, MPI_BYTE, &msg, &r->req);
        *in_tail = r;
        in_tail = &r->next;
        __atomic_add_fetch(&receiving, 1, __ATOMIC_RELAXED);
        done++;
    }
}

/* Handles each complete message whose sender has no earlier one still moving (MPI's order of
 * one sender's messages is the protocol's: a CLOSED notice before the FLUSH after it). */
static int handle_received(void)
{
    int done = 0;
    struct inmsg **pp = &in_head;
    while (*pp) {
        struct inmsg *r = *pp;
        if (!r->done)
            MPI_Test(&r->req, &r->done, MPI_STATUS_IGNORE);
        int blocked = !r->done;
        for (struct inmsg *e = in_head; !blocked && e != r; e = e->next)
            blocked = e->src == r->src;
        if (blocked) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        sluice_trace_instant(SLUICE_EV_MSG_RECV, (uint64_t)r->src, (uint64_t)r->m.len, COMMIT_TAG);
        dispatch(r->src, &r->m);
        cmsg_free(&r->m);
        free(r);
        __atomic_sub_fetch(&receiving, 1, __ATOMIC_RELAXED);
        done++;
    }
    in_tail = pp;
    if (in_busy != (in_head != NULL)) { /* pieces moving: poll on, as a sender does */
        in_busy = in_head != NULL;
        sluice_progress_mpi_busy(in_busy ? 1 : -1);
    }
    return done;
}

/* Sends what was queued (MPI_Isend); messages to this process go to the loopback. */
static int send_queued(void)
{
    int done = 0;
    pthread_mutex_lock(&outbox_lock);
    struct outmsg *q = outbox_head;
    outbox_head = outbox_tail = NULL;
    pthread_mutex_unlock(&outbox_lock);

    while (q) {
        struct outmsg *o = q;
        q = q->next;
        o->next = NULL;
        done++;
        if (!commit_g.use_mpi || o->dst == commit_g.rank) {
            /* Messages to ourselves skip MPI; they keep their order among themselves. */
            if (loop_tail)
                loop_tail->next = o;
            else
                loop_head = o;
            loop_tail = o;
            continue;
        }
        uint64_t t_send = sluice_now_ns(); /* (the peer may have it before Isend returns) */
        int rc = MPI_Isend(o->m.p, (int)o->m.len, MPI_BYTE, o->dst, COMMIT_TAG, commit_comm, &o->req);
        if (rc != MPI_SUCCESS)
            sluice_fatal(1, "checkpoint commit: MPI_Isend to rank %d failed", o->dst);
        sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)o->dst, o->m.len, COMMIT_TAG);
        o->next = inflight;
        inflight = o;
    }
    return done;
}

int commit_transport_poll(void)
{
    int done = send_queued();

    /* Complete sends. */
    for (struct outmsg **pp = &inflight; *pp;) {
        int flag = 0;
        MPI_Test(&(*pp)->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            struct outmsg *o = *pp;
            *pp = o->next;
            cmsg_free(&o->m);
            free(o);
            __atomic_sub_fetch(&transport_pending, 1, __ATOMIC_RELAXED);
            done++;
        } else {
            pp = &(*pp)->next;
        }
    }

    /* Receive; the answers the handlers queued leave in this round, not the next. */
    if (commit_g.use_mpi) {
        done += post_receives();
        int handled = handle_received();
        done += handled;
        if (handled)
            done += send_queued();
    }

    /* Loopback: handlers may queue more self messages; they are taken on the next round. They
     * wait while a message already matched from another rank is still moving: the blocking
     * receive the posted ones replaced handled such a message before this process's own, and
     * the protocol's order relies on it (a rank that closed its member before a barrier, then
     * the home rewriting that member after it: commit_cross_ops, otrunc by rank 0). */
    if (in_head != NULL)
        return done;
    struct outmsg *l = loop_head;
    loop_head = loop_tail = NULL;
    while (l) {
        struct outmsg *o = l;
        l = l->next;
        o->m.rd = 0;
        dispatch(commit_g.rank, &o->m);
        cmsg_free(&o->m);
        free(o);
        __atomic_sub_fetch(&transport_pending, 1, __ATOMIC_RELAXED);
        done++;
    }
    return done;
}

int commit_transport_start(void)
{
    int size = sluice_launch_size();
    commit_g.use_mpi = 0;
    commit_g.rank = 0;
    commit_g.size = 1;
    if (size > 1) {
        MPI_Comm c = sluice_comm();
        if (c != MPI_COMM_NULL) {
            commit_comm = c;
            MPI_Comm_rank(c, &commit_g.rank);
            MPI_Comm_size(c, &commit_g.size);
            commit_g.use_mpi = 1;
        } else {
            /* No MPI here (e.g. a forked child): this process commits alone. */
        }
    }
    commit_g.closed_sent = calloc((size_t)commit_g.size, sizeof(uint64_t));
    return commit_g.closed_sent ? 0 : -ENOMEM;
}

void commit_transport_stop(void)
{
    /* After the exit flush nothing is queued or in flight: every request was answered. */
    commit_g.use_mpi = 0;
    commit_g.rank = 0;
    commit_g.size = 1;
    commit_comm = MPI_COMM_NULL;
}

MPI_Comm commit_transport_comm(void)
{
    return commit_comm;
}

void commit_transport_forget(void)
{
    pthread_mutex_init(&outbox_lock, NULL);
    outbox_head = outbox_tail = NULL;
    inflight = NULL;
    in_head = NULL;
    in_tail = &in_head;
    in_busy = 0;
    receiving = 0;
    loop_head = loop_tail = NULL;
    commit_comm = MPI_COMM_NULL;
    transport_pending = 0;
}
