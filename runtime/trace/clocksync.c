/* SPDX-License-Identifier: MIT */
/* See clocksync.h. Rank 0 answers each other rank in turn, a few round trips each: the rank
 * sends its clock t1, rank 0 answers with its own t0, the rank reads t2; offset = t0 - (t1 + t2)/2,
 * good to within (t2 - t1)/2 (Cristian's algorithm); the round trip with the smallest delay wins.
 * Every wait is bounded (WAIT_NS): a rank that never comes costs rank 0 that long once, then it
 * is skipped, and the trace simply has no sample for it; a rank waits at most WAIT_NS plus 1 ms
 * per round of every rank served before it. The exchange runs on a private duplicate
 * of sluice's communicator so that no tag of another part is involved. */
#include "trace/clocksync.h"

#include <stdint.h>
#include <time.h>

#include "common/log.h"
#include "trace/trace.h"

#define WAIT_NS 5000000000ll /* 5 s */

/* Rank 0 serves the ranks one after another: fewer rounds for bigger jobs keep the cost near
 * N round trips (8 rounds up to 64 ranks, 2 up to 1024, 1 beyond). */
static int rounds_for(int size)
{
    return size <= 64 ? 8 : size <= 1024 ? 2 : 1;
}

static MPI_Comm sync_comm = MPI_COMM_NULL;

/* Completes `req` or cancels it after the deadline; 0 when completed. */
static int wait_bounded(MPI_Request *req, int64_t deadline)
{
    int done = 0;
    while (!done) {
        if (PMPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!done && (int64_t)sluice_now_ns() > deadline) {
            PMPI_Cancel(req);
            PMPI_Request_free(req);
            return -1;
        }
        if (!done) {
            struct timespec ts = {0, 2000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

static int send_u64(uint64_t v, int to, int tag, int64_t deadline)
{
    MPI_Request req;
    if (PMPI_Isend(&v, 1, MPI_UINT64_T, to, tag, sync_comm, &req) != MPI_SUCCESS)
        return -1;
    return wait_bounded(&req, deadline);
}

static int recv_u64(uint64_t *v, int from, int tag, int64_t deadline)
{
    MPI_Request req;
    if (PMPI_Irecv(v, 1, MPI_UINT64_T, from, tag, sync_comm, &req) != MPI_SUCCESS)
        return -1;
    return wait_bounded(&req, deadline);
}

static void measure(uint64_t phase)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(sync_comm, &rank);
    PMPI_Comm_size(sync_comm, &size);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    if (rank == 0) {
        sluice_trace_instant(SLUICE_EV_CLOCK_SYNC, phase, 0, 0);
        for (int r = 1; r < size; r++) {
            int64_t deadline = (int64_t)sluice_now_ns() + WAIT_NS;
            for (int k = 0; k < rounds_for(size); k++) {
                uint64_t t1;
                if (recv_u64(&t1, r, 1, deadline) != 0 || send_u64(sluice_now_ns(), r, 2, deadline) != 0)
                    break;
            }
        }
    } else {
        int64_t deadline = (int64_t)sluice_now_ns() + WAIT_NS + (int64_t)rank * rounds_for(size) * 1000000;
        uint64_t best = UINT64_MAX, at = 0;
        int64_t offset = 0;
        for (int k = 0; k < rounds_for(size); k++) {
            uint64_t t1 = sluice_now_ns(), t0;
            if (send_u64(t1, 0, 1, deadline) != 0 || recv_u64(&t0, 0, 2, deadline) != 0)
                break;
            uint64_t t2 = sluice_now_ns();
            if (t2 - t1 < best) {
                best = t2 - t1;
                at = t1 + (t2 - t1) / 2;
                offset = (int64_t)(t0 - at);
            }
        }
        if (best != UINT64_MAX)
            sluice_trace_record(SLUICE_EV_CLOCK_SYNC, 0, at, 0, phase, (uint64_t)offset, best / 2);
        else
            sluice_log_warn(
                "trace: no clock sample from rank 0 within %lld s (phase %llu); this rank's events "
                "are placed by its wall clock",
                (long long)(WAIT_NS / 1000000000), (unsigned long long)phase);
    }
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
