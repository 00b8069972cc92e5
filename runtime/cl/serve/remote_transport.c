/* SPDX-License-Identifier: MIT */
/* Message transport of distributed OpenCL over sluice's communicator. Every wait probes and
 * micro-sleeps: a blocking MPI_Recv in MPICH and Open MPI polls and would keep a core busy on an
 * idle serving rank, which halves rank 0's memory bandwidth on small nodes.
 * A reply is usually due within microseconds, so a wait first polls for SLUICE_REMOTE_HOT_NS,
 * yielding the core between probes, before it starts sleeping: one sleep costs more than a round
 * trip. The sleeps then grow with the time waited (sluice_remote_idle_ns), never to more than an
 * eighth of it: a doubling back-off sleeps as long as it has waited, so a late answer was found up
 * to twice as late, and the two ends of a request/answer stream locked into each other's sleeps
 * (round trips of 600-900 us instead of 15). */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/serve/remote_peer.h"
#include "cl/serve/remote_proto.h"
#include "config/config.h"
#include "trace/trace.h"

#define WAIT_MAX_NS 250000u

void sluice_remote_nap(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
    nanosleep(&ts, NULL);
    sluice_time_leave(prev);
}

uint64_t sluice_remote_idle_ns(uint64_t waited_ns, uint64_t max_ns)
{
    uint64_t ns = waited_ns / 8;
    return ns < 1000u ? 1000u : ns > max_ns ? max_ns : ns;
}

int sluice_remote_wait_probe(MPI_Comm comm, int src, int tag, MPI_Status *st)
{
    uint64_t t0 = sluice_now_ns(), checked_at = t0;
    /* Rank 0 waiting for a reply: is the rank still there (remote_peer.h)? */
    int reply = tag == SLUICE_REMOTE_TAG_REP || tag == SLUICE_REMOTE_TAG_CLOCK;
    for (;;) {
        int flag = 0;
        int rc = MPI_Iprobe(src, tag, comm, &flag, st);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            return MPI_SUCCESS;
        uint64_t waited = sluice_now_ns() - t0;
        if (reply && waited - (checked_at - t0) >= 100000000u) {
            checked_at = t0 + waited;
            sluice_remote_peer_silent(src, t0,
                                      tag == SLUICE_REMOTE_TAG_REP ? "the reply to a call" : "its clock");
        }
        if (waited < SLUICE_REMOTE_HOT_NS)
            sched_yield();
        else
            sluice_remote_nap(sluice_remote_idle_ns(waited, WAIT_MAX_NS));
    }
}

int sluice_remote_send(MPI_Comm comm, int dst, int tag, const void *head, size_t head_len,
                       const void *payload, size_t payload_len)
{
    size_t len = head_len + payload_len;
    if (len > INT_MAX)
        return MPI_ERR_COUNT;
    unsigned char *buf = malloc(len ? len : 1);
    if (buf == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(buf, head, head_len);
    if (payload_len)
        memcpy(buf + head_len, payload, payload_len);
    uint64_t t0 = sluice_now_ns(); /* the send starts here: its receive may end before it returns */
    int rc = MPI_Send(buf, (int)len, MPI_BYTE, dst, tag, comm);
    sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t0, 0, (uint64_t)dst, len, (uint64_t)tag);
    free(buf);
    return rc;
}

int sluice_remote_recv(MPI_Comm comm, int src, int tag, unsigned char **out, size_t *out_len)
{
    MPI_Status st;
    int rc = sluice_remote_wait_probe(comm, src, tag, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    unsigned char *buf = malloc(count ? (size_t)count : 1);
    if (buf == NULL)
        return MPI_ERR_NO_MEM;
    rc = PMPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return rc;
    }
    sluice_trace_instant(SLUICE_EV_MSG_RECV, (uint64_t)st.MPI_SOURCE, (uint64_t)count, (uint64_t)tag);
    *out = buf;
    *out_len = (size_t)count;
    return MPI_SUCCESS;
}

static size_t chunk_set = SIZE_MAX; /* SIZE_MAX: not set, this process's SLUICE_DIST_CHUNK */

size_t sluice_remote_chunk_setting(void)
{
    size_t v = __atomic_load_n(&chunk_set, __ATOMIC_RELAXED);
    return v == SIZE_MAX ? (size_t)sluice_config.DIST_CHUNK : v;
}

void sluice_remote_set_chunk(size_t bytes)
{
    __atomic_store_n(&chunk_set, bytes, __ATOMIC_RELAXED);
}

size_t sluice_remote_chunk(size_t len)
{
    size_t fixed = sluice_remote_chunk_setting();
    if (fixed != 0)
        return fixed;
    size_t c = SLUICE_REMOTE_CHUNK_MIN;
    while (c < SLUICE_REMOTE_CHUNK && c * 16 < len)
        c *= 2;
    return c;
}

size_t sluice_remote_pieces(size_t len)
{
    size_t c = sluice_remote_chunk(len);
    return len == 0 ? 1 : (len + c - 1) / c;
}

size_t sluice_remote_piece(size_t len, size_t i, size_t *k)
{
    size_t c = sluice_remote_chunk(len), off = i * c;
    *k = len - off < c ? len - off : c;
    return off;
}

int sluice_remote_data_isend(MPI_Comm comm, int dst, uint64_t id, const void *data, size_t len,
                             MPI_Request *reqs)
{
    size_t n = sluice_remote_pieces(len);
    for (size_t i = 0; i < n; i++) {
        size_t k, off = sluice_remote_piece(len, i, &k);
        int rc = MPI_Isend((const char *)data + off, (int)k, MPI_BYTE, dst, SLUICE_REMOTE_DATA_TAG(id), comm,
                           &reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int sluice_remote_data_irecv(MPI_Comm comm, int src, uint64_t id, void *data, size_t len, MPI_Request *reqs)
{
    size_t n = sluice_remote_pieces(len);
    for (size_t i = 0; i < n; i++) {
        size_t k, off = sluice_remote_piece(len, i, &k);
        int rc =
            MPI_Irecv((char *)data + off, (int)k, MPI_BYTE, src, SLUICE_REMOTE_DATA_TAG(id), comm, &reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* A broadcast along a chain (sluice_remote_chain_post): the member after this one, -1 for the last. */
int sluice_remote_chain_next(MPI_Comm comm)
{
    int me = 0, size = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    return me + 1 < size ? me + 1 : -1;
}

int sluice_remote_chain_post(MPI_Comm comm, void *data, size_t len, MPI_Request *reqs)
{
    int me = 0;
    MPI_Comm_rank(comm, &me);
    size_t n = sluice_remote_pieces(len);
    for (size_t i = 0; i < n; i++) {
        size_t k, off = sluice_remote_piece(len, i, &k);
        int rc = me == 0 ? MPI_Isend((char *)data + off, (int)k, MPI_BYTE, 1, SLUICE_TAG_REMOTE_CHAIN, comm,
                                     &reqs[i])
                         : MPI_Irecv((char *)data + off, (int)k, MPI_BYTE, me - 1, SLUICE_TAG_REMOTE_CHAIN,
                                     comm, &reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int sluice_remote_chain_forward(MPI_Comm comm, int next, const void *data, size_t len, size_t i,
                                MPI_Request *req)
{
    size_t k, off = sluice_remote_piece(len, i, &k);
    return MPI_Isend((const char *)data + off, (int)k, MPI_BYTE, next, SLUICE_TAG_REMOTE_CHAIN, comm, req);
}
