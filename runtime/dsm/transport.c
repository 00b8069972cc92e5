/* SPDX-License-Identifier: MIT */
/* DSM messages over a duplicate of sluice's communicator: nonblocking sends (a blocked send
 * under D.lock could deadlock two ranks sending each other large chunks), a receive loop that
 * dispatches by message type, a progress poller that serves requests while the application
 * computes, and waits that poll themselves and are bounded by SLUICE_DSM_TIMEOUT.
 *
 * Promptness: a miss is a chain of hops (requester -> home -> owner -> home -> requester), and
 * each hop is served only when its receiver next polls. For SLUICE_DSM_SPIN after the last DSM
 * message a process keeps polling, yielding the core between polls: its waits do, and its
 * progress thread does through the engine's MPI-busy mode, which the poller holds while the DSM
 * is active. Past that window both fall back to micro-sleeps, so an idle process costs nothing.
 * (A blocking MPI_Probe would serve at once, but MPICH and Open MPI spin inside it, forever.) */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "dsm/dsm.h"
#include "progress/backoff.h"
#include "progress/progress.h"
#include "trace/trace.h"

/* Holds or gives back the progress engine's MPI-busy mode (caller holds D.lock). */
static void hold_busy(bool on)
{
    if (on == D.busy)
        return;
    D.busy = on;
    sluice_progress_mpi_busy(on ? 1 : -1);
}

/* A DSM message went out or came in: the progress thread polls for the next one until the DSM
 * has been quiet for SLUICE_DSM_SPIN (the poller then gives the mode back), whether or not a
 * thread of the application waits in the DSM meanwhile (which polls itself; the poller then
 * only checks the time): giving the mode back at each wait and taking it again after cost a
 * wake-up of the progress thread (a futex call) per miss, and the woken thread took D.lock just
 * when the application needed it for the RELEASE. */
static void activity(void)
{
    D.last_msg_ns = sluice_now_ns();
    if (D.spin_ns > 0)
        hold_busy(true);
}

int dsm_home_of(unsigned long addr)
{
    return D.servers[addr % (unsigned long)D.nservers];
}

void dsm_trace_send(int dst, size_t bytes, uint64_t t_ns)
{
    sluice_trace_record(SLUICE_EV_MPI_SEND, 0, t_ns, 0, (uint64_t)dst, bytes, DSM_TAG);
}

/* Completed sends are freed; returns how many completed. */
static int reap_sends(void)
{
    int n = 0;
    struct dsm_sendreq **pp = &D.sends;
    while (*pp) {
        struct dsm_sendreq *s = *pp;
        int flag = 0;
        PMPI_Test(&s->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            *pp = s->next;
            free(s->buf);
            free(s);
            n++;
        } else {
            pp = &s->next;
        }
    }
    return n;
}

/* A message to this rank itself (its own home, its own barrier entry) skips MPI: it waits in a
 * FIFO that dsm_poll empties first, so it is handled where an MPI message would be (never inside
 * the send) and in the order sent, which is all that MPI's per-pair order gave it. */
static int send_self(const struct dsm_msg *h, const void *payload, size_t len)
{
    struct dsm_selfmsg *q = malloc(sizeof *q + sizeof *h + len);
    if (!q)
        return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory queueing %zu bytes for this rank", len);
    q->len = sizeof *h + len;
    q->next = NULL;
    memcpy(q->buf, h, sizeof *h);
    if (len)
        memcpy(q->buf + sizeof *h, payload, len);
    if (D.self_tail)
        D.self_tail->next = q;
    else
        D.self_head = q;
    D.self_tail = q;
    return 0;
}

int dsm_send(int dst, const struct dsm_msg *m, const void *payload, size_t len)
{
    struct dsm_msg h = *m;
    h.src = D.rank;
    if (dst == D.rank)
        return send_self(&h, payload, len);
    if (D.peer_send) {
        unsigned char *b = malloc(sizeof h + len);
        if (!b)
            return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory sending %zu bytes to rank %d", len, dst);
        memcpy(b, &h, sizeof h);
        if (len)
            memcpy(b + sizeof h, payload, len);
        int rc = D.peer_send(dst, b, sizeof h + len);
        free(b);
        return rc;
    }
    struct dsm_sendreq *s = malloc(sizeof *s);
    unsigned char *buf = malloc(sizeof *m + len);
    if (!s || !buf) {
        free(s);
        free(buf);
        return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory sending %zu bytes to rank %d", len, dst);
    }
    memcpy(buf, &h, sizeof h);
    if (len)
        memcpy(buf + sizeof h, payload, len);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    uint64_t t_send = sluice_now_ns(); /* the receiver may see the message before Isend returns */
    int rc = PMPI_Isend(buf, (int)(sizeof h + len), MPI_BYTE, dst, DSM_TAG, D.comm, &s->req);
    sluice_time_leave(prev);
    if (rc != MPI_SUCCESS) {
        free(s);
        free(buf);
        return dsm_fail(SLUICE_DSM_EMPI, "MPI_Isend to rank %d failed (error %d)", dst, rc);
    }
    s->buf = buf;
    s->next = D.sends;
    D.sends = s;
    dsm_trace_send(dst, sizeof h + len, t_send);
    activity();
    return 0;
}

static void dispatch(const struct dsm_msg *m, const void *payload, size_t len, int src)
{
    switch (m->type) {
    case M_RD_REQ:
    case M_WR_REQ:
    case M_ACK:
    case M_WB:
    case M_LOOKUP:
    case M_SUB:
    case M_UNSUB:
    case M_SIGNAL:
        dsm_home_msg(m, payload, len, src);
        break;
    case M_RD_DATA:
    case M_WR_GRANT:
    case M_INV:
    case M_RECALL:
    case M_INV_ACK:
    case M_ERROR:
    case M_LOOKUP_REPLY:
    case M_SUB_ACK:
        dsm_client_msg(m, payload, len, src);
        break;
    case M_PUBLISH:
        dsm_pubsub_msg(m, src);
        break;
    case M_ARRIVE:
    case M_WAKE:
    case M_DONE:
        dsm_sync_msg(m, src);
        break;
    default: /* unknown types are dropped: only sluice sends on this communicator */
        break;
    }
}

void dsm_deliver(const void *buf, size_t len, int src)
{
    if (len < sizeof(struct dsm_msg))
        return;
    struct dsm_msg m;
    memcpy(&m, buf, sizeof m);
    dispatch(&m, (const unsigned char *)buf + sizeof m, len - sizeof m, src);
}

/* Handles the messages this rank sent itself before the call (those they cause wait). */
static int poll_self(void)
{
    struct dsm_selfmsg *q = D.self_head;
    D.self_head = D.self_tail = NULL;
    int n = 0;
    while (q) {
        struct dsm_selfmsg *next = q->next;
        dsm_deliver(q->buf, q->len, D.rank);
        free(q);
        q = next;
        n++;
    }
    return n;
}

void dsm_transport_free_self(void)
{
    while (D.self_head) {
        struct dsm_selfmsg *q = D.self_head;
        D.self_head = q->next;
        free(q);
    }
    D.self_tail = NULL;
}

int dsm_poll(void)
{
    if (!D.up)
        return 0;
    int n = poll_self();
    for (int i = 0; i < 256 && D.comm != MPI_COMM_NULL; i++) {
        int flag = 0;
        MPI_Status st;
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
        PMPI_Iprobe(MPI_ANY_SOURCE, DSM_TAG, D.comm, &flag, &st);
        if (!flag) {
            sluice_time_leave(prev);
            break;
        }
        int count = 0;
        PMPI_Get_count(&st, MPI_BYTE, &count);
        unsigned char *buf = malloc(count > 0 ? (size_t)count : 1);
        if (!buf) {
            sluice_time_leave(prev);
            dsm_fail(SLUICE_DSM_ENOMEM, "out of memory receiving %d bytes", count);
            break;
        }
        PMPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, DSM_TAG, D.comm, MPI_STATUS_IGNORE);
        sluice_time_leave(prev);
        sluice_trace_instant(SLUICE_EV_MPI_RECV, (uint64_t)st.MPI_SOURCE, (uint64_t)count, DSM_TAG);
        dsm_deliver(buf, (size_t)count, st.MPI_SOURCE);
        free(buf);
        n++;
    }
    if (n > 0)
        activity();
    return n + reap_sends();
}

/* Returns 0 when nothing arrived: the engine's MPI-busy mode (held while the DSM is active)
 * then yields between polls, where a positive count would make it poll without yielding. */
static int poller(void *arg)
{
    (void)arg;
    /* The application is about to enter the DSM: let it. A thread waiting in the DSM holds the
     * lock and polls itself: trying the lock would only contend with it. */
    if (__atomic_load_n(&D.entering, __ATOMIC_RELAXED) > 0 ||
        __atomic_load_n(&D.waiting, __ATOMIC_RELAXED) > 0 || pthread_mutex_trylock(&D.lock) != 0)
        return 0;
    int n = 0;
    if (D.waiting == 0 && D.up) /* (one may have begun waiting since the check above) */
        n = dsm_poll();
    if (n == 0 && sluice_now_ns() - D.last_msg_ns > D.spin_ns)
        hold_busy(false); /* quiet for SLUICE_DSM_SPIN: a long wait or compute, no spinning */
    pthread_mutex_unlock(&D.lock);
    return n;
}

static uint64_t now_ns(void)
{
    return sluice_now_ns();
}

#define YIELD_EVERY 32
#define YIELD_BUSY_NS 5000u

static int wait_loop(bool (*done)(void *arg), void *arg, const char *what, unsigned long addr)
{
    unsigned polls = 0;
    bool crowded = false;
    uint64_t deadline = now_ns() + D.timeout_ns;
    uint64_t spin_until = now_ns() + D.spin_ns;
    struct sluice_backoff b;
    sluice_backoff_init(&b, 1000, 100000); /* 1 us .. 100 us: an application waiting on a peer */
    for (;;) {
        dsm_poll();
        if (done(arg))
            return 0;
        if (D.self_head)
            continue; /* a step of this rank's own protocol is queued: no sleep before it */
        if (now_ns() > deadline)
            return dsm_fail(SLUICE_DSM_ETIMEDOUT, "%s @%lu: no answer within SLUICE_DSM_TIMEOUT=%llu s", what,
                            addr, (unsigned long long)(D.timeout_ns / 1000000000ull));
        uint64_t t = now_ns();
        if (D.last_msg_ns + D.spin_ns > spin_until)
            spin_until = D.last_msg_ns + D.spin_ns;
        if (t < spin_until) {
            /* A reply, or the next hop of someone else's miss, usually comes within
             * microseconds: poll before sleeping (a sleep costs a scheduler wake-up, and on a
             * busy node the time slice), as MPI's own waits do. The lock stays held while
             * polling (this thread serves every message meanwhile) unless another thread of the
             * program is entering the DSM: dropping and taking it again at each poll, with the
             * progress thread trying it in between, cost a miss half its time (GPU machine,
             * 64 B write miss 10.6-11.9 us against 5.4-7.4 with the lock kept). The core is
             * yielded every YIELD_EVERY polls, and at every poll once a yield took over
             * YIELD_BUSY_NS (another process wants this core: an oversubscribed node). */
            sluice_backoff_reset(&b);
            if (__atomic_load_n(&D.entering, __ATOMIC_RELAXED) > 0) {
                pthread_mutex_unlock(&D.lock);
                sched_yield();
                pthread_mutex_lock(&D.lock);
            } else if (crowded || ++polls % YIELD_EVERY == 0) {
                sched_yield();
                crowded = now_ns() - t > YIELD_BUSY_NS;
            }
            continue;
        }
        uint64_t ns = sluice_backoff_next(&b);
        if (t - D.last_msg_ns > D.spin_ns)
            hold_busy(false); /* (the poller, which would do it, steps aside while we wait) */
        pthread_mutex_unlock(&D.lock);
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
        struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
            ;
        sluice_time_leave(prev);
        pthread_mutex_lock(&D.lock);
    }
}

/* While a thread waits here, it is the one that polls (the poller steps aside). */
int dsm_wait(bool (*done)(void *arg), void *arg, const char *what, unsigned long addr)
{
    __atomic_add_fetch(&D.waiting, 1, __ATOMIC_RELAXED);
    int rc = wait_loop(done, arg, what, addr);
    __atomic_sub_fetch(&D.waiting, 1, __ATOMIC_RELAXED);
    return rc;
}

int dsm_transport_start(void)
{
    D.poller = sluice_progress_add_poller(poller, NULL);
    return 0;
}

/* The poller goes first (it could mark the DSM busy again), then every send completes before
 * the communicator goes (the peers receive until the last finalize phase, see api.c). */
void dsm_transport_stop(void)
{
    if (D.poller >= 0)
        sluice_progress_remove_poller(D.poller);
    D.poller = -1;
    uint64_t deadline = now_ns() + D.timeout_ns;
    while (D.sends && now_ns() < deadline) {
        dsm_poll();
        reap_sends();
    }
    hold_busy(false);
}
