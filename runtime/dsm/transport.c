/* SPDX-License-Identifier: MIT */
/* DSM messages over a duplicate of sluice's communicator: nonblocking sends (a blocked send
 * under D.lock could deadlock two ranks sending each other large chunks), a receive loop that
 * dispatches by message type, a progress poller that serves requests while the application
 * computes, and waits that poll themselves and are bounded by SLUICE_DSM_TIMEOUT. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsm/dsm.h"
#include "progress/backoff.h"
#include "progress/progress.h"
#include "trace/trace.h"

int dsm_home_of(unsigned long addr)
{
    return D.servers[addr % (unsigned long)D.nservers];
}

void dsm_trace_send(int dst, size_t bytes)
{
    sluice_trace_instant(SLUICE_EV_MPI_SEND, (uint64_t)dst, bytes, DSM_TAG);
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

int dsm_send(int dst, const struct dsm_msg *m, const void *payload, size_t len)
{
    struct dsm_sendreq *s = malloc(sizeof *s);
    unsigned char *buf = malloc(sizeof *m + len);
    if (!s || !buf) {
        free(s);
        free(buf);
        return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory sending %zu bytes to rank %d", len, dst);
    }
    struct dsm_msg h = *m;
    h.src = D.rank;
    memcpy(buf, &h, sizeof h);
    if (len)
        memcpy(buf + sizeof h, payload, len);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
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
    dsm_trace_send(dst, sizeof h + len);
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

int dsm_poll(void)
{
    if (!D.up)
        return 0;
    int n = 0;
    for (int i = 0; i < 256; i++) {
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
        if ((size_t)count >= sizeof(struct dsm_msg)) {
            struct dsm_msg m;
            memcpy(&m, buf, sizeof m);
            dispatch(&m, buf + sizeof m, (size_t)count - sizeof m, st.MPI_SOURCE);
        }
        free(buf);
        n++;
    }
    return n + reap_sends();
}

static int poller(void *arg)
{
    (void)arg;
    if (pthread_mutex_trylock(&D.lock) != 0)
        return 1; /* the application is inside the DSM and polls itself */
    int n = dsm_poll();
    pthread_mutex_unlock(&D.lock);
    return n;
}

/* How long a wait polls without sleeping, from its start and from the last message. */
#define DSM_SPIN_NS 50000ull

static uint64_t now_ns(void)
{
    return sluice_now_ns();
}

int dsm_wait(bool (*done)(void *arg), void *arg, const char *what, unsigned long addr)
{
    uint64_t deadline = now_ns() + D.timeout_ns;
    uint64_t spin_until = now_ns() + DSM_SPIN_NS;
    struct sluice_backoff b;
    sluice_backoff_init(&b, 1000, 100000); /* 1 us .. 100 us: an application waiting on a peer */
    for (;;) {
        int n = dsm_poll();
        if (done(arg))
            return 0;
        if (now_ns() > deadline)
            return dsm_fail(SLUICE_DSM_ETIMEDOUT, "%s @%lu: no answer within SLUICE_DSM_TIMEOUT=%llu s", what,
                            addr, (unsigned long long)(D.timeout_ns / 1000000000ull));
        uint64_t t = now_ns();
        if (n > 0)
            spin_until = t + DSM_SPIN_NS;
        if (t < spin_until) {
            /* A reply usually comes within microseconds: poll before sleeping (a sleep costs a
             * scheduler wake-up, and on a busy node the time slice), as MPI's own waits do. The
             * lock is dropped between polls so that the progress thread can serve too. */
            sluice_backoff_reset(&b);
            pthread_mutex_unlock(&D.lock);
            pthread_mutex_lock(&D.lock);
            continue;
        }
        uint64_t ns = sluice_backoff_next(&b);
        pthread_mutex_unlock(&D.lock);
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
        struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
            ;
        sluice_time_leave(prev);
        pthread_mutex_lock(&D.lock);
    }
}

int dsm_transport_start(void)
{
    D.poller = sluice_progress_add_poller(poller, NULL);
    return 0;
}

/* Every send completes before the communicator goes (the peers receive until the last
 * finalize phase, see api.c). */
void dsm_transport_stop(void)
{
    uint64_t deadline = now_ns() + D.timeout_ns;
    while (D.sends && now_ns() < deadline) {
        dsm_poll();
        reap_sends();
    }
}
