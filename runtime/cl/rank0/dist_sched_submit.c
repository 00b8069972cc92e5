/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: a command the program enqueued becomes a record, a node of the DAG and a
 * built command (its wait list and payload encoded) that goes to its rank now or when the window
 * of collective replacement closes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_sched_internal.h"
#include "trace/trace.h"

/* --- submission ------------------------------------------------------------------------------ */

static cl_command_queue_properties queue_props(struct dist_queue *q)
{
    if (!q->props_known) {
        cl_command_queue_properties p = 0;
        dist_info(q->dev->rank, SLUICE_RG_QUEUE, q->rid, 0, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL);
        q->props = p;
        q->props_known = 1;
    }
    return q->props;
}

/* A command's wait list on the wire, after its header at p: the ids of commands of its own rank
 * (their real events there), then those of other ranks and user events, retained in rdeps and
 * NOTIFYd once the command has gone (dist_sched_transmit). ids gets every id, for the DAG. */
struct waits {
    uint32_t nlocal, nremote;
    size_t nid;
    int failed; /* a dependency failed already */
};

static unsigned char *encode_waits(const struct dist_cmd *c, unsigned char *p, uint64_t *ids,
                                   struct dist_event **rdeps, struct waits *w)
{
    *w = (struct waits){0, 0, 0, 0};
    for (cl_uint i = 0; i < c->nwait; i++) {
        struct dist_event *d = (struct dist_event *)c->wait[i];
        if (d->id != 0)
            ids[w->nid++] = d->id;
        if (d->status <= CL_COMPLETE) {
            w->failed |= d->status < 0;
            continue;
        }
        if (d->rank == c->rank && !d->user)
            w->nlocal++;
    }
    unsigned char *at = p + sizeof(struct sluice_remote_cmd);
    unsigned char *rem = at + w->nlocal * 8;
    for (cl_uint i = 0; i < c->nwait; i++) {
        struct dist_event *d = (struct dist_event *)c->wait[i];
        if (d->status <= CL_COMPLETE)
            continue;
        if (d->rank == c->rank && !d->user) {
            memcpy(at, &d->id, 8);
            at += 8;
        } else {
            memcpy(rem, &d->id, 8);
            rem += 8;
            __atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
            rdeps[w->nremote++] = d;
        }
    }
    return rem;
}

/* The whole payload: header, wait list (encode_waits), accesses, the operation's bytes. Returns
 * its length. */
static size_t encode_cmd(const struct dist_cmd *c, const struct dist_event *e, unsigned flags,
                         unsigned char *p, unsigned char *at, const struct waits *w)
{
    struct sluice_remote_cmd h = {e->id,
                                  c->queue ? c->queue->rid : 0,
                                  c->ctx->rid[c->rank],
                                  w->nlocal,
                                  w->nremote,
                                  (uint32_t)c->naccess,
                                  flags};
    memcpy(p, &h, sizeof h);
    if (c->naccess)
        memcpy(at, c->raccess, c->naccess * sizeof *c->raccess);
    at += c->naccess * sizeof *c->raccess;
    if (c->nbytes)
        memcpy(at, c->bytes, c->nbytes);
    at += c->nbytes;
    return (size_t)(at - p);
}

/* Adds the command's node to the DAG (dispatched at once when ready). Returns 1 when it is ready. */
static int dag_add_cmd(const struct dist_cmd *c, const struct dist_event *e, const struct dist_cmd_info *kind,
                       int ooo, const uint64_t *ids, size_t nid)
{
    struct sluice_dag_cmd dc = {.id = e->id,
                                .queue = (uint64_t)(uintptr_t)c->queue,
                                .out_of_order = ooo,
                                .rank = c->rank,
                                .kind = kind->dag,
                                .wait = ids,
                                .nwait = nid,
                                .access = c->access,
                                .naccess = c->naccess,
                                .host_addr = (uint64_t)(uintptr_t)(c->send ? c->send : c->recv),
                                .host_size = c->len};
    struct sluice_dag_node_info info;
    uint64_t now = sluice_now_ns();
    if (sluice_dag_add(dist_sched_dag, &dc, now, &info) != 0 || info.state != SLUICE_DAG_READY)
        return 0;
    sluice_dag_dispatch(dist_sched_dag, e->id, now);
    return 1;
}

/* A plain write whose bytes a pending read still brings, or that waits for a user event (the
 * program may fill the memory before setting it): its data waits for its dependencies. */
static int write_is_late(const struct dist_cmd *c, const struct dist_cmd_info *kind, int ready)
{
    if (ready)
        return 0;
    if (c->pack_from != NULL)
        return 1; /* dist_exec.c saw a pending read bring its host bytes */
    if (kind->op != SLUICE_REMOTE_CMD_WRITE || c->rank == 0 || c->send == NULL || c->len == 0 ||
        c->nbytes != 0 || (c->flags & SLUICE_CMD_STAGED))
        return 0;
    int late = dist_sched_fill_overlaps(c->send, c->len);
    for (cl_uint i = 0; i < c->nwait && !late; i++) {
        struct dist_event *w = (struct dist_event *)c->wait[i];
        late = w->user && w->status > CL_COMPLETE;
    }
    return late;
}

/* The built command, ready to be sent now or when the window closes. */
static void held_fill(struct held *h, const struct dist_cmd *c, struct dist_event *e,
                      const struct dist_cmd_info *kind, unsigned char *p, size_t nbytes, int late)
{
    h->e = e;
    h->req.op = kind->op;
    h->dir = kind->dir;
    memcpy(h->req.a, &c->args, sizeof c->args);
    h->req.nbytes = nbytes;
    h->p = p;
    h->rank = c->rank;
    h->send = c->send;
    h->recv = c->recv;
    h->len = c->len;
    h->staged = (c->flags & SLUICE_CMD_STAGED) != 0;
    h->late = late;
    h->pack_from = c->pack_from;
    if (c->pack_from != NULL)
        memcpy(&h->geom, c->bytes, sizeof h->geom);
    h->bcast_candidate = c->rank != 0 && kind->op == SLUICE_REMOTE_CMD_WRITE && c->queue != NULL &&
                         c->send != NULL && c->nbytes == 0 && c->len > 0 && !late;
    h->push = c->push;
    h->push_rank = c->push_rank;
    h->push_xfer = c->push_xfer;
    h->push_ctx = c->push ? c->ctx->rid[c->push_rank] : 0;
    h->push_access = c->push_access;
    if ((h->push_image = c->push_geom != NULL))
        h->push_geom = *c->push_geom;
    if (h->bcast_candidate && !h->staged && dist_sched_dcr_on(h->rank) && dist_dhdcr_on())
        dist_sched_held_tiles(h);
}

/* A command that never goes to its rank: complete it with `status` now. */
static void fail_unsent(struct dist_event *e, unsigned char *p, struct dist_event **rdeps, uint32_t nremote,
                        cl_int status)
{
    free(p);
    for (uint32_t i = 0; i < nremote; i++)
        dist_sched_unref_locked(rdeps[i]);
    free(rdeps);
    e->done_msg = 1;
    dist_sched_complete(e, status);
}

cl_int dist_sched_submit(const struct dist_cmd *c, struct dist_event **out)
{
    uint64_t queued = sluice_now_ns(); /* CL_PROFILING_COMMAND_QUEUED */
    if (out != NULL)
        *out = NULL;
    MPI_Comm comm = c->rank != 0 ? sluice_comm() : MPI_COMM_NULL;
    if (c->rank != 0 && comm == MPI_COMM_NULL)
        return CL_DEVICE_NOT_AVAILABLE;
    unsigned flags = c->flags & ~(unsigned)SLUICE_CMD_STAGED;
    if (c->queue != NULL && (queue_props(c->queue) & CL_QUEUE_PROFILING_ENABLE))
        flags |= SLUICE_CMD_PROFILE;
    int ooo = c->queue != NULL && (queue_props(c->queue) & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    for (cl_uint i = 0; i < c->nwait; i++)
        SLUICE_RETURN_ERROR_ON(c->wait == NULL || c->wait[i] == NULL, CL_INVALID_EVENT_WAIT_LIST,
                               "c->wait == NULL || c->wait[i] == NULL");
    const struct dist_cmd_info *kind = dist_cmd_info(c->kind);
    struct dist_event *e = dist_sched_new_record(c->queue, c->ctx, c->rank, kind->type);
    size_t cap = sizeof(struct sluice_remote_cmd) + c->nwait * 8 +
                 c->naccess * sizeof(struct sluice_remote_access) + c->nbytes;
    unsigned char *p = malloc(cap);
    uint64_t *ids = malloc((c->nwait + 1) * sizeof *ids);
    struct dist_event **rdeps = malloc((c->nwait + 1) * sizeof *rdeps);
    if (e == NULL || p == NULL || ids == NULL || rdeps == NULL) {
        free(e);
        free(p);
        free(ids);
        free(rdeps);
        return CL_OUT_OF_HOST_MEMORY;
    }
    e->refs = 0; /* one in flight and the caller's, below */
    e->queued_ns = queued;
    e->hold = c->hold;
    e->free_after = c->free_after;
    e->rect = c->rect;
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_start_locked();
    e->id = ++dist_sched_last_id;
    struct waits w;
    unsigned char *at = encode_waits(c, p, ids, rdeps, &w);
    size_t nbytes = encode_cmd(c, e, flags, p, at, &w);
    int ready = dag_add_cmd(c, e, kind, ooo, ids, w.nid);
    free(ids);
    dist_sched_insert(e);
    int late = write_is_late(c, kind, ready);
    dist_sched_note_fill(c, e->id);
    e->refs++; /* in flight */
    dist_sched_inflight++;
    if (c->queue != NULL)
        c->queue->inflight++;
    if (out != NULL) {
        e->refs++;
        *out = e;
    }
    cl_int r = CL_SUCCESS;
    struct held *h = w.failed ? NULL : calloc(1, sizeof *h);
    if (w.failed) { /* the command never runs */
        fail_unsent(e, p, rdeps, w.nremote, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    } else if (h == NULL) {
        fail_unsent(e, p, rdeps, w.nremote, r = CL_OUT_OF_HOST_MEMORY);
    } else {
        held_fill(h, c, e, kind, p, nbytes, late);
        h->rdeps = rdeps;
        h->nrdeps = w.nremote;
        dist_sched_hold_or_transmit(h);
    }
    pthread_mutex_unlock(&dist_sched_lock);
    sluice_engine_wake();
    if (dist_sched_started == 2)
        return CL_OUT_OF_RESOURCES;
    dist_sched_run_callbacks();
    return r;
}
