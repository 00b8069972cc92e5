/* SPDX-License-Identifier: MIT */
/* Commands of the distributed backend: buffer reads and writes, kernel launches, copies, fills,
 * markers, maps, queue synchronisation. A command runs on the rank of its queue's device. In
 * program order (under dist_lock), the coherence directory plans the moves that make each buffer
 * it uses valid there, and the command and its moves go to the scheduler (dist_sched.c), which
 * sends them without waiting. Non-blocking calls return at once; blocking ones then wait for the
 * command's own completion. Bulk data goes straight from and to the program's pointer. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_internal.h"

void dist_uses_free(struct dist_uses *u)
{
    free(u->dag);
    free(u->wire);
}

cl_int dist_use(struct dist_uses *u, struct dist_mem *m, int rank, size_t off, size_t size, bool write,
                bool write_all)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 4;
        struct sluice_dag_access *d = realloc(u->dag, cap * sizeof *d);
        if (d != NULL)
            u->dag = d;
        struct sluice_remote_access *w = d != NULL ? realloc(u->wire, cap * sizeof *w) : NULL;
        if (w == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        u->wire = w;
        u->cap = cap;
    }
    if (m->image != NULL && m->image->padded)
        write_all = false; /* a 2D image of a buffer does not write the bytes between its rows */
    cl_int r = dist_coh_acquire(m, rank, off, size, write, write_all);
    if (r != CL_SUCCESS)
        return r;
    struct dist_mem *root = m;
    for (; root->parent != NULL; root = root->parent)
        off += root->origin;
    if (root->image != NULL) { /* the directory's unit (dist_coherence.c) */
        off = 0;
        size = 1;
    }
    if (write)
        dist_dhdcr_forget_range(root, off, size); /* host copies of these bytes are stale now */
    u->dag[u->n] =
        (struct sluice_dag_access){root->coh_id, off, size, write ? SLUICE_DAG_WRITES : SLUICE_DAG_READS};
    u->wire[u->n] = (struct sluice_remote_access){root->rid[rank], write};
    u->n++;
    return CL_SUCCESS;
}

static cl_int check_range(const struct dist_mem *m, size_t off, size_t size, const void *ptr)
{
    if (m == NULL || m->image != NULL) /* images have their own commands (dist_image_cmds.c) */
        return CL_INVALID_MEM_OBJECT;
    SLUICE_RETURN_ERROR_ON(ptr == NULL || size == 0 || off > m->size || size > m->size - off,
                           CL_INVALID_VALUE,
                           "ptr == NULL || size == 0 || off > m->size || size > m->size - off");
    return CL_SUCCESS;
}

cl_int dist_check_wait(cl_uint n, const cl_event *evs)
{
    SLUICE_RETURN_ERROR_ON((n == 0) != (evs == NULL), CL_INVALID_EVENT_WAIT_LIST,
                           "(n == 0) != (evs == NULL)");
    for (cl_uint i = 0; i < n; i++)
        SLUICE_RETURN_ERROR_ON(evs[i] == NULL, CL_INVALID_EVENT_WAIT_LIST, "evs[i] == NULL");
    return CL_SUCCESS;
}

struct dist_cmd dist_command(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                             const struct dist_uses *u)
{
    struct dist_cmd c;
    memset(&c, 0, sizeof c);
    c.rank = q->dev->rank;
    c.kind = kind;
    c.queue = q;
    c.ctx = q->ctx;
    c.nwait = nwait;
    c.wait = wl;
    if (u != NULL) {
        c.naccess = u->n;
        c.access = u->dag;
        c.raccess = u->wire;
    }
    return c;
}

/* Hands the record to the program (or drops it), after waiting for it when the call blocks. */
cl_int dist_finish_call(cl_int r, struct dist_event *e, bool blocking, cl_event *event)
{
    if (r == CL_SUCCESS && blocking && e != NULL && dist_sched_wait_event(e) < 0)
        r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    if (e != NULL) {
        if (event != NULL && r == CL_SUCCESS)
            *event = (cl_event)e;
        else
            dist_sched_release(e);
    }
    return r;
}

static cl_int submit(struct dist_cmd *c, struct dist_event **e)
{
    return dist_sched_submit(c, e);
}

/* The skeleton of every enqueue below: under dist_lock, the ranges the command reads and writes
 * made valid on the queue's rank (enqueue_use), then the command built (enqueue_command) and
 * submitted (enqueue_submit); enqueue_done releases the lock and the uses, enqueue_end also
 * finishes the call (waits if it blocks, hands the event over). A step after a failed one does
 * nothing, so the first error is the call's. */
struct enqueue {
    struct dist_queue *q;
    int rank; /* the queue's */
    struct dist_uses u;
    struct dist_event *e;
    cl_int r;
};

static void enqueue_begin(struct enqueue *x, struct dist_queue *q)
{
    *x = (struct enqueue){.q = q, .rank = q->dev->rank, .r = CL_SUCCESS};
    pthread_mutex_lock(&dist_lock);
}

/* [off, off + size) of m, written or read; whole: written whole, so nothing is fetched first. */
static void enqueue_use(struct enqueue *x, struct dist_mem *m, size_t off, size_t size, bool write,
                        bool whole)
{
    if (x->r == CL_SUCCESS)
        x->r = dist_use(&x->u, m, x->rank, off, size, write, whole);
}

static struct dist_cmd enqueue_command(struct enqueue *x, dist_cmd_kind kind, cl_uint nwait,
                                       const cl_event *wl)
{
    return dist_command(x->q, kind, nwait, wl, &x->u);
}

static void enqueue_submit(struct enqueue *x, struct dist_cmd *c)
{
    if (x->r == CL_SUCCESS)
        x->r = submit(c, &x->e);
}

static cl_int enqueue_done(struct enqueue *x)
{
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&x->u);
    return x->r;
}

static cl_int enqueue_end(struct enqueue *x, bool blocking, cl_event *event)
{
    return dist_finish_call(enqueue_done(x), x->e, blocking, event);
}

static cl_int marker_cmd(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                         struct dist_event **e, struct dist_mem *hold, void *free_after);

/* A read, write or fill of 0 bytes: valid for the driver (PoCL makes a command that moves
 * nothing), so a marker of that command type keeps the queue's order and the event. */
static cl_int empty_command(struct dist_queue *q, dist_cmd_kind kind, bool blocking, cl_uint nwait,
                            const cl_event *wl, cl_event *event)
{
    struct dist_event *e = NULL;
    cl_int r = marker_cmd(q, kind, nwait, wl, &e, NULL, NULL);
    return dist_finish_call(r, e, blocking, event);
}

/* clEnqueueWriteBuffer and clEnqueueReadBuffer: the data goes straight from the program's pointer
 * (OpenCL forbids touching it until the event completes, so no copy is needed) or straight into
 * it. A write covers its whole range, so it fetches nothing and takes the range Modified. */
static cl_int host_transfer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t off, size_t size,
                            void *ptr, cl_uint nwait, const cl_event *wl, cl_event *event, bool write)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    bool empty = size == 0 && m != NULL && ptr != NULL && off <= m->size;
    cl_int r = empty ? CL_SUCCESS : check_range(m, off, size, ptr);
    SLUICE_ERROR_ON(r, m->ctx != q->ctx, CL_INVALID_CONTEXT, "objects of two contexts (m->ctx != q->ctx)");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    if (empty)
        return empty_command(q, write ? DIST_CMD_EMPTY_WRITE : DIST_CMD_EMPTY_READ, blocking, nwait, wl,
                             event);
    struct enqueue x;
    enqueue_begin(&x, q);
    int rank = x.rank;
    struct dist_dhdcr_src src;
    /* The host bytes are an unchanged copy of a buffer range on another serving rank: moved rank
     * to rank instead (the program's read that brought them still fills the host memory). */
    bool direct =
        write && dist_dhdcr_on() && dist_dhdcr_source(ptr, size, rank, &src) && src.root->rid[src.rank] != 0;
    /* A blocking write to a rank collective replacement may hold back: a copy goes, and the call
     * returns at once (the program may reuse ptr: OpenCL asks no more of a blocking write). */
    unsigned char *staged = NULL;
    if (write && blocking && !direct && dist_sched_dcr_on(rank) && !dist_sched_host_busy(ptr, size) &&
        (staged = malloc(size)) != NULL) {
        memcpy(staged, ptr, size);
        blocking = false;
    }
    enqueue_use(&x, m, off, size, write, write);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c =
            enqueue_command(&x, write ? DIST_CMD_WRITE_BUFFER : DIST_CMD_READ_BUFFER, nwait, wl);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.offset = off;
        c.args.xfer.size = size;
        if (direct) {
            /* The receiving half gets its data from src.rank, whose silent read sends it. */
            c.args.xfer.peer = (uint64_t)src.rank;
            c.push = 1;
            c.push_rank = src.rank;
            c.push_xfer.buf = src.root->rid[src.rank];
            c.push_xfer.offset = src.off;
            c.push_xfer.size = size;
            c.push_xfer.peer = (uint64_t)rank;
            c.push_access = (struct sluice_remote_access){src.root->rid[src.rank], 0};
        } else if (write) {
            c.send = staged != NULL ? (const void *)staged : ptr;
            c.len = size;
        } else {
            c.recv = ptr;
            c.len = size;
        }
        if (staged != NULL) {
            c.flags |= SLUICE_CMD_STAGED;
            c.free_after = staged;
        }
        enqueue_submit(&x, &c);
        staged = NULL; /* the record owns it */
        struct dist_event *e = x.e;
        if (x.r == CL_SUCCESS && e != NULL && direct)
            dist_dcr_trace_p2p(e->id, src.rank);
        if (x.r == CL_SUCCESS && e != NULL && !write && rank != 0 && dist_dhdcr_on()) {
            dist_dhdcr_note_read(e->id, ptr, size, m, off, rank);
            if (dist_sched_peek_done(e))
                dist_dhdcr_read_done(e->id, dist_sched_peek_done(e) > 0);
        }
    }
    free(staged);
    return enqueue_end(&x, blocking, event);
}

static cl_int CL_API_CALL write_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t off,
                                       size_t size, const void *ptr, cl_uint nwait, const cl_event *wl,
                                       cl_event *event)
{
    return host_transfer(queue, buffer, blocking, off, size, (void *)ptr, nwait, wl, event, true);
}

static cl_int CL_API_CALL read_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t off,
                                      size_t size, void *ptr, cl_uint nwait, const cl_event *wl,
                                      cl_event *event)
{
    return host_transfer(queue, buffer, blocking, off, size, ptr, nwait, wl, event, false);
}

/* Kernel arguments are snapshotted at enqueue and travel with the command: buffers made valid
 * on the rank first (a buffer the kernel declares const or __constant, or one created
 * CL_MEM_READ_ONLY, is read; every other one is taken as written). */
static cl_int pack_args(struct dist_kernel *k, int rank, struct dist_uses *u, unsigned char **out,
                        size_t *len)
{
    size_t cap = 0;
    for (cl_uint i = 0; i < k->nargs; i++) {
        SLUICE_RETURN_ERROR_ON(!k->args[i].set, CL_INVALID_KERNEL_ARGS, "!k->args[i].set");
        cap += sizeof(struct sluice_remote_karg) + ((k->args[i].size + 7) & ~(size_t)7);
    }
    unsigned char *p = calloc(1, cap + 1);
    if (p == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    size_t at = 0;
    for (cl_uint i = 0; i < k->nargs; i++) {
        struct dist_arg *a = &k->args[i];
        struct sluice_remote_karg ka = {(uint32_t)a->kind, 0, a->size, 0};
        if (a->kind == SLUICE_KARG_MEM) {
            bool ro = a->read_only || (a->mem->flags & CL_MEM_READ_ONLY) != 0;
            cl_int r = dist_use(u, a->mem, rank, 0, a->mem->size, !ro, false);
            if (r != CL_SUCCESS) {
                free(p);
                return r;
            }
            ka.mem = a->mem->rid[rank];
        } else if (a->kind ==
                   DIST_ARG_SAMPLER) { /* a sampler: the engine sets its handle there as it sets a buffer's */
            ka.kind = SLUICE_KARG_MEM;
            ka.mem = a->sampler->rid[rank];
        }
        memcpy(p + at, &ka, sizeof ka);
        at += sizeof ka;
        if (a->kind == SLUICE_KARG_BYTES) {
            memcpy(p + at, a->bytes, a->size);
            at += (a->size + 7) & ~(size_t)7;
        }
    }
    *out = p;
    *len = at;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                  const size_t *offset, const size_t *global, const size_t *local,
                                  cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(k == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    SLUICE_RETURN_ERROR_ON(k->prog->ctx != q->ctx, CL_INVALID_CONTEXT,
                           "objects of two contexts (k->prog->ctx != q->ctx)");
    SLUICE_RETURN_ERROR_ON(k->rid[q->dev->rank] == 0, CL_INVALID_PROGRAM_EXECUTABLE,
                           "k->rid[q->dev->rank] == 0 (its program was built for other ranks' devices)");
    /* What the driver refuses at once is refused here, at enqueue, not later on the event. */
    int empty = 0;
    cl_int r = dist_validate_ndrange(q, k, dims, offset, global, local, &empty);
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    static const size_t none[3] = {0, 0, 0};
    if (empty && global == NULL)
        global = none; /* no work-item (OpenCL 2.1+): the device's queue still orders the command */
    struct enqueue x;
    enqueue_begin(&x, q);
    unsigned char *args = NULL;
    size_t alen = 0;
    x.r = pack_args(k, x.rank, &x.u, &args, &alen);
    if (x.r == CL_SUCCESS) {
        size_t vlen = 3 * dims * sizeof(size_t);
        unsigned char *bytes = malloc(vlen + alen);
        if (bytes == NULL) {
            x.r = CL_OUT_OF_HOST_MEMORY;
        } else {
            size_t v[9] = {0};
            for (cl_uint i = 0; i < dims; i++) {
                v[i] = offset ? offset[i] : 0;
                v[dims + i] = global[i];
                v[2 * dims + i] = local ? local[i] : 0;
            }
            memcpy(bytes, v, vlen);
            memcpy(bytes + vlen, args, alen);
            struct dist_cmd c = enqueue_command(&x, DIST_CMD_NDRANGE_KERNEL, nwait, wl);
            c.args.ndrange = (struct sluice_req_ndrange){.kernel = k->rid[x.rank],
                                                         .dims = dims,
                                                         .nulls = (offset ? 0u : SLUICE_NDR_NO_OFFSET) |
                                                                  (local ? 0u : SLUICE_NDR_NO_LOCAL),
                                                         .nargs = k->nargs};
            c.bytes = bytes;
            c.nbytes = vlen + alen;
            enqueue_submit(&x, &c);
            free(bytes);
        }
    }
    free(args);
    return enqueue_end(&x, false, event);
}

/* Copy: the source is read and the destination written on the queue's rank. */
static cl_int CL_API_CALL copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_off,
                                      size_t dst_off, size_t size, cl_uint nwait, const cl_event *wl,
                                      cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    static const char any = 0;
    cl_int r = check_range(s, src_off, size, &any);
    if (r == CL_SUCCESS)
        r = check_range(d, dst_off, size, &any);
    SLUICE_ERROR_ON(r, (s->ctx != q->ctx || d->ctx != q->ctx), CL_INVALID_CONTEXT,
                    "objects of two contexts ((s->ctx != q->ctx || d->ctx != q->ctx))");
    SLUICE_ERROR_ON(r, s == d && (src_off < dst_off ? dst_off - src_off : src_off - dst_off) < size,
                    CL_MEM_COPY_OVERLAP,
                    "s == d && (src_off < dst_off ? dst_off - src_off : src_off - dst_off) < size");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct enqueue x;
    enqueue_begin(&x, q);
    enqueue_use(&x, s, src_off, size, false, false);
    enqueue_use(&x, d, dst_off, size, true, true);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c = enqueue_command(&x, DIST_CMD_COPY_BUFFER, nwait, wl);
        c.args.copy = (struct sluice_req_copy){.src = s->rid[x.rank],
                                               .dst = d->rid[x.rank],
                                               .src_offset = src_off,
                                               .dst_offset = dst_off,
                                               .size = size};
        enqueue_submit(&x, &c);
    }
    return enqueue_end(&x, false, event);
}

static cl_int CL_API_CALL fill_buffer(cl_command_queue queue, cl_mem buffer, const void *pattern,
                                      size_t pattern_size, size_t off, size_t size, cl_uint nwait,
                                      const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(
        pattern == NULL || pattern_size == 0 || pattern_size > 128 ||
            (pattern_size & (pattern_size - 1)) != 0 || off % pattern_size != 0 || size % pattern_size != 0,
        CL_INVALID_VALUE,
        "pattern == NULL || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) "
        "!= 0 || off %% pattern_size != 0 || size %% pattern_size != 0");
    bool empty = size == 0 && m != NULL && off <= m->size;
    cl_int r = empty ? CL_SUCCESS : check_range(m, off, size, pattern);
    SLUICE_ERROR_ON(r, m->ctx != q->ctx, CL_INVALID_CONTEXT, "objects of two contexts (m->ctx != q->ctx)");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    if (empty)
        return empty_command(q, DIST_CMD_EMPTY_FILL, false, nwait, wl, event);
    struct enqueue x;
    enqueue_begin(&x, q);
    enqueue_use(&x, m, off, size, true, true);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c = enqueue_command(&x, DIST_CMD_FILL_BUFFER, nwait, wl);
        c.args.fill = (struct sluice_req_fill){.buf = m->rid[x.rank], .offset = off, .size = size};
        c.bytes = pattern;
        c.nbytes = pattern_size;
        enqueue_submit(&x, &c);
    }
    return enqueue_end(&x, false, event);
}

/* Rect variants: commands in the DAG like the others; the directory acquires the enclosing byte
 * range of the buffer (a write of part of it fetches the rest first). Between ranks the host
 * side travels packed (region[0] x region[1] x region[2] bytes). */
struct geom {
    struct sluice_rect_geom g; /* what travels (cl/serve/remote_proto.h) */
    size_t lo, hi, packed;     /* the buffer's bytes [lo, hi) it spans; the packed host bytes */
};

static cl_int rect_geom(struct geom *G, const struct dist_mem *m, const size_t *bo, const size_t *ho,
                        const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp)
{
    SLUICE_RETURN_ERROR_ON(m == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
    SLUICE_RETURN_ERROR_ON(
        bo == NULL || ho == NULL || region == NULL || region[0] == 0 || region[1] == 0 || region[2] == 0,
        CL_INVALID_VALUE,
        "bo == NULL || ho == NULL || region == NULL || region[0] == 0 || region[1] == 0 || region[2] == 0");
    brp = brp ? brp : region[0];
    bsp = bsp ? bsp : region[1] * brp;
    hrp = hrp ? hrp : region[0];
    hsp = hsp ? hsp : region[1] * hrp;
    SLUICE_RETURN_ERROR_ON(
        brp < region[0] || bsp < region[1] * brp || hrp < region[0] || hsp < region[1] * hrp,
        CL_INVALID_VALUE,
        "brp < region[0] || bsp < region[1] * brp || hrp < region[0] || hsp < region[1] * hrp");
    memcpy(G->g.origin, bo, sizeof G->g.origin);
    memcpy(G->g.host_origin, ho, sizeof G->g.host_origin);
    memcpy(G->g.region, region, sizeof G->g.region);
    G->g.row_pitch = brp;
    G->g.slice_pitch = bsp;
    G->g.host_row_pitch = hrp;
    G->g.host_slice_pitch = hsp;
    G->lo = bo[2] * bsp + bo[1] * brp + bo[0];
    G->hi = (bo[2] + region[2] - 1) * bsp + (bo[1] + region[1] - 1) * brp + bo[0] + region[0];
    G->packed = region[0] * region[1] * region[2];
    return G->hi > m->size ? CL_INVALID_VALUE : CL_SUCCESS;
}

void dist_rect_pack(unsigned char *to, const unsigned char *from, const struct sluice_rect_geom *g)
{
    const size_t *o = g->host_origin, *r = g->region;
    for (size_t z = 0; z < r[2]; z++)
        for (size_t y = 0; y < r[1]; y++, to += r[0])
            memcpy(to, from + (o[2] + z) * g->host_slice_pitch + (o[1] + y) * g->host_row_pitch + o[0], r[0]);
}

void dist_rect_host_span(const struct sluice_rect_geom *g, size_t *lo, size_t *hi)
{
    const size_t *o = g->host_origin, *r = g->region;
    *lo = o[2] * g->host_slice_pitch + o[1] * g->host_row_pitch + o[0];
    *hi = (o[2] + r[2] - 1) * g->host_slice_pitch + (o[1] + r[1] - 1) * g->host_row_pitch + o[0] + r[0];
}

/* What a rect read or write checks before anything moves: the queue, the geometry of the
 * region within the buffer, the host pointer, the context and the wait list. */
static cl_int rect_check(struct dist_queue *q, struct dist_mem *m, struct geom *G, const size_t *bo,
                         const size_t *ho, const size_t *region, size_t brp, size_t bsp, size_t hrp,
                         size_t hsp, const void *ptr, cl_uint nwait, const cl_event *wl)
{
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    cl_int r = rect_geom(G, m, bo, ho, region, brp, bsp, hrp, hsp);
    SLUICE_ERROR_ON(r, ptr == NULL, CL_INVALID_VALUE, "no value (NULL)");
    SLUICE_ERROR_ON(r, m->ctx != q->ctx, CL_INVALID_CONTEXT, "objects of two contexts (m->ctx != q->ctx)");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    return r;
}

static cl_int CL_API_CALL read_rect(cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *bo,
                                    const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                    size_t hrp, size_t hsp, void *ptr, cl_uint nwait, const cl_event *wl,
                                    cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    struct geom G;
    cl_int r = rect_check(q, m, &G, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    struct dist_rect *rect = NULL;
    if (rank != 0 && ((rect = calloc(1, sizeof *rect)) == NULL || (rect->tmp = malloc(G.packed)) == NULL)) {
        free(rect);
        return CL_OUT_OF_HOST_MEMORY;
    }
    if (rect != NULL) {
        rect->dst = ptr;
        memcpy(rect->origin, G.g.host_origin, sizeof rect->origin);
        memcpy(rect->region, G.g.region, sizeof rect->region);
        rect->row_pitch = G.g.host_row_pitch;
        rect->slice_pitch = G.g.host_slice_pitch;
    }
    struct enqueue x;
    enqueue_begin(&x, q);
    enqueue_use(&x, m, G.lo, G.hi - G.lo, false, false);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c = enqueue_command(&x, DIST_CMD_READ_BUFFER_RECT, nwait, wl);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? G.packed : 0;
        c.recv = rect != NULL ? (void *)rect->tmp : ptr;
        c.len = rank != 0 ? G.packed : 0;
        c.bytes = &G.g;
        c.nbytes = sizeof G.g;
        c.rect = rect;
        enqueue_submit(&x, &c);
        rect = NULL; /* the record owns it */
    }
    if (rect != NULL) {
        free(rect->tmp);
        free(rect);
    }
    return enqueue_end(&x, blocking, event);
}

static cl_int CL_API_CALL write_rect(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                     const size_t *bo, const size_t *ho, const size_t *region, size_t brp,
                                     size_t bsp, size_t hrp, size_t hsp, const void *ptr, cl_uint nwait,
                                     const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    struct geom G;
    cl_int r = rect_check(q, m, &G, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    /* Packed at enqueue (the program may reuse ptr once this returns), unless a pending read is
     * to bring those host bytes: then packed when the write's dependencies are done. */
    const unsigned char *h = ptr;
    size_t hlo, hhi;
    dist_rect_host_span(&G.g, &hlo, &hhi);
    int busy = rank != 0 && dist_sched_host_busy(h + hlo, hhi - hlo);
    unsigned char *tmp = NULL;
    if (rank != 0) {
        if ((tmp = malloc(G.packed)) == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        if (!busy)
            dist_rect_pack(tmp, ptr, &G.g);
    }
    struct enqueue x;
    enqueue_begin(&x, q);
    enqueue_use(&x, m, G.lo, G.hi - G.lo, true, false);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c = enqueue_command(&x, DIST_CMD_WRITE_BUFFER_RECT, nwait, wl);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? G.packed : 0;
        c.send = tmp != NULL ? (const void *)tmp : ptr;
        c.len = rank != 0 ? G.packed : 0;
        c.bytes = &G.g;
        c.nbytes = sizeof G.g;
        c.free_after = tmp;
        c.pack_from = busy ? ptr : NULL;
        enqueue_submit(&x, &c);
        tmp = NULL; /* the record owns it */
    }
    free(tmp);
    return enqueue_end(&x, blocking, event);
}

static cl_int CL_API_CALL copy_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *so,
                                    const size_t *dor, const size_t *region, size_t srp, size_t ssp,
                                    size_t drp, size_t dsp, cl_uint nwait, const cl_event *wl,
                                    cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    struct geom GS, GD;
    cl_int r = rect_geom(&GS, s, so, dor, region, srp, ssp, drp, dsp);
    if (r == CL_SUCCESS)
        r = rect_geom(&GD, d, dor, so, region, drp, dsp, srp, ssp);
    SLUICE_ERROR_ON(r, (s->ctx != q->ctx || d->ctx != q->ctx), CL_INVALID_CONTEXT,
                    "objects of two contexts ((s->ctx != q->ctx || d->ctx != q->ctx))");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct enqueue x;
    enqueue_begin(&x, q);
    enqueue_use(&x, s, GS.lo, GS.hi - GS.lo, false, false);
    enqueue_use(&x, d, GD.lo, GD.hi - GD.lo, true, false);
    if (x.r == CL_SUCCESS) {
        struct dist_cmd c = enqueue_command(&x, DIST_CMD_COPY_BUFFER_RECT, nwait, wl);
        c.args.copy.src = s->rid[x.rank];
        c.args.copy.dst = d->rid[x.rank];
        c.bytes = &GS.g; /* source origin, destination origin, region, source then destination pitches */
        c.nbytes = sizeof GS.g;
        enqueue_submit(&x, &c);
    }
    return enqueue_end(&x, false, event);
}

/* Markers and barriers: real ones on the queue's rank, with the wait list (events of other ranks
 * through NOTIFY). */
static cl_int marker_cmd(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                         struct dist_event **e, struct dist_mem *hold, void *free_after)
{
    struct dist_cmd c = dist_command(q, kind, nwait, wl, NULL);
    c.args.marker.barrier = kind == DIST_CMD_BARRIER; /* the engine enqueues a barrier, not a marker */
    c.hold = hold;
    c.free_after = free_after;
    pthread_mutex_lock(&dist_lock);
    cl_int r = submit(&c, e);
    pthread_mutex_unlock(&dist_lock);
    return r;
}

cl_int dist_exec_marker(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                        struct dist_event **e, struct dist_mem *hold, void *free_after)
{
    return marker_cmd(q, kind, nwait, wl, e, hold, free_after);
}

static cl_int marker(cl_command_queue queue, int barrier, cl_uint nwait, const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    cl_int r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct dist_event *e = NULL;
    r = marker_cmd(q, barrier ? DIST_CMD_BARRIER : DIST_CMD_MARKER, nwait, wl, &e, NULL, NULL);
    return dist_finish_call(r, e, false, event);
}

static cl_int CL_API_CALL marker_wl(cl_command_queue queue, cl_uint nwait, const cl_event *wl,
                                    cl_event *event)
{
    return marker(queue, 0, nwait, wl, event);
}

static cl_int CL_API_CALL barrier_wl(cl_command_queue queue, cl_uint nwait, const cl_event *wl,
                                     cl_event *event)
{
    return marker(queue, 1, nwait, wl, event);
}

/* Maps are served from rank 0 memory: the region is read into it at map time (unless the
 * program will overwrite it) and written back at unmap if the map allowed writes. A buffer
 * created with CL_MEM_USE_HOST_PTR maps at the program's own host_ptr + offset, as OpenCL
 * requires. */
static struct dist_map *maps;

static void *CL_API_CALL map_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                    cl_map_flags flags, size_t off, size_t size, cl_uint nwait,
                                    const cl_event *wl, cl_event *event, cl_int *errcode_ret)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    static const char any = 0;
    cl_int r = q == NULL ? CL_INVALID_COMMAND_QUEUE : check_range(m, off, size, &any);
    SLUICE_ERROR_ON(r, m->ctx != q->ctx, CL_INVALID_CONTEXT, "objects of two contexts (m->ctx != q->ctx)");
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    char *hp = r == CL_SUCCESS ? dist_mem_host_ptr(m) : NULL;
    bool host = hp != NULL;
    struct dist_map *mp = NULL;
    if (r == CL_SUCCESS &&
        ((mp = calloc(1, sizeof *mp)) == NULL || (mp->ptr = host ? hp + off : malloc(size)) == NULL))
        r = CL_OUT_OF_HOST_MEMORY;
    struct dist_event *e = NULL;
    if (r == CL_SUCCESS && !(flags & CL_MAP_WRITE_INVALIDATE_REGION)) {
        struct enqueue x;
        enqueue_begin(&x, q);
        enqueue_use(&x, m, off, size, false, false);
        if (x.r == CL_SUCCESS) {
            struct dist_cmd c = enqueue_command(&x, DIST_CMD_MAP_READ, nwait, wl);
            c.args.xfer.buf = m->rid[x.rank];
            c.args.xfer.offset = off;
            c.args.xfer.size = size;
            c.recv = mp->ptr;
            c.len = size;
            enqueue_submit(&x, &c);
        }
        r = enqueue_done(&x);
        e = x.e;
    } else if (r == CL_SUCCESS) {
        r = marker_cmd(q, DIST_CMD_MAP_INVALIDATE, nwait, wl, &e, NULL, NULL);
    }
    if (r == CL_SUCCESS) {
        mp->mem = m;
        mp->off = off;
        mp->size = size;
        mp->flags = flags;
        pthread_mutex_lock(&dist_lock);
        mp->next = maps;
        maps = mp;
        pthread_mutex_unlock(&dist_lock);
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL); /* a mapped object stays alive */
    }
    void *ptr = mp != NULL ? mp->ptr : NULL;
    r = dist_finish_call(r, e, blocking, event);
    if (errcode_ret != NULL)
        *errcode_ret = r;
    if (r != CL_SUCCESS) {
        if (mp != NULL && mp->mem == NULL) {
            if (!host)
                free(mp->ptr);
            free(mp);
        }
        return NULL;
    }
    return ptr;
}

static cl_int CL_API_CALL unmap(cl_command_queue queue, cl_mem memobj, void *ptr, cl_uint nwait,
                                const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)memobj;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(m == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
    cl_int r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    pthread_mutex_lock(&dist_lock);
    struct dist_map **pp = &maps;
    while (*pp != NULL && !((*pp)->mem == m && (*pp)->ptr == ptr))
        pp = &(*pp)->next;
    struct dist_map *mp = *pp;
    if (mp == NULL) {
        pthread_mutex_unlock(&dist_lock);
        return CL_INVALID_VALUE;
    }
    bool host = dist_mem_host_ptr(m) != NULL;
    void *free_after = host ? NULL : mp->ptr; /* freed when the write-back is done */
    struct dist_event *e = NULL;
    if (mp->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) {
        int rank = q->dev->rank;
        struct dist_uses u = {0};
        r = dist_use(&u, m, rank, mp->off, mp->size, true, true);
        if (r == CL_SUCCESS) {
            struct dist_cmd c = dist_command(q, DIST_CMD_UNMAP_WRITE, nwait, wl, &u);
            c.args.xfer.buf = m->rid[rank];
            c.args.xfer.offset = mp->off;
            c.args.xfer.size = mp->size;
            c.send = mp->ptr;
            c.len = mp->size;
            c.hold = m; /* the map's reference, dropped when the write-back is done */
            c.free_after = free_after;
            r = submit(&c, &e);
        }
        dist_uses_free(&u);
    } else {
        r = marker_cmd(q, DIST_CMD_UNMAP_READ, nwait, wl, &e, m, free_after);
    }
    if (r == CL_SUCCESS) {
        *pp = mp->next;
        free(mp);
    }
    pthread_mutex_unlock(&dist_lock);
    return dist_finish_call(r, e, false, event);
}

/* Migration: the coherence directory makes every byte of the buffers valid on the queue's rank
 * before a marker there (the contents are kept, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED or not, as
 * PoCL keeps them); toward the host, rank 0 already holds what it needs: a marker. */
static cl_int CL_API_CALL migrate(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                  cl_mem_migration_flags flags, cl_uint nwait, const cl_event *wl,
                                  cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    SLUICE_RETURN_ERROR_ON(
        n == 0 || mems == NULL ||
            (flags &
             ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)),
        CL_INVALID_VALUE,
        "n == 0 || mems == NULL || (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST | "
        "CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))");
    for (cl_uint i = 0; i < n; i++) {
        struct dist_mem *m = (struct dist_mem *)mems[i];
        SLUICE_RETURN_ERROR_ON(m == NULL, CL_INVALID_MEM_OBJECT, "no memory object (NULL)");
        SLUICE_RETURN_ERROR_ON(m->ctx != q->ctx, CL_INVALID_CONTEXT,
                               "objects of two contexts (m->ctx != q->ctx)");
    }
    cl_int r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    struct enqueue x;
    enqueue_begin(&x, q);
    for (cl_uint i = 0; !(flags & CL_MIGRATE_MEM_OBJECT_HOST) && i < n; i++) {
        struct dist_mem *m = (struct dist_mem *)mems[i];
        enqueue_use(&x, m, 0, m->size, false, false);
    }
    struct dist_cmd c = enqueue_command(&x, DIST_CMD_MIGRATE, nwait, wl);
    enqueue_submit(&x, &c);
    return enqueue_end(&x, false, event);
}

static cl_int CL_API_CALL finish(cl_command_queue queue)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no command queue (NULL)");
    return dist_sched_finish(q);
}

static cl_int CL_API_CALL flush(cl_command_queue queue)
{
    /* Dispatch is eager: every command left rank 0 when it was enqueued. */
    return queue == NULL ? CL_INVALID_COMMAND_QUEUE : CL_SUCCESS;
}

void dist_exec_install(struct sluice_cl_api *api)
{
    api->clEnqueueWriteBuffer = write_buffer;
    api->clEnqueueReadBuffer = read_buffer;
    api->clEnqueueNDRangeKernel = ndrange;
    api->clEnqueueCopyBuffer = copy_buffer;
    api->clEnqueueMapBuffer = map_buffer;
    api->clEnqueueUnmapMemObject = unmap;
    api->clEnqueueFillBuffer = fill_buffer;
    api->clEnqueueReadBufferRect = read_rect;
    api->clEnqueueWriteBufferRect = write_rect;
    api->clEnqueueCopyBufferRect = copy_rect;
    api->clEnqueueMarkerWithWaitList = marker_wl;
    api->clEnqueueBarrierWithWaitList = barrier_wl;
    api->clEnqueueMigrateMemObjects = migrate;
    api->clFinish = finish;
    api->clFlush = flush;
    dist_event_install(api);
}
