/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: a built command sent to its rank (or to rank 0's own engine), with its data
 * messages, its copy by the rank itself (dist_cma.h), or its data left for later (dist_sched_fill.c);
 * the NOTIFYs of its dependencies on other ranks. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_cma.h"
#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

/* The sending half of a transfer: no record of its own, no DONE (the receiving half's DONE
 * ends the transfer). */
static cl_int send_push(const struct held *c, uint64_t id)
{
    struct {
        struct sluice_remote_cmd h;
        struct sluice_remote_access a;
        struct sluice_rect_geom g;
    } m = {{id, 0, c->push_ctx, 0, 0, 1,
            SLUICE_CMD_TRANSFER | SLUICE_CMD_SILENT | (c->push_image ? SLUICE_CMD_IMAGE : 0u)},
           c->push_access,
           c->push_geom};
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = SLUICE_REMOTE_CMD_READ;
    req.xfer = c->push_xfer;
    req.nbytes = c->push_image ? sizeof m : sizeof m.h + sizeof m.a;
    if (c->push_rank == 0) {
        sluice_engine_command(&req, (const unsigned char *)&m);
        return CL_SUCCESS;
    }
    int rc = sluice_remote_send(sluice_comm(), c->push_rank, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, &m,
                                sizeof m);
    if (rc != MPI_SUCCESS)
        dist_fault_peer(c->push_rank, rc, "sending a transfer");
    return CL_SUCCESS;
}

void dist_sched_data_trace(int peer, size_t bytes, int dir)
{
    if (bytes > 0 && sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CL_DIST_DATA, 0, sluice_now_ns(), 0, (uint64_t)peer, bytes,
                            (uint64_t)dir);
}

/* Rank 0's own data messages of e (pieces of a write it sends, a read it receives, a broadcast it
 * roots): the record completes only when they have. */
void dist_sched_pend_mpi(struct dist_event *e, size_t len)
{
    e->mnext = dist_sched_mpi_pending;
    dist_sched_mpi_pending = e;
    if (len >= SLUICE_REMOTE_DATA_HOT_MIN && dist_sched_nbig < BIG_MAX)
        dist_sched_big[dist_sched_nbig++] = e;
}

/* Sends a built command to its rank (under dist_sched_lock, in program order). */
void dist_sched_transmit(struct held *h)
{
    struct dist_event *e = h->e;
    e->submit_ns = sluice_now_ns(); /* CL_PROFILING_COMMAND_SUBMIT */
    cl_int r = CL_SUCCESS;
    MPI_Comm comm = sluice_comm();
    size_t pieces = sluice_remote_pieces(h->len);
    if (h->push)
        r = send_push(h, e->id);
    if (r != CL_SUCCESS) {
    } else if (h->rank == 0) {
        if (h->send != NULL || h->recv != NULL)
            h->req.xfer.host = (uint64_t)(uintptr_t)(h->send ? h->send : h->recv);
        sluice_engine_command(&h->req, h->p);
    } else {
        struct sluice_dag_node_info info;
        int late = h->late && h->send != NULL && sluice_dag_get(dist_sched_dag, e->id, &info) == 0 &&
                   info.state == SLUICE_DAG_PENDING;
        /* A write or a plain read the rank copies from or to our memory itself (dist_cma.h): no
         * data messages. */
        int cma = !late && h->pack_from == NULL &&
                  (h->send != NULL ? dist_cma_command(h->rank, &h->req, h->p, h->send)
                                   : e->type == CL_COMMAND_READ_BUFFER &&
                                         dist_cma_command(h->rank, &h->req, h->p, h->recv));
        int data =
            !cma && (h->recv != NULL || h->send != NULL); /* (a broadcast's first write has reqs already) */
        if (data) {
            e->reqs = malloc(pieces * sizeof *e->reqs);
            if (e->reqs == NULL)
                r = CL_OUT_OF_HOST_MEMORY;
        }
        int rc = MPI_SUCCESS;
        if (r == CL_SUCCESS && h->recv != NULL && !cma)
            rc = sluice_remote_data_irecv(comm, h->rank, e->id, h->recv, h->len, e->reqs);
        uint64_t t_req = sluice_now_ns(); /* a CMA copy may start as soon as the request is out */
        if (r == CL_SUCCESS && rc == MPI_SUCCESS)
            rc = sluice_remote_send(comm, h->rank, SLUICE_REMOTE_TAG_REQ, &h->req, sizeof h->req, h->p,
                                    (size_t)h->req.nbytes);
        if (r == CL_SUCCESS && h->send != NULL && !late && h->pack_from != NULL)
            dist_rect_pack((unsigned char *)h->send, h->pack_from, &h->geom); /* ready by now */
        uint64_t t_send = sluice_now_ns(); /* a write's data: the peer may have it before Isend returns */
        if (r == CL_SUCCESS && rc == MPI_SUCCESS && h->send != NULL && !late && !cma)
            rc = sluice_remote_data_isend(comm, h->rank, e->id, h->send, h->len, e->reqs);
        if (rc != MPI_SUCCESS)
            dist_fault_peer(h->rank, rc, "sending a command");
        if (r == CL_SUCCESS && cma) {
            dist_sched_data_trace(h->rank, h->len, h->dir); /* it leaves or reaches rank 0 all the same */
            /* The trace shows the copy as the message it replaces, with the data tag. */
            if (h->send != NULL && sluice_trace_active())
                sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_req, 0, (uint64_t)h->rank, h->len,
                                    (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
            else if (h->send == NULL)
                e->recv_len = h->len; /* its MSG_RECV at the DONE: the copy ended before it went */
            /* Its DONE comes as soon as the copy ends: poll for it as for data messages (asleep,
             * the scheduler saw a 16 MiB write's DONE 266 us after it was sent, not 36 us). */
            if (h->len >= SLUICE_REMOTE_DATA_HOT_MIN && dist_sched_nbig < BIG_MAX)
                dist_sched_big[dist_sched_nbig++] = e;
        }
        if (r == CL_SUCCESS && data) {
            e->nreqs = (int)pieces; /* (a late write cannot complete before its data went) */
            if (late) {
                e->late_send = h->send;
                e->late_len = h->len;
                e->late_pack = h->pack_from;
                e->late_geom = h->geom;
                e->late_next = dist_sched_lates;
                dist_sched_lates = e;
            } else {
                dist_sched_pend_mpi(e, h->len);
                dist_sched_data_trace(h->rank, h->len, h->dir);
                if (h->dir == DIST_DATA_SENT && sluice_trace_active())
                    sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, h->len,
                                        (uint64_t)SLUICE_REMOTE_DATA_TAG(e->id));
                else if (h->dir != DIST_DATA_SENT)
                    e->recv_len = h->len; /* recorded by test_mpi */
            }
        }
    }
    /* Its other-rank dependencies: NOTIFY now those that completed while it was held (after the
     * command, so that the rank knows it waits for them), the others when they complete. */
    for (uint32_t i = 0; i < h->nrdeps; i++) {
        struct dist_event *w = h->rdeps[i];
        if (w->status <= CL_COMPLETE)
            dist_sched_notify(h->rank, w->id, w->status);
        else
            w->subs |= 1ull << h->rank;
        dist_sched_unref_locked(w);
    }
    free(h->rdeps);
    if (r != CL_SUCCESS) {
        e->done_msg = 1;
        dist_sched_complete(e, r);
    }
    free(h->p);
    free(h->slices);
    free(h);
}
