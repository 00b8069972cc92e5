/* SPDX-License-Identifier: MIT */
/* Dynamic Collective Replacement (dag_dcr.h). Over the pending READ/WRITE nodes in enqueue
 * order:
 *   1. Group writes of the same host range: a write starts a group; later writes of exactly the
 *      same range join it until a pending read lands in that range (the host bytes change).
 *   2. The group's sources: what the host range holds when the group's first write runs. Each
 *      byte comes from the newest earlier pending read that covers it, or, if none does, from
 *      rank 0's memory as it is. Adjacent bytes from the same read form one piece.
 *   3. The kind follows from the counts: one source and several receivers is a broadcast (from
 *      the reading device, or rank 0); several sources, an allgather (or a gather for one
 *      receiver); one device source and one receiver, a direct rank-to-rank copy.
 * The reads stay in the DAG (the program may look at the host memory afterwards); only the
 * writes are replaced. */
#include "cl/rank0/dag_dcr.h"

#include "common/strbuf.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dcr_names[] = {
#define SLUICE_DCR_NAME(id, name) name,
    SLUICE_DCR_KINDS(SLUICE_DCR_NAME)
#undef SLUICE_DCR_NAME
};

const char *sluice_dcr_kind_name(sluice_dcr_kind kind)
{
    return (unsigned)kind < sizeof dcr_names / sizeof dcr_names[0] ? dcr_names[kind] : "unknown";
}

struct xfer {
    uint64_t id;
    bool is_read;
    int rank;
    uint32_t device;
    uint64_t buffer, offset;
    uint64_t host_addr, host_size;
};

struct collect {
    struct xfer *v;
    size_t n, cap;
    bool oom;
};

static void collect_one(const struct sluice_dag_node_info *n, void *ctx)
{
    struct collect *c = ctx;
    if (n->state != SLUICE_DAG_PENDING && n->state != SLUICE_DAG_READY)
        return;
    if ((n->kind != SLUICE_DAG_READ && n->kind != SLUICE_DAG_WRITE) || n->host_size == 0 || n->naccess != 1 ||
        n->access[0].size != n->host_size || n->host_addr + n->host_size < n->host_addr)
        return;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        struct xfer *v = realloc(c->v, ncap * sizeof *v);
        if (v == NULL) {
            c->oom = true;
            return;
        }
        c->v = v;
        c->cap = ncap;
    }
    c->v[c->n++] = (struct xfer){n->id,
                                 n->kind == SLUICE_DAG_READ,
                                 n->rank,
                                 n->device,
                                 n->access[0].buffer,
                                 n->access[0].offset,
                                 n->host_addr,
                                 n->host_size};
}

static bool overlaps(const struct xfer *a, const struct xfer *b)
{
    return a->host_addr < b->host_addr + b->host_size && b->host_addr < a->host_addr + a->host_size;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Step 2: the pieces of host range h (xs[first] is the group's first write) and where each comes
 * from. Returns the number of pieces written to *out (malloc'd), or -1 when out of memory. */
static long paint_sources(const struct xfer *xs, size_t first, struct sluice_dcr_part **out)
{
    const struct xfer *h = &xs[first];
    size_t nreads = 0;
    for (size_t r = 0; r < first; r++)
        nreads += xs[r].is_read && overlaps(&xs[r], h);
    uint64_t *cuts = malloc((2 * nreads + 2) * sizeof *cuts);
    struct sluice_dcr_part *parts = malloc((2 * nreads + 1) * sizeof *parts);
    if (cuts == NULL || parts == NULL)
        return free(cuts), free(parts), -1;
    size_t ncuts = 0;
    cuts[ncuts++] = 0;
    cuts[ncuts++] = h->host_size;
    for (size_t r = 0; r < first; r++) {
        if (!xs[r].is_read || !overlaps(&xs[r], h))
            continue;
        uint64_t s = xs[r].host_addr > h->host_addr ? xs[r].host_addr - h->host_addr : 0;
        uint64_t e = xs[r].host_addr + xs[r].host_size - h->host_addr;
        cuts[ncuts++] = s;
        cuts[ncuts++] = e < h->host_size ? e : h->host_size;
    }
    qsort(cuts, ncuts, sizeof *cuts, cmp_u64);
    size_t nparts = 0;
    for (size_t k = 0; k + 1 < ncuts; k++) {
        uint64_t s = cuts[k], e = cuts[k + 1];
        if (s == e)
            continue;
        /* The newest read covering [s, e) wins: it wrote those host bytes last. */
        const struct xfer *src = NULL;
        for (size_t r = first; r-- > 0;) {
            if (xs[r].is_read && xs[r].host_addr <= h->host_addr + s &&
                xs[r].host_addr + xs[r].host_size >= h->host_addr + e) {
                src = &xs[r];
                break;
            }
        }
        struct sluice_dcr_part p = {.host_offset = s, .size = e - s};
        if (src) {
            p.node = src->id;
            p.rank = src->rank;
            p.device = src->device;
            p.buffer = src->buffer;
            p.offset = src->offset + (h->host_addr + s - src->host_addr);
        }
        struct sluice_dcr_part *last = nparts ? &parts[nparts - 1] : NULL;
        if (last && last->node == p.node && last->host_offset + last->size == s) {
            last->size += p.size; /* the same read (or the host) continues */
        } else {
            parts[nparts++] = p;
        }
    }
    free(cuts);
    *out = parts;
    return (long)nparts;
}

static int push_op(struct sluice_dcr_plan *plan, size_t *cap, struct sluice_dcr_op op)
{
    if (plan->nops == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        struct sluice_dcr_op *v = realloc(plan->ops, ncap * sizeof *v);
        if (v == NULL)
            return -ENOMEM;
        plan->ops = v;
        *cap = ncap;
    }
    plan->ops[plan->nops++] = op;
    return 0;
}

int sluice_dcr_find(const struct sluice_dag *dag, struct sluice_dcr_plan *plan)
{
    struct collect c = {0};
    sluice_dag_foreach(dag, collect_one, &c);
    bool *grouped = calloc(c.n ? c.n : 1, sizeof *grouped);
    size_t *members = malloc((c.n ? c.n : 1) * sizeof *members);
    size_t cap = plan->nops;
    int rc = (c.oom || grouped == NULL || members == NULL) ? -ENOMEM : 0;
    for (size_t i = 0; i < c.n && rc == 0; i++) {
        if (c.v[i].is_read || grouped[i])
            continue;
        size_t nm = 0;
        members[nm++] = i;
        for (size_t j = i + 1; j < c.n; j++) {
            if (c.v[j].is_read && overlaps(&c.v[j], &c.v[i]))
                break;
            if (!c.v[j].is_read && !grouped[j] && c.v[j].host_addr == c.v[i].host_addr &&
                c.v[j].host_size == c.v[i].host_size) {
                grouped[j] = true;
                members[nm++] = j;
            }
        }
        struct sluice_dcr_part *src;
        long nsrc = paint_sources(c.v, i, &src);
        if (nsrc < 0) {
            rc = -ENOMEM;
            break;
        }
        bool from_host_only = nsrc == 1 && src[0].node == 0;
        if (from_host_only && nm == 1) {
            free(src); /* a plain host write: nothing to replace */
            continue;
        }
        struct sluice_dcr_op op = {.host_addr = c.v[i].host_addr,
                                   .host_size = c.v[i].host_size,
                                   .root = -1,
                                   .sources = src,
                                   .nsources = (size_t)nsrc,
                                   .nreceivers = nm};
        if (nsrc == 1) {
            op.kind = nm > 1 ? SLUICE_DCR_BCAST : SLUICE_DCR_P2P;
            op.root = src[0].rank;
        } else {
            op.kind = nm > 1 ? SLUICE_DCR_ALLGATHER : SLUICE_DCR_GATHER;
        }
        op.receivers = malloc(nm * sizeof *op.receivers);
        if (op.receivers == NULL || push_op(plan, &cap, op) != 0) {
            free(op.receivers);
            free(src);
            rc = -ENOMEM;
            break;
        }
        for (size_t k = 0; k < nm; k++) {
            const struct xfer *w = &c.v[members[k]];
            op.receivers[k] =
                (struct sluice_dcr_part){w->id, w->rank, w->device, w->buffer, w->offset, 0, w->host_size};
        }
    }
    free(grouped);
    free(members);
    free(c.v);
    return rc;
}

void sluice_dcr_plan_free(struct sluice_dcr_plan *plan)
{
    for (size_t i = 0; i < plan->nops; i++) {
        free(plan->ops[i].sources);
        free(plan->ops[i].receivers);
    }
    free(plan->ops);
    plan->ops = NULL;
    plan->nops = 0;
}

size_t sluice_dcr_format(const struct sluice_dcr_plan *plan, char *buf, size_t len)
{
    struct sluice_strbuf o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < plan->nops; i++) {
        const struct sluice_dcr_op *op = &plan->ops[i];
        sluice_strbuf_put(&o, "%s", sluice_dcr_kind_name(op->kind));
        if (op->root >= 0)
            sluice_strbuf_put(&o, " root %d", op->root);
        sluice_strbuf_put(&o, " host 0x%llx+%llu:", (unsigned long long)op->host_addr,
                          (unsigned long long)op->host_size);
        for (size_t k = 0; k < op->nsources; k++) {
            const struct sluice_dcr_part *p = &op->sources[k];
            if (p->node == 0)
                sluice_strbuf_put(&o, " host[%llu+%llu]", (unsigned long long)p->host_offset,
                                  (unsigned long long)p->size);
            else
                sluice_strbuf_put(&o, " %d:#%llu[%llu+%llu]", p->rank, (unsigned long long)p->node,
                                  (unsigned long long)p->host_offset, (unsigned long long)p->size);
        }
        sluice_strbuf_put(&o, " ->");
        for (size_t k = 0; k < op->nreceivers; k++)
            sluice_strbuf_put(&o, " %d:#%llu", op->receivers[k].rank,
                              (unsigned long long)op->receivers[k].node);
        sluice_strbuf_put(&o, "\n");
    }
    return o.used;
}

/* --- the window (sluice_dcr_window) --------------------------------------------------------- */

#define WIN_RANKS 63 /* ranks 1..62 take part (bit 63 of a group mask names gather communicators) */

struct wgroup {
    const struct sluice_dcr_item *lead;
    uint64_t lo, hi; /* the host range: the lead's, or the slices' so far for a scatter */
    uint64_t ranks;  /* members' ranks */
    uint32_t members;
    int kind; /* -1 while it has one member, then SLUICE_DCR_BCAST or SLUICE_DCR_SCATTER */
    bool closed;
    bool tiled; /* every write so far has the lead's host range and tiles (an allgather if full) */
};

static bool host_overlap(const struct sluice_dcr_item *a, const struct sluice_dcr_item *b)
{
    return a->host_addr < b->host_addr + b->host_size && b->host_addr < a->host_addr + a->host_size;
}

/* Whether write `it` may join group `g` (other conditions checked by the caller), and as what. */
static int join_kind(const struct wgroup *g, const struct sluice_dcr_item *it, bool scatter)
{
    if ((g->lead->kind == SLUICE_DCR_ITEM_READ) != (it->kind == SLUICE_DCR_ITEM_READ))
        return -1;
    if (it->kind == SLUICE_DCR_ITEM_READ)
        return scatter && !it->staged && it->host_addr == g->hi ? SLUICE_DCR_GATHER : -1;
    if (g->kind != SLUICE_DCR_SCATTER && g->lead->host_size == it->host_size &&
        g->lead->content == it->content)
        return SLUICE_DCR_BCAST;
    if (scatter && g->kind != SLUICE_DCR_BCAST && !g->lead->staged && !it->staged && it->host_addr == g->hi)
        return SLUICE_DCR_SCATTER;
    return -1;
}

/* Item `it` joins the first open group it may join (from the newest its rank met, and after the
 * last PEER on its rank), or starts one. Returns the group's number. */
static uint32_t join_group(struct wgroup *g, uint32_t *ng, uint32_t *last, const uint32_t *cut,
                           const struct sluice_dcr_item *it, bool more)
{
    int r = it->rank;
    uint32_t join = 0;
    for (uint32_t k = (last[r] > cut[r] ? last[r] : cut[r]); k < *ng && join == 0; k++) {
        int kind = g[k].closed || (g[k].ranks & (1ull << r)) ? -1 : join_kind(&g[k], it, more);
        if (kind < 0)
            continue;
        g[k].kind = kind;
        if (kind != SLUICE_DCR_BCAST)
            g[k].hi += it->host_size;
        g[k].tiled &= it->tiles == g[k].lead->tiles && it->host_addr == g[k].lead->host_addr;
        join = k + 1;
    }
    if (join == 0) {
        g[*ng] =
            (struct wgroup){.lead = it, .lo = it->host_addr, .hi = it->host_addr + it->host_size, .kind = -1};
        g[*ng].tiled = it->kind == SLUICE_DCR_ITEM_WRITE && it->tiles != 0;
        join = ++*ng;
    }
    g[join - 1].ranks |= 1ull << r;
    g[join - 1].members++;
    last[r] = join;
    return join;
}

uint32_t sluice_dcr_window(const struct sluice_dcr_item *v, size_t n, uint32_t *group, sluice_dcr_kind *kinds)
{
    struct wgroup *g = calloc(n ? n : 1, sizeof *g);
    uint32_t ng = 0;
    uint32_t last[WIN_RANKS] = {0}; /* per rank: the newest group it joined */
    uint32_t cut[WIN_RANKS] = {0};  /* per rank: groups up to this number opened before a PEER on it */
    for (size_t i = 0; i < n; i++)
        group[i] = 0;
    if (g == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct sluice_dcr_item *it = &v[i];
        if (it->kind == SLUICE_DCR_ITEM_FENCE) {
            for (uint32_t k = 0; k < ng; k++)
                g[k].closed = true;
        } else if (it->kind == SLUICE_DCR_ITEM_READ) {
            for (uint32_t k = 0; k < ng; k++)
                if (it->host_addr < g[k].hi && g[k].lo < it->host_addr + it->host_size)
                    g[k].closed = true;
            if (kinds != NULL && !it->staged && it->rank > 0 && it->rank < WIN_RANKS && it->host_size > 0)
                group[i] = join_group(g, &ng, last, cut, it, true);
        } else if (it->kind == SLUICE_DCR_ITEM_PEER) {
            for (int e = 0; e < 2; e++) {
                int r = e ? it->peer : it->rank;
                if (r < 0 || r >= WIN_RANKS)
                    continue;
                cut[r] = ng;
                for (uint32_t k = 0; k < ng; k++)
                    if (g[k].ranks & (1ull << r))
                        g[k].closed = true;
            }
        } else if (it->kind == SLUICE_DCR_ITEM_WRITE && it->rank > 0 && it->rank < WIN_RANKS &&
                   it->host_size > 0) {
            bool after_read = false;
            for (size_t j = 0; j < i && !after_read; j++)
                after_read = v[j].kind == SLUICE_DCR_ITEM_READ && host_overlap(&v[j], it);
            if (after_read)
                continue;
            group[i] = join_group(g, &ng, last, cut, it, kinds != NULL);
        }
    }
    /* Single writes stay plain writes; the others are renumbered 1, 2, ... in order. */
    uint32_t *num = calloc(ng + 1, sizeof *num), out = 0;
    for (uint32_t k = 0; num != NULL && k < ng; k++) {
        num[k + 1] = g[k].members > 1 ? ++out : 0;
        bool all = g[k].tiled && (g[k].lead->tiles & ~g[k].ranks) == 0; /* every source receives */
        if (num[k + 1] && kinds != NULL)
            kinds[out - 1] =
                g[k].kind == SLUICE_DCR_BCAST && all ? SLUICE_DCR_ALLGATHER : (sluice_dcr_kind)g[k].kind;
    }
    for (size_t i = 0; i < n; i++)
        group[i] = num != NULL && group[i] ? num[group[i]] : 0;
    free(num);
    free(g);
    return out;
}

/* --- tiling (sluice_dcr_tiling) ------------------------------------------------------------- */

uint64_t sluice_dcr_tiling(const struct sluice_dcr_slice *s, size_t n, uint64_t addr, uint64_t size,
                           size_t *order)
{
    size_t idx[WIN_RANKS];
    if (n < 2 || n > WIN_RANKS)
        return 0;
    for (size_t i = 0; i < n; i++) { /* insertion sort by host address: n is at most 62 */
        size_t j = i;
        for (; j > 0 && s[idx[j - 1]].host_addr > s[i].host_addr; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    uint64_t ranks = 0, at = addr;
    for (size_t k = 0; k < n; k++) {
        const struct sluice_dcr_slice *x = &s[idx[k]];
        if (x->host_addr != at || x->host_size == 0 || !x->unchanged || x->rank <= 0 ||
            x->rank >= WIN_RANKS || (ranks & (1ull << x->rank)))
            return 0;
        ranks |= 1ull << x->rank;
        at += x->host_size;
        if (order != NULL)
            order[k] = idx[k];
    }
    return at == addr + size ? ranks : 0;
}
