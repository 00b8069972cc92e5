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
    if (ptr == NULL || size == 0 || off > m->size || size > m->size - off)
        return CL_INVALID_VALUE;
    return CL_SUCCESS;
}

cl_int dist_check_wait(cl_uint n, const cl_event *evs)
{
    if ((n == 0) != (evs == NULL))
        return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < n; i++)
        if (evs[i] == NULL)
            return CL_INVALID_EVENT_WAIT_LIST;
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
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    bool empty = size == 0 && m != NULL && ptr != NULL && off <= m->size;
    cl_int r = empty ? CL_SUCCESS : check_range(m, off, size, ptr);
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    if (empty)
        return empty_command(q, write ? DIST_CMD_EMPTY_WRITE : DIST_CMD_EMPTY_READ, blocking, nwait, wl,
                             event);
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    struct dist_dhdcr_src src;
    pthread_mutex_lock(&dist_lock);
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
    r = dist_use(&u, m, rank, off, size, write, write);
    if (r == CL_SUCCESS) {
        struct dist_cmd c =
            dist_command(q, write ? DIST_CMD_WRITE_BUFFER : DIST_CMD_READ_BUFFER, nwait, wl, &u);
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
        r = submit(&c, &e);
        staged = NULL; /* the record owns it */
        if (r == CL_SUCCESS && e != NULL && direct)
            dist_dcr_trace_p2p(e->id, src.rank);
        if (r == CL_SUCCESS && e != NULL && !write && rank != 0 && dist_dhdcr_on()) {
            dist_dhdcr_note_read(e->id, ptr, size, m, off, rank);
            if (dist_sched_peek_done(e))
                dist_dhdcr_read_done(e->id, dist_sched_peek_done(e) > 0);
        }
    }
    pthread_mutex_unlock(&dist_lock);
    free(staged);
    dist_uses_free(&u);
    return dist_finish_call(r, e, blocking, event);
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
        if (!k->args[i].set)
            return CL_INVALID_KERNEL_ARGS;
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
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (k == NULL)
        return CL_INVALID_KERNEL;
    if (k->prog->ctx != q->ctx)
        return CL_INVALID_CONTEXT;
    if (k->rid[q->dev->rank] == 0)
        return CL_INVALID_PROGRAM_EXECUTABLE; /* its program was built for other ranks' devices */
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
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    unsigned char *args = NULL;
    size_t alen = 0;
    pthread_mutex_lock(&dist_lock);
    r = pack_args(k, rank, &u, &args, &alen);
    if (r == CL_SUCCESS) {
        size_t vlen = 3 * dims * sizeof(size_t);
        unsigned char *bytes = malloc(vlen + alen);
        if (bytes == NULL) {
            r = CL_OUT_OF_HOST_MEMORY;
        } else {
            size_t v[9] = {0};
            for (cl_uint i = 0; i < dims; i++) {
                v[i] = offset ? offset[i] : 0;
                v[dims + i] = global[i];
                v[2 * dims + i] = local ? local[i] : 0;
            }
            memcpy(bytes, v, vlen);
            memcpy(bytes + vlen, args, alen);
            struct dist_cmd c = dist_command(q, DIST_CMD_NDRANGE_KERNEL, nwait, wl, &u);
            c.args.ndrange = (struct sluice_req_ndrange){.kernel = k->rid[rank],
                                                         .dims = dims,
                                                         .nulls = (offset ? 0u : SLUICE_NDR_NO_OFFSET) |
                                                                  (local ? 0u : SLUICE_NDR_NO_LOCAL),
                                                         .nargs = k->nargs};
            c.bytes = bytes;
            c.nbytes = vlen + alen;
            r = submit(&c, &e);
            free(bytes);
        }
    }
    pthread_mutex_unlock(&dist_lock);
    free(args);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
}

/* Copy: the source is read and the destination written on the queue's rank. */
static cl_int CL_API_CALL copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_off,
                                      size_t dst_off, size_t size, cl_uint nwait, const cl_event *wl,
                                      cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    static const char any = 0;
    cl_int r = check_range(s, src_off, size, &any);
    if (r == CL_SUCCESS)
        r = check_range(d, dst_off, size, &any);
    if (r == CL_SUCCESS && (s->ctx != q->ctx || d->ctx != q->ctx))
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS && s == d && (src_off < dst_off ? dst_off - src_off : src_off - dst_off) < size)
        r = CL_MEM_COPY_OVERLAP;
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    r = dist_use(&u, s, rank, src_off, size, false, false);
    if (r == CL_SUCCESS)
        r = dist_use(&u, d, rank, dst_off, size, true, true);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_COPY_BUFFER, nwait, wl, &u);
        c.args.copy = (struct sluice_req_copy){.src = s->rid[rank],
                                               .dst = d->rid[rank],
                                               .src_offset = src_off,
                                               .dst_offset = dst_off,
                                               .size = size};
        r = submit(&c, &e);
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
}

static cl_int CL_API_CALL fill_buffer(cl_command_queue queue, cl_mem buffer, const void *pattern,
                                      size_t pattern_size, size_t off, size_t size, cl_uint nwait,
                                      const cl_event *wl, cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *m = (struct dist_mem *)buffer;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (pattern == NULL || pattern_size == 0 || pattern_size > 128 ||
        (pattern_size & (pattern_size - 1)) != 0 || off % pattern_size != 0 || size % pattern_size != 0)
        return CL_INVALID_VALUE;
    bool empty = size == 0 && m != NULL && off <= m->size;
    cl_int r = empty ? CL_SUCCESS : check_range(m, off, size, pattern);
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    if (empty)
        return empty_command(q, DIST_CMD_EMPTY_FILL, false, nwait, wl, event);
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    r = dist_use(&u, m, rank, off, size, true, true);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_FILL_BUFFER, nwait, wl, &u);
        c.args.fill = (struct sluice_req_fill){.buf = m->rid[rank], .offset = off, .size = size};
        c.bytes = pattern;
        c.nbytes = pattern_size;
        r = submit(&c, &e);
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
}

/* Rect variants: commands in the DAG like the others; the directory acquires the enclosing byte
 * range of the buffer (a write of part of it fetches the rest first). Between ranks the host
 * side travels packed (region[0] x region[1] x region[2] bytes). */
struct geom {
    size_t g[13]; /* buffer origin[3], host origin[3], region[3], buffer row/slice, host row/slice pitch */
    size_t lo, hi, packed;
};

static cl_int rect_geom(struct geom *G, const struct dist_mem *m, const size_t *bo, const size_t *ho,
                        const size_t *region, size_t brp, size_t bsp, size_t hrp, size_t hsp)
{
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
    if (bo == NULL || ho == NULL || region == NULL || region[0] == 0 || region[1] == 0 || region[2] == 0)
        return CL_INVALID_VALUE;
    brp = brp ? brp : region[0];
    bsp = bsp ? bsp : region[1] * brp;
    hrp = hrp ? hrp : region[0];
    hsp = hsp ? hsp : region[1] * hrp;
    if (brp < region[0] || bsp < region[1] * brp || hrp < region[0] || hsp < region[1] * hrp)
        return CL_INVALID_VALUE;
    memcpy(G->g, bo, 3 * sizeof(size_t));
    memcpy(G->g + 3, ho, 3 * sizeof(size_t));
    memcpy(G->g + 6, region, 3 * sizeof(size_t));
    G->g[9] = brp;
    G->g[10] = bsp;
    G->g[11] = hrp;
    G->g[12] = hsp;
    G->lo = bo[2] * bsp + bo[1] * brp + bo[0];
    G->hi = (bo[2] + region[2] - 1) * bsp + (bo[1] + region[1] - 1) * brp + bo[0] + region[0];
    G->packed = region[0] * region[1] * region[2];
    return G->hi > m->size ? CL_INVALID_VALUE : CL_SUCCESS;
}

void dist_rect_pack(unsigned char *to, const unsigned char *from, const size_t *g)
{
    for (size_t z = 0; z < g[8]; z++)
        for (size_t y = 0; y < g[7]; y++, to += g[6])
            memcpy(to, from + (g[5] + z) * g[12] + (g[4] + y) * g[11] + g[3], g[6]);
}

/* What a rect read or write checks before anything moves: the queue, the geometry of the
 * region within the buffer, the host pointer, the context and the wait list. */
static cl_int rect_check(struct dist_queue *q, struct dist_mem *m, struct geom *G, const size_t *bo,
                         const size_t *ho, const size_t *region, size_t brp, size_t bsp, size_t hrp,
                         size_t hsp, const void *ptr, cl_uint nwait, const cl_event *wl)
{
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    cl_int r = rect_geom(G, m, bo, ho, region, brp, bsp, hrp, hsp);
    if (r == CL_SUCCESS && ptr == NULL)
        r = CL_INVALID_VALUE;
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
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
        memcpy(rect->origin, G.g + 3, sizeof rect->origin);
        memcpy(rect->region, G.g + 6, sizeof rect->region);
        rect->row_pitch = G.g[11];
        rect->slice_pitch = G.g[12];
    }
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    r = dist_use(&u, m, rank, G.lo, G.hi - G.lo, false, false);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_READ_BUFFER_RECT, nwait, wl, &u);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? G.packed : 0;
        c.recv = rect != NULL ? (void *)rect->tmp : ptr;
        c.len = rank != 0 ? G.packed : 0;
        c.bytes = G.g;
        c.nbytes = sizeof G.g;
        c.rect = rect;
        r = submit(&c, &e);
        rect = NULL; /* the record owns it */
    }
    pthread_mutex_unlock(&dist_lock);
    if (rect != NULL) {
        free(rect->tmp);
        free(rect);
    }
    dist_uses_free(&u);
    return dist_finish_call(r, e, blocking, event);
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
    size_t hlo = G.g[5] * G.g[12] + G.g[4] * G.g[11] + G.g[3];
    size_t hhi = (G.g[5] + G.g[8] - 1) * G.g[12] + (G.g[4] + G.g[7] - 1) * G.g[11] + G.g[3] + G.g[6];
    int busy = rank != 0 && dist_sched_host_busy(h + hlo, hhi - hlo);
    unsigned char *tmp = NULL;
    if (rank != 0) {
        if ((tmp = malloc(G.packed)) == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        if (!busy)
            dist_rect_pack(tmp, ptr, G.g);
    }
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    r = dist_use(&u, m, rank, G.lo, G.hi - G.lo, true, false);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_WRITE_BUFFER_RECT, nwait, wl, &u);
        c.args.xfer.buf = m->rid[rank];
        c.args.xfer.size = rank != 0 ? G.packed : 0;
        c.send = tmp != NULL ? (const void *)tmp : ptr;
        c.len = rank != 0 ? G.packed : 0;
        c.bytes = G.g;
        c.nbytes = sizeof G.g;
        c.free_after = tmp;
        c.pack_from = busy ? ptr : NULL;
        r = submit(&c, &e);
        tmp = NULL;
    }
    pthread_mutex_unlock(&dist_lock);
    free(tmp);
    dist_uses_free(&u);
    return dist_finish_call(r, e, blocking, event);
}

static cl_int CL_API_CALL copy_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *so,
                                    const size_t *dor, const size_t *region, size_t srp, size_t ssp,
                                    size_t drp, size_t dsp, cl_uint nwait, const cl_event *wl,
                                    cl_event *event)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    struct dist_mem *s = (struct dist_mem *)src, *d = (struct dist_mem *)dst;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    struct geom GS, GD;
    cl_int r = rect_geom(&GS, s, so, dor, region, srp, ssp, drp, dsp);
    if (r == CL_SUCCESS)
        r = rect_geom(&GD, d, dor, so, region, drp, dsp, srp, ssp);
    if (r == CL_SUCCESS && (s->ctx != q->ctx || d->ctx != q->ctx))
        r = CL_INVALID_CONTEXT;
    if (r == CL_SUCCESS)
        r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    r = dist_use(&u, s, rank, GS.lo, GS.hi - GS.lo, false, false);
    if (r == CL_SUCCESS)
        r = dist_use(&u, d, rank, GD.lo, GD.hi - GD.lo, true, false);
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_COPY_BUFFER_RECT, nwait, wl, &u);
        c.args.copy.src = s->rid[rank];
        c.args.copy.dst = d->rid[rank];
        c.bytes = GS.g; /* source origin, destination origin, region, source then destination pitches */
        c.nbytes = sizeof GS.g;
        r = submit(&c, &e);
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
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
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
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
    if (r == CL_SUCCESS && m->ctx != q->ctx)
        r = CL_INVALID_CONTEXT;
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
        int rank = q->dev->rank;
        struct dist_uses u = {0};
        pthread_mutex_lock(&dist_lock);
        r = dist_use(&u, m, rank, off, size, false, false);
        if (r == CL_SUCCESS) {
            struct dist_cmd c = dist_command(q, DIST_CMD_MAP_READ, nwait, wl, &u);
            c.args.xfer.buf = m->rid[rank];
            c.args.xfer.offset = off;
            c.args.xfer.size = size;
            c.recv = mp->ptr;
            c.len = size;
            r = submit(&c, &e);
        }
        pthread_mutex_unlock(&dist_lock);
        dist_uses_free(&u);
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
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (m == NULL)
        return CL_INVALID_MEM_OBJECT;
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
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
    if (n == 0 || mems == NULL ||
        (flags &
         ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)))
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < n; i++) {
        struct dist_mem *m = (struct dist_mem *)mems[i];
        if (m == NULL)
            return CL_INVALID_MEM_OBJECT;
        if (m->ctx != q->ctx)
            return CL_INVALID_CONTEXT;
    }
    cl_int r = dist_check_wait(nwait, wl);
    if (r != CL_SUCCESS)
        return r;
    int rank = q->dev->rank;
    struct dist_uses u = {0};
    struct dist_event *e = NULL;
    pthread_mutex_lock(&dist_lock);
    for (cl_uint i = 0; r == CL_SUCCESS && !(flags & CL_MIGRATE_MEM_OBJECT_HOST) && i < n; i++) {
        struct dist_mem *m = (struct dist_mem *)mems[i];
        r = dist_use(&u, m, rank, 0, m->size, false, false);
    }
    if (r == CL_SUCCESS) {
        struct dist_cmd c = dist_command(q, DIST_CMD_MIGRATE, nwait, wl, &u);
        r = submit(&c, &e);
    }
    pthread_mutex_unlock(&dist_lock);
    dist_uses_free(&u);
    return dist_finish_call(r, e, false, event);
}

static cl_int CL_API_CALL finish(cl_command_queue queue)
{
    struct dist_queue *q = (struct dist_queue *)queue;
    if (q == NULL)
        return CL_INVALID_COMMAND_QUEUE;
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
