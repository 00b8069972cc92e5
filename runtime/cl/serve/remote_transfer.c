/* SPDX-License-Identifier: MIT */
/* Bulk data of the command engine (remote_engine.h): reads to a peer and writes from a peer move
 * in pieces (sluice_remote_chunk) through staging buffers, kept for reuse (pinned for a GPU), or
 * straight from and into a mapped buffer on a CPU device. A piece is written to the device as
 * soon as it arrived and sent as soon as it was read; a transfer that cannot run still sends or
 * receives its pieces, so that the peer never waits forever. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cl/serve/remote_engine.h"
#include "cl/serve/remote_image.h"
#include "trace/trace.h"

/* Staging buffers are kept for reuse (a few, up to STAGING_KEEP bytes): a fresh large malloc
 * costs a page fault per page on first touch, which halved the bandwidth of large transfers. */
#define STAGING_SLOTS 4
#define STAGING_KEEP ((size_t)1 << 30)
static struct {
    unsigned char *p;
    size_t cap;
} pool[STAGING_SLOTS];

static unsigned char *staging_get(size_t size, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < STAGING_SLOTS; i++)
        if (pool[i].p != NULL && pool[i].cap >= size && (best < 0 || pool[i].cap < pool[best].cap))
            best = i;
    if (best >= 0) {
        unsigned char *p = pool[best].p;
        *cap = pool[best].cap;
        pool[best].p = NULL;
        return p;
    }
    *cap = size ? size : 1;
    return malloc(*cap);
}

static void staging_put(unsigned char *p, size_t cap)
{
    if (p == NULL)
        return;
    size_t kept = 0;
    int slot = -1;
    for (int i = 0; i < STAGING_SLOTS; i++) {
        if (pool[i].p != NULL)
            kept += pool[i].cap;
        else if (slot < 0)
            slot = i;
    }
    if (slot >= 0 && kept + cap <= STAGING_KEEP) {
        pool[slot].p = p;
        pool[slot].cap = cap;
    } else {
        free(p);
    }
}

/* Staging for a device that is not a CPU (a GPU): page-locked host memory, the mapping of a buffer
 * created CL_MEM_ALLOC_HOST_PTR and kept mapped (NVIDIA's recipe for pinned memory). From pageable
 * memory NVIDIA's OpenCL copies in the calling thread, so the serving loop did each piece's
 * device copy and its MPI transfer one after the other; from pinned memory the copy is a DMA that
 * runs while the loop moves the next piece. A few are kept per process, up to PINNED_KEEP bytes. */
#define PINNED_SLOTS 4
#define PINNED_KEEP ((size_t)1 << 30)
#define PINNED_MIN ((size_t)64 << 10) /* below, a pageable copy costs little */
static struct pinned {
    cl_context ctx;
    cl_mem mem;
    unsigned char *p;
    size_t cap;
    int busy;
} pinned[PINNED_SLOTS];

/* A queue of its own for the map and the unmap: a blocking map on a command's queue would wait
 * for every command before it. */
static cl_command_queue pinned_queue(cl_context ctx)
{
    cl_device_id dev = NULL;
    cl_int err = CL_SUCCESS;
    if (api()->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) != CL_SUCCESS && dev == NULL)
        return NULL;
    return api()->clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
}

static void pinned_drop(struct pinned *s)
{
    cl_command_queue q = pinned_queue(s->ctx);
    if (q != NULL) {
        api()->clEnqueueUnmapMemObject(q, s->mem, s->p, 0, NULL, NULL);
        api()->clFinish(q);
        api()->clReleaseCommandQueue(q);
    }
    api()->clReleaseMemObject(s->mem);
    memset(s, 0, sizeof *s);
}

/* Pinned staging of at least `size` bytes for commands of queue q, or NULL (then malloc'd
 * staging is used): only for a device that is not a CPU, from PINNED_MIN bytes. */
static unsigned char *pinned_get(cl_command_queue q, size_t size, size_t *cap)
{
    cl_device_id dev = NULL;
    cl_device_type t = CL_DEVICE_TYPE_CPU;
    cl_context ctx = NULL;
    if (size < PINNED_MIN ||
        api()->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        api()->clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS ||
        (t & CL_DEVICE_TYPE_CPU) ||
        api()->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS)
        return NULL;
    int best = -1, free_slot = -1;
    size_t kept = 0;
    for (int i = 0; i < PINNED_SLOTS; i++) {
        struct pinned *s = &pinned[i];
        kept += s->cap;
        if (s->mem == NULL && free_slot < 0)
            free_slot = i;
        if (s->mem != NULL && !s->busy && s->ctx == ctx && s->cap >= size &&
            (best < 0 || s->cap < pinned[best].cap))
            best = i;
    }
    if (best >= 0) {
        pinned[best].busy = 1;
        *cap = pinned[best].cap;
        return pinned[best].p;
    }
    /* Room for a new one: the free slot, else the largest idle one (also when over PINNED_KEEP). */
    if (free_slot < 0 || kept + size > PINNED_KEEP) {
        int victim = -1;
        for (int i = 0; i < PINNED_SLOTS; i++)
            if (pinned[i].mem != NULL && !pinned[i].busy &&
                (victim < 0 || pinned[i].cap > pinned[victim].cap))
                victim = i;
        if (victim < 0)
            return NULL;
        kept -= pinned[victim].cap;
        pinned_drop(&pinned[victim]);
        free_slot = victim;
        if (kept + size > PINNED_KEEP)
            return NULL;
    }
    cl_int err = CL_SUCCESS;
    cl_mem mem = api()->clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &err);
    cl_command_queue mq = mem != NULL ? pinned_queue(ctx) : NULL;
    void *p = mq != NULL ? api()->clEnqueueMapBuffer(mq, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0,
                                                     NULL, NULL, &err)
                         : NULL;
    if (mq != NULL)
        api()->clReleaseCommandQueue(mq);
    if (p == NULL || err != CL_SUCCESS) {
        if (mem != NULL)
            api()->clReleaseMemObject(mem);
        return NULL;
    }
    pinned[free_slot] = (struct pinned){ctx, mem, p, size, 1};
    *cap = size;
    return p;
}

/* 1 when p was pinned staging (now free for the next command). */
static int pinned_put(unsigned char *p)
{
    for (int i = 0; i < PINNED_SLOTS; i++)
        if (pinned[i].mem != NULL && pinned[i].p == p) {
            pinned[i].busy = 0;
            return 1;
        }
    return 0;
}

/* Staging of a command's bulk data: pinned for a GPU, else from the pool above. */
static unsigned char *staging_for(cl_command_queue q, size_t size, size_t *cap)
{
    unsigned char *p = q != NULL ? pinned_get(q, size, cap) : NULL;
    return p != NULL ? p : staging_get(size, cap);
}

void sluice_eng_staging_release(unsigned char *p, size_t cap)
{
    if (!pinned_put(p))
        staging_put(p, cap);
}

/* The event of a command of n pieces: on an in-order queue the last piece's (it ends after the
 * others), else a marker over all of them. */
static cl_int pieces_event(struct eng_cmd *c, size_t n)
{
    cl_command_queue_properties p = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if (n == 1 ||
        (api()->clGetCommandQueueInfo(c->q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL) == CL_SUCCESS &&
         !(p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)))
        return api()->clRetainEvent(c->ev = c->piece_ev[n - 1]);
    return api()->clEnqueueMarkerWithWaitList(c->q, (cl_uint)n, c->piece_ev, &c->ev);
}

/* A read to a peer: `n` pieces, each read waiting for wl and sent as soon as it is read, then the
 * command's event over all of them. */
/* Gathers: how many this rank was given, and posted (in that order: MPI needs the collectives of
 * one communicator in one order on every member, and the device reads may end in another). */
uint64_t sluice_eng_gathers, sluice_eng_gathers_posted;

/* This rank's part of a gather: its whole slice as one piece, once every earlier gather is posted.
 * Returns 0 when it has to wait for its turn. */
static int post_gather(struct eng_cmd *c, int force)
{
    if (c->gseq != sluice_eng_gathers_posted && !force)
        return 0;
    MPI_Comm g = sluice_remote_group_comm(c->bcast);
    uint64_t t_send = sluice_now_ns(); /* rank 0 may have the part before MPI_Igatherv returns */
    int rc = g == MPI_COMM_NULL ? MPI_ERR_COMM
                                : MPI_Igatherv(c->staging, (int)c->size, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE,
                                               0, g, &c->reqs[0]);
    if (checked(rc, 0, "sending a gather's part") != MPI_SUCCESS)
        c->status = CL_OUT_OF_RESOURCES;
    else if (sluice_trace_active()) /* a read back as any other: one message of this rank's slice */
        sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, 0, c->size,
                            (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    sluice_eng_gathers_posted++;
    return 1;
}

/* A read that failed (its device read, or what it waited for) while pieces were still unsent:
 * each goes as a zero-length message, which completes the peer's receive and leaves its memory
 * as it was (OpenCL leaves a failed read's destination alone); by CMA nothing more is copied. A
 * gather's part has a fixed size: zeros go, in its turn (sluice_eng_send_read_pieces). */
static void send_no_data(struct eng_cmd *c)
{
    static const unsigned char none;
    if (c->cma != NULL) /* (waits for the pieces being copied: those were read) */
        sluice_cma_end(c->cma);
    c->cma = NULL;
    if (c->cma_addr != 0 || c->reqs == NULL) {
        c->sent = c->npieces;
        return;
    }
    while (c->sent < c->npieces) {
        size_t i = c->sent++;
        checked(
            MPI_Isend(&none, 0, MPI_BYTE, c->peer, SLUICE_REMOTE_DATA_TAG(c->id), sluice_comm(), &c->reqs[i]),
            c->peer, "sending a buffer");
    }
}

cl_int sluice_eng_read_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    size_t n = (c->flags & SLUICE_CMD_GATHER) ? 1 : sluice_remote_pieces(c->size);
    c->npieces = n;
    c->staging = staging_for(c->q, c->size, &c->staging_cap);
    c->piece_ev = calloc(n, sizeof *c->piece_ev);
    c->reqs = malloc(n * sizeof *c->reqs);
    if (c->staging == NULL || c->piece_ev == NULL || c->reqs == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    if (c->cma_addr != 0 &&
        (c->cma = sluice_cma_start(c->staging, c->cma_addr, c->size, c->id, 1, 0)) == NULL)
        return CL_OUT_OF_HOST_MEMORY; /* (pieces are given to it as they are read) */
    cl_int r = CL_SUCCESS;
    for (size_t i = 0; i < n && r == CL_SUCCESS; i++) {
        size_t k, off = sluice_remote_piece(c->size, i, &k);
        if (c->flags & SLUICE_CMD_GATHER)
            k = c->size; /* one piece */
        r = api()->clEnqueueReadBuffer(c->q, buf, CL_FALSE, c->off + off, k, c->staging + off, (cl_uint)nw,
                                       nw ? wl : NULL, &c->piece_ev[i]);
        if (r == CL_SUCCESS)
            sluice_eng_watch(c, c->piece_ev[i], (long)i);
    }
    if (r == CL_SUCCESS)
        r = pieces_event(c, n);
    if (r != CL_SUCCESS)
        c->ev = NULL;
    return r;
}

/* A write from a peer: the pieces are received into a staging buffer and each is written to the
 * device when it has arrived (user events as arrival gates would be simpler, but PoCL's basic
 * device deadlocks when a user event with dependents is set). Until every piece is enqueued, the
 * command has no event yet, so later commands of this rank wait in `deferred`. */
/* On a CPU device a mapped buffer is the device memory itself: receiving into it saves the copy
 * from a staging buffer (worth it from 1 MiB). */
static int map_worthwhile(struct eng_cmd *c)
{
    cl_device_id dev = NULL;
    cl_device_type t = 0;
    return !c->rect && c->size >= ((size_t)1 << 20) &&
           api()->clGetCommandQueueInfo(c->q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) == CL_SUCCESS &&
           api()->clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS &&
           (t & CL_DEVICE_TYPE_CPU);
}

/* A write from a peer into staging is received RECV_AHEAD pieces ahead of the device: piece i+2's
 * receive is posted once piece i arrived and its device copy was enqueued. With every receive
 * posted at once, MPI may move all the pieces before the first test returns (Open MPI's
 * shared-memory single copy is a synchronous copy in the receiver's progress), and the device
 * copies then began after the whole transfer instead of overlapping it: a read to a peer, paced
 * by its device reads, did not have that (0.81-0.98 of MPI on the GPU machine against 0.58-0.90
 * for writes). A mapped write (no device copy after it) and the collectives post all pieces. */
#define RECV_AHEAD 2

static int windowed(const struct eng_cmd *c)
{
    return c->mapped == NULL && !c->rect &&
           !(c->flags & (SLUICE_CMD_SCATTER | SLUICE_CMD_BCAST | SLUICE_CMD_ALLGATHER));
}

/* Posts the receives of a windowed write up to RECV_AHEAD pieces past the ones arrived. */
static int post_ahead(struct eng_cmd *c)
{
    while (c->nposted < c->npieces && c->nposted < c->sent + RECV_AHEAD) {
        size_t i = c->nposted++, k, off = sluice_remote_piece(c->size, i, &k);
        int rc = MPI_Irecv(c->staging + off, (int)k, MPI_BYTE, c->peer, SLUICE_REMOTE_DATA_TAG(c->id),
                           sluice_comm(), &c->reqs[i]);
        if (checked(rc, c->peer, "receiving a buffer") != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* The pieces of a write from a peer, or of a broadcast rank 0 roots (collective replacement). */
static int irecv_data(struct eng_cmd *c, void *to)
{
    c->nposted = c->npieces;
    if (c->flags & SLUICE_CMD_ALLGATHER) /* posted once this rank's slice is in (write_arrived) */
        return sluice_eng_allgather_start(c, to);
    if (c->flags & SLUICE_CMD_SCATTER) {
        MPI_Comm g = sluice_remote_group_comm(c->bcast);
        return g == MPI_COMM_NULL
                   ? MPI_ERR_COMM
                   : MPI_Iscatterv(NULL, NULL, NULL, MPI_BYTE, to, (int)c->size, MPI_BYTE, 0, g, c->reqs);
    }
    if (c->flags & SLUICE_CMD_BCAST)
        return sluice_eng_chain_start(c, to);
    return sluice_remote_data_irecv(sluice_comm(), c->peer, c->id, to, c->size, c->reqs);
}

void sluice_eng_post_receives(struct eng_cmd *c)
{
    c->posted = 1;
    unsigned char *to = c->mapped;
    if (to == NULL && c->staging == NULL)
        c->staging = staging_get(c->size, &c->staging_cap); /* the map failed: receive and drop */
    if (to == NULL)
        to = c->staging;
    if (c->cma_addr != 0) {
        c->nposted = c->npieces;
        if (to == NULL ||
            (c->cma = sluice_cma_start(to, c->cma_addr, c->size, c->id, 0, c->npieces)) == NULL) {
            c->status = CL_OUT_OF_HOST_MEMORY; /* nothing to copy into: the write fails */
            c->sent = c->npieces;
        }
    } else if (to != NULL)
        checked(irecv_data(c, to), c->peer, "receiving a buffer");
}

/* A map that got no completion callback: undo it (if it was made) and drop what it held, so the
 * staged path runs instead. */
static void undo_map(struct eng_cmd *c, cl_mem buf, cl_int err)
{
    if (c->mapped != NULL && err == CL_SUCCESS)
        api()->clEnqueueUnmapMemObject(c->q, buf, c->mapped, 1, &c->map_ev, NULL);
    if (c->map_ev != NULL)
        api()->clReleaseEvent(c->map_ev);
    c->map_ev = NULL;
    c->mapped = NULL;
    free(c->reqs);
    c->reqs = NULL;
}

/* A read to a peer from a CPU device (1 MiB and up): the buffer is mapped for reading and the
 * pieces are sent straight from it once the map completed; the unmap, after the last send, is
 * the command's event. Until then later commands of this rank wait (as behind a write from a
 * peer), so nothing overwrites the buffer while it is being sent. Returns 0 to use staging. */
int sluice_eng_read_mapped(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    if (!map_worthwhile(c))
        return 0;
    size_t n = sluice_remote_pieces(c->size);
    cl_int err = CL_SUCCESS;
    if ((c->reqs = malloc(n * sizeof *c->reqs)) == NULL)
        return 0;
    c->mapped = api()->clEnqueueMapBuffer(c->q, buf, CL_FALSE, CL_MAP_READ, c->off, c->size, (cl_uint)nw,
                                          nw ? wl : NULL, &c->map_ev, &err);
    if (c->mapped != NULL && err == CL_SUCCESS && sluice_eng_watch(c, c->map_ev, SLUICE_ENG_MAP)) {
        c->npieces = n;
        for (size_t i = 0; i < n; i++)
            c->reqs[i] = MPI_REQUEST_NULL;
        api()->clFlush(c->q);
        return 1;
    }
    undo_map(c, buf, err);
    return 0;
}

/* The map of a mapped read completed (or failed: no data goes, the peer must not wait). */
void sluice_eng_post_sends(struct eng_cmd *c)
{
    c->posted = 1;
    const unsigned char *from = c->mapped;
    if (from == NULL) { /* the map failed: nothing was read */
        if (c->status >= 0)
            c->status = CL_OUT_OF_RESOURCES;
        c->sent = 0;
        send_no_data(c);
        return;
    }
    c->sent = c->npieces;
    if (c->cma_addr != 0) {
        if ((c->cma = sluice_cma_start((unsigned char *)from, c->cma_addr, c->size, c->id, 1, c->npieces)) ==
            NULL)
            c->status = CL_OUT_OF_HOST_MEMORY; /* (nothing copied: the read fails) */
        sluice_trace_instant(SLUICE_EV_MSG_SEND, (uint64_t)c->peer, c->size,
                             (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
        return;
    }
    uint64_t t_send = sluice_now_ns(); /* the send starts (the peer may have it before Isend returns) */
    checked(sluice_remote_data_isend(sluice_comm(), c->peer, c->id, from, c->size, c->reqs), c->peer,
            "sending a buffer");
    if (sluice_trace_active()) /* a move between serving ranks, else a read back to rank 0 */
        sluice_trace_record((c->flags & SLUICE_CMD_TRANSFER) ? SLUICE_EV_MPI_SEND : SLUICE_EV_MSG_SEND, 0,
                            t_send, 0, (uint64_t)c->peer, c->size, (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
}

/* The pieces a write's data comes in: a scatter's or an allgather's is one. */
static size_t write_pieces(const struct eng_cmd *c)
{
    return (c->flags & (SLUICE_CMD_SCATTER | SLUICE_CMD_ALLGATHER)) ? 1 : sluice_remote_pieces(c->size);
}

static size_t write_piece(const struct eng_cmd *c, size_t i, size_t *k)
{
    if (c->flags & (SLUICE_CMD_SCATTER | SLUICE_CMD_ALLGATHER)) {
        *k = c->size;
        return 0;
    }
    return sluice_remote_piece(c->size, i, k);
}

cl_int sluice_eng_write_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    size_t n = write_pieces(c);
    c->npieces = n;
    if (map_worthwhile(c)) {
        cl_int err = CL_SUCCESS;
        c->reqs = malloc(n * sizeof *c->reqs);
        if (c->reqs != NULL)
            c->mapped = api()->clEnqueueMapBuffer(c->q, buf, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, c->off,
                                                  c->size, (cl_uint)nw, nw ? wl : NULL, &c->map_ev, &err);
        if (c->mapped != NULL && err == CL_SUCCESS && sluice_eng_watch(c, c->map_ev, SLUICE_ENG_MAP)) {
            for (size_t i = 0; i < n; i++)
                c->reqs[i] = MPI_REQUEST_NULL;
            api()->clFlush(c->q);
            return CL_SUCCESS; /* receives posted when the map completes */
        }
        undo_map(c, buf, err); /* no callback */
    }
    c->staging = staging_for(c->q, c->size, &c->staging_cap);
    c->piece_ev = calloc(n, sizeof *c->piece_ev);
    c->reqs = malloc(n * sizeof *c->reqs);
    c->wait = malloc((nw + 1) * sizeof *c->wait);
    if (c->staging == NULL || c->piece_ev == NULL || c->reqs == NULL || c->wait == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    size_t own = c->nwait_own;
    c->nwait_own = 0;
    for (size_t i = 0; i < nw; i++)
        if (api()->clRetainEvent(wl[i]) == CL_SUCCESS) {
            c->nwait_own += i < own;
            c->wait[c->nwait++] = wl[i];
        }
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    if (c->cma_addr != 0) {
        c->nposted = n;
        c->cma = sluice_cma_start(c->staging, c->cma_addr, c->size, c->id, 0, n);
        return c->cma != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    }
    if (windowed(c) ? post_ahead(c) != MPI_SUCCESS
                    : checked(irecv_data(c, c->staging), c->peer, "receiving a buffer") != MPI_SUCCESS)
        return CL_OUT_OF_RESOURCES;
    return CL_SUCCESS;
}

/* Rect reads and writes. In-process (rank 0's own device) the host side is the program's memory
 * with its own origin and pitches; to or from a peer it is a packed staging buffer (rank 0
 * packs and unpacks): a read is read whole, then sent; a write from a peer is received whole,
 * then written (write_arrived). */
cl_int sluice_eng_rect(struct eng_cmd *c, uint32_t op, cl_mem buf, unsigned char *ptr, cl_event *wl,
                       size_t nw)
{
    const struct sluice_rect_geom *g = &c->geom;
    size_t zero[3] = {0, 0, 0};
    int image = (c->flags & SLUICE_CMD_IMAGE) != 0;
    if (ptr != NULL && image)
        return sluice_remote_image_rw(c->q, op == SLUICE_REMOTE_CMD_WRITE, buf, g, 0, ptr, (cl_uint)nw, wl,
                                      &c->ev);
    if (ptr != NULL)
        return op == SLUICE_REMOTE_CMD_WRITE
                   ? api()->clEnqueueWriteBufferRect(c->q, buf, CL_FALSE, g->origin, g->host_origin,
                                                     g->region, g->row_pitch, g->slice_pitch,
                                                     g->host_row_pitch, g->host_slice_pitch, ptr, (cl_uint)nw,
                                                     nw ? wl : NULL, &c->ev)
                   : api()->clEnqueueReadBufferRect(c->q, buf, CL_FALSE, g->origin, g->host_origin, g->region,
                                                    g->row_pitch, g->slice_pitch, g->host_row_pitch,
                                                    g->host_slice_pitch, ptr, (cl_uint)nw, nw ? wl : NULL,
                                                    &c->ev);
    size_t n = sluice_remote_pieces(c->size);
    c->npieces = n;
    c->staging = staging_get(c->size, &c->staging_cap);
    c->reqs = malloc(n * sizeof *c->reqs);
    if (c->staging == NULL || c->reqs == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    cl_int r =
        image ? sluice_remote_image_rw(c->q, 0, buf, g, 1, c->staging, (cl_uint)nw, wl, &c->ev)
              : api()->clEnqueueReadBufferRect(c->q, buf, CL_FALSE, g->origin, zero, g->region, g->row_pitch,
                                               g->slice_pitch, g->region[0], g->region[0] * g->region[1],
                                               c->staging, (cl_uint)nw, nw ? wl : NULL, &c->ev);
    if (r == CL_SUCCESS)
        sluice_eng_watch(c, c->ev, 0); /* piece 0 read: sends every piece */
    return r;
}

/* The data messages of a transfer that could not be enqueued: sent (without data) or received
 * into a scratch buffer, so that the other end point completes. */
void sluice_eng_settle_peer(struct eng_cmd *c, uint32_t op)
{
    size_t n = op == SLUICE_REMOTE_CMD_WRITE ? write_pieces(c) : sluice_remote_pieces(c->size);
    if (c->reqs != NULL && op == SLUICE_REMOTE_CMD_WRITE && c->staging != NULL)
        return;             /* its receives are posted already */
    if (c->cma_addr != 0) { /* copied by CMA: rank 0 moves no data messages */
        if (c->cma != NULL && op == SLUICE_REMOTE_CMD_READ) { /* nothing more will be read: done */
            sluice_cma_end(c->cma);
            c->cma = NULL;
            c->sent = c->npieces;
        }
        return;
    }
    if (c->reqs == NULL && (c->reqs = malloc(n * sizeof *c->reqs)) == NULL)
        return;
    if (c->staging == NULL && (c->staging = staging_get(c->size, &c->staging_cap)) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    c->npieces = n;
    c->sent = n;
    if (op == SLUICE_REMOTE_CMD_READ && (c->flags & SLUICE_CMD_GATHER)) {
        /* Zeros go as its part at once: a command that failed before its read was enqueued has
         * nothing that would post it later (out of turn only when an earlier gather's read is
         * still running: then MPI may pair them wrongly; the job is failing already). */
        memset(c->staging, 0, c->size);
        c->npieces = c->sent = 1;
        post_gather(c, 1);
    } else if (op == SLUICE_REMOTE_CMD_READ) {
        c->sent = 0;
        send_no_data(c);
    } else
        checked(irecv_data(c, c->staging), c->peer, "receiving a buffer");
}

/* The command's status for a piece CMA could not copy (remote_cma.h): rank 0's memory there not
 * accessible, or rank 0 gone. */
static cl_int cma_error(int st)
{
    return st == -EFAULT ? CL_INVALID_VALUE : CL_OUT_OF_RESOURCES;
}

/* The CMA copy of a read (if it has one) is over: every piece copied, or failed (the read then
 * fails: rank 0's memory there was not writable, or rank 0 is gone). */
static int cma_done(struct eng_cmd *c)
{
    if (c->cma == NULL || c->op != SLUICE_REMOTE_CMD_READ)
        return 1;
    if (c->sent < c->npieces || !sluice_cma_complete(c->cma))
        return 0;
    for (size_t i = 0; i < c->npieces && c->status >= 0; i++)
        if (sluice_cma_piece(c->cma, i) < 0)
            c->status = cma_error(sluice_cma_piece(c->cma, i));
    sluice_cma_end(c->cma);
    c->cma = NULL;
    return 1;
}

/* Pieces of the blocked write that arrived, in order, are enqueued; after the last one the
 * command gets its event and the deferred commands run. */
static void write_arrived(struct eng_cmd *c, int *progress)
{
    if (c->op == SLUICE_REMOTE_CMD_READ) { /* a mapped read: done with the buffer once sent */
        if (!c->posted || !cma_done(c))
            return;
        for (size_t i = 0; i < c->npieces; i++) {
            int flag = 1;
            if (c->reqs[i] != MPI_REQUEST_NULL && checked(MPI_Test(&c->reqs[i], &flag, MPI_STATUS_IGNORE),
                                                          c->peer, "sending a buffer") != MPI_SUCCESS)
                flag = 1;
            if (!flag)
                return;
        }
        *progress = 1;
        c->sent = c->npieces;
    } else {
        if (!sluice_eng_allgather_ready(c))
            return;
        /* A piece from one peer that came short (without data) was a read that failed there
         * (send_no_data); a collective's pieces have their sizes fixed. */
        int p2p = !(c->flags & (SLUICE_CMD_SCATTER | SLUICE_CMD_BCAST | SLUICE_CMD_ALLGATHER));
        MPI_Status mst;
        while (c->sent < c->npieces) {
            int flag = 0;
            if (c->cma != NULL) {
                int st = sluice_cma_piece(c->cma, c->sent);
                if (st < 0 && c->status >= 0)
                    c->status = cma_error(st);
                flag = st != 0;
            } else if (c->reqs[c->sent] == MPI_REQUEST_NULL) {
                break;
            } else if (checked(MPI_Test(&c->reqs[c->sent], &flag, &mst), c->peer, "receiving a buffer") !=
                       MPI_SUCCESS) {
                c->reqs[c->sent] = MPI_REQUEST_NULL;
                c->status = CL_OUT_OF_RESOURCES;
                flag = 1;
            } else if (flag && p2p) {
                int got = 0;
                size_t k;
                write_piece(c, c->sent, &k);
                if (MPI_Get_count(&mst, MPI_BYTE, &got) == MPI_SUCCESS && (size_t)got != k && c->status >= 0)
                    c->status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; /* its source's read failed */
            }
            if (!flag)
                return;
            size_t i = c->sent++, k, off = write_piece(c, i, &k);
            *progress = 1;
            sluice_eng_chain_forward(c, c->sent); /* on to the next member first: it waits for it */
            uint64_t t_arrived = sluice_trace_active() ? sluice_now_ns() : 0;
            if (c->status >= 0 && c->mapped == NULL) /* (what it waits for may have failed since) */
                c->status = sluice_eng_wait_list_check(c->wait, &c->nwait, &c->nwait_own, 1);
            if (c->status >= 0 && !c->rect && c->mapped == NULL) {
                cl_int r = api()->clEnqueueWriteBuffer(c->q, c->buf, CL_FALSE, c->off + off, k,
                                                       c->staging + off, (cl_uint)c->nwait,
                                                       c->nwait ? c->wait : NULL, &c->piece_ev[i]);
                if (r != CL_SUCCESS)
                    c->status = r;
                api()->clFlush(c->q);
            }
            if (t_arrived != 0)
                sluice_trace_record(SLUICE_EV_CL_DIST_PIECE, 0, t_arrived, sluice_now_ns() - t_arrived, c->id,
                                    (uint64_t)i, (uint64_t)k);
            if (c->nposted < c->npieces && post_ahead(c) != MPI_SUCCESS) /* (a failed one still drains) */
                c->status = CL_OUT_OF_RESOURCES;
        }
    }
    if (c->sent < c->npieces || !sluice_eng_chain_sent(c))
        return;             /* (a forward still reads the buffer: the command ends after it) */
    sluice_cma_end(c->cma); /* every piece is in: nothing waits */
    c->cma = NULL;
    sluice_eng_blocked = NULL;
    c->t_ready = c->next_ask = sluice_now_ns(); /* its end is near: ask from 2 us on */
    cl_int r = c->status;
    if (c->mapped != NULL) { /* the data is in the device buffer: unmap (even after a failure) */
        cl_int u = api()->clEnqueueUnmapMemObject(c->q, c->buf, c->mapped, 0, NULL, &c->ev);
        api()->clFlush(c->q);
        if (r >= 0)
            r = u;
    } else if (r >= 0 && c->rect) { /* one write of the whole packed region */
        const struct sluice_rect_geom *g = &c->geom;
        size_t zero[3] = {0, 0, 0};
        r = (c->flags & SLUICE_CMD_IMAGE)
                ? sluice_remote_image_rw(c->q, 1, c->buf, g, 1, c->staging, (cl_uint)c->nwait, c->wait,
                                         &c->ev)
                : api()->clEnqueueWriteBufferRect(c->q, c->buf, CL_FALSE, g->origin, zero, g->region,
                                                  g->row_pitch, g->slice_pitch, g->region[0],
                                                  g->region[0] * g->region[1], c->staging, (cl_uint)c->nwait,
                                                  c->nwait ? c->wait : NULL, &c->ev);
        api()->clFlush(c->q);
    } else if (r >= 0)
        r = pieces_event(c, c->npieces);
    if (r == CL_SUCCESS) {
        for (size_t i = 0; i < c->nacc; i++) {
            struct track *t = sluice_eng_track_of(c->acc[i].root);
            if (t != NULL)
                sluice_eng_track_add(t, c->ev, (int)c->acc[i].write, (c->flags & SLUICE_CMD_TRANSFER) != 0);
        }
        if (!sluice_eng_watch(c, c->ev, SLUICE_ENG_FINAL))
            c->dev_done = 1;
    } else {
        c->ev = NULL;
        fail_now(c, r);
    }
    sluice_eng_run_deferred();
}

/* A command whose event failed without calling back: done, and a read to a peer still sends (or
 * settles) its pieces so that the peer does not wait forever. */
void sluice_eng_failed_silently(struct eng_cmd *c)
{
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
        st >= 0)
        return;
    c->status = st;
    c->dev_done = 1;
    c->cbs = 0;
    c->zombie = 1;
    if (c->op != SLUICE_REMOTE_CMD_READ || c->reqs == NULL || c->sent >= c->npieces)
        return;
    if (c->piece_ev != NULL || c->rect)
        sluice_eng_send_read_pieces(
            c, SLUICE_ENG_FINAL); /* the pieces read go, then none for the failed one on */
    else
        send_no_data(c);
}

/* True when every MPI request of c has completed (testing them advances them). */
int sluice_eng_mpi_done(struct eng_cmd *c, int *progress)
{
    if (c->reqs == NULL)
        return 1;
    if (c == sluice_eng_blocked) {
        write_arrived(c, progress);
        return 0;
    }
    int done = cma_done(c);
    for (size_t i = 0; i < c->npieces; i++) {
        if (c->reqs[i] == MPI_REQUEST_NULL) {
            if (c->op == SLUICE_REMOTE_CMD_READ && i >= c->sent)
                done = 0; /* not sent yet */
            continue;
        }
        int flag = 0;
        if (checked(MPI_Test(&c->reqs[i], &flag, MPI_STATUS_IGNORE), c->peer, "moving a buffer") !=
            MPI_SUCCESS) {
            c->reqs[i] = MPI_REQUEST_NULL;
            if (c->status >= 0)
                c->status = CL_OUT_OF_RESOURCES;
            flag = 1;
        }
        if (!flag) {
            done = 0;
            continue;
        }
        *progress = 1;
    }
    if (c->chain != NULL) { /* a broadcast settled without its device write still forwards */
        sluice_eng_chain_arrived(c);
        done &= sluice_eng_chain_sent(c);
    }
    return done;
}

/* A read to a peer: sends the pieces read so far, in order (a later one waits for earlier ones).
 * `piece` is one known read (its callback came), -1 if none; a rect read has one event for all
 * its pieces. */
void sluice_eng_send_read_pieces(struct eng_cmd *c, long piece)
{
    while (c->sent < c->npieces) {
        cl_event ev = c->rect ? c->ev : c->piece_ev[c->sent];
        int called = c->rect ? piece == 0 : c->sent == (size_t)piece; /* its callback came */
        cl_int st = CL_COMPLETE;
        if (api()->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                CL_SUCCESS ||
            (called && st > CL_COMPLETE))
            st = CL_COMPLETE;
        if (st > CL_COMPLETE)
            return; /* not read yet */
        if (st < 0 && c->status >= 0)
            c->status = st;
        if (c->flags & SLUICE_CMD_GATHER) {
            if (st < 0) /* a gather's part has a fixed size */
                memset(c->staging, 0, c->size);
            if (post_gather(c, 0))
                c->sent = 1;
            return;
        }
        if (st < 0) {
            send_no_data(c);
            return;
        }
        if (c->cma != NULL) { /* copied into rank 0's memory by the CMA threads */
            sluice_cma_ready(c->cma, ++c->sent);
            if (c->sent == c->npieces) /* shown as the message it replaces, as below */
                sluice_trace_instant(SLUICE_EV_MSG_SEND, (uint64_t)c->peer, c->size,
                                     (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
            continue;
        }
        size_t i = c->sent, k, off = sluice_remote_piece(c->size, i, &k);
        uint64_t t_send = sluice_now_ns();
        if (checked(MPI_Isend(c->staging + off, (int)k, MPI_BYTE, c->peer, SLUICE_REMOTE_DATA_TAG(c->id),
                              sluice_comm(), &c->reqs[i]),
                    c->peer, "sending a buffer") != MPI_SUCCESS)
            c->status = CL_OUT_OF_RESOURCES;
        c->sent++;
        if (sluice_trace_active() && c->sent == c->npieces) /* as in post_sends: the last piece's start */
            sluice_trace_record((c->flags & SLUICE_CMD_TRANSFER) ? SLUICE_EV_MPI_SEND : SLUICE_EV_MSG_SEND, 0,
                                t_send, 0, (uint64_t)c->peer, c->size,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    }
}

/* Posted data messages of c not complete yet (MPI_Test leaves completed ones MPI_REQUEST_NULL). */
int sluice_eng_reqs_pending(const struct eng_cmd *c)
{
    if (c->cma != NULL || sluice_eng_chain_pending(c))
        return 1; /* pieces copied by CMA are taken on as they come, forwards go: keep polling */
    for (size_t i = 0; c->reqs != NULL && i < c->npieces; i++)
        if (c->reqs[i] != MPI_REQUEST_NULL)
            return 1;
    return 0;
}

/* A coherence move (or a broadcast write) arrived: MPI_RECV from the peer (when it came by MPI)
 * and CL_TRANSFER device to device (host to device for a broadcast), naming the device as the trace names
 * devices (this process's handle). */
void sluice_eng_trace_inbound(struct eng_cmd *c)
{
    uint64_t now = sluice_now_ns();
    if (c->reqs != NULL && !(c->flags & SLUICE_CMD_ALLGATHER)) /* (an allgather's come from every member) */
        sluice_trace_record(SLUICE_EV_MPI_RECV, 0, now, 0, (uint64_t)c->peer, c->size,
                            (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    cl_device_id dev = NULL;
    api()->clGetCommandQueueInfo(c->q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    sluice_trace_record(SLUICE_EV_CL_TRANSFER, c->status < 0 ? SLUICE_EVF_ERROR : 0, now, 0,
                        (c->flags & (SLUICE_CMD_BCAST | SLUICE_CMD_SCATTER)) ? 0 : 2, c->size,
                        (uint64_t)(uintptr_t)(dev ? sluice_cl_find(dev) : NULL));
}
