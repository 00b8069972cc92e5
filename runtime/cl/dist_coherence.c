/* Where the valid copy of each distributed buffer is, and moving it where a command needs it,
 * through the coherence directory (runtime/dcl/coherence.h).
 *
 * Directory locations: 0 is rank 0's host memory (the copy of CL_MEM_COPY_HOST_PTR data made
 * at creation); 1 + r is the device memory on rank r (rank 0's own device is location 1).
 * A move between two serving ranks goes directly from one to the other (PUSH on the holder,
 * PULL on the receiver, both requested before either reply is awaited, so a large rendezvous
 * send cannot deadlock). A move that starts or ends on rank 0's device passes through rank 0,
 * which is then an end point, not a relay. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cl/dist_internal.h"
#include "cl/object.h"
#include "common/log.h"
#include "dcl/coherence.h"
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
    int e = dir ? sluice_coh_add_buffer(dir, m->coh_id, m->size, sluice_coh_init_from_flags(m->flags)) : -ENOMEM;
    pthread_mutex_unlock(&dist_lock);
    return e == 0 ? CL_SUCCESS : from_errno(e);
}

void dist_coh_remove(struct dist_mem *m)
{
    pthread_mutex_lock(&dist_lock);
    if (dir != NULL)
        sluice_coh_remove_buffer(dir, m->coh_id);
    pthread_mutex_unlock(&dist_lock);
}

/* Both requests first, then both replies: see the file comment. */
static cl_int rank_to_rank(struct dist_mem *m, int src, int dst, uint64_t off, uint64_t size)
{
    MPI_Comm comm = sluice_comm();
    if (comm == MPI_COMM_NULL)
        return CL_DEVICE_NOT_AVAILABLE;
    struct sluice_remote_req push = {.op = SLUICE_REMOTE_PUSH,
                                     .a = {m->ctx->rid[src], m->rid[src], off, size, (uint64_t)dst}};
    struct sluice_remote_req pull = {.op = SLUICE_REMOTE_PULL,
                                     .a = {m->ctx->rid[dst], m->rid[dst], off, size, (uint64_t)src}};
    int rc = sluice_remote_send(comm, src, SLUICE_REMOTE_TAG_REQ, &push, sizeof push, NULL, 0);
    if (rc == MPI_SUCCESS)
        rc = sluice_remote_send(comm, dst, SLUICE_REMOTE_TAG_REQ, &pull, sizeof pull, NULL, 0);
    cl_int ret = CL_SUCCESS;
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++) {
        unsigned char *buf = NULL;
        size_t len = 0;
        rc = sluice_remote_recv(comm, i == 0 ? src : dst, SLUICE_REMOTE_TAG_REP, &buf, &len);
        struct sluice_remote_rep rep;
        if (rc == MPI_SUCCESS && len >= sizeof rep) {
            memcpy(&rep, buf, sizeof rep);
            if (rep.ret != CL_SUCCESS && ret == CL_SUCCESS)
                ret = (cl_int)rep.ret;
        }
        free(buf);
    }
    return rc == MPI_SUCCESS ? ret : CL_DEVICE_NOT_AVAILABLE;
}

static cl_int write_to(struct dist_mem *m, int rank, uint64_t off, const void *data, uint64_t size)
{
    uint64_t a[6] = {0, m->rid[rank], off, m->ctx->rid[rank], 0, 0};
    return dist_call(rank, SLUICE_REMOTE_BUF_WRITE, a, 6, data, (size_t)size, NULL);
}

static cl_int through_rank0(struct dist_mem *m, int src, int dst, uint64_t off, uint64_t size)
{
    struct sluice_remote_msg msg;
    uint64_t a[6] = {0, m->rid[src], off, size, m->ctx->rid[src], 0};
    cl_int r = dist_call(src, SLUICE_REMOTE_BUF_READ, a, 6, NULL, 0, &msg);
    if (r == CL_SUCCESS && msg.rep.nbytes != size)
        r = CL_OUT_OF_RESOURCES;
    if (r == CL_SUCCESS)
        r = write_to(m, dst, off, msg.bytes, size);
    free(msg.bytes);
    return r;
}

static cl_int move(struct dist_mem *m, const struct sluice_coh_transfer *t)
{
    int dst = t->dst - 1;
    if (dst < 0 || m->rid[dst] == 0)
        return CL_INVALID_OPERATION; /* host reads never go through the directory */
    uint64_t t0 = sluice_trace_active() ? sluice_now_ns() : 0;
    cl_int r;
    if (t->src == 0) {
        if (m->shadow == NULL)
            return CL_INVALID_OPERATION;
        r = write_to(m, dst, t->offset, m->shadow + t->offset, t->size);
    } else if (t->src - 1 == 0 || dst == 0) {
        r = through_rank0(m, t->src - 1, dst, t->offset, t->size);
    } else {
        r = rank_to_rank(m, t->src - 1, dst, t->offset, t->size);
    }
    if (sluice_trace_active()) {
        /* Named by the program's handle of the context's first device on the receiving rank. */
        struct sluice_cl_obj *dev = NULL;
        for (int i = 0; dev == NULL && i < m->ctx->ndev; i++)
            if (m->ctx->devs[i]->rank == dst)
                dev = sluice_cl_find(m->ctx->devs[i]);
        sluice_trace_record(SLUICE_EV_CL_TRANSFER, r == CL_SUCCESS ? 0 : SLUICE_EVF_ERROR, t0, sluice_now_ns() - t0,
                            t->src == 0 ? 0 : 2, t->size, (uint64_t)(uintptr_t)dev);
    }
    return r;
}

cl_int dist_coh_acquire(struct dist_mem *m, int rank, size_t off, size_t size, bool write, bool write_all)
{
    /* A sub-buffer is its parent's region: the directory and the moves work on the parent. */
    for (; m->parent != NULL; m = m->parent)
        off += m->origin;
    pthread_mutex_lock(&dist_lock);
    struct sluice_coh_plan plan = {0};
    int e = write ? sluice_coh_write(dir, m->coh_id, off, size, rank + 1, write_all ? SLUICE_COH_WRITE_ALL : 0, &plan)
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
