/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: the window of collective replacement, where host writes to serving ranks
 * wait to be sent as broadcasts, scatters, gathers and allgathers (docs/DAG.md, section 2). */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dag_dcr.h"
#include "cl/rank0/dist_cma.h"
#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_sched_internal.h"
#include "config/config.h"
#include "trace/trace.h"

/* The window of collective replacement (below): held commands, when it opened, the last enqueue.
 * It closes SLUICE_DCR_WINDOW (default 1 ms) after the last enqueue, or 10 times that after it
 * opened. */
struct held *dist_sched_win;
static uint64_t win_t0, win_last;
int dist_sched_window_due(uint64_t now)
{
    uint64_t idle = (uint64_t)sluice_config.DCR_WINDOW * 1000u;
    return now - win_last > idle || now - win_t0 > 10 * idle;
}

/* --- the window of collective replacement (docs/DAG.md, section 2) -------------------------
 * While a window is open, commands are built and added to the DAG at enqueue but held here, in
 * order; when it closes, the broadcasts among them are found (sluice_dcr_window) and everything
 * is sent. It opens at a host write to a serving rank and closes where the program waits for a
 * command (clWaitForEvents, clFinish, a blocking read or map), at any object call other than an
 * info query (a release must follow the commands that use the object), when it holds WINDOW_MAX
 * commands or
 * WINDOW_STAGED bytes of staged copies, and when the program enqueued nothing for SLUICE_DCR_WINDOW
 * or it opened 10 times that ago (the scheduler thread closes it then): a command the program
 * enqueued and clFlush'ed starts at most that late. */
#define WINDOW_MAX 256
#define WINDOW_STAGED ((size_t)1 << 30)

static struct held **win_tail = &dist_sched_win;
static size_t win_n, win_staged;

/* Not for a rank that copies its data from and to rank 0's memory itself (dist_cma.h): its
 * commands then go at once, unheld. On the GPU machine (K = 2 and 4 PoCL devices, 16 and 256 MiB)
 * K such copies took 0.20-0.43 of one MPI broadcast's time, and holding them in the window
 * without a rewrite still cost 8-24 %. */
int dist_sched_dcr_on(int rank)
{
    return sluice_config.DCR && rank != 0 && dist_size() > 2 && !dist_cma_can(rank);
}

/* Equal bytes get equal content numbers (only writes that may form a broadcast are compared). */
static void content_classes(struct held **hv, const struct sluice_dcr_item *it, size_t n, uint64_t *cls)
{
    for (size_t i = 0; i < n; i++) {
        cls[i] = i + 1;
        if (it[i].kind != SLUICE_DCR_ITEM_WRITE)
            continue;
        for (size_t j = 0; j < i; j++) {
            if (it[j].kind != SLUICE_DCR_ITEM_WRITE || cls[j] != j + 1 || hv[j]->len != hv[i]->len ||
                hv[j]->rank == hv[i]->rank)
                continue;
            /* The same program pointer, neither staged: OpenCL forbids changing it while either write
             * is pending, and no read in the window landed there (sluice_dcr_window checks that). */
            if ((hv[j]->send == hv[i]->send && !hv[j]->staged && !hv[i]->staged) ||
                memcmp(hv[j]->send, hv[i]->send, hv[i]->len) == 0) {
                cls[i] = j + 1;
                break;
            }
        }
    }
}

/* The trace string of a rewrite's name, made once. */
static uint32_t dcr_name(uint32_t *slot, const char *name)
{
    if (*slot == 0)
        *slot = sluice_trace_string(name);
    return *slot;
}

/* The members of collective `g` of a window: their ranks (rank 0's bit set), the first of them,
 * how many and their bytes. */
struct coll {
    uint64_t mask;
    struct held *lead;
    int members;
    size_t total;
};

static struct coll coll_members(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = {1, NULL, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (group[i] == g) {
            c.mask |= 1ull << hv[i]->rank;
            c.lead = c.lead ? c.lead : hv[i];
            c.members++;
            c.total += hv[i]->len;
        }
    return c;
}

/* A scatter's or gather's setup: its communicator (group mask `mask`), one request on the lead's
 * record and the counts, then displacements, by group rank (each member's host pointer against
 * the lead's), which MPI reads until the collective completes. NULL: sent one by one, as without
 * the replacement (over INT_MAX bytes too: counts and displacements are ints). */
static int *coll_setup(struct held **hv, size_t n, const uint32_t *group, uint32_t g, const struct coll *c,
                       uint64_t mask, MPI_Comm *comm)
{
    if (c->lead == NULL || c->total > INT_MAX || c->lead->e->free_after != NULL)
        return NULL;
    int size = __builtin_popcountll(c->mask);
    int *cd = calloc(2 * (size_t)size, sizeof *cd);
    *comm = cd != NULL ? sluice_remote_group_comm(mask) : MPI_COMM_NULL;
    struct dist_event *e = c->lead->e;
    if (*comm == MPI_COMM_NULL || (e->reqs = malloc(sizeof *e->reqs)) == NULL) {
        free(cd);
        return NULL;
    }
    const char *base = c->lead->send ? (const char *)c->lead->send : (const char *)c->lead->recv;
    for (size_t i = 0; i < n; i++)
        if (group[i] == g) {
            const char *at = hv[i]->send ? (const char *)hv[i]->send : (const char *)hv[i]->recv;
            int cr = __builtin_popcountll(c->mask & ((1ull << hv[i]->rank) - 1));
            cd[cr] = (int)hv[i]->len;
            cd[size + cr] = (int)(at - base);
        }
    e->nreqs = 1;
    e->free_after = cd;
    return cd;
}

/* A member's command says which collective brings (or takes) its data: `flag`, group `mask`. */
static void coll_flag(struct held *h, unsigned flag, uint64_t mask)
{
    struct sluice_remote_cmd hd;
    memcpy(&hd, h->p, sizeof hd);
    hd.flags |= flag;
    memcpy(h->p, &hd, sizeof hd);
    h->req.xfer.mask = mask;
}

/* Rank 0's part of broadcast `g` (its members flagged, their data no longer sent one by one). */
static void start_bcast(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm = sluice_remote_group_comm(c.mask);
    if (comm == MPI_COMM_NULL || c.lead == NULL)
        return; /* sent one by one, as without the replacement */
    struct held *lead = c.lead;
    struct dist_event *e = lead->e;
    size_t pieces = sluice_remote_pieces(lead->len);
    e->reqs = malloc(pieces * sizeof *e->reqs);
    if (e->reqs == NULL)
        return;
    const void *data = lead->send;
    uint64_t t_send = sluice_now_ns(); /* a member may have it before the broadcast call returns */
    if (sluice_remote_chain_post(comm, (void *)data, lead->len, e->reqs) != MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a broadcast");
    e->nreqs = (int)pieces;
    dist_sched_pend_mpi(e, lead->len);
    dist_sched_data_trace(c.members, lead->len, DIST_DATA_BCAST);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_BCAST, c.mask);
        h->req.xfer.peer = 0;
        h->send = NULL; /* the broadcast brings it */
        if (sluice_trace_active()) {
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "bcast"), h->e->id,
                                0);
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, lead->len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(h->e->id));
        }
    }
}

/* Rank 0's part of scatter `g`: each member's slice of one host range goes once, straight from
 * the program's memory (no member is staged), by one MPI_Iscatterv over rank 0 and the members
 * (rank 0 keeps its own part: MPI_IN_PLACE). */
static void start_scatter(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm;
    int *cd = coll_setup(hv, n, group, g, &c, c.mask, &comm);
    if (cd == NULL)
        return;
    int size = __builtin_popcountll(c.mask);
    struct dist_event *e = c.lead->e;
    uint64_t t_send = sluice_now_ns(); /* a member may have its slice before MPI_Iscatterv returns */
    if (MPI_Iscatterv(c.lead->send, cd, cd + size, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0, comm, e->reqs) !=
        MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a scatter");
    dist_sched_pend_mpi(e, c.total);
    dist_sched_data_trace(c.members, c.total, 3);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_SCATTER, c.mask);
        h->req.xfer.peer = 0;
        if (sluice_trace_active()) { /* one message per member: its slice */
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "scatter"), h->e->id,
                                0);
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, (uint64_t)h->rank, h->len,
                                (uint64_t)SLUICE_REMOTE_DATA_TAG(h->e->id));
        }
        h->send = NULL; /* the scatter brings it */
    }
}

/* Rank 0's part of gather `g`: the members' reads of adjacent slices of one host range land by one
 * MPI_Igatherv rooted here over the gather communicator of rank 0 and the members (rank 0 gives
 * nothing: MPI_IN_PLACE), straight into the program's memory. The other reads complete when it
 * does (their DONE alone does not say their bytes landed). */
static void start_gather(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    MPI_Comm comm;
    int *cd = coll_setup(hv, n, group, g, &c, c.mask | SLUICE_REMOTE_GROUP_GATHER, &comm);
    if (cd == NULL)
        return;
    int size = __builtin_popcountll(c.mask);
    struct dist_event *e = c.lead->e;
    if (MPI_Igatherv(MPI_IN_PLACE, 0, MPI_BYTE, c.lead->recv, cd, cd + size, MPI_BYTE, 0, comm, e->reqs) !=
        MPI_SUCCESS)
        dist_fault_peer(-1, MPI_ERR_OTHER, "starting a gather");
    dist_sched_pend_mpi(e, c.total);
    dist_sched_data_trace(c.members, c.total, 4);
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        coll_flag(h, SLUICE_CMD_GATHER, c.mask | SLUICE_REMOTE_GROUP_GATHER);
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "gather"), h->e->id,
                                (uint64_t)h->rank);
        h->e->recv_len = h->len; /* its MSG_RECV: test_mpi, when the gather completed */
        h->recv = NULL;          /* the gather brings it */
        if (h != c.lead) {
            h->e->nreqs = 1; /* until the gather completes */
            h->e->gather_next = e->gather_next;
            e->gather_next = h->e;
        }
    }
}

/* Which serving ranks' slices tile the host range of candidate h, from copy removal's table of
 * completed reads (taken at enqueue: a later command writing a slice's buffer forgets it). */
void dist_sched_held_tiles(struct held *h)
{
    struct dist_dhdcr_slice s[64];
    struct sluice_dcr_slice d[64];
    size_t order[64];
    size_t n = dist_dhdcr_slices(h->send, h->len, s, 64);
    for (size_t i = 0; i < n; i++) /* (a slice of another context's buffer: not readable for this write) */
        d[i] = (struct sluice_dcr_slice){(uint64_t)(uintptr_t)s[i].host, s[i].size, s[i].rank,
                                         s[i].unchanged && s[i].ctx == h->e->ctx};
    uint64_t tiles = sluice_dcr_tiling(d, n, (uint64_t)(uintptr_t)h->send, h->len, order);
    if (tiles == 0 || h->len > INT_MAX || (h->slices = malloc(n * sizeof *h->slices)) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        h->slices[i] = s[order[i]];
    h->nslices = n;
    h->tiles = tiles;
}

/* Allgather `g`: every member's write of one host range that serving ranks' slices tile (the
 * members include every source) takes the range by one MPI_Iallgatherv in place among the
 * members, each giving its slice from the buffer its device computed it in; rank 0 sends nothing
 * (the program's reads filled its host copy already). Each member's command carries its slice's
 * buffer and the counts and displacements (struct sluice_remote_allgather). */
static void start_allgather(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    struct coll c = coll_members(hv, n, group, g);
    uint64_t mask = c.mask & ~1ull;
    if (c.lead == NULL || c.lead->slices == NULL || sluice_remote_group_announce(mask) != 0)
        return; /* a broadcast from rank 0 would be as good: sent one by one, as without it */
    const struct held *lead = c.lead;
    int size = __builtin_popcountll(mask);
    size_t ext = sizeof(struct sluice_remote_allgather) + 2 * (size_t)size * sizeof(int32_t);
    int32_t cd[2 * 64] = {0};
    for (size_t k = 0; k < lead->nslices; k++) {
        const struct dist_dhdcr_slice *s = &lead->slices[k];
        int cr = __builtin_popcountll(mask & ((1ull << s->rank) - 1));
        cd[cr] = (int32_t)s->size;
        cd[size + cr] = (int32_t)(s->host - (const unsigned char *)lead->send);
    }
    dist_sched_data_trace(c.members, lead->len,
                          DIST_DATA_ALLGATHER); /* before its CL_DCR records (sluice-trace dag) */
    static uint32_t str;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != g)
            continue;
        struct held *h = hv[i];
        unsigned char *p = realloc(h->p, (size_t)h->req.nbytes + ext);
        if (p == NULL) {
            dist_fault_peer(-1, MPI_ERR_NO_MEM, "starting an allgather");
            return;
        }
        struct sluice_remote_allgather a = {0, 0, (uint32_t)size, 0};
        for (size_t k = 0; k < lead->nslices; k++)
            if (lead->slices[k].rank == h->rank)
                a = (struct sluice_remote_allgather){lead->slices[k].rid, lead->slices[k].off, (uint32_t)size,
                                                     0};
        memcpy(p + h->req.nbytes, &a, sizeof a);
        memcpy(p + h->req.nbytes + sizeof a, cd, 2 * (size_t)size * sizeof *cd);
        h->p = p;
        h->req.nbytes += ext;
        coll_flag(h, SLUICE_CMD_ALLGATHER, mask);
        h->req.xfer.peer = 0;
        h->send = NULL; /* the members bring it */
        if (sluice_trace_active())
            sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, dcr_name(&str, "allgather"),
                                h->e->id, lead->tiles);
    }
}

/* Every member of group g copies its data from or to rank 0's memory itself (dist_cma.h; their
 * writes joined a window another rank's opened): a broadcast, scatter or gather is not worth it
 * (dist_sched_dcr_on). An allgather among serving ranks moves no data through rank 0: kept. */
static int members_copy_by_cma(struct held **hv, size_t n, const uint32_t *group, uint32_t g)
{
    for (size_t i = 0; i < n; i++)
        if (group[i] == g && !dist_cma_can(hv[i]->rank))
            return 0;
    return 1;
}

void dist_sched_window_close_locked(void)
{
    if (dist_sched_win == NULL)
        return;
    size_t n = win_n;
    struct held **hv = malloc((n ? n : 1) * sizeof *hv);
    struct sluice_dcr_item *it = calloc(n ? n : 1, sizeof *it);
    uint32_t *group = calloc(n ? n : 1, sizeof *group);
    uint64_t *cls = calloc(n ? n : 1, sizeof *cls);
    sluice_dcr_kind *kinds = calloc(n ? n : 1, sizeof *kinds);
    size_t k = 0;
    for (struct held *h = dist_sched_win; h != NULL && k < n; h = h->next)
        hv[k++] = h;
    if (hv != NULL && it != NULL && group != NULL && cls != NULL && kinds != NULL) {
        for (size_t i = 0; i < n; i++) {
            struct held *h = hv[i];
            struct sluice_dcr_item x = {SLUICE_DCR_ITEM_OTHER, h->rank, -1, 0, 0, 0, 0, 0};
            if (h->bcast_candidate) {
                x.kind = SLUICE_DCR_ITEM_WRITE;
                x.host_addr = (uint64_t)(uintptr_t)h->send;
                x.host_size = h->len;
                x.staged = h->staged;
                x.tiles = h->tiles;
            } else if (h->recv != NULL && h->rank != 0) {
                x.kind = SLUICE_DCR_ITEM_READ;
                x.host_addr = (uint64_t)(uintptr_t)h->recv;
                x.host_size = h->len;
                x.staged = h->e->type != CL_COMMAND_READ_BUFFER; /* a rect read or a map: no gather */
            } else if (h->push) {
                x.kind = SLUICE_DCR_ITEM_PEER;
                x.peer = h->push_rank;
            } else if (h->req.op == SLUICE_REMOTE_CMD_WRITE && h->req.xfer.peer != 0) {
                x.kind = SLUICE_DCR_ITEM_PEER;
                x.peer = (int)h->req.xfer.peer;
            }
            it[i] = x;
        }
        content_classes(hv, it, n, cls);
        for (size_t i = 0; i < n; i++)
            it[i].content = cls[i];
        uint32_t ng = sluice_dcr_window(it, n, group, kinds);
        for (uint32_t g = 1; g <= ng; g++) {
            if (kinds[g - 1] != SLUICE_DCR_ALLGATHER && members_copy_by_cma(hv, n, group, g))
                continue; /* each member copies its data itself, all at once */
            if (kinds[g - 1] == SLUICE_DCR_SCATTER)
                start_scatter(hv, n, group, g);
            else if (kinds[g - 1] == SLUICE_DCR_GATHER)
                start_gather(hv, n, group, g);
            else if (kinds[g - 1] == SLUICE_DCR_ALLGATHER)
                start_allgather(hv, n, group, g);
            else
                start_bcast(hv, n, group, g);
        }
    }
    struct held *h = dist_sched_win;
    dist_sched_win = NULL;
    win_tail = &dist_sched_win;
    win_n = win_staged = 0;
    while (h != NULL) {
        struct held *next = h->next;
        dist_sched_transmit(h);
        h = next;
    }
    free(hv);
    free(it);
    free(group);
    free(cls);
    free(kinds);
}

void dist_sched_flush(void)
{
    pthread_mutex_lock(&dist_sched_lock);
    dist_sched_window_close_locked();
    pthread_mutex_unlock(&dist_sched_lock);
}

void dist_sched_window_touch(void)
{
    pthread_mutex_lock(&dist_sched_lock);
    if (dist_sched_win != NULL)
        win_last = sluice_now_ns();
    pthread_mutex_unlock(&dist_sched_lock);
}

/* Into the window (opening it at a host write to a serving rank), or to its rank now. */
void dist_sched_hold_or_transmit(struct held *h)
{
    int opens = h->bcast_candidate && dist_sched_dcr_on(h->rank);
    if (dist_sched_win == NULL && opens)
        win_t0 = sluice_now_ns();
    win_last = sluice_now_ns();
    if (dist_sched_win == NULL && !opens) {
        dist_sched_transmit(h);
        return;
    }
    *win_tail = h;
    win_tail = &h->next;
    win_n++;
    if (h->staged)
        win_staged += h->len;
    if (win_n >= WINDOW_MAX || win_staged >= WINDOW_STAGED || dist_sched_window_due(sluice_now_ns()))
        dist_sched_window_close_locked();
}

void dist_dcr_trace_p2p(uint64_t id, int from)
{
    static uint32_t str;
    if (!sluice_trace_active())
        return;
    if (str == 0)
        str = sluice_trace_string("p2p");
    sluice_trace_record(SLUICE_EV_CL_DCR, 0, sluice_now_ns(), 0, str, id, (uint64_t)from);
}
