/* SPDX-License-Identifier: MIT */
/* Whether a serving rank that keeps rank 0 waiting is still there (issue 11). A rank that is
 * stopped (SIGSTOP, a debugger) or wedged neither dies nor answers, and MPI reports nothing: rank 0
 * would wait forever. So a wait of rank 0 on a rank (a reply, a command's end) checks here every
 * 100 ms or so: after PING_NS of waiting it pings the rank, whose ping thread answers even while
 * the rank is busy in a long build or command (remote_engine.c); a rank silent for WARN_NS gets
 * one line naming it and what rank 0 waits for, and one silent for SLUICE_DIST_TIMEOUT ends the
 * job through dist_fault_peer (exit code 86, docs/FAULTS.md). */
#include <pthread.h>
#include <stdio.h>

#include "common/log.h"
#include "config/config.h"
#include "dist/dist_fault.h"
#include "dist/dist_internal.h"
#include "trace/trace.h"

#define PING_NS 2000000000ull /* waited this long: is the rank there? */
#define WARN_NS 5000000000ull /* silent this long: say so */

static pthread_mutex_t alive_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t heard[DIST_MAX_RANKS];  /* its last answer to a ping */
static uint64_t pinged[DIST_MAX_RANKS]; /* the last ping sent */
static int warned[DIST_MAX_RANKS];

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
    int flag = 0;
    while (MPI_Iprobe(rank, SLUICE_REMOTE_TAG_PONG, comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        uint64_t t = 0;
        MPI_Recv(&t, sizeof t, MPI_BYTE, rank, SLUICE_REMOTE_TAG_PONG, comm, MPI_STATUS_IGNORE);
        heard[rank] = now;
        if (warned[rank])
            sluice_log_warn("distributed OpenCL: serving rank %d answers again", rank);
        warned[rank] = 0;
    }
    uint64_t last = heard[rank] > since ? heard[rank] : since;
    uint64_t silent = now - last;
    if (now - pinged[rank] >= PING_NS) {
        pinged[rank] = now;
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
