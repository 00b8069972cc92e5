/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: host memory that pending reads fill, and the writes whose data waits for
 * those reads to land. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

/* --- host memory that pending reads fill ------------------------------------------------------
 * A host write of bytes that a pending read (from any rank, rank 0's own devices included) is to
 * bring must not take them at enqueue: rank 0 would send, stage or compare what the memory holds
 * before the read lands (stale bytes). Such a write goes to its rank at once, but its data only
 * when its node is ready in the DAG: its wait list and queue order complete, so the read it waits
 * for has landed. Its rank's engine waits for the data as for any write. */
struct host_fill {
    uint64_t id;
    uintptr_t lo, hi;
};
static struct host_fill *fills;
size_t dist_sched_nfills, cap_fills;
struct dist_event *dist_sched_lates; /* writes whose data waits for their node to be ready */

static void fill_add(uint64_t id, uintptr_t lo, uintptr_t hi)
{
    if (dist_sched_nfills == cap_fills) {
        size_t cap = cap_fills ? 2 * cap_fills : 64;
        struct host_fill *v = realloc(fills, cap * sizeof *v);
        if (v == NULL)
            return; /* not known: such a write then takes the bytes at enqueue, as before */
        fills = v;
        cap_fills = cap;
    }
    fills[dist_sched_nfills++] = (struct host_fill){id, lo, hi};
}

void dist_sched_fill_drop(uint64_t id)
{
    for (size_t i = 0; i < dist_sched_nfills; i++)
        if (fills[i].id == id) {
            fills[i] = fills[--dist_sched_nfills];
            return;
        }
}

int dist_sched_fill_overlaps(const void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    for (size_t i = 0; i < dist_sched_nfills; i++)
        if (fills[i].lo < hi && lo < fills[i].hi)
            return 1;
    return 0;
}

int dist_sched_host_busy(const void *p, size_t len)
{
    pthread_mutex_lock(&dist_sched_lock);
    int busy = dist_sched_fill_overlaps(p, len);
    pthread_mutex_unlock(&dist_sched_lock);
    return busy;
}

/* The host range a read fills: plain, or the bounding range of a rect read's host region. */
void dist_sched_note_fill(const struct dist_cmd *c, uint64_t id)
{
    if (dist_cmd_info(c->kind)->op != SLUICE_REMOTE_CMD_READ || c->queue == NULL)
        return;
    if (c->kind == DIST_CMD_READ_BUFFER_RECT && c->nbytes == sizeof(struct sluice_rect_geom)) {
        struct sluice_rect_geom g;
        memcpy(&g, c->bytes, sizeof g);
        uintptr_t base = (uintptr_t)(c->rect != NULL ? (void *)c->rect->dst : c->recv);
        size_t lo, hi;
        dist_rect_host_span(&g, &lo, &hi);
        fill_add(id, base + lo, base + hi);
    } else if (c->recv != NULL && c->len > 0) {
        fill_add(id, (uintptr_t)c->recv, (uintptr_t)c->recv + c->len);
    }
}

/* The node of a write whose data waited became ready: the data goes now. */
void dist_sched_send_late(uint64_t id)
{
    for (struct dist_event **p = &dist_sched_lates; *p != NULL; p = &(*p)->late_next) {
        struct dist_event *e = *p;
        if (e->id != id)
            continue;
        *p = e->late_next;
        if (e->late_pack != NULL)
            dist_rect_pack((unsigned char *)e->late_send, e->late_pack, &e->late_geom);
        uint64_t t_send = sluice_now_ns(); /* the peer may have it before the call returns */
        if (sluice_remote_data_isend(sluice_comm(), e->rank, e->id, e->late_send, e->late_len, e->reqs) !=
            MPI_SUCCESS)
            dist_fault_peer(e->rank, MPI_ERR_OTHER, "sending a command's data");
        dist_sched_pend_mpi(e, e->late_len);
        dist_sched_data_trace(e->rank, e->late_len, DIST_DATA_SENT);
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)e->rank, e->late_len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
        return;
    }
}
