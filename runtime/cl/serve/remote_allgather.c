/* SPDX-License-Identifier: MIT */
/* A write whose whole range comes by one MPI_Iallgatherv among serving ranks (SLUICE_CMD_ALLGATHER,
 * docs/DAG.md section 2): each member reads its own slice of the range from the buffer its
 * device computed it in, straight into the place of the slice in the write's staging (or mapped
 * buffer), then gives it in place; rank 0 takes no part. The write is a blocked write (later
 * commands of this rank wait behind it), so nothing writes the source buffer before its slice is
 * read; the slice is read on the context's internal queue, not the write's, so that it never
 * waits behind the program's commands (which may wait for other members' parts). */
#include <stdlib.h>
#include <string.h>

#include "cl/serve/remote_engine.h"
#include "trace/trace.h"

struct eng_allgather {
    cl_mem src;
    size_t src_off;
    int members, me;
    int *cd;           /* counts, then displacements */
    unsigned char *to; /* the whole range (staging or the mapped buffer); NULL until started */
    cl_event read_ev;  /* this rank's slice read */
    int posted;
};

cl_int sluice_eng_allgather_parse(struct eng_cmd *c, const unsigned char *p, size_t len)
{
    struct sluice_remote_allgather h;
    SLUICE_RETURN_ERROR_ON(len < sizeof h, CL_INVALID_VALUE, "len < sizeof h");
    memcpy(&h, p, sizeof h);
    int me = -1, k = 0, self = 0;
    MPI_Comm_rank(sluice_comm(), &self);
    for (int r = 1; r < 63; r++)
        if (c->bcast & (1ull << r)) {
            me = r == self ? k : me;
            k++;
        }
    SLUICE_RETURN_ERROR_ON(
        h.members != (uint32_t)k || me < 0 || len != sizeof h + 2 * (size_t)k * sizeof(int32_t),
        CL_INVALID_VALUE,
        "h.members != (uint32_t)k || me < 0 || len != sizeof h + 2 * (size_t)k * sizeof(int32_t)");
    struct eng_allgather *g = calloc(1, sizeof *g);
    int *cd = malloc(2 * (size_t)k * sizeof *cd);
    if (g == NULL || cd == NULL) {
        free(g);
        free(cd);
        return CL_OUT_OF_HOST_MEMORY;
    }
    memcpy(cd, p + sizeof h, 2 * (size_t)k * sizeof *cd);
    *g = (struct eng_allgather){PTR(cl_mem, h.src), (size_t)h.src_off, k, me, cd, NULL, NULL, 0};
    for (int i = 0; i < k; i++)
        if (cd[i] < 0 || cd[k + i] < 0 || (size_t)cd[k + i] + (size_t)cd[i] > c->size) {
            free(cd);
            free(g);
            return CL_INVALID_VALUE;
        }
    c->ag = g;
    return CL_SUCCESS;
}

/* Posts this rank's part: every member gets the whole range. */
static void post(struct eng_cmd *c)
{
    struct eng_allgather *g = c->ag;
    MPI_Comm comm = sluice_remote_group_comm(c->bcast);
    int rc = comm == MPI_COMM_NULL ? MPI_ERR_COMM
                                   : MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g->to, g->cd,
                                                     g->cd + g->members, MPI_BYTE, comm, &c->reqs[0]);
    if (checked(rc, 0, "starting an allgather") != MPI_SUCCESS)
        c->status = CL_OUT_OF_RESOURCES;
    g->posted = 1;
}

int sluice_eng_allgather_start(struct eng_cmd *c, unsigned char *to)
{
    struct eng_allgather *g = c->ag;
    if (g == NULL)
        return MPI_ERR_ARG;
    g->to = to;
    size_t k = (size_t)g->cd[g->me], at = (size_t)g->cd[g->members + g->me];
    cl_context ctx = NULL;
    cl_int r = c->status < 0 || k == 0
                   ? CL_SUCCESS
                   : api()->clGetCommandQueueInfo(c->q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    cl_command_queue q = ctx != NULL ? sluice_remote_internal_queue(ctx, &r) : NULL;
    if (q != NULL && r == CL_SUCCESS) {
        r = api()->clEnqueueReadBuffer(q, g->src, CL_FALSE, g->src_off, k, to + at, 0, NULL, &g->read_ev);
        api()->clFlush(q);
        if (r == CL_SUCCESS)
            sluice_eng_watch(c, g->read_ev, 0); /* wakes the loop when the slice is in */
    }
    if (r != CL_SUCCESS && c->status >= 0)
        c->status = r;
    if (g->read_ev == NULL) /* nothing to read, or it failed: the others must not wait */
        post(c);
    return MPI_SUCCESS;
}

int sluice_eng_allgather_ready(struct eng_cmd *c)
{
    struct eng_allgather *g = c->ag;
    if (g == NULL || g->posted)
        return 1;
    if (g->to == NULL || !sluice_eng_done_event(g->read_ev))
        return 0;
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(g->read_ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
            CL_SUCCESS &&
        st < 0 && c->status >= 0)
        c->status = st; /* its part still goes: the others must not wait */
    post(c);
    return 1;
}

void sluice_eng_allgather_free(struct eng_cmd *c)
{
    if (c->ag == NULL)
        return;
    if (c->ag->read_ev != NULL)
        api()->clReleaseEvent(c->ag->read_ev);
    free(c->ag->cd);
    free(c->ag);
    c->ag = NULL;
}
