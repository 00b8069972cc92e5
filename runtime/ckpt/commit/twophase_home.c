/* SPDX-License-Identifier: MIT */
/* Two-phase commit, home side: decides whether a commit goes through aggregators, picks them
 * (one per node by default, SLUICE_CB_NODES to override; the home itself first on its node, so
 * that the rank that writes the header and index is one of the writers), resolves the stripe
 * unit of the target directory, computes the plan (planner_twophase.h) and sends every
 * participant its own share of it (twophase_part.c), which it runs (twophase_exec.c); the home
 * then waits for one MSG_WRITTEN per participant, as on the direct
 * path.
 *
 * Node identities travel with MSG_MEMBERS (a hash of the host name): the home learns where each
 * rank runs without a collective call, which the commit engine cannot make. */
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/twophase_part.h"

#include "ckpt/twophase/planner_twophase.h"
#include "ckpt/twophase/stripe.h"
#include "common/hash.h"
#include "common/host_name.h"
#include "common/log.h"
#include "config/config.h"
#include "trace/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Progress thread only (home side). */
static uint64_t *node_of;
static int node_cap;

uint64_t commit_twophase_node_id(void)
{
    static uint64_t id;
    if (id)
        return id;
    char host[SLUICE_HOST_NAME_MAX + 1];
    sluice_host_name(host);
    uint64_t h = sluice_fnv1a_str(host);
    id = h ? h : 1;
    return id;
}

void commit_twophase_note_node(int rank, uint64_t node)
{
    if (rank < 0 || node == 0)
        return;
    if (rank >= node_cap) {
        int cap = rank + 1 > 64 ? rank + 1 : 64;
        uint64_t *p = realloc(node_of, (size_t)cap * sizeof(*p));
        if (!p)
            return; /* unknown nodes count as separate nodes: still correct */
        memset(p + node_cap, 0, (size_t)(cap - node_cap) * sizeof(*p));
        node_of = p;
        node_cap = cap;
    }
    node_of[rank] = node;
}

/* A rank whose node is unknown is taken as a node of its own. */
static uint64_t node_id(int rank)
{
    if (rank < node_cap && node_of[rank])
        return node_of[rank];
    return ~(uint64_t)rank;
}

int commit_twophase_same_node(int a, int b)
{
    return node_id(a) == node_id(b);
}

enum sluice_cb_write commit_twophase_mode(void)
{
    enum sluice_cb_write mode = SLUICE_CB_WRITE_AUTO;
    if (sluice_cb_write_parse(sluice_config.CB_WRITE ? sluice_config.CB_WRITE : "auto", &mode))
        mode = SLUICE_CB_WRITE_AUTO; /* the config validator already rejected anything else */
    return mode;
}

static int pick(const int *ranks, int nranks, int *aggr)
{
    /* Candidates: the ranks that took part, and the home. The home goes first on its node. */
    int *cand = malloc(((size_t)nranks + 1) * sizeof(int));
    uint64_t *nodes = malloc(((size_t)nranks + 1) * sizeof(uint64_t));
    if (!cand || !nodes) {
        free(cand);
        free(nodes);
        aggr[0] = commit_g.rank;
        return 1;
    }
    int n = 0, home = commit_g.rank;
    cand[n++] = home;
    for (int i = 0; i < nranks; i++)
        if (ranks[i] != home)
            cand[n++] = ranks[i];
    /* The picker orders a node's ranks by rank number; to put the home first, give the
     * candidates to it renumbered: the home becomes -1, the others stay. */
    for (int i = 0; i < n; i++) {
        nodes[i] = node_id(cand[i]);
        if (cand[i] == home)
            cand[i] = -1;
    }
    size_t k = sluice_tp_pick_aggregators(cand, nodes, (size_t)n, sluice_config.CB_NODES, aggr);
    for (size_t i = 0; i < k; i++)
        if (aggr[i] == -1)
            aggr[i] = home;
    /* Keep domain order by rank number, as without the renumbering. */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && aggr[j - 1] > aggr[j]; j--) {
            int t = aggr[j];
            aggr[j] = aggr[j - 1];
            aggr[j - 1] = t;
        }
    free(cand);
    free(nodes);
    return (int)k;
}

/* SLUICE_CB_BUFFER_SIZE, at most 1 GiB: a piece is one MPI message with an int count. */
static uint64_t buffer_size(void)
{
    uint64_t b = sluice_config.CB_BUFFER_SIZE;
    return b > (UINT64_C(1) << 30) ? (UINT64_C(1) << 30) : b;
}

/* The writers of the members that are not shuffled (shuffled: NULL none is): their node's
 * aggregators (direct_writers.c); each owner itself when that cannot be worked out. */
static void assign_writers(struct commit_tp_member *m, size_t n, const unsigned char *shuffled,
                           const int *aggr, int naggr)
{
    if (commit_direct_assign(m, n, shuffled, aggr, naggr) == 0)
        return;
    for (size_t i = 0; i < n; i++)
        m[i].writer = (m[i].src < 0 || (shuffled && shuffled[i])) ? -1 : m[i].src;
}

int commit_twophase_start(uint32_t id, const char *tmp, const char *dir, uint32_t block,
                          struct commit_tp_member *m, size_t n, const int *ranks, int nranks,
                          const struct sluice_array *array)
{
    /* An array is always shuffled: its members' rows interleave in the file. */
    enum sluice_cb_write mode = array ? SLUICE_CB_WRITE_ENABLE : commit_twophase_mode();
    if (!commit_g.use_mpi || commit_g.size < 2) {
        assign_writers(m, n, NULL, NULL, 0); /* one process: it writes everything */
        return 0;
    }
    int *aggr = malloc(((size_t)nranks + 1) * sizeof(int));
    struct sluice_tp_member *tm = calloc(n ? n : 1, sizeof(*tm));
    int rc = (aggr && tm) ? 0 : -ENOMEM;
    struct sluice_tp_plan plan = {0};
    int naggr = 0;
    uint64_t unit = 0;
    /* Nodes of the aggregators and the members: domains follow each node's data. */
    uint64_t *aggr_node = malloc(((size_t)nranks + 1) * sizeof(uint64_t));
    uint64_t *member_node = malloc((n ? n : 1) * sizeof(uint64_t));
    if (rc == 0)
        naggr = pick(ranks, nranks, aggr);
    if (rc == 0 && mode != SLUICE_CB_WRITE_DISABLE) {
        enum sluice_stripe_source src;
        unit = sluice_stripe_unit(dir, sluice_config.STRIPING_UNIT, block, &src);
        for (size_t i = 0; i < n; i++)
            tm[i] = (struct sluice_tp_member){m[i].offset, m[i].size, m[i].src};
        struct sluice_tp_params prm = {unit, block, buffer_size(), mode, aggr, (size_t)naggr, NULL, NULL};
        if (aggr_node && member_node && !array) {
            for (int a = 0; a < naggr; a++)
                aggr_node[a] = node_id(aggr[a]);
            for (size_t i = 0; i < n; i++)
                member_node[i] = m[i].src >= 0 ? node_id(m[i].src) : 0;
            prm.aggr_node = aggr_node;
            prm.member_node = member_node;
        }
        rc = array ? commit_twophase_array_plan(array, n, &prm, &plan)
                   : sluice_tp_plan_make(tm, n, &prm, &plan);
        if (rc)
            sluice_log_warn("checkpoint commit: two-phase plan failed (%s); writing directly", strerror(-rc));
    }
    free(aggr_node);
    free(member_node);
    /* Nothing gains from the shuffle (disabled, or no memory to plan it): the direct path. */
    int shuffle = rc == 0 && plan.ndomains > 0;
    unsigned char *shuffled = NULL;
    if (shuffle) {
        shuffled = malloc(n ? n : 1);
        for (size_t i = 0; shuffled && i < n; i++)
            shuffled[i] = !plan.direct[i];
        shuffle = shuffled != NULL;
    }
    assign_writers(m, n, shuffled, aggr, aggr ? naggr : 0);
    if (rc == 0 && !array && plan.direct && sluice_trace_active()) {
        /* The choice per member, also when every member goes direct. */
        for (size_t i = 0; i < n; i++) {
            int to = m[i].writer;
            for (size_t k = 0; k < plan.npieces; k++)
                if (plan.pieces[k].member == i) {
                    to = plan.domains[plan.pieces[k].domain].aggregator;
                    break;
                }
            sluice_trace_instant(SLUICE_EV_COMMIT_PLAN, (uint64_t)m[i].member_rank, plan.direct[i],
                                 (uint64_t)(int64_t)to);
        }
    }
    /* Each participant gets only its share of the plan (twophase_part.c): its shuffled members. */
    int participants =
        !shuffle ? 0
        : array  ? commit_twophase_send_array_parts(id, tmp, unit, COMMIT_ARRAY_CHUNK, array, &plan, m, n)
                 : commit_twophase_send_parts(id, tmp, unit, 0, &plan, m, n);
    if (participants < 0) {
        /* Nothing was sent: every member is written directly after all. */
        sluice_log_warn("checkpoint commit: two-phase plan failed (%s); writing directly",
                        strerror(-participants));
        assign_writers(m, n, NULL, aggr, aggr ? naggr : 0);
        participants = 0;
    }
    sluice_tp_plan_free(&plan);
    free(shuffled);
    free(aggr);
    free(tm);
    return participants;
}
