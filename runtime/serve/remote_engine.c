/* SPDX-License-Identifier: MIT */
/* The command engine of a rank: turns rank 0's commands (CMD_* requests) into real OpenCL
 * enqueues at once, without waiting for anything, and reports each command's end. One per
 * process: serving ranks run it from their serving loop, rank 0 from its scheduler thread for its
 * own devices.
 *
 * What a command waits for, as real event wait lists:
 * - earlier commands of this rank it depends on: their real events;
 * - commands of other ranks and user events: a real user event, set when rank 0 NOTIFYs;
 * - buffer transfers: a command that uses a buffer waits for the coherence transfers of that
 *   buffer still in flight here (inbound always, outbound when it writes), and a transfer waits
 *   for every earlier use that writes (outbound) or for every earlier use (inbound), so data
 *   leaves after its last writer and is never overwritten while it is still being read out.
 * Bulk data arrives and leaves in pieces (sluice_remote_chunk): a piece is written to the device
 * as soon as it arrived (its write waits on a user event set when its Irecv completed), and sent
 * as soon as it was read. Real-event callbacks only queue a note and wake the loop; the loop
 * thread makes every MPI call. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "cl/backend.h"
#include "cl/object.h"
#include "dist/dist_fault.h"
#include "serve/remote_proto.h"
#include "trace/trace.h"

#define PTR(t, v) ((t)(uintptr_t)(v))
#define BUCKETS 1024
#define MAX_WAIT 4096

struct eng_cmd {
    uint64_t id;
    uint32_t op, flags;
    cl_command_queue q;
    cl_event ev;        /* complete when the command's device work is */
    cl_event *piece_ev; /* per piece of bulk data (reads to a peer, writes from a peer) */
    cl_event *wait;     /* writes from a peer: what each piece's write waits for (retained) */
    size_t nwait;
    struct sluice_remote_access acc[8]; /* its buffer uses, registered once it is enqueued */
    size_t nacc;
    cl_mem buf;
    MPI_Request *reqs; /* per piece */
    size_t npieces, off, size;
    int peer;
    unsigned char *staging;
    size_t staging_cap;
    int dev_done, cbs;        /* device work complete (callback seen or status asked); callbacks to come */
    int reported;             /* its DONE went (it stays until its callbacks came) */
    uint64_t t_enq, next_ask; /* when it came; when its statuses may be asked next */
    int zombie;               /* failed without its callbacks: never freed (they may still come) */
    int rect;                 /* a rect read/write/copy: geometry below */
    size_t geom[13]; /* buffer origin[3], host origin[3], region[3], buffer row/slice, host row/slice pitch */
    void *mapped;    /* a write from a peer received straight into the mapped device buffer */
    cl_event map_ev;
    int posted;  /* its receives are posted (once the map completed) */
    size_t sent; /* reads to a peer: pieces whose send started */
    int64_t status;
    uint64_t bcast; /* SLUICE_CMD_BCAST: the rank mask of the broadcast's communicator */
    struct eng_cmd *hnext, *next, *prev;
};

struct use {
    cl_event ev;
    int write, transfer;
    struct use *next;
};
struct track {
    uint64_t root;
    struct use *uses;
    struct track *next;
};
struct rdep {
    uint64_t id;
    cl_context ctx;
    cl_event ue;
    struct rdep *next;
};
struct failed {
    uint64_t id;
    int64_t status;
    struct failed *next;
};
struct note {
    struct eng_cmd *c;
    long piece; /* -1: the final event */
    cl_int status;
    struct note *next;
};

static pthread_mutex_t eng_lock = PTHREAD_MUTEX_INITIALIZER;
static struct eng_cmd *table[BUCKETS], *all;
static size_t inflight;
static int data_active; /* see sluice_engine_data_active */
static struct track *tracks;
static struct rdep *rdeps;
static struct failed *failures;
/* Commands that came while a write was still waiting for its data, in order. */
struct deferred {
    struct sluice_remote_req req;
    struct deferred *next;
    unsigned char payload[];
};
static struct deferred *deferred, **deferred_tail = &deferred;
static struct failed *notified; /* NOTIFYs that came while commands were deferred */
static struct eng_cmd *blocked; /* a write from a peer still waiting for its data */

static void forget_notified(void)
{
    while (notified != NULL) {
        struct failed *f = notified;
        notified = f->next;
        free(f);
    }
}

/* Callback notes and the loop's wake-up (callbacks run on the implementation's threads). */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t note_cond;
static pthread_once_t note_once = PTHREAD_ONCE_INIT;
static struct note *notes, **notes_tail = &notes;
static int woken;

static const struct sluice_cl_api *api(void)
{
    return &sluice_cl_loader_backend()->api;
}

/* An MPI call with `peer` failed: the job ends with one line naming the rank (dist_fault.h). */
static int checked(int rc, int peer, const char *what)
{
    if (rc != MPI_SUCCESS)
        dist_fault_peer(peer, rc, what);
    return rc;
}

static void note_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&note_cond, &a);
    pthread_condattr_destroy(&a);
}

void sluice_engine_wake(void)
{
    pthread_once(&note_once, note_init);
    pthread_mutex_lock(&note_lock);
    woken = 1;
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
}

int sluice_engine_wait(uint64_t ns)
{
    pthread_once(&note_once, note_init);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ns += (uint64_t)ts.tv_nsec;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
    pthread_mutex_lock(&note_lock);
    if (!woken && notes == NULL)
        pthread_cond_timedwait(&note_cond, &note_lock, &ts);
    int was = woken || notes != NULL;
    woken = 0;
    pthread_mutex_unlock(&note_lock);
    sluice_time_leave(prev);
    return was;
}

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *arg);

struct cb_arg {
    struct eng_cmd *c;
    long piece;
};

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    struct cb_arg *a = arg;
    struct note *n = malloc(sizeof *n);
    pthread_once(&note_once, note_init);
    pthread_mutex_lock(&note_lock);
    if (n != NULL) {
        *n = (struct note){a->c, a->piece, status, NULL};
        *notes_tail = n;
        notes_tail = &n->next;
    }
    woken = 1;
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
    free(a);
}

static int watch(struct eng_cmd *c, cl_event ev, long piece)
{
    struct cb_arg *a = malloc(sizeof *a);
    if (a == NULL)
        return 0;
    *a = (struct cb_arg){c, piece};
    if (api()->clSetEventCallback(ev, CL_COMPLETE, on_event, a) != CL_SUCCESS) {
        free(a);
        return 0;
    }
    c->cbs++;
    return 1;
}

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

static struct eng_cmd *find(uint64_t id)
{
    for (struct eng_cmd *c = table[id % BUCKETS]; c != NULL; c = c->hnext)
        if (c->id == id)
            return c;
    return NULL;
}

static void insert(struct eng_cmd *c)
{
    c->hnext = table[c->id % BUCKETS];
    table[c->id % BUCKETS] = c;
    c->next = all;
    c->prev = NULL;
    if (all != NULL)
        all->prev = c;
    all = c;
    inflight++;
}

static void unlink_cmd(struct eng_cmd *c)
{
    for (struct eng_cmd **p = &table[c->id % BUCKETS]; *p != NULL; p = &(*p)->hnext)
        if (*p == c) {
            *p = c->hnext;
            break;
        }
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        all = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    inflight--;
}

static int done_event(cl_event ev)
{
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        return 1;
    return st <= CL_COMPLETE;
}

static struct track *track_of(uint64_t root)
{
    for (struct track *t = tracks; t != NULL; t = t->next)
        if (t->root == root)
            return t;
    struct track *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->root = root;
    t->next = tracks;
    tracks = t;
    return t;
}

/* Drops finished uses, then adds to wl the ones a new use must wait for. */
static void track_deps(struct track *t, int write, int transfer, cl_event *wl, size_t *n)
{
    for (struct use **p = &t->uses; *p != NULL;) {
        struct use *u = *p;
        if (done_event(u->ev)) {
            api()->clReleaseEvent(u->ev);
            *p = u->next;
            free(u);
            continue;
        }
        int need = transfer ? (write || u->write) : (u->transfer && (u->write || write));
        if (need && *n < MAX_WAIT)
            wl[(*n)++] = u->ev;
        p = &u->next;
    }
}

/* Drops finished uses everywhere and the tracks left empty (buffers released long ago). */
static void track_prune(void)
{
    for (struct track **pt = &tracks; *pt != NULL;) {
        struct track *t = *pt;
        for (struct use **p = &t->uses; *p != NULL;) {
            struct use *u = *p;
            if (done_event(u->ev)) {
                api()->clReleaseEvent(u->ev);
                *p = u->next;
                free(u);
            } else {
                p = &u->next;
            }
        }
        if (t->uses == NULL) {
            *pt = t->next;
            free(t);
        } else {
            pt = &t->next;
        }
    }
}

static void track_add(struct track *t, cl_event ev, int write, int transfer)
{
    struct use *u = malloc(sizeof *u);
    if (u == NULL || api()->clRetainEvent(ev) != CL_SUCCESS) {
        free(u);
        return;
    }
    *u = (struct use){ev, write, transfer, t->uses};
    t->uses = u;
}

/* *none: 1 when it completed already, -1 when it failed already (see failed_dep). */
static cl_event remote_dep(uint64_t id, cl_context ctx, int *none)
{
    for (struct failed *f = notified; f != NULL; f = f->next)
        if (f->id == id) {
            *none = f->status >= 0 ? 1 : -1;
            return NULL;
        }
    for (struct rdep *r = rdeps; r != NULL; r = r->next)
        if (r->id == id && r->ctx == ctx)
            return r->ue;
    struct rdep *r = calloc(1, sizeof *r);
    cl_int err = CL_SUCCESS;
    cl_event ue = r ? api()->clCreateUserEvent(ctx, &err) : NULL;
    if (ue == NULL) {
        free(r);
        return NULL;
    }
    *r = (struct rdep){id, ctx, ue, rdeps};
    rdeps = r;
    return ue;
}

/* A dependency known failed already. Waiting on a failed event does not work (PoCL leaves the
 * command queued forever), so such a command is failed without being enqueued. */
static int failed_dep(uint64_t id)
{
    for (struct failed *f = failures; f != NULL; f = f->next)
        if (f->id == id)
            return 1;
    return 0;
}

/* After a user event of ours was set: flush the queues of commands in flight, which may wait
 * for it (some devices only look at their queues when flushed). */
static void flush_inflight(void)
{
    cl_command_queue seen[16];
    size_t n = 0;
    for (struct eng_cmd *c = all; c != NULL; c = c->next) {
        size_t i = 0;
        while (i < n && seen[i] != c->q)
            i++;
        if (i < n || c->q == NULL)
            continue;
        api()->clFlush(c->q);
        if (n < 16)
            seen[n++] = c->q;
    }
}

void sluice_engine_notify(uint64_t id, int64_t status)
{
    pthread_mutex_lock(&eng_lock);
    if (deferred != NULL) {
        struct failed *f = malloc(sizeof *f);
        if (f != NULL) {
            *f = (struct failed){id, status, notified};
            notified = f;
        }
    }
    for (struct rdep **p = &rdeps; *p != NULL;) {
        struct rdep *r = *p;
        if (r->id == id) {
            api()->clSetUserEventStatus(r->ue, status < 0 ? (cl_int)status : CL_COMPLETE);
            api()->clReleaseEvent(r->ue);
            *p = r->next;
            free(r);
        } else {
            p = &r->next;
        }
    }
    flush_inflight();
    pthread_mutex_unlock(&eng_lock);
}

void sluice_engine_abandon(void)
{
    pthread_mutex_lock(&eng_lock);
    while (rdeps != NULL) {
        struct rdep *r = rdeps;
        api()->clSetUserEventStatus(r->ue, CL_DEVICE_NOT_AVAILABLE);
        api()->clReleaseEvent(r->ue);
        rdeps = r->next;
        free(r);
    }
    pthread_mutex_unlock(&eng_lock);
}

int sluice_engine_data_active(void)
{
    return __atomic_load_n(&data_active, __ATOMIC_RELAXED);
}

size_t sluice_engine_inflight(void)
{
    pthread_mutex_lock(&eng_lock);
    size_t n = inflight;
    pthread_mutex_unlock(&eng_lock);
    return n;
}

/* The internal queue of a context (remote_server.c). */
cl_command_queue sluice_remote_internal_queue(cl_context ctx, cl_int *err);

/* A read to a peer: `n` pieces, each read waiting for wl and sent as soon as it is read, then the
 * command's event over all of them. */
static cl_int enqueue_read_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    size_t n = sluice_remote_pieces(c->size);
    c->npieces = n;
    c->staging = staging_for(c->q, c->size, &c->staging_cap);
    c->piece_ev = calloc(n, sizeof *c->piece_ev);
    c->reqs = malloc(n * sizeof *c->reqs);
    if (c->staging == NULL || c->piece_ev == NULL || c->reqs == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    cl_int r = CL_SUCCESS;
    for (size_t i = 0; i < n && r == CL_SUCCESS; i++) {
        size_t k, off = sluice_remote_piece(c->size, i, &k);
        r = api()->clEnqueueReadBuffer(c->q, buf, CL_FALSE, c->off + off, k, c->staging + off, (cl_uint)nw,
                                       nw ? wl : NULL, &c->piece_ev[i]);
        if (r == CL_SUCCESS)
            watch(c, c->piece_ev[i], (long)i);
    }
    if (r == CL_SUCCESS && n == 1)
        r = api()->clRetainEvent(c->ev = c->piece_ev[0]);
    else if (r == CL_SUCCESS)
        r = api()->clEnqueueMarkerWithWaitList(c->q, (cl_uint)n, c->piece_ev, &c->ev);
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

/* The pieces of a write from a peer, or of a broadcast rank 0 roots (collective replacement). */
static int irecv_data(struct eng_cmd *c, void *to)
{
    if (c->flags & SLUICE_CMD_BCAST) {
        MPI_Comm g = sluice_remote_group_comm(c->bcast);
        return g == MPI_COMM_NULL ? MPI_ERR_COMM : sluice_remote_data_ibcast(g, 0, to, c->size, c->reqs);
    }
    return sluice_remote_data_irecv(sluice_comm(), c->peer, c->id, to, c->size, c->reqs);
}

static void post_receives(struct eng_cmd *c)
{
    c->posted = 1;
    unsigned char *to = c->mapped;
    if (to == NULL && c->staging == NULL)
        c->staging = staging_get(c->size, &c->staging_cap); /* the map failed: receive and drop */
    if (to == NULL)
        to = c->staging;
    if (to != NULL)
        checked(irecv_data(c, to), c->peer, "receiving a buffer");
}

/* A read to a peer from a CPU device (1 MiB and up): the buffer is mapped for reading and the
 * pieces are sent straight from it once the map completed; the unmap, after the last send, is
 * the command's event. Until then later commands of this rank wait (as behind a write from a
 * peer), so nothing overwrites the buffer while it is being sent. Returns 0 to use staging. */
static int start_read_mapped(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    if (!map_worthwhile(c))
        return 0;
    size_t n = sluice_remote_pieces(c->size);
    cl_int err = CL_SUCCESS;
    if ((c->reqs = malloc(n * sizeof *c->reqs)) == NULL)
        return 0;
    c->mapped = api()->clEnqueueMapBuffer(c->q, buf, CL_FALSE, CL_MAP_READ, c->off, c->size, (cl_uint)nw,
                                          nw ? wl : NULL, &c->map_ev, &err);
    if (c->mapped != NULL && err == CL_SUCCESS && watch(c, c->map_ev, -2)) {
        c->npieces = n;
        for (size_t i = 0; i < n; i++)
            c->reqs[i] = MPI_REQUEST_NULL;
        api()->clFlush(c->q);
        return 1;
    }
    if (c->mapped != NULL && err == CL_SUCCESS)
        api()->clEnqueueUnmapMemObject(c->q, buf, c->mapped, 1, &c->map_ev, NULL);
    if (c->map_ev != NULL)
        api()->clReleaseEvent(c->map_ev);
    c->map_ev = NULL;
    c->mapped = NULL;
    free(c->reqs);
    c->reqs = NULL;
    return 0;
}

/* The map of a mapped read completed (or failed: zeros go instead, the peer must not wait). */
static void post_sends(struct eng_cmd *c)
{
    c->posted = 1;
    c->sent = c->npieces;
    const unsigned char *from = c->mapped;
    if (from == NULL && (from = c->staging = staging_get(c->size, &c->staging_cap)) == NULL)
        return;
    checked(sluice_remote_data_isend(sluice_comm(), c->peer, c->id, from, c->size, c->reqs), c->peer,
            "sending a buffer");
    if (sluice_trace_active()) /* a move between serving ranks, else a read back to rank 0 */
        sluice_trace_record((c->flags & SLUICE_CMD_TRANSFER) ? SLUICE_EV_MPI_SEND : SLUICE_EV_MSG_SEND, 0,
                            sluice_now_ns(), 0, (uint64_t)c->peer, c->size,
                            (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
}

static cl_int start_write_pieces(struct eng_cmd *c, cl_mem buf, cl_event *wl, size_t nw)
{
    size_t n = sluice_remote_pieces(c->size);
    c->npieces = n;
    if (map_worthwhile(c)) {
        cl_int err = CL_SUCCESS;
        c->reqs = malloc(n * sizeof *c->reqs);
        if (c->reqs != NULL)
            c->mapped = api()->clEnqueueMapBuffer(c->q, buf, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, c->off,
                                                  c->size, (cl_uint)nw, nw ? wl : NULL, &c->map_ev, &err);
        if (c->mapped != NULL && err == CL_SUCCESS && watch(c, c->map_ev, -2)) {
            for (size_t i = 0; i < n; i++)
                c->reqs[i] = MPI_REQUEST_NULL;
            api()->clFlush(c->q);
            return CL_SUCCESS; /* receives posted when the map completes */
        }
        if (c->mapped != NULL && err == CL_SUCCESS) /* no callback: undo the map */
            api()->clEnqueueUnmapMemObject(c->q, buf, c->mapped, 1, &c->map_ev, NULL);
        if (c->map_ev != NULL)
            api()->clReleaseEvent(c->map_ev);
        c->map_ev = NULL;
        c->mapped = NULL;
        free(c->reqs);
        c->reqs = NULL;
    }
    c->staging = staging_for(c->q, c->size, &c->staging_cap);
    c->piece_ev = calloc(n, sizeof *c->piece_ev);
    c->reqs = malloc(n * sizeof *c->reqs);
    c->wait = malloc((nw + 1) * sizeof *c->wait);
    if (c->staging == NULL || c->piece_ev == NULL || c->reqs == NULL || c->wait == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < nw; i++)
        if (api()->clRetainEvent(wl[i]) == CL_SUCCESS)
            c->wait[c->nwait++] = wl[i];
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    if (checked(irecv_data(c, c->staging), c->peer, "receiving a buffer") != MPI_SUCCESS)
        return CL_OUT_OF_RESOURCES;
    return CL_SUCCESS;
}

/* Rect reads and writes. In-process (rank 0's own device) the host side is the program's memory
 * with its own origin and pitches; to or from a peer it is a packed staging buffer (rank 0
 * packs and unpacks): a read is read whole, then sent; a write from a peer is received whole,
 * then written (write_arrived). */
static cl_int enqueue_rect(struct eng_cmd *c, uint32_t op, cl_mem buf, unsigned char *ptr, cl_event *wl,
                           size_t nw)
{
    size_t *g = c->geom;
    size_t zero[3] = {0, 0, 0};
    if (ptr != NULL)
        return op == SLUICE_REMOTE_CMD_WRITE
                   ? api()->clEnqueueWriteBufferRect(c->q, buf, CL_FALSE, g, g + 3, g + 6, g[9], g[10], g[11],
                                                     g[12], ptr, (cl_uint)nw, nw ? wl : NULL, &c->ev)
                   : api()->clEnqueueReadBufferRect(c->q, buf, CL_FALSE, g, g + 3, g + 6, g[9], g[10], g[11],
                                                    g[12], ptr, (cl_uint)nw, nw ? wl : NULL, &c->ev);
    size_t n = sluice_remote_pieces(c->size);
    c->npieces = n;
    c->staging = staging_get(c->size, &c->staging_cap);
    c->reqs = malloc(n * sizeof *c->reqs);
    if (c->staging == NULL || c->reqs == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    cl_int r = api()->clEnqueueReadBufferRect(c->q, buf, CL_FALSE, g, zero, g + 6, g[9], g[10], g[6],
                                              g[6] * g[7], c->staging, (cl_uint)nw, nw ? wl : NULL, &c->ev);
    if (r == CL_SUCCESS)
        watch(c, c->ev, 0); /* piece 0 read: sends every piece */
    return r;
}

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static cl_int enqueue_ndrange(struct eng_cmd *c, const uint64_t *a, const unsigned char *p, size_t len,
                              cl_event *wl, size_t nw)
{
    cl_uint dims = (cl_uint)a[1];
    if (dims < 1 || dims > 3 || len < 3 * dims * sizeof(size_t))
        return CL_INVALID_WORK_DIMENSION;
    size_t v[9];
    memcpy(v, p, 3 * dims * sizeof(size_t));
    size_t at = 3 * dims * sizeof(size_t);
    cl_kernel k = PTR(cl_kernel, a[0]);
    for (uint64_t i = 0; i < a[3]; i++) {
        struct sluice_remote_karg ka;
        if (len - at < sizeof ka)
            return CL_INVALID_KERNEL_ARGS;
        memcpy(&ka, p + at, sizeof ka);
        at += sizeof ka;
        cl_int r;
        if (ka.kind == 1) {
            cl_mem m = PTR(cl_mem, ka.mem);
            r = api()->clSetKernelArg(k, (cl_uint)i, sizeof m, &m);
        } else if (ka.kind == 2) {
            r = api()->clSetKernelArg(k, (cl_uint)i, (size_t)ka.size, NULL);
        } else {
            if (len - at < ka.size)
                return CL_INVALID_KERNEL_ARGS;
            r = api()->clSetKernelArg(k, (cl_uint)i, (size_t)ka.size, p + at);
            at += pad8((size_t)ka.size);
        }
        if (r != CL_SUCCESS)
            return r;
    }
    unsigned nulls = (unsigned)a[2];
    return api()->clEnqueueNDRangeKernel(c->q, k, dims, (nulls & 1) ? NULL : v, v + dims,
                                         (nulls & 4) ? NULL : v + 2 * dims, (cl_uint)nw, nw ? wl : NULL,
                                         &c->ev);
}

/* The data messages of a transfer that could not be enqueued: sent (zeros) or received into a
 * scratch buffer, so that the other end point completes. */
static void settle_peer(struct eng_cmd *c, uint32_t op)
{
    size_t n = sluice_remote_pieces(c->size);
    if (c->reqs != NULL && op == SLUICE_REMOTE_CMD_WRITE && c->staging != NULL)
        return; /* its receives are posted already */
    if (c->reqs == NULL && (c->reqs = malloc(n * sizeof *c->reqs)) == NULL)
        return;
    if (c->staging == NULL && (c->staging = staging_get(c->size, &c->staging_cap)) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        c->reqs[i] = MPI_REQUEST_NULL;
    c->npieces = n;
    c->sent = n;
    if (op == SLUICE_REMOTE_CMD_READ)
        checked(sluice_remote_data_isend(sluice_comm(), c->peer, c->id, c->staging, c->size, c->reqs),
                c->peer, "sending a buffer");
    else
        checked(irecv_data(c, c->staging), c->peer, "receiving a buffer");
}

static void fail_now(struct eng_cmd *c, cl_int r)
{
    c->status = r;
    c->dev_done = 1;
}

static void handle(const struct sluice_remote_req *req, const unsigned char *p)
{
    struct sluice_remote_cmd h;
    size_t len = (size_t)req->nbytes;
    struct eng_cmd *c = calloc(1, sizeof *c);
    if (c == NULL || len < sizeof h) {
        free(c);
        return;
    }
    memcpy(&h, p, sizeof h);
    c->id = h.id;
    c->op = req->op;
    c->flags = h.flags;
    const uint64_t *a = req->a;
    size_t need = sizeof h + ((size_t)h.nlocal + h.nremote) * 8 +
                  (size_t)h.naccess * sizeof(struct sluice_remote_access);
    c->t_enq = c->next_ask = sluice_now_ns();
    insert(c);
    if (need > len || (size_t)h.nlocal + h.nremote + h.naccess * 2 + 1 > MAX_WAIT) {
        fail_now(c, CL_INVALID_VALUE);
        return;
    }
    cl_context ctx = PTR(cl_context, h.ctx);
    cl_int r = CL_SUCCESS;
    c->q = h.queue ? PTR(cl_command_queue, h.queue) : sluice_remote_internal_queue(ctx, &r);
    static cl_event wl[MAX_WAIT + 1];
    size_t nw = 0;
    const unsigned char *at = p + sizeof h;
    for (uint32_t i = 0; i < h.nlocal + h.nremote && r == CL_SUCCESS; i++, at += 8) {
        uint64_t id;
        memcpy(&id, at, 8);
        cl_event e = NULL;
        if (i < h.nlocal) {
            struct eng_cmd *d = find(id);
            e = d != NULL ? d->ev : NULL;
            if ((d != NULL && d->status < 0) || (d == NULL && failed_dep(id)))
                r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        } else {
            int none = 0;
            if ((e = remote_dep(id, ctx, &none)) == NULL && none == 0)
                r = CL_OUT_OF_RESOURCES;
            else if (none < 0)
                r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
        if (e != NULL)
            wl[nw++] = e;
    }
    size_t nacc = h.naccess; /* every use: a kernel may take any number of buffers */
    struct sluice_remote_access acc_small[8], *acc = nacc <= 8 ? acc_small : malloc(nacc * sizeof *acc);
    if (acc == NULL) {
        fail_now(c, CL_OUT_OF_HOST_MEMORY);
        return;
    }
    memcpy(acc, at, nacc * sizeof acc[0]);
    at += (size_t)h.naccess * sizeof acc[0];
    int transfer = (h.flags & SLUICE_CMD_TRANSFER) != 0;
    for (size_t i = 0; i < nacc; i++) {
        struct track *t = track_of(acc[i].root);
        if (t != NULL)
            track_deps(t, (int)acc[i].write, transfer, wl, &nw);
    }
    size_t rest = len - need;
    if (r == CL_SUCCESS && c->q == NULL)
        r = CL_INVALID_COMMAND_QUEUE;
    if (r == CL_SUCCESS) {
        switch (req->op) {
        case SLUICE_REMOTE_CMD_WRITE:
        case SLUICE_REMOTE_CMD_READ:
            c->off = (size_t)a[1];
            c->size = (size_t)a[2];
            c->peer = (int)a[4];
            c->bcast = a[5];
            if (rest == sizeof c->geom) {
                c->rect = 1;
                memcpy(c->geom, at, sizeof c->geom);
            }
            if (c->rect && (a[3] != 0 || req->op == SLUICE_REMOTE_CMD_READ))
                r = enqueue_rect(c, req->op, PTR(cl_mem, a[0]), PTR(unsigned char *, a[3]), wl, nw);
            else if (c->rect)
                r = start_write_pieces(c, PTR(cl_mem, a[0]), wl, nw);
            else if (a[3] != 0 && req->op == SLUICE_REMOTE_CMD_WRITE)
                r = api()->clEnqueueWriteBuffer(c->q, PTR(cl_mem, a[0]), CL_FALSE, c->off, c->size,
                                                PTR(void *, a[3]), (cl_uint)nw, nw ? wl : NULL, &c->ev);
            else if (a[3] != 0)
                r = api()->clEnqueueReadBuffer(c->q, PTR(cl_mem, a[0]), CL_FALSE, c->off, c->size,
                                               PTR(void *, a[3]), (cl_uint)nw, nw ? wl : NULL, &c->ev);
            else if (req->op == SLUICE_REMOTE_CMD_READ && !start_read_mapped(c, PTR(cl_mem, a[0]), wl, nw))
                r = enqueue_read_pieces(c, PTR(cl_mem, a[0]), wl, nw);
            else if (req->op == SLUICE_REMOTE_CMD_WRITE)
                r = start_write_pieces(c, PTR(cl_mem, a[0]), wl, nw);
            if (r == CL_SUCCESS && a[3] == 0 && (req->op == SLUICE_REMOTE_CMD_WRITE || c->mapped != NULL)) {
                c->buf = PTR(cl_mem, a[0]);
                c->nacc = nacc < 8 ? nacc : 8;
                memcpy(c->acc, acc, c->nacc * sizeof acc[0]);
                blocked = c; /* write: enqueued as the data arrives; mapped read: unmapped once sent */
            }
            break;
        case SLUICE_REMOTE_CMD_NDRANGE:
            r = enqueue_ndrange(c, a, at, rest, wl, nw);
            break;
        case SLUICE_REMOTE_CMD_COPY:
            if (rest == sizeof c->geom) {
                size_t g[13];
                memcpy(g, at, sizeof g);
                r = api()->clEnqueueCopyBufferRect(c->q, PTR(cl_mem, a[0]), PTR(cl_mem, a[1]), g, g + 3,
                                                   g + 6, g[9], g[10], g[11], g[12], (cl_uint)nw,
                                                   nw ? wl : NULL, &c->ev);
                break;
            }
            r = api()->clEnqueueCopyBuffer(c->q, PTR(cl_mem, a[0]), PTR(cl_mem, a[1]), (size_t)a[2],
                                           (size_t)a[3], (size_t)a[4], (cl_uint)nw, nw ? wl : NULL, &c->ev);
            break;
        case SLUICE_REMOTE_CMD_FILL:
            r = api()->clEnqueueFillBuffer(c->q, PTR(cl_mem, a[0]), at, rest, (size_t)a[1], (size_t)a[2],
                                           (cl_uint)nw, nw ? wl : NULL, &c->ev);
            break;
        case SLUICE_REMOTE_CMD_MARKER:
            r = a[0] ? api()->clEnqueueBarrierWithWaitList(c->q, (cl_uint)nw, nw ? wl : NULL, &c->ev)
                     : api()->clEnqueueMarkerWithWaitList(c->q, (cl_uint)nw, nw ? wl : NULL, &c->ev);
            break;
        default:
            r = CL_INVALID_OPERATION;
            break;
        }
    }
    if (c->q != NULL)
        api()->clFlush(c->q); /* OpenCL may hold commands back until a flush */
    if (r == CL_SUCCESS && blocked == c) {
        /* its event comes with its last piece */
    } else if (r == CL_SUCCESS && c->ev != NULL) {
        for (size_t i = 0; i < nacc; i++) {
            struct track *t = track_of(acc[i].root);
            if (t != NULL)
                track_add(t, c->ev, (int)acc[i].write, transfer);
        }
        if (!watch(c, c->ev, -1))
            c->dev_done = 1; /* no callback: treat it as done now rather than never */
    } else {
        /* A failed transfer still sends or receives its pieces: the peer must not wait forever. */
        fail_now(c, r != CL_SUCCESS ? r : CL_OUT_OF_RESOURCES);
        if ((req->op == SLUICE_REMOTE_CMD_READ || req->op == SLUICE_REMOTE_CMD_WRITE) && a[3] == 0)
            settle_peer(c, req->op);
    }
    if (acc != acc_small)
        free(acc);
}

static void run_deferred(void)
{
    while (blocked == NULL && deferred != NULL) {
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
    if (blocked == NULL && deferred == NULL)
        forget_notified();
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
    pthread_mutex_lock(&eng_lock);
    int later = blocked != NULL || deferred != NULL;
    if (later)
        defer(req, p);
    pthread_mutex_unlock(&eng_lock);
    return later;
}

void sluice_engine_command(const struct sluice_remote_req *req, const unsigned char *p)
{
    pthread_mutex_lock(&eng_lock);
    if (blocked == NULL && deferred == NULL)
        handle(req, p);
    else
        defer(req, p);
    pthread_mutex_unlock(&eng_lock);
    sluice_engine_wake();
}

/* Pieces of the blocked write that arrived, in order, are enqueued; after the last one the
 * command gets its event and the deferred commands run. */
static void write_arrived(struct eng_cmd *c, int *progress)
{
    if (c->op == SLUICE_REMOTE_CMD_READ) { /* a mapped read: done with the buffer once sent */
        if (!c->posted)
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
        while (c->sent < c->npieces && c->reqs[c->sent] != MPI_REQUEST_NULL) {
            int flag = 0;
            if (checked(MPI_Test(&c->reqs[c->sent], &flag, MPI_STATUS_IGNORE), c->peer,
                        "receiving a buffer") != MPI_SUCCESS) {
                c->reqs[c->sent] = MPI_REQUEST_NULL;
                c->status = CL_OUT_OF_RESOURCES;
                flag = 1;
            }
            if (!flag)
                return;
            size_t i = c->sent++, k, off = sluice_remote_piece(c->size, i, &k);
            *progress = 1;
            if (c->status >= 0 && !c->rect && c->mapped == NULL) {
                cl_int r = api()->clEnqueueWriteBuffer(c->q, c->buf, CL_FALSE, c->off + off, k,
                                                       c->staging + off, (cl_uint)c->nwait,
                                                       c->nwait ? c->wait : NULL, &c->piece_ev[i]);
                if (r != CL_SUCCESS)
                    c->status = r;
                api()->clFlush(c->q);
            }
        }
    }
    if (c->sent < c->npieces)
        return;
    blocked = NULL;
    cl_int r = c->status;
    if (c->mapped != NULL) { /* the data is in the device buffer: unmap (even after a failure) */
        cl_int u = api()->clEnqueueUnmapMemObject(c->q, c->buf, c->mapped, 0, NULL, &c->ev);
        api()->clFlush(c->q);
        if (r >= 0)
            r = u;
    } else if (r >= 0 && c->rect) { /* one write of the whole packed region */
        size_t *g = c->geom, zero[3] = {0, 0, 0};
        r = api()->clEnqueueWriteBufferRect(c->q, c->buf, CL_FALSE, g, zero, g + 6, g[9], g[10], g[6],
                                            g[6] * g[7], c->staging, (cl_uint)c->nwait,
                                            c->nwait ? c->wait : NULL, &c->ev);
        api()->clFlush(c->q);
    } else if (r >= 0 && c->npieces == 1)
        r = api()->clRetainEvent(c->ev = c->piece_ev[0]);
    else if (r >= 0)
        r = api()->clEnqueueMarkerWithWaitList(c->q, (cl_uint)c->npieces, c->piece_ev, &c->ev);
    if (r == CL_SUCCESS) {
        for (size_t i = 0; i < c->nacc; i++) {
            struct track *t = track_of(c->acc[i].root);
            if (t != NULL)
                track_add(t, c->ev, (int)c->acc[i].write, (c->flags & SLUICE_CMD_TRANSFER) != 0);
        }
        if (!watch(c, c->ev, -1))
            c->dev_done = 1;
    } else {
        c->ev = NULL;
        fail_now(c, r);
    }
    run_deferred();
}

/* A device's profiling clock minus this process's CLOCK_MONOTONIC, from clGetDeviceAndHostTimer
 * (the device's time at a moment whose monotonic time is taken around the call). A device
 * without it (CL_INVALID_OPERATION) is assumed to profile on CLOCK_MONOTONIC, as PoCL's CPU
 * devices do. Measured once per device. */
static int64_t device_offset(cl_command_queue q)
{
    static struct {
        cl_device_id dev;
        int64_t off;
    } known[16];
    static int nknown;
    cl_device_id dev = NULL;
    if (api()->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return 0;
    for (int i = 0; i < nknown; i++)
        if (known[i].dev == dev)
            return known[i].off;
    int64_t off = 0;
    cl_ulong dts = 0, hts = 0;
    uint64_t t0 = sluice_now_ns();
    if (api()->clGetDeviceAndHostTimer != NULL &&
        api()->clGetDeviceAndHostTimer(dev, &dts, &hts) == CL_SUCCESS && dts != 0)
        off = (int64_t)dts - (int64_t)(t0 + (sluice_now_ns() - t0) / 2);
    if (nknown < 16) {
        known[nknown].dev = dev;
        known[nknown++].off = off;
    }
    return off;
}

static void times_of(struct eng_cmd *c, struct sluice_remote_done *d)
{
    static const cl_profiling_info params[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    if (!(c->flags & SLUICE_CMD_PROFILE) || c->ev == NULL || c->status < 0)
        return;
    for (int i = 0; i < 4; i++) {
        /* Several pieces: the first one's start, the command event's end. */
        cl_event e = (i < 3 && c->piece_ev != NULL && c->piece_ev[0] != NULL) ? c->piece_ev[0] : c->ev;
        cl_ulong t = 0;
        if (api()->clGetEventProfilingInfo(e, params[i], sizeof t, &t, NULL) != CL_SUCCESS) {
            memset(d->t, 0, sizeof d->t);
            return;
        }
        d->t[i] = t;
    }
    int64_t off = device_offset(c->q);
    for (int i = 0; i < 4; i++)
        d->t[i] = (uint64_t)((int64_t)d->t[i] - off);
}

static void free_cmd(struct eng_cmd *c)
{
    if (c->ev != NULL)
        api()->clReleaseEvent(c->ev);
    if (c->map_ev != NULL)
        api()->clReleaseEvent(c->map_ev);
    for (size_t i = 0; i < c->npieces; i++) {
        if (c->piece_ev != NULL && c->piece_ev[i] != NULL)
            api()->clReleaseEvent(c->piece_ev[i]);
    }
    for (size_t i = 0; i < c->nwait; i++)
        api()->clReleaseEvent(c->wait[i]);
    free(c->wait);
    free(c->piece_ev);
    free(c->reqs);
    if (!pinned_put(c->staging))
        staging_put(c->staging, c->staging_cap);
    if (c->zombie) { /* a late callback may still name it: keep the small struct */
        memset(c, 0, sizeof *c);
        c->zombie = 1;
        return;
    }
    free(c);
}

/* A command whose event failed without calling back: done, and a read to a peer still sends its
 * pieces so that the peer does not wait forever. */
static void failed_silently(struct eng_cmd *c)
{
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
        st >= 0)
        return;
    c->status = st;
    c->dev_done = 1;
    c->cbs = 0;
    c->zombie = 1;
    while (c->op == SLUICE_REMOTE_CMD_READ && c->reqs != NULL && c->sent < c->npieces) {
        size_t i = c->sent++, k, off = sluice_remote_piece(c->size, i, &k);
        checked(MPI_Isend(c->staging + off, (int)k, MPI_BYTE, c->peer, SLUICE_REMOTE_DATA_TAG(c->id),
                          sluice_comm(), &c->reqs[i]),
                c->peer, "sending a buffer");
    }
}

/* True when every MPI request of c has completed (testing them advances them). */
static int mpi_done(struct eng_cmd *c, int *progress)
{
    if (c->reqs == NULL)
        return 1;
    if (c == blocked) {
        write_arrived(c, progress);
        return 0;
    }
    int done = 1;
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
    return done;
}

/* A read to a peer: sends the pieces read so far, in order (a later one waits for earlier ones).
 * `piece` is one known read (its callback came), -1 if none; a rect read has one event for all
 * its pieces. */
static void send_read_pieces(struct eng_cmd *c, long piece)
{
    while (c->sent < c->npieces &&
           (c->rect ? (piece == 0 || done_event(c->ev))
                    : (c->sent == (size_t)piece || done_event(c->piece_ev[c->sent])))) {
        size_t i = c->sent, k, off = sluice_remote_piece(c->size, i, &k);
        if (checked(MPI_Isend(c->staging + off, (int)k, MPI_BYTE, c->peer, SLUICE_REMOTE_DATA_TAG(c->id),
                              sluice_comm(), &c->reqs[i]),
                    c->peer, "sending a buffer") != MPI_SUCCESS)
            c->status = CL_OUT_OF_RESOURCES;
        c->sent++;
        if (sluice_trace_active() && c->sent == c->npieces) /* as in post_sends */
            sluice_trace_record((c->flags & SLUICE_CMD_TRANSFER) ? SLUICE_EV_MPI_SEND : SLUICE_EV_MSG_SEND, 0,
                                sluice_now_ns(), 0, (uint64_t)c->peer, c->size,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    }
}

/* Posted data messages of c not complete yet (MPI_Test leaves completed ones MPI_REQUEST_NULL). */
static int reqs_pending(const struct eng_cmd *c)
{
    for (size_t i = 0; c->reqs != NULL && i < c->npieces; i++)
        if (c->reqs[i] != MPI_REQUEST_NULL)
            return 1;
    return 0;
}

/* A coherence move (or a broadcast write) arrived: MPI_RECV from the peer (when it came by MPI)
 * and CL_TRANSFER device to device (host to device for a broadcast), naming the device as the trace names
 * devices (this process's handle). */
static void trace_inbound(struct eng_cmd *c)
{
    uint64_t now = sluice_now_ns();
    if (c->reqs != NULL)
        sluice_trace_record(SLUICE_EV_MPI_RECV, 0, now, 0, (uint64_t)c->peer, c->size,
                            (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    cl_device_id dev = NULL;
    api()->clGetCommandQueueInfo(c->q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    sluice_trace_record(SLUICE_EV_CL_TRANSFER, c->status < 0 ? SLUICE_EVF_ERROR : 0, now, 0,
                        (c->flags & SLUICE_CMD_BCAST) ? 0 : 2, c->size,
                        (uint64_t)(uintptr_t)(dev ? sluice_cl_find(dev) : NULL));
}

size_t sluice_engine_progress(struct sluice_remote_done *out, size_t max, int *progress)
{
    *progress = 0;
    pthread_mutex_lock(&note_lock);
    struct note *n = notes;
    notes = NULL;
    notes_tail = &notes;
    pthread_mutex_unlock(&note_lock);
    pthread_mutex_lock(&eng_lock);
    while (n != NULL) {
        struct note *next = n->next;
        struct eng_cmd *c = n->c;
        c->cbs--;
        *progress = 1;
        if (n->piece == -2) { /* the map of a write from a peer completed */
            if (n->status < 0) {
                c->status = n->status;
                c->mapped = NULL; /* nothing was mapped */
            }
            if (!c->posted && c->op == SLUICE_REMOTE_CMD_READ)
                post_sends(c);
            else if (!c->posted)
                post_receives(c);
        } else if (n->piece < 0) {
            c->dev_done = 1;
            if (n->status < 0 && c->status >= 0)
                c->status = n->status;
        } else if (c->op == SLUICE_REMOTE_CMD_READ) {
            send_read_pieces(c, n->piece);
        }
        free(n);
        n = next;
    }
    size_t k = 0;
    /* PoCL calls no callback for a command failed by its wait list: such commands are found by
     * asking their status, at most every millisecond. */
    static uint64_t last_poll;
    uint64_t now = sluice_now_ns();
    int poll = now - last_poll > 1000000;
    if (poll)
        last_poll = now;
    static uint64_t last_prune;
    if (now - last_prune > 100000000) { /* every 100 ms */
        last_prune = now;
        track_prune();
    }
    int active = 0;
    size_t asked = 0;
    for (struct eng_cmd *c = all, *next; c != NULL && k < max; c = next) {
        next = c->next;
        if (poll && !c->dev_done && c->ev != NULL)
            failed_silently(c);
        if (poll && c == blocked && c->map_ev != NULL && !c->posted) {
            cl_int st = CL_COMPLETE;
            if (api()->clGetEventInfo(c->map_ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                    CL_SUCCESS &&
                st < 0) { /* its wait list failed: PoCL calls no callback */
                c->status = st;
                c->mapped = NULL;
                c->zombie = 1;
                c->cbs = 0;
                if (c->op == SLUICE_REMOTE_CMD_READ)
                    post_sends(c);
                else
                    post_receives(c);
            }
        }
        /* Callbacks may come late (NVIDIA's for a write from host memory: about 20 ms after it
         * completed), so the loop also asks: the next pieces of a read to a peer, and the final
         * event; a late callback then only frees the command. A command is asked at intervals of
         * an eighth of its age, from 2 us to 50 us: a late callback costs a short command at most
         * that, and a long transfer at most 50 us (asking in every round of a polling loop seemed
         * to slow NVIDIA's copies; every 50 us did not). */
        int want_send = c->op == SLUICE_REMOTE_CMD_READ && c->reqs != NULL && c->sent < c->npieces &&
                        c->staging != NULL && (c->rect ? c->ev != NULL : c->piece_ev != NULL);
        int want_status = !c->dev_done && c->ev != NULL && c->cbs > 0;
        if ((want_send || want_status) && now >= c->next_ask && asked < 64) {
            asked++;
            uint64_t gap = (now - c->t_enq) / 8;
            c->next_ask = now + (gap < 2000 ? 2000 : gap > 50000 ? 50000 : gap);
            size_t sent = c->sent;
            if (want_send)
                send_read_pieces(c, -1);
            *progress |= c->sent != sent;
            cl_int st = CL_QUEUED;
            if (want_status &&
                api()->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                    CL_SUCCESS &&
                st == CL_COMPLETE) {
                c->dev_done = 1;
                *progress = 1;
            }
        }
        int md = mpi_done(c, progress);
        active |= !md && c->size >= SLUICE_REMOTE_DATA_HOT_MIN && reqs_pending(c);
        if (!c->dev_done || !md)
            continue;
        if (c->reported) {
            if (c->cbs == 0) { /* its last callback came */
                unlink_cmd(c);
                free_cmd(c);
            }
            continue;
        }
        c->reported = 1;
        if (!(c->flags & SLUICE_CMD_SILENT)) {
            struct sluice_remote_done *d = &out[k++];
            memset(d, 0, sizeof *d);
            d->id = c->id;
            d->status = c->status;
            times_of(c, d);
        }
        if (c->status < 0) {
            struct failed *f = malloc(sizeof *f);
            if (f != NULL) {
                *f = (struct failed){c->id, c->status, failures};
                failures = f;
            }
        }
        if (sluice_trace_active() && c->op == SLUICE_REMOTE_CMD_WRITE &&
            ((c->flags & (SLUICE_CMD_TRANSFER | SLUICE_CMD_BCAST)) || c->peer != 0))
            trace_inbound(c); /* a move, a broadcast, or a write whose data came from a peer */
        else if (sluice_trace_active() && c->op == SLUICE_REMOTE_CMD_WRITE && c->reqs != NULL)
            sluice_trace_instant(SLUICE_EV_MSG_RECV, 0, c->size, (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
        *progress = 1;
        if (c->cbs == 0) {
            unlink_cmd(c);
            free_cmd(c);
        }
    }
    __atomic_store_n(&data_active, active, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&eng_lock);
    return k;
}

/* Serving ranks: requests from rank 0 in order; object calls answered at once, commands handed
 * to the engine; finished commands reported in batches. After END, what is in flight finishes
 * first (commands waiting for a NOTIFY that cannot come any more fail). */
void sluice_remote_serve(MPI_Comm comm)
{
    prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: the default 50 us would be most of a round trip */
    uint64_t last = sluice_now_ns();
    int ending = 0;
    struct sluice_remote_done done[64];
    for (;;) {
        int progress = 0, flag = 0;
        MPI_Status st;
        while (checked(MPI_Iprobe(0, SLUICE_REMOTE_TAG_REQ, comm, &flag, &st), 0, "waiting for requests") ==
                   MPI_SUCCESS &&
               flag) {
            unsigned char *buf = NULL;
            size_t len = 0;
            if (checked(sluice_remote_recv(comm, 0, SLUICE_REMOTE_TAG_REQ, &buf, &len), 0,
                        "receiving a request") != MPI_SUCCESS)
                return;
            progress = 1;
            struct sluice_remote_req req;
            if (len < sizeof req) {
                free(buf);
                continue;
            }
            memcpy(&req, buf, sizeof req);
            if (req.nbytes > len - sizeof req)
                req.nbytes = len - sizeof req;
            if (req.op == SLUICE_REMOTE_END) {
                ending = 1;
                sluice_engine_abandon();
            } else if (req.op == SLUICE_REMOTE_PING) {
                uint64_t now = sluice_now_ns();
                checked(MPI_Send(&now, sizeof now, MPI_BYTE, 0, SLUICE_REMOTE_TAG_CLOCK, comm), 0,
                        "answering a ping");
                sluice_trace_instant(SLUICE_EV_MSG_SEND, 0, sizeof now, SLUICE_REMOTE_TAG_CLOCK);
            } else if (req.op == SLUICE_REMOTE_NOTIFY) {
                sluice_engine_notify(req.a[0], (int64_t)req.a[1]);
            } else if (req.op == SLUICE_REMOTE_GROUP) {
                sluice_remote_group_comm(req.a[0]); /* rank 0 is in the same call now */
            } else if (sluice_remote_is_call(req.op)) {
                struct sluice_remote_msg out;
                if (sluice_engine_defer_release(&req, buf + sizeof req))
                    memset(&out, 0, sizeof out); /* CL_SUCCESS now, done after the deferred commands */
                else
                    sluice_remote_handle(&req, buf + sizeof req, &out);
                int rc = checked(sluice_remote_send(comm, 0, SLUICE_REMOTE_TAG_REP, &out.rep, sizeof out.rep,
                                                    out.bytes, (size_t)out.rep.nbytes),
                                 0, "sending a reply");
                free(out.bytes);
                if (rc != MPI_SUCCESS) {
                    free(buf);
                    return;
                }
            } else {
                sluice_engine_command(&req, buf + sizeof req);
            }
            free(buf);
        }
        int moved = 0;
        size_t n = sluice_engine_progress(done, 64, &moved);
        if (n > 0 &&
            checked(MPI_Send(done, (int)(n * sizeof done[0]), MPI_BYTE, 0, SLUICE_REMOTE_TAG_DONE, comm), 0,
                    "sending completions") != MPI_SUCCESS)
            return;
        if (n > 0)
            sluice_trace_instant(SLUICE_EV_MSG_SEND, 0, n * sizeof done[0], SLUICE_REMOTE_TAG_DONE);
        if (ending && sluice_engine_inflight() == 0)
            return;
        uint64_t waited = sluice_now_ns() - last;
        int data = sluice_engine_data_active();
        if (progress || moved) {
            last = sluice_now_ns();
        } else if (waited < SLUICE_REMOTE_HOT_NS || (data && waited < SLUICE_REMOTE_DATA_HOT_NS)) {
            sched_yield(); /* a request, or the rest of a transfer, is due: keep MPI moving */
        } else {
            /* Sleeps grow with the wait (transport): up to 100 us while data is moving, 250 us
             * with commands in flight, 2 ms after 50 ms idle with nothing in flight (an idle rank
             * costs well under 1 % of a core). */
            uint64_t ns = sluice_remote_idle_ns(waited, data ? 100000 : 250000);
            if (waited > 50000000 && sluice_engine_inflight() == 0)
                ns = 2000000;
            if (sluice_engine_wait(ns))
                last = sluice_now_ns(); /* a callback: a DONE is due */
        }
    }
}
