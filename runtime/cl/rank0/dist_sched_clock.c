/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: the offsets of the serving ranks' clocks, measured at start (Cristian's
 * method: the sample of least round trip of CLOCK_SAMPLES pings), which move the profiling times
 * of a DONE record onto rank 0's clock. The pings also offer cross-memory attach (dist_cma.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_cma.h"
#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

#define CLOCK_SAMPLES 8

int64_t dist_sched_clock_off[DIST_MAX_RANKS]; /* rank's clock minus rank 0's */

/* Cristian's method, per rank: the ping of least round trip gives the offset. */
void dist_sched_measure_clocks(void)
{
    MPI_Comm comm = sluice_comm();
    int n = dist_size();
    for (int r = 1; r < n && r < DIST_MAX_RANKS; r++) {
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < CLOCK_SAMPLES; i++) {
            struct sluice_remote_req req;
            memset(&req, 0, sizeof req);
            req.op = SLUICE_REMOTE_PING;
            req.ping.chunk = sluice_remote_chunk_setting();
            dist_cma_offer(&req);
            uint64_t t0 = sluice_now_ns();
            unsigned char *rep = NULL;
            size_t len = 0;
            int rc = sluice_remote_send(comm, r, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, NULL, 0);
            if (rc == MPI_SUCCESS)
                rc = sluice_remote_recv(comm, r, SLUICE_REMOTE_TAG_CLOCK, &rep, &len);
            if (rc != MPI_SUCCESS)
                dist_fault_peer(r, rc, "measuring its clock");
            uint64_t t1 = sluice_now_ns(), ts = 0;
            if (len >= sizeof ts)
                memcpy(&ts, rep, sizeof ts);
            dist_cma_answer(r, rep, len);
            free(rep);
            if (t1 - t0 < best) {
                best = t1 - t0;
                dist_sched_clock_off[r] = (int64_t)ts - (int64_t)(t0 + (t1 - t0) / 2);
            }
        }
    }
}
