/* SPDX-License-Identifier: MIT */
/* Whether a serving rank that keeps rank 0 waiting is still there (docs/FAULTS.md). A rank that is
 * stopped (SIGSTOP, a debugger) or wedged neither dies nor answers, and MPI reports nothing: rank 0
 * would wait forever. So a wait of rank 0 on a rank (a reply, a command's end) checks here every
 * 100 ms or so: after PING_NS of waiting it pings the rank, whose ping thread answers even while
 * the rank is busy in a long build or command (remote_engine.c); a rank silent for WARN_NS gets
 * one line naming it and what rank 0 waits for, and one silent for SLUICE_DIST_TIMEOUT ends the
 * job through dist_fault_peer (exit code 86, docs/FAULTS.md).
 * A pong may come after the reply it was asked for, when nobody probes for it any more: at the end
 * of the job the pings stop (dist_alive_stop), END tells each rank how many it was sent, its last
 * message how many pongs it sent, and dist_alive_drain receives the rest, so that MPI_Finalize
 * finds no message unreceived (UCX prints "unexpected tag-receive descriptor ... was not matched"
 * on stdout otherwise). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_internal.h"
#include "common/log.h"
#include "config/config.h"
#include "trace/trace.h"

#define PING_NS 2000000000ull /* waited this long: is the rank there? */
#define WARN_NS 5000000000ull /* silent this long: say so */

static pthread_mutex_t alive_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t heard[DIST_MAX_RANKS];  /* its last answer to a ping */
static uint64_t pinged[DIST_MAX_RANKS]; /* the last ping sent */
static int warned[DIST_MAX_RANKS];
static uint64_t npings[DIST_MAX_RANKS]; /* pings sent to the rank */
static uint64_t npongs[DIST_MAX_RANKS]; /* its pongs received */
static bool stopped;                    /* the job ends: no more pings */

/* Receives the pongs waiting from `rank`; under alive_lock. */
static void take_pongs(MPI_Comm comm, int rank, uint64_t now)
{
    int flag = 0;
    while (MPI_Iprobe(rank, SLUICE_REMOTE_TAG_PONG, comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        uint64_t t = 0;
        PMPI_Recv(&t, sizeof t, MPI_BYTE, rank, SLUICE_REMOTE_TAG_PONG, comm, MPI_STATUS_IGNORE);
        npongs[rank]++;
        heard[rank] = now;
        if (warned[rank])
            sluice_log_warn("distributed OpenCL: serving rank %d answers again", rank);
        warned[rank] = 0;
    }
}

uint64_t dist_alive_stop(int rank)
{
    pthread_mutex_lock(&alive_lock);
    stopped = true;
    uint64_t n = rank > 0 && rank < DIST_MAX_RANKS ? npings[rank] : 0;
    pthread_mutex_unlock(&alive_lock);
    return n;
}

void dist_alive_drain(int rank, uint64_t sent)
{
    MPI_Comm comm = sluice_comm();
    if (rank <= 0 || rank >= DIST_MAX_RANKS || comm == MPI_COMM_NULL)
        return;
    /* The rank sent them before its last message: they are due at once, 5 s is ample. */
    uint64_t t0 = sluice_now_ns();
    pthread_mutex_lock(&alive_lock);
    for (;;) {
        take_pongs(comm, rank, sluice_now_ns());
        if (npongs[rank] >= sent || sluice_now_ns() - t0 > WARN_NS)
            break;
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    if (npongs[rank] < sent)
        sluice_log_warn(
            "distributed OpenCL: serving rank %d sent %llu answers to pings at the end of the job, "
            "%llu arrived",
            rank, (unsigned long long)sent, (unsigned long long)npongs[rank]);
    pthread_mutex_unlock(&alive_lock);
}

void dist_alive_heard(int rank)
{
    if (rank <= 0 || rank >= DIST_MAX_RANKS || !__atomic_load_n(&warned[rank], __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&alive_lock);
    if (warned[rank])
        sluice_log_warn("distributed OpenCL: serving rank %d answers again", rank);
    warned[rank] = 0;
    heard[rank] = sluice_now_ns();
    pthread_mutex_unlock(&alive_lock);
}

void dist_alive_check(int rank, uint64_t since, const char *what)
{
    MPI_Comm comm = sluice_comm();
    if (rank <= 0 || rank >= DIST_MAX_RANKS || comm == MPI_COMM_NULL || dist_fault_ending())
        return;
    uint64_t now = sluice_now_ns();
    if (now - since < PING_NS)
        return;
    pthread_mutex_lock(&alive_lock);
    take_pongs(comm, rank, now);
    uint64_t last = heard[rank] > since ? heard[rank] : since;
    uint64_t silent = now - last;
    if (!stopped && now - pinged[rank] >= PING_NS) {
        pinged[rank] = now;
        npings[rank]++;
        MPI_Send(&now, sizeof now, MPI_BYTE, rank, SLUICE_REMOTE_TAG_PING, comm);
    }
    uint64_t limit = (uint64_t)sluice_config.DIST_TIMEOUT * 1000000000ull;
    if (silent >= WARN_NS && silent < limit && !warned[rank]) {
        warned[rank] = 1;
        sluice_log_error(
            "distributed OpenCL: serving rank %d (devices: %s) has not answered for %llu s, not even "
            "a ping, while rank 0 waits for %s; the job ends if it stays silent for %llu s "
            "(SLUICE_DIST_TIMEOUT)",
            rank, dist_fault_devices(rank), (unsigned long long)(silent / 1000000000ull), what,
            (unsigned long long)sluice_config.DIST_TIMEOUT);
    }
    pthread_mutex_unlock(&alive_lock);
    if (silent >= limit) {
        char why[256];
        snprintf(why, sizeof why, "rank 0 waited for %s (no answer for %llu s, SLUICE_DIST_TIMEOUT)", what,
                 (unsigned long long)sluice_config.DIST_TIMEOUT);
        dist_fault_peer(rank, MPI_SUCCESS, why);
    }
}
