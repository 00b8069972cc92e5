/* SPDX-License-Identifier: MIT */
/* Commands of the engine (remote_engine.h): a CMD_* request becomes real enqueues at once, its
 * wait list made of real events (earlier commands of this rank, user events for other ranks'
 * commands, the coherence transfers of its buffers still in flight). Behind a write from a peer
 * that still waits for its data, later commands wait here in order (`deferred`). */
#include <stdlib.h>
#include <string.h>

#include "cl/serve/remote_engine.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_native.h"
#include "common/align.h"
#include "trace/trace.h"

/* Commands that came while a write was still waiting for its data, in order. */
struct deferred {
    struct sluice_remote_req req;
    struct deferred *next;
    unsigned char payload[];
};
static struct deferred *deferred, **deferred_tail = &deferred;
struct eng_cmd *sluice_eng_blocked;

int sluice_eng_deferring(void)
{
    return deferred != NULL;
}

static cl_int enqueue_ndrange(struct eng_cmd *c, const struct sluice_req_ndrange *a, const unsigned char *p,
                              size_t len, cl_event *wl, size_t nw)
{
    cl_uint dims = (cl_uint)a->dims;
    SLUICE_RETURN_ERROR_ON(dims < 1 || dims > 3 || len < 3 * dims * sizeof(size_t), CL_INVALID_WORK_DIMENSION,
                           "dims < 1 || dims > 3 || len < 3 * dims * sizeof(size_t)");
    size_t v[9];
    memcpy(v, p, 3 * dims * sizeof(size_t));
    size_t at = 3 * dims * sizeof(size_t);
    cl_kernel k = PTR(cl_kernel, a->kernel);
    for (uint64_t i = 0; i < a->nargs; i++) {
        struct sluice_remote_karg ka;
        SLUICE_RETURN_ERROR_ON(len - at < sizeof ka, CL_INVALID_KERNEL_ARGS, "len - at < sizeof ka");
        memcpy(&ka, p + at, sizeof ka);
        at += sizeof ka;
        cl_int r;
        if (ka.kind == SLUICE_KARG_MEM) {
            cl_mem m = PTR(cl_mem, ka.mem);
            r = api()->clSetKernelArg(k, (cl_uint)i, sizeof m, &m);
        } else if (ka.kind == SLUICE_KARG_LOCAL) {
            r = api()->clSetKernelArg(k, (cl_uint)i, (size_t)ka.size, NULL);
        } else {
            SLUICE_RETURN_ERROR_ON(len - at < ka.size, CL_INVALID_KERNEL_ARGS, "len - at < ka.size");
            r = api()->clSetKernelArg(k, (cl_uint)i, (size_t)ka.size, p + at);
            at += sluice_pad8(ka.size);
        }
        if (r != CL_SUCCESS)
            return r;
    }
    cl_int failed = sluice_rid_take_error(); /* an argument whose creation failed: not a NULL one */
    if (failed != CL_SUCCESS)
        return failed;
    unsigned nulls = (unsigned)a->nulls;
    return api()->clEnqueueNDRangeKernel(c->q, k, dims, (nulls & SLUICE_NDR_NO_OFFSET) ? NULL : v, v + dims,
                                         (nulls & SLUICE_NDR_NO_LOCAL) ? NULL : v + 2 * dims, (cl_uint)nw,
                                         nw ? wl : NULL, &c->ev);
}

/* The command's record, from its header; NULL when the header is short or memory is out (then
 * nothing is known to report on). A record whose lists overrun the payload fails at once. */
static struct eng_cmd *command_start(const struct sluice_remote_req *req, const unsigned char *p,
                                     struct sluice_remote_cmd *h)
{
    size_t len = (size_t)req->nbytes;
    struct eng_cmd *c = calloc(1, sizeof *c);
    if (c == NULL || len < sizeof *h) {
        free(c);
        return NULL;
    }
    memcpy(h, p, sizeof *h);
    c->id = h->id;
    c->op = req->op;
    c->flags = h->flags;
    size_t need = sizeof *h + ((size_t)h->nlocal + h->nremote) * 8 +
                  (size_t)h->naccess * sizeof(struct sluice_remote_access);
    c->t_enq = c->t_ready = c->next_ask = sluice_now_ns();
    sluice_eng_insert(c);
    if (need > len || (size_t)h->nlocal + h->nremote + h->naccess * 2 + 1 > MAX_WAIT) {
        fail_now(c, CL_INVALID_VALUE);
        return NULL;
    }
    return c;
}

/* The real events behind the command's wait list: earlier commands of this rank (`nlocal` ids)
 * and user events standing for other ranks' commands (`nremote` ids), read from `at`. */
static cl_int wait_on_commands(const struct sluice_remote_cmd *h, const unsigned char *at, cl_context ctx,
                               cl_event *wl, size_t *nw)
{
    cl_int r = CL_SUCCESS;
    for (uint32_t i = 0; i < h->nlocal + h->nremote && r == CL_SUCCESS; i++, at += 8) {
        uint64_t id;
        memcpy(&id, at, 8);
        cl_event e = NULL;
        if (i < h->nlocal) {
            struct eng_cmd *d = sluice_eng_find(id);
            e = d != NULL ? d->ev : NULL;
            if ((d != NULL && d->status < 0) || (d == NULL && sluice_eng_failed_dep(id)))
                r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        } else {
            int none = 0;
            if ((e = sluice_eng_remote_dep(id, ctx, &none)) == NULL && none == 0)
                r = CL_OUT_OF_RESOURCES;
            else if (none < 0)
                r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
        if (e != NULL)
            wl[(*nw)++] = e;
    }
    return r;
}

/* Adds to the wait list what the command's buffer uses must follow (earlier uses still in
 * flight); a transfer waits for them through shields (sluice_eng_shield). */
static void wait_on_buffers(const struct sluice_remote_access *acc, size_t nacc, int transfer, cl_context ctx,
                            cl_event *wl, size_t *nw)
{
    size_t from = *nw;
    for (size_t i = 0; i < nacc; i++) {
        struct track *t = sluice_eng_track_of(acc[i].root);
        if (t != NULL)
            sluice_eng_track_deps(t, (int)acc[i].write, transfer, wl, nw);
    }
    if (!transfer)
        return;
    size_t kept = from;
    for (size_t i = from; i < *nw; i++) {
        cl_event e = sluice_eng_shield(wl[i], ctx);
        if (e != NULL)
            wl[kept++] = e;
    }
    *nw = kept;
}

/* A transfer's operands: its range, its peer and how its data moves. Taken before anything can
 * fail it, since a failed transfer still moves its pieces (sluice_eng_settle_peer), and its gather
 * still takes its turn. */
static cl_int transfer_operands(struct eng_cmd *c, const struct sluice_remote_req *req,
                                const unsigned char *at, size_t rest)
{
    const struct sluice_req_xfer *x = &req->xfer;
    c->off = (size_t)x->offset;
    c->size = (size_t)x->size;
    c->peer = (int)x->peer;
    c->bcast = x->mask;
    if (c->flags & SLUICE_CMD_CMA)
        c->cma_addr = x->cma_addr;
    if (c->flags & SLUICE_CMD_GATHER)
        c->gseq = sluice_eng_gathers++;
    if (c->flags & SLUICE_CMD_ALLGATHER)
        return sluice_eng_allgather_parse(c, at, rest);
    if (rest == sizeof c->geom) {
        c->rect = 1;
        memcpy(&c->geom, at, sizeof c->geom);
    }
    return CL_SUCCESS;
}

/* The real enqueue of one command kind, its operands in req (a transfer's taken already) and
 * the `rest` bytes at `at`. */
static cl_int enqueue_command(struct eng_cmd *c, const struct sluice_remote_req *req, const unsigned char *at,
                              size_t rest, cl_event *wl, size_t nw, const struct sluice_remote_access *acc,
                              size_t nacc)
{
    const struct sluice_req_xfer *x = &req->xfer;
    cl_int r = CL_SUCCESS;
    int image_cmd = (c->flags & SLUICE_CMD_IMAGE) &&
                    (req->op == SLUICE_REMOTE_CMD_COPY || req->op == SLUICE_REMOTE_CMD_FILL);
    if (image_cmd)
        return sluice_remote_image_cmd(c->q, req, at, rest, (cl_uint)nw, wl, &c->ev);
    switch (req->op) {
    case SLUICE_REMOTE_CMD_WRITE:
    case SLUICE_REMOTE_CMD_READ:
        if (c->rect && (x->host != 0 || req->op == SLUICE_REMOTE_CMD_READ))
            r = sluice_eng_rect(c, req->op, PTR(cl_mem, x->buf), PTR(unsigned char *, x->host), wl, nw);
        else if (c->rect)
            r = sluice_eng_write_pieces(c, PTR(cl_mem, x->buf), wl, nw);
        else if (x->host != 0 && req->op == SLUICE_REMOTE_CMD_WRITE)
            r = api()->clEnqueueWriteBuffer(c->q, PTR(cl_mem, x->buf), CL_FALSE, c->off, c->size,
                                            PTR(void *, x->host), (cl_uint)nw, nw ? wl : NULL, &c->ev);
        else if (x->host != 0)
            r = api()->clEnqueueReadBuffer(c->q, PTR(cl_mem, x->buf), CL_FALSE, c->off, c->size,
                                           PTR(void *, x->host), (cl_uint)nw, nw ? wl : NULL, &c->ev);
        else if (req->op == SLUICE_REMOTE_CMD_READ &&
                 ((c->flags & SLUICE_CMD_GATHER) || !sluice_eng_read_mapped(c, PTR(cl_mem, x->buf), wl, nw)))
            r = sluice_eng_read_pieces(c, PTR(cl_mem, x->buf), wl, nw);
        else if (req->op == SLUICE_REMOTE_CMD_WRITE)
            r = sluice_eng_write_pieces(c, PTR(cl_mem, x->buf), wl, nw);
        if (r == CL_SUCCESS && x->host == 0 && (req->op == SLUICE_REMOTE_CMD_WRITE || c->mapped != NULL)) {
            c->buf = PTR(cl_mem, x->buf);
            c->nacc = nacc < 8 ? nacc : 8;
            memcpy(c->acc, acc, c->nacc * sizeof acc[0]);
            sluice_eng_blocked = c; /* write: enqueued as the data arrives; mapped read: unmapped once sent */
        }
        break;
    case SLUICE_REMOTE_CMD_NDRANGE:
        r = enqueue_ndrange(c, &req->ndrange, at, rest, wl, nw);
        break;
    case SLUICE_REMOTE_CMD_COPY:
        if (rest == sizeof c->geom) {
            struct sluice_rect_geom g; /* origin: the source's, host_origin: the destination's */
            memcpy(&g, at, sizeof g);
            r = api()->clEnqueueCopyBufferRect(c->q, PTR(cl_mem, req->copy.src), PTR(cl_mem, req->copy.dst),
                                               g.origin, g.host_origin, g.region, g.row_pitch, g.slice_pitch,
                                               g.host_row_pitch, g.host_slice_pitch, (cl_uint)nw,
                                               nw ? wl : NULL, &c->ev);
            break;
        }
        r = api()->clEnqueueCopyBuffer(c->q, PTR(cl_mem, req->copy.src), PTR(cl_mem, req->copy.dst),
                                       (size_t)req->copy.src_offset, (size_t)req->copy.dst_offset,
                                       (size_t)req->copy.size, (cl_uint)nw, nw ? wl : NULL, &c->ev);
        break;
    case SLUICE_REMOTE_CMD_FILL:
        r = api()->clEnqueueFillBuffer(c->q, PTR(cl_mem, req->fill.buf), at, rest, (size_t)req->fill.offset,
                                       (size_t)req->fill.size, (cl_uint)nw, nw ? wl : NULL, &c->ev);
        break;
    case SLUICE_REMOTE_CMD_NATIVE:
        r = sluice_remote_native_cmd(c->q, &req->native, at, rest, (cl_uint)nw, wl, &c->ev);
        break;
    case SLUICE_REMOTE_CMD_MARKER:
        r = req->marker.barrier
                ? api()->clEnqueueBarrierWithWaitList(c->q, (cl_uint)nw, nw ? wl : NULL, &c->ev)
                : api()->clEnqueueMarkerWithWaitList(c->q, (cl_uint)nw, nw ? wl : NULL, &c->ev);
        break;
    default:
        r = CL_INVALID_OPERATION;
        break;
    }
    return r;
}

/* After the enqueue: register the buffer uses behind the command's event and watch it, or fail it
 * (a failed transfer still sends or receives its pieces: the peer must not wait forever). */
static void command_finish(struct eng_cmd *c, const struct sluice_remote_req *req, cl_int r,
                           const struct sluice_remote_access *acc, size_t nacc, int transfer)
{
    if (c->q != NULL)
        api()->clFlush(c->q); /* OpenCL may hold commands back until a flush */
    if (r == CL_SUCCESS && sluice_eng_blocked == c) {
        /* its event comes with its last piece */
    } else if (r == CL_SUCCESS && c->ev != NULL) {
        for (size_t i = 0; i < nacc; i++) {
            struct track *t = sluice_eng_track_of(acc[i].root);
            if (t != NULL)
                sluice_eng_track_add(t, c->ev, (int)acc[i].write, transfer);
        }
        if (!sluice_eng_watch(c, c->ev, -1))
            c->dev_done = 1; /* no callback: treat it as done now rather than never */
    } else {
        fail_now(c, r != CL_SUCCESS ? r : CL_OUT_OF_RESOURCES);
        if ((req->op == SLUICE_REMOTE_CMD_READ || req->op == SLUICE_REMOTE_CMD_WRITE) && req->xfer.host == 0)
            sluice_eng_settle_peer(c, req->op);
    }
}

static void handle(const struct sluice_remote_req *req, const unsigned char *p)
{
    sluice_rid_take_error(); /* (what an earlier request left) */
    struct sluice_remote_cmd h;
    struct eng_cmd *c = command_start(req, p, &h);
    if (c == NULL)
        return;
    cl_context ctx = PTR(cl_context, h.ctx);
    cl_int r = CL_SUCCESS;
    c->q = h.queue ? PTR(cl_command_queue, h.queue) : sluice_remote_internal_queue(ctx, &r);
    static cl_event wl[MAX_WAIT + 1];
    size_t nw = 0;
    const unsigned char *at = p + sizeof h;
    if (r == CL_SUCCESS)
        r = wait_on_commands(&h, at, ctx, wl, &nw);
    size_t own = nw;
    at += ((size_t)h.nlocal + h.nremote) * 8;
    size_t nacc = h.naccess; /* every use: a kernel may take any number of buffers */
    struct sluice_remote_access acc_small[8], *acc = nacc <= 8 ? acc_small : malloc(nacc * sizeof *acc);
    if (acc == NULL) {
        fail_now(c, CL_OUT_OF_HOST_MEMORY);
        return;
    }
    memcpy(acc, at, nacc * sizeof acc[0]);
    at += nacc * sizeof acc[0];
    int transfer = (h.flags & SLUICE_CMD_TRANSFER) != 0;
    wait_on_buffers(acc, nacc, transfer, ctx, wl, &nw);
    if (r == CL_SUCCESS)
        r = sluice_eng_wait_list_check(wl, &nw, &own, 0);
    c->nwait_own = own; /* (a write from a peer keeps its wait list: remote_transfer.c) */
    size_t rest = (size_t)req->nbytes - (size_t)(at - p);
    if (req->op == SLUICE_REMOTE_CMD_READ || req->op == SLUICE_REMOTE_CMD_WRITE) {
        cl_int t = transfer_operands(c, req, at, rest);
        if (r == CL_SUCCESS)
            r = t;
    }
    cl_int failed = sluice_rid_take_error(); /* its queue's creation failed: that error */
    if (r == CL_SUCCESS && failed != CL_SUCCESS)
        r = failed;
    SLUICE_ERROR_ON(r, c->q == NULL, CL_INVALID_COMMAND_QUEUE, "c->q == NULL");
    if (r == CL_SUCCESS)
        r = enqueue_command(c, req, at, rest, wl, nw, acc, nacc);
    /* A memory object whose creation failed: the command fails with its creation's error (the
     * enqueue refused the NULL it found), as OpenCL allows an allocation failure to show there. */
    if ((failed = sluice_rid_take_error()) != CL_SUCCESS && r != CL_SUCCESS)
        r = failed;
    command_finish(c, req, r, acc, nacc, transfer);
    if (acc != acc_small)
        free(acc);
}

void sluice_eng_run_deferred(void)
{
    while (sluice_eng_blocked == NULL && deferred != NULL) {
        struct deferred *d = deferred;
        deferred = d->next;
        if (deferred == NULL)
            deferred_tail = &deferred;
        if (d->req.op == SLUICE_REMOTE_RELEASE) {
            struct sluice_remote_msg out;
            sluice_remote_handle(&d->req, d->payload, &out); /* its reply went already */
            free(out.bytes);
        } else {
            handle(&d->req, d->payload);
        }
        free(d);
    }
    if (sluice_eng_blocked == NULL && deferred == NULL)
        sluice_eng_forget_notified();
}

static void defer(const struct sluice_remote_req *req, const unsigned char *p)
{
    struct deferred *d = malloc(sizeof *d + (size_t)req->nbytes);
    if (d == NULL)
        return;
    d->req = *req;
    d->next = NULL;
    memcpy(d->payload, p, (size_t)req->nbytes);
    *deferred_tail = d;
    deferred_tail = &d->next;
}

int sluice_engine_defer_release(const struct sluice_remote_req *req, const unsigned char *p)
{
    if (req->op != SLUICE_REMOTE_RELEASE)
        return 0;
    pthread_mutex_lock(&sluice_eng_lock);
    int later = sluice_eng_blocked != NULL || deferred != NULL;
    if (later)
        defer(req, p);
    pthread_mutex_unlock(&sluice_eng_lock);
    return later;
}

void sluice_engine_command(const struct sluice_remote_req *req, const unsigned char *p)
{
    pthread_mutex_lock(&sluice_eng_lock);
    if (sluice_eng_blocked == NULL && deferred == NULL)
        handle(req, p);
    else
        defer(req, p);
    pthread_mutex_unlock(&sluice_eng_lock);
    sluice_engine_wake();
}
