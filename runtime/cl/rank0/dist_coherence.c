/* SPDX-License-Identifier: MIT */
/* Where the valid copy of each distributed buffer is, and moving it where a command needs it,
 * through the coherence directory (runtime/cl/rank0/coherence.h).
 *
 * Directory locations: 0 is rank 0's host memory (the copy of CL_MEM_COPY_HOST_PTR data made
 * at creation); 1 + r is the device memory on rank r (rank 0's own device is location 1).
 * Moves are planned at enqueue time, in program order, and executed asynchronously by the
 * engines of the two end points (remote_engine.c): the holder reads the range after the earlier
 * commands there that write it, sends it directly to the receiver (never through rank 0 unless
 * rank 0 is an end point), and the receiver's later commands on that buffer wait for its write. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/coherence.h"
#include "cl/rank0/dist_internal.h"
#include "common/log.h"
#include "trace/trace.h"

static struct sluice_coh_dir *dir;

static cl_int from_errno(int e)
{
    return e == -ENOMEM ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_VALUE;
}

cl_int dist_coh_add(struct dist_mem *m)
{
    pthread_mutex_lock(&dist_lock);
    if (dir == NULL)
        dir = sluice_coh_create(dist_size() + 1, 0);
    /* An image is one unit of the directory (one byte): it always moves whole (dist_image_whole). */
    uint64_t size = m->image != NULL ? 1 : m->size;
    int e = dir ? sluice_coh_add_buffer(dir, m->coh_id, size, sluice_coh_init_from_flags(m->flags)) : -ENOMEM;
    pthread_mutex_unlock(&dist_lock);
    return e == 0 ? CL_SUCCESS : from_errno(e);
}

void dist_coh_remove(struct dist_mem *m)
{
    dist_dhdcr_forget_range(m, 0, 0);
    pthread_mutex_lock(&dist_lock);
    if (dir != NULL)
        sluice_coh_remove_buffer(dir, m->coh_id);
    pthread_mutex_unlock(&dist_lock);
}

/* One planned move, sent at once: the receiving half (a CMD_WRITE on the destination, which
 * reports its end) and, from a device, the sending half (a silent CMD_READ on the holder). The
 * data goes from one end point to the other; from rank 0's host copy it is sent by rank 0. */
static cl_int move(struct dist_mem *m, const struct sluice_coh_transfer *t)
{
    int dst = t->dst - 1;
    SLUICE_RETURN_ERROR_ON(dst < 0 || m->rid[dst] == 0, CL_INVALID_OPERATION,
                           "dst < 0 || m->rid[dst] == 0 (host reads never go through the directory)");
    SLUICE_RETURN_ERROR_ON(t->src == 0 && m->shadow == NULL, CL_INVALID_OPERATION,
                           "t->src == 0 && m->shadow == NULL");
    struct sluice_dag_access acc = {m->coh_id, t->offset, t->size, SLUICE_DAG_WRITES};
    struct sluice_remote_access racc = {m->rid[dst], 1};
    struct dist_cmd c;
    memset(&c, 0, sizeof c);
    c.rank = dst;
    c.kind = DIST_CMD_TRANSFER;
    c.ctx = m->ctx;
    c.flags = SLUICE_CMD_TRANSFER;
    c.args.xfer.buf = m->rid[dst];
    c.args.xfer.offset = t->offset;
    c.args.xfer.size = t->size;
    c.naccess = 1;
    c.access = &acc;
    c.raccess = &racc;
    struct sluice_rect_geom g;
    if (m->image != NULL) { /* the whole image, packed */
        dist_image_whole(m, &g);
        c.flags |= SLUICE_CMD_IMAGE;
        c.args.xfer.size = m->size;
        c.bytes = &g;
        c.nbytes = sizeof g;
    }
    if (t->src == 0) {
        c.send = m->shadow + t->offset; /* rank 0's copy lives as long as the buffer: held */
        c.len = (size_t)c.args.xfer.size;
        c.hold = m;
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
    } else {
        int src = t->src - 1;
        c.args.xfer.peer = (uint64_t)src;
        c.push = 1;
        c.push_rank = src;
        c.push_xfer.buf = m->rid[src];
        c.push_xfer.offset = t->offset;
        c.push_xfer.size = c.args.xfer.size;
        c.push_xfer.peer = (uint64_t)dst;
        c.push_access = (struct sluice_remote_access){m->rid[src], 0};
        c.push_geom = m->image != NULL ? &g : NULL;
    }
    uint64_t t0 = sluice_trace_active() ? sluice_now_ns() : 0;
    cl_int r = dist_sched_submit(&c, NULL);
    if (sluice_trace_active()) {
        /* Named by the program's handle of the context's first device on the receiving rank. */
        struct sluice_cl_obj *dev = NULL;
        for (int i = 0; dev == NULL && i < m->ctx->ndev; i++)
            if (m->ctx->devs[i]->rank == dst)
                dev = sluice_cl_find(m->ctx->devs[i]);
        sluice_trace_record(SLUICE_EV_CL_TRANSFER, r == CL_SUCCESS ? 0 : SLUICE_EVF_ERROR, t0,
                            sluice_now_ns() - t0, t->src == 0 ? 0 : 2, c.args.xfer.size,
                            (uint64_t)(uintptr_t)dev);
    }
    return r;
}

cl_int dist_coh_acquire(struct dist_mem *m, int rank, size_t off, size_t size, bool write, bool write_all)
{
    /* A sub-buffer is its parent's region: the directory and the moves work on the parent. */
    for (; m->parent != NULL; m = m->parent)
        off += m->origin;
    if (m->image != NULL) {
        off = 0;
        size = 1;
    }
    pthread_mutex_lock(&dist_lock);
    struct sluice_coh_plan plan = {0};
    int e = write ? sluice_coh_write(dir, m->coh_id, off, size, rank + 1,
                                     write_all ? SLUICE_COH_WRITE_ALL : 0, &plan)
                  : sluice_coh_read(dir, m->coh_id, off, size, rank + 1, &plan);
    cl_int r = e == 0 ? CL_SUCCESS : from_errno(e);
    for (size_t i = 0; i < plan.n && r == CL_SUCCESS; i++)
        r = move(m, &plan.v[i]);
    sluice_coh_plan_free(&plan);
    pthread_mutex_unlock(&dist_lock);
    if (r != CL_SUCCESS)
        sluice_log_error("opencl: moving a buffer to rank %d's device failed (error %d)", rank, r);
    return r;
}
