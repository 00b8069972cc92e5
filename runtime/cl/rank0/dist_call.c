/* SPDX-License-Identifier: MIT */
/* Rank 0's side of a remote call: one request, one reply, under one lock (the program's threads
 * take turns; rank 0 is the only client, so replies come back in order). Calls for rank 0's own
 * devices run the request handler in-process. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_objects.h"
#include "common/info_string.h"

pthread_mutex_t dist_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* Calls that may run while collective replacement holds commands (docs/DAG.md, section 2): they
 * create an object or ask about one, and no held command can name an object created after it.
 * Programs create a device's queue and buffers right before writing to it; a create that closed
 * the window split a broadcast into one write per device. Releases, builds and everything else
 * still close it first (a release must follow the commands that use the object). */
static int keeps_window(int op, const uint64_t *args, int nargs)
{
    switch (op) {
    case SLUICE_REMOTE_INFO:
    case SLUICE_REMOTE_QUEUE_CREATE:
    case SLUICE_REMOTE_BUF_CREATE:
    case SLUICE_REMOTE_SUBBUF:
    case SLUICE_REMOTE_KERNEL_CREATE:
        return 1;
    case SLUICE_REMOTE_OBJ:
        if (nargs < 1)
            return 0;
        switch (args[0]) { /* the operation: union sluice_robj_args.op, remote_objects.h */
        case SLUICE_ROBJ_IMAGE_CREATE:
        case SLUICE_ROBJ_IMAGE_FORMATS:
        case SLUICE_ROBJ_IMAGE_INFO:
        case SLUICE_ROBJ_IMAGE_ANSWERS:
        case SLUICE_ROBJ_SAMPLER_CREATE:
        case SLUICE_ROBJ_SAMPLER_INFO:
        case SLUICE_ROBJ_KERNEL_ARGS:
            return 1;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

cl_int dist_call(int rank, int op, const uint64_t *args, int nargs, const void *payload, size_t len,
                 struct sluice_remote_msg *out)
{
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = (uint32_t)op;
    /* The words of the op's struct (DIST_WORDS), the rest 0: the one place they go in as words. */
    for (int i = 0; i < nargs && i < SLUICE_REMOTE_NARGS; i++)
        req.a[i] = args[i];
    req.nbytes = len;
    int keeps = keeps_window(op, args, nargs);
    if (keeps)
        dist_sched_window_touch(); /* the program is busy: its round trip is no idle time */
    else
        dist_sched_flush(); /* commands the window holds go first (a release must follow their uses) */
    struct sluice_remote_msg local;
    struct sluice_remote_msg *m = out ? out : &local;
    memset(m, 0, sizeof *m);
    if (rank == 0) {
        if (!sluice_engine_defer_release(&req, payload))
            sluice_remote_handle(&req, payload, m);
    } else {
        MPI_Comm comm = sluice_comm();
        if (comm == MPI_COMM_NULL)
            return CL_DEVICE_NOT_AVAILABLE;
        pthread_mutex_lock(&dist_lock);
        unsigned char *buf = NULL;
        size_t blen = 0;
        int rc = sluice_remote_send(comm, rank, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, payload, len);
        if (rc != MPI_SUCCESS)
            dist_fault_peer(rank, rc, "sending a request");
        rc = sluice_remote_recv(comm, rank, SLUICE_REMOTE_TAG_REP, &buf, &blen);
        if (rc != MPI_SUCCESS)
            dist_fault_peer(rank, rc, "receiving a reply");
        pthread_mutex_unlock(&dist_lock);
        if (rc != MPI_SUCCESS || blen < sizeof m->rep) {
            free(buf);
            return CL_DEVICE_NOT_AVAILABLE;
        }
        memcpy(&m->rep, buf, sizeof m->rep);
        if (m->rep.nbytes > blen - sizeof m->rep)
            m->rep.nbytes = blen - sizeof m->rep;
        if (m->rep.nbytes > 0) {
            /* keep one block: move the payload to the front */
            memmove(buf, buf + sizeof m->rep, (size_t)m->rep.nbytes);
            m->bytes = buf;
        } else {
            free(buf);
        }
    }
    if (keeps)
        dist_sched_window_touch();
    cl_int ret = (cl_int)m->rep.ret;
    if (out == NULL)
        free(local.bytes);
    return ret;
}

void dist_post(int rank, int op, const uint64_t *args, int nargs)
{
    if (rank == 0) {
        dist_call(rank, op, args, nargs, NULL, 0, NULL);
        return;
    }
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = (uint32_t)op;
    for (int i = 0; i < nargs && i < SLUICE_REMOTE_NARGS; i++) /* as in dist_call */
        req.a[i] = args[i];
    dist_sched_flush();
    MPI_Comm comm = sluice_comm();
    if (comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&dist_lock);
    int rc = sluice_remote_send(comm, rank, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, NULL, 0);
    if (rc != MPI_SUCCESS)
        dist_fault_peer(rank, rc, "sending a request");
    pthread_mutex_unlock(&dist_lock);
}

cl_int dist_call_v(int rank, int op, const uint64_t *args, int nargs, const void *payload, size_t len,
                   uint64_t *v0)
{
    struct sluice_remote_msg m;
    cl_int r = dist_call(rank, op, args, nargs, payload, len, &m);
    if (v0 != NULL)
        *v0 = m.rep.v[0];
    free(m.bytes);
    return r;
}

cl_int dist_info(int rank, int getter, uint64_t obj, uint64_t obj2, cl_uint param, size_t size, void *value,
                 size_t *size_ret)
{
    struct sluice_req_info in = {(uint64_t)getter, obj, obj2, param, value ? size : 0};
    struct sluice_remote_msg m;
    cl_int r = dist_call(rank, SLUICE_REMOTE_INFO, DIST_WORDS(in), NULL, 0, &m);
    if (r == CL_SUCCESS) {
        if (value != NULL && m.rep.v[0] > size)
            r = CL_INVALID_VALUE;
        else if (value != NULL && m.bytes != NULL)
            memcpy(value, m.bytes, (size_t)m.rep.nbytes);
        if (size_ret != NULL)
            *size_ret = (size_t)m.rep.v[0];
    }
    free(m.bytes);
    return r;
}

struct info_ask {
    int rank, getter;
    uint64_t obj, obj2;
    cl_uint param;
};

static int32_t ask_info(const void *ctx, size_t size, void *value, size_t *size_ret)
{
    const struct info_ask *a = ctx;
    return dist_info(a->rank, a->getter, a->obj, a->obj2, a->param, size, value, size_ret);
}

char *dist_info_text(int rank, int getter, uint64_t obj, uint64_t obj2, cl_uint param, cl_int *err)
{
    struct info_ask a = {rank, getter, obj, obj2, param};
    int32_t e = 0;
    char *s = sluice_info_string(ask_info, &a, &e);
    if (err != NULL)
        *err = e;
    return s;
}

cl_int dist_answer(const void *src, size_t n, size_t size, void *value, size_t *size_ret)
{
    if (value != NULL) {
        SLUICE_RETURN_ERROR_ON(size < n, CL_INVALID_VALUE, "size < n");
        memcpy(value, src, n);
    }
    if (size_ret != NULL)
        *size_ret = n;
    return CL_SUCCESS;
}
