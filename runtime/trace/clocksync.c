/* SPDX-License-Identifier: MIT */
/* See clocksync.h. The ranks form a binomial tree rooted at rank 0: rank r's parent is r with
 * its highest bit cleared, and rank p serves its children p + 2^j (2^j > p) in increasing j, so
 * every rank is served in round floor(log2 r) and the whole job in ceil(log2 N) rounds, pairs
 * running in parallel. With its parent a rank does ROUNDS round trips: it sends its clock t1,
 * the parent answers with its own t0, the rank reads t2; offset to the parent = t0 - (t1 + t2)/2,
 * good to within (t2 - t1)/2 (Cristian's algorithm), the round trip with the smallest delay
 * wins. The parent then sends its own offset to rank 0 and that offset's uncertainty; the rank
 * adds them to its own: the offset to rank 0 is exact to the sum of the uncertainties along
 * its path (at most ceil(log2 N) hops), which is what it records, so the stated uncertainty
 * stays honest. Every wait is bounded: a parent waits WAIT_NS for each child, a rank
 * WAIT_NS per level above it; a rank without a sample tells its children so, and the trace
 * simply has none for them. The exchange runs on a private duplicate of sluice's communicator
 * so that no tag of another part is involved. */
#include "trace/clocksync.h"

#include <stdint.h>
#include <time.h>

#include "common/log.h"
#include "trace/trace.h"

#define WAIT_NS 5000000000ll /* 5 s */
#define ROUNDS 6             /* round trips with the parent; the shortest is kept */
#define TAG_PING 1
#define TAG_PONG 2
#define TAG_ROOT 3 /* the parent's offset to rank 0 and its uncertainty */
#define NO_SAMPLE UINT64_MAX

static MPI_Comm sync_comm = MPI_COMM_NULL;

/* Completes `req` or cancels it after the deadline; 0 when completed. Waits back off from 2 us
 * to 1 ms: ranks waiting for their turn leave the processor to the pairs measuring now (a
 * job oversubscribed on few cores spent 11 ms per round trip with every rank polling). */
static int wait_bounded(MPI_Request *req, int64_t deadline)
{
    int done = 0;
    long nap = 2000;
    while (!done) {
        if (PMPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!done && (int64_t)sluice_now_ns() > deadline) {
            PMPI_Cancel(req);
            PMPI_Request_free(req);
            return -1;
        }
        if (!done) {
            struct timespec ts = {0, nap};
            nanosleep(&ts, NULL);
            nap = nap < 500000 ? nap * 2 : 1000000;
        }
    }
    return 0;
}

static int send_u64s(const uint64_t *v, int n, int to, int tag, int64_t deadline)
{
    MPI_Request req;
    if (PMPI_Isend(v, n, MPI_UINT64_T, to, tag, sync_comm, &req) != MPI_SUCCESS)
        return -1;
    return wait_bounded(&req, deadline);
}

static int recv_u64s(uint64_t *v, int n, int from, int tag, int64_t deadline)
{
    MPI_Request req;
    if (PMPI_Irecv(v, n, MPI_UINT64_T, from, tag, sync_comm, &req) != MPI_SUCCESS)
        return -1;
    return wait_bounded(&req, deadline);
}

/* Highest power of two <= r (r > 0). */
static int top_bit(int r)
{
    int b = 1;
    while (b <= r / 2)
        b *= 2;
    return b;
}

/* Measures this rank against `parent`; on success sets the offset to the parent (ns) and its
 * uncertainty, and when the round trip was centred. Returns 0 on success. */
static int measure_parent(int parent, int64_t deadline, int64_t *offset, uint64_t *unc, uint64_t *at)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t t1 = sluice_now_ns(), t0;
        if (send_u64s(&t1, 1, parent, TAG_PING, deadline) != 0 ||
            recv_u64s(&t0, 1, parent, TAG_PONG, deadline) != 0)
            break;
        uint64_t t2 = sluice_now_ns();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *at = t1 + (t2 - t1) / 2;
            *offset = (int64_t)(t0 - *at);
        }
    }
    if (best == UINT64_MAX)
        return -1;
    *unc = best / 2;
    return 0;
}

/* Answers one child's round trips, then tells it this rank's offset to rank 0 (or NO_SAMPLE). */
static void serve_child(int child, int64_t root_offset, uint64_t root_unc)
{
    int64_t deadline = (int64_t)sluice_now_ns() + WAIT_NS;
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t t1, t0;
        if (recv_u64s(&t1, 1, child, TAG_PING, deadline) != 0)
            return; /* the child gave up or never came: it has no sample */
        t0 = sluice_now_ns();
        if (send_u64s(&t0, 1, child, TAG_PONG, deadline) != 0)
            return;
    }
    uint64_t root[2] = {(uint64_t)root_offset, root_unc};
    send_u64s(root, 2, child, TAG_ROOT, deadline);
}

static void measure(uint64_t phase)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(sync_comm, &rank);
    PMPI_Comm_size(sync_comm, &size);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    int64_t offset = 0; /* to rank 0 */
    uint64_t unc = 0, at = 0;
    int level = 0;
    if (rank == 0) {
        sluice_trace_instant(SLUICE_EV_CLOCK_SYNC, phase, 0, 0);
    } else {
        int bit = top_bit(rank);
        for (int b = bit; b > 1; b /= 2)
            level++;
        /* Every ancestor may wait WAIT_NS for its own parent first. */
        int64_t deadline = (int64_t)sluice_now_ns() + WAIT_NS * (level + 1);
        int64_t to_parent = 0;
        uint64_t unc_parent = 0, root[2] = {0, NO_SAMPLE};
        if (measure_parent(rank - bit, deadline, &to_parent, &unc_parent, &at) != 0 ||
            recv_u64s(root, 2, rank - bit, TAG_ROOT, deadline) != 0 || root[1] == NO_SAMPLE) {
            unc = NO_SAMPLE;
            sluice_log_warn("trace: no clock sample through rank %d within %lld s (phase %llu); this rank's "
                            "events are placed by its wall clock",
                            rank - bit, (long long)(WAIT_NS / 1000000000) * (level + 1),
                            (unsigned long long)phase);
        } else {
            offset = to_parent + (int64_t)root[0];
            unc = unc_parent + root[1];
            sluice_trace_record(SLUICE_EV_CLOCK_SYNC, 0, at, 0, phase, (uint64_t)offset, unc);
        }
    }
    /* Children: rank + 2^j for every 2^j above this rank, nearest first. */
    for (long j = rank == 0 ? 1 : 2L * top_bit(rank); rank + j < size; j *= 2)
        serve_child((int)(rank + j), offset, unc);
    sluice_time_leave(prev);
}

void sluice_trace_clock_sync_start(MPI_Comm comm)
{
    if (!sluice_trace_active() || sync_comm != MPI_COMM_NULL)
        return;
    if (PMPI_Comm_dup(comm, &sync_comm) != MPI_SUCCESS) {
        sync_comm = MPI_COMM_NULL;
        return;
    }
    PMPI_Comm_set_errhandler(sync_comm, MPI_ERRORS_RETURN);
    measure(0);
}

void sluice_trace_clock_sync_exit(void)
{
    if (sync_comm == MPI_COMM_NULL)
        return;
    if (sluice_trace_active())
        measure(1);
    PMPI_Comm_free(&sync_comm);
    sync_comm = MPI_COMM_NULL;
}
