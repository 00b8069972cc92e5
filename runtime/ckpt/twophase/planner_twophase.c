/* SPDX-License-Identifier: MIT */
/* Two-phase commit planner (planner_twophase.h): direct-versus-shuffle choice, aggregators,
 * stripe-aligned file domains, rounds, pieces and file-system requests. */
#include "ckpt/twophase/planner_twophase.h"

#include "common/hugebuf.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sluice_cb_write_parse(const char *s, enum sluice_cb_write *out)
{
    if (!s || !out)
        return -EINVAL;
    if (!strcasecmp(s, "auto") || !strcasecmp(s, "automatic") || !*s)
        *out = SLUICE_CB_WRITE_AUTO;
    else if (!strcasecmp(s, "enable"))
        *out = SLUICE_CB_WRITE_ENABLE;
    else if (!strcasecmp(s, "disable"))
        *out = SLUICE_CB_WRITE_DISABLE;
    else
        return -EINVAL;
    return 0;
}

const char *sluice_cb_write_name(enum sluice_cb_write mode)
{
    switch (mode) {
    case SLUICE_CB_WRITE_ENABLE:
        return "enable";
    case SLUICE_CB_WRITE_DISABLE:
        return "disable";
    default:
        return "auto";
    }
}

/* ---- aggregators ------------------------------------------------------------------------------ */

struct rank_node {
    int rank;
    uint64_t node;
    size_t node_index; /* order of the node by its lowest rank */
    size_t nth;        /* position of the rank among its node's ranks */
};

static int by_rank(const void *a, const void *b)
{
    const struct rank_node *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Round-robin order: every node's first rank, then every node's second rank, ... */
static int by_turn(const void *a, const void *b)
{
    const struct rank_node *x = a, *y = b;
    if (x->nth != y->nth)
        return x->nth < y->nth ? -1 : 1;
    return (x->node_index > y->node_index) - (x->node_index < y->node_index);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

size_t sluice_tp_pick_aggregators(const int *ranks, const uint64_t *nodes, size_t n, uint64_t cb_nodes,
                                  int *out)
{
    if (!n || !ranks || !nodes || !out)
        return 0;
    struct rank_node *rn = malloc(n * sizeof(*rn));
    if (!rn) {
        /* Out of memory for a few bytes: fall back to one aggregator, always correct. */
        int lo = ranks[0];
        for (size_t i = 1; i < n; i++)
            lo = ranks[i] < lo ? ranks[i] : lo;
        out[0] = lo;
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        rn[i] = (struct rank_node){ranks[i], nodes[i], 0, 0};
    qsort(rn, n, sizeof(*rn), by_rank);
    /* Number the nodes by first appearance and each rank within its node (n is the number of
     * ranks in one commit: quadratic is fine up to thousands and keeps this simple). */
    size_t nnodes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && rn[j].node != rn[i].node)
            j++;
        if (j == i) {
            rn[i].node_index = nnodes++;
            rn[i].nth = 0;
        } else {
            rn[i].node_index = rn[j].node_index;
            size_t nth = 0;
            for (size_t k = 0; k < i; k++)
                nth += rn[k].node == rn[i].node;
            rn[i].nth = nth;
        }
    }
    size_t want = cb_nodes == 0 ? nnodes : (cb_nodes < n ? (size_t)cb_nodes : n);
    qsort(rn, n, sizeof(*rn), by_turn);
    for (size_t i = 0; i < want; i++)
        out[i] = rn[i].rank;
    free(rn);
    qsort(out, want, sizeof(int), int_cmp);
    return want;
}

/* ---- plan -------------------------------------------------------------------------------------- */

struct ord {
    size_t index;
    uint64_t offset, end;
    int src;
};

static uint64_t key_at(const void *items, size_t size, size_t key, size_t k)
{
    uint64_t v;
    memcpy(&v, (const char *)items + k * size + key, sizeof v);
    return v;
}

static int key_cmp(const void *a, const void *b, void *key)
{
    uint64_t x, y;
    memcpy(&x, (const char *)a + (size_t)key, sizeof x);
    memcpy(&y, (const char *)b + (size_t)key, sizeof y);
    return (x > y) - (x < y);
}

static void free_tmp(void *tmp, size_t bytes, int huge)
{
    if (huge)
        sluice_hugebuf_free(tmp, bytes);
    else
        free(tmp);
}

/* Merging ascending runs pairwise: members in rank order are one run, the expanded rows of an
 * array one run per rank, so this is O(n log runs) where qsort was O(n log n) (a quarter of the
 * plan's time for 32,768 rows of 8 ranks). qsort where memory for the merge runs out. */
void sluice_tp_sort_runs(void *items, size_t n, size_t size, size_t key)
{
    size_t nrun = 0;
    for (size_t k = 0; k < n; k++)
        nrun += k == 0 || key_at(items, size, key, k) < key_at(items, size, key, k - 1);
    if (nrun <= 1)
        return;
    /* A large list merges through a buffer as large: huge pages put in place at once
     * (hugebuf.h), not a fault per 4 KiB of a fresh mapping. */
    int huge = n * size >= ((size_t)1 << 20);
    char *tmp = huge ? sluice_hugebuf_alloc(n * size) : malloc(n * size);
    size_t *at = malloc((nrun + 1) * sizeof *at), *at2 = malloc((nrun + 1) * sizeof *at2);
    if (!tmp || !at || !at2) {
        free_tmp(tmp, n * size, huge);
        free(at);
        free(at2);
        qsort_r(items, n, size, key_cmp, (void *)key);
        return;
    }
    nrun = 0;
    for (size_t k = 0; k < n; k++)
        if (k == 0 || key_at(items, size, key, k) < key_at(items, size, key, k - 1))
            at[nrun++] = k;
    at[nrun] = n;
    char *src = items, *dst = tmp;
    while (nrun > 1) {
        size_t n2 = 0;
        for (size_t r = 0; r < nrun; r += 2) {
            size_t a = at[r], ae = at[r + 1], b = ae, be = r + 2 <= nrun ? at[r + 2] : ae, d = a;
            at2[n2++] = a;
            while (a < ae && b < be) { /* stable: the first run's on a tie */
                size_t from = key_at(src, size, key, b) < key_at(src, size, key, a) ? b++ : a++;
                memcpy(dst + d++ * size, src + from * size, size);
            }
            memcpy(dst + d * size, src + a * size, (ae - a) * size);
            d += ae - a;
            memcpy(dst + d * size, src + b * size, (be - b) * size);
        }
        at2[n2] = n;
        size_t *t = at;
        at = at2;
        at2 = t;
        nrun = n2;
        char *x = src;
        src = dst;
        dst = x;
    }
    if (src != (char *)items)
        memcpy(items, src, n * size);
    free_tmp(tmp, n * size, huge);
    free(at);
    free(at2);
}

struct run {
    uint64_t begin, end;
};

/* Growable arrays of pieces and requests. */
struct vec {
    void *p;
    size_t n, cap, elem;
    int oom;
};

static void *vec_add(struct vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 32;
        void *p = realloc(v->p, cap * v->elem);
        if (!p) {
            v->oom = 1;
            return NULL;
        }
        v->p = p;
        v->cap = cap;
    }
    return (char *)v->p + v->elem * v->n++;
}

/* Room for n items at once (a failure is left to vec_add). */
static void vec_reserve(struct vec *v, size_t n)
{
    void *p = n > v->cap ? realloc(v->p, n * v->elem) : NULL;
    if (p) {
        v->p = p;
        v->cap = n;
    }
}

static uint64_t down(uint64_t v, uint64_t unit)
{
    return v / unit * unit;
}

/* Member k shares a stripe with another member (sorted, non-empty members in o[0..m)). */
static int shares_stripe(const struct ord *o, size_t m, size_t k, uint64_t unit)
{
    uint64_t first = o[k].offset / unit, last = (o[k].end - 1) / unit;
    if (k > 0 && (o[k - 1].end - 1) / unit >= first)
        return 1;
    if (k + 1 < m && o[k + 1].offset / unit <= last)
        return 1;
    return 0;
}

/* Calls emit(domain, round, a, b) for every round window that [a, b) crosses. */
struct splitter {
    const struct sluice_tp_domain *d;
    size_t nd;
    uint64_t round;
};

static size_t first_domain(const struct splitter *s, uint64_t a)
{
    size_t lo = 0, hi = s->nd; /* first domain with end > a */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->d[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Step 1: the non-empty members in file order into o (returns how many); empty and carried ones
 * have nothing to shuffle. direct[i] says which go straight to the file. */
static size_t order_members(const struct sluice_tp_member *members, size_t n,
                            const struct sluice_tp_params *p, struct ord *o, unsigned char *direct)
{
    uint64_t unit = p->stripe_unit;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        direct[i] = 1;
        if (members[i].size)
            o[m++] = (struct ord){i, members[i].offset, members[i].offset + members[i].size, members[i].src};
    }
    sluice_tp_sort_runs(o, m, sizeof *o, offsetof(struct ord, offset));
    for (size_t k = 0; k < m; k++) {
        if (o[k].src < 0 || p->mode == SLUICE_CB_WRITE_DISABLE)
            continue;
        if (p->mode == SLUICE_CB_WRITE_AUTO && !shares_stripe(o, m, k, unit))
            continue; /* it owns its stripes: the shuffle buys nothing */
        direct[o[k].index] = 0;
    }
    return m;
}

/* Step 2, runs: shuffled members plus the padding that follows each (up to the next block or
 * the next member), merged when contiguous. Zero-filled padding keeps requests whole. Never past
 * the last member: the index follows the data and ends the file. Returns how many; *total gets
 * their bytes. */
static size_t make_runs(const struct ord *o, size_t m, const unsigned char *direct, uint64_t block,
                        struct run *runs, uint64_t *total)
{
    size_t nruns = 0;
    *total = 0;
    for (size_t k = 0; k < m; k++) {
        if (direct[o[k].index])
            continue;
        uint64_t end = o[k].end;
        if (k + 1 < m) {
            end = (o[k].end + block - 1) & ~(block - 1);
            if (o[k + 1].offset < end)
                end = o[k + 1].offset;
        }
        if (end < o[k].end)
            end = o[k].end; /* only if the next block boundary overflowed */
        *total += end - o[k].offset;
        if (nruns && runs[nruns - 1].end == o[k].offset)
            runs[nruns - 1].end = end;
        else
            runs[nruns++] = (struct run){o[k].offset, end};
    }
    return nruns;
}

/* The file position where the run bytes accumulated from runs[r] (acc of them counted already,
 * the run at r possibly partly below prev_cut) reach target. */
static uint64_t position_of(const struct run *runs, size_t nruns, size_t r, uint64_t prev_cut, uint64_t acc,
                            uint64_t target)
{
    for (size_t k = r; k < nruns; k++) {
        uint64_t from = runs[k].begin > prev_cut ? runs[k].begin : prev_cut;
        uint64_t len = runs[k].end - from;
        if (acc + len >= target)
            return from + (target - acc);
        acc += len;
    }
    return runs[nruns - 1].end;
}

/* Step 3, one domain: the runs below cut (from runs[*r], the one at *r possibly partly below
 * prev_cut) go to aggregator `aggr`; *acc counts their bytes. No domain when none fall there. */
static void add_domain(const struct run *runs, size_t nruns, size_t *r, uint64_t *acc, uint64_t prev_cut,
                       uint64_t cut, int aggr, uint64_t unit, struct sluice_tp_plan *out)
{
    uint64_t dbeg = UINT64_MAX, dend = 0;
    while (*r < nruns && runs[*r].begin < cut) {
        uint64_t b = runs[*r].begin > prev_cut ? runs[*r].begin : prev_cut;
        uint64_t e = runs[*r].end < cut ? runs[*r].end : cut;
        if (b < e) {
            dbeg = b < dbeg ? b : dbeg;
            dend = e > dend ? e : dend;
            *acc += e - b;
        }
        if (runs[*r].end <= cut)
            (*r)++;
        else
            break;
    }
    if (dbeg >= dend)
        return;
    struct sluice_tp_domain *d = &out->domains[out->ndomains++];
    d->aggregator = aggr;
    d->begin = dbeg;
    d->end = dend;
    d->base = down(dbeg, unit);
}

/* Step 3, domains by bytes: cut on stripe boundaries so that each aggregator gets about
 * total / naggr bytes of runs; aggregators past the data get no domain. */
static void cut_by_bytes(const struct run *runs, size_t nruns, uint64_t total,
                         const struct sluice_tp_params *p, struct sluice_tp_plan *out)
{
    uint64_t unit = p->stripe_unit;
    size_t r = 0;
    uint64_t acc = 0, prev_cut = down(runs[0].begin, unit);
    for (size_t a = 0; a < p->naggr && r < nruns; a++) {
        uint64_t cut;
        if (a + 1 == p->naggr) {
            cut = runs[nruns - 1].end;
        } else {
            /* The file position where the accumulated run bytes reach (a + 1) / naggr. */
            uint64_t target = total / p->naggr * (a + 1) + total % p->naggr * (a + 1) / p->naggr;
            uint64_t pos = position_of(runs, nruns, r, prev_cut, acc, target);
            cut = (pos + unit - 1) / unit * unit;
            if (cut <= prev_cut)
                cut = prev_cut + unit; /* at least one stripe */
        }
        add_domain(runs, nruns, &r, &acc, prev_cut, cut, p->aggregators[a], unit, out);
        prev_cut = cut;
    }
}

/* The one aggregator on `node` (index into p->aggregators), or -1 (none, or several). */
static long node_aggregator(const struct sluice_tp_params *p, uint64_t node)
{
    long found = -1;
    for (size_t a = 0; a < p->naggr; a++) {
        if (p->aggr_node[a] != node)
            continue;
        if (found >= 0)
            return -1;
        found = (long)a;
    }
    return found;
}

/* Step 3, domains by node: each node's shuffled members, when they are one stretch of the file,
 * go to the aggregator of that node, the domains cut at the stripe boundary nearest to where
 * the next node's stretch begins. Only the bytes between that boundary and the stretch's start
 * cross a link, where cutting by bytes moves every byte past an uneven share: a node's excess
 * then crosses its own link anyway and the receiving node's link twice. Returns 1 when done, 0
 * when the data does not lie per node (the caller cuts by bytes), -ENOMEM. */
static int cut_by_node(const struct ord *o, size_t m, const unsigned char *direct, const struct run *runs,
                       size_t nruns, const struct sluice_tp_params *p, struct sluice_tp_plan *out)
{
    if (!p->aggr_node || !p->member_node)
        return 0;
    uint64_t unit = p->stripe_unit;
    size_t ns = 0, na = p->naggr;
    long *own = malloc(na * sizeof *own);
    uint64_t *start = malloc(na * sizeof *start);
    unsigned char *used = calloc(na, 1);
    int ok = own && start && used;
    for (size_t k = 0; ok && k < m; k++) {
        if (direct[o[k].index])
            continue;
        long a = node_aggregator(p, p->member_node[o[k].index]);
        if (a < 0) {
            ok = 0; /* a node without its own aggregator */
        } else if (ns == 0 || own[ns - 1] != a) {
            if (used[a])
                ok = 0; /* the node's data is in several stretches */
            else {
                used[a] = 1;
                own[ns] = a;
                start[ns++] = o[k].offset;
            }
        }
    }
    int rc = (own && start && used) ? ok : -ENOMEM;
    size_t r = 0;
    uint64_t acc = 0, prev_cut = down(runs[0].begin, unit);
    for (size_t s = 0; rc == 1 && s < ns; s++) {
        uint64_t cut = runs[nruns - 1].end;
        if (s + 1 < ns) {
            uint64_t x = start[s + 1], lo = down(x, unit), hi = lo == x ? x : lo + unit;
            cut = x - lo <= hi - x ? lo : hi; /* the fewer bytes on the wrong side */
            if (cut < prev_cut)
                cut = prev_cut; /* a stretch within one stripe: its bytes go to a neighbour */
        }
        add_domain(runs, nruns, &r, &acc, prev_cut, cut, p->aggregators[own[s]], unit, out);
        prev_cut = cut;
    }
    free(own);
    free(start);
    free(used);
    return rc;
}

/* The round size, at most the buffer's (out->round_size): whole stripes, and small enough that
 * the largest domain takes SLUICE_TP_PIPELINE_ROUNDS rounds where it spans that many stripes,
 * but not below SLUICE_TP_PIPELINE_MIN (a smaller write gains less than its messages cost).
 * At 64 MiB over 3 aggregators (one 16 MiB buffer round and a 5 MiB one each) the first write
 * began only after 16 MiB had come in; in 6 MiB rounds it begins after 6 MiB. */
static uint64_t pipelined_round(const struct sluice_tp_plan *out, uint64_t unit)
{
    uint64_t span = 0;
    for (size_t i = 0; i < out->ndomains; i++)
        if (out->domains[i].end - out->domains[i].base > span)
            span = out->domains[i].end - out->domains[i].base;
    uint64_t stripes = (span + unit - 1) / unit;
    uint64_t want = (stripes + SLUICE_TP_PIPELINE_ROUNDS - 1) / SLUICE_TP_PIPELINE_ROUNDS * unit;
    uint64_t least = (SLUICE_TP_PIPELINE_MIN + unit - 1) / unit * unit; /* whole stripes */
    if (want < least)
        want = least;
    return want < out->round_size ? want : out->round_size;
}

/* Step 3: the domains (by node where the data lies per node, else by bytes), then each
 * domain's rounds. */
static int cut_domains(const struct ord *o, size_t m, const unsigned char *direct, const struct run *runs,
                       size_t nruns, uint64_t total, const struct sluice_tp_params *p,
                       struct sluice_tp_plan *out)
{
    out->domains = calloc(p->naggr, sizeof(*out->domains));
    if (!out->domains)
        return -ENOMEM;
    int rc = cut_by_node(o, m, direct, runs, nruns, p, out);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        out->ndomains = 0;
        cut_by_bytes(runs, nruns, total, p, out);
    }
    out->round_size = pipelined_round(out, p->stripe_unit);
    for (size_t i = 0; i < out->ndomains; i++) {
        struct sluice_tp_domain *d = &out->domains[i];
        uint64_t span = d->end - d->base;
        d->nrounds = (uint32_t)((span + out->round_size - 1) / out->round_size);
        if (d->nrounds > out->max_rounds)
            out->max_rounds = d->nrounds;
    }
    return 0;
}

/* Step 4: [a, b) cut by domain and round window, each part handed to emit (0, or an error that
 * stops the walk). */
static int split_range(const struct splitter *sp, uint64_t a, uint64_t b, sluice_tp_window_fn emit, void *ctx)
{
    for (size_t di = first_domain(sp, a); di < sp->nd && sp->d[di].begin < b; di++) {
        const struct sluice_tp_domain *d = &sp->d[di];
        uint64_t x = a > d->begin ? a : d->begin, y = b < d->end ? b : d->end;
        while (x < y) {
            uint32_t round = (uint32_t)((x - d->base) / sp->round);
            uint64_t wend = d->base + (uint64_t)(round + 1) * sp->round;
            uint64_t e = y < wend ? y : wend;
            int rc = emit(ctx, di, round, x, e);
            if (rc)
                return rc;
            x = e;
        }
    }
    return 0;
}

struct piece_ctx {
    struct vec *pieces;
    const struct ord *member;
};

static int emit_piece(void *ctx, size_t di, uint32_t round, uint64_t x, uint64_t e)
{
    struct piece_ctx *c = ctx;
    struct sluice_tp_piece *pc = vec_add(c->pieces);
    if (!pc)
        return -ENOMEM;
    *pc = (struct sluice_tp_piece){c->member->index, x - c->member->offset, x,    e - x,
                                   c->member->src,   (uint32_t)di,          round};
    return 0;
}

struct request_ctx {
    struct vec *reqs;
    uint64_t unit;
};

/* A partial stripe at either end is a request of its own, so that the whole stripes in between
 * go out as one aligned request. */
static int emit_requests(void *ctx, size_t di, uint32_t round, uint64_t x, uint64_t e)
{
    struct request_ctx *c = ctx;
    uint64_t unit = c->unit;
    uint64_t cuts[4] = {x, x, e, e};
    uint64_t head = (x + unit - 1) / unit * unit, tail = down(e, unit);
    if (head < tail) {
        cuts[1] = head;
        cuts[2] = tail;
    }
    for (int k = 0; k < 3; k++) {
        if (cuts[k] >= cuts[k + 1])
            continue;
        struct sluice_tp_request *rq = vec_add(c->reqs);
        if (!rq)
            return -ENOMEM;
        uint64_t len = cuts[k + 1] - cuts[k];
        *rq = (struct sluice_tp_request){(uint32_t)di, round, cuts[k], len,
                                         cuts[k] % unit == 0 && len % unit == 0};
    }
    return 0;
}

/* Step 4, pieces (member bytes) and requests (run bytes), split by domain and round. Both walk
 * file order, so the arrays come out sorted by (domain, round, offset). */
static int split_all(const struct ord *o, size_t m, const struct run *runs, size_t nruns, uint64_t unit,
                     struct sluice_tp_plan *out, struct vec *pieces, struct vec *reqs)
{
    struct splitter sp = {out->domains, out->ndomains, out->round_size};
    for (size_t k = 0; k < m; k++) {
        if (out->direct[o[k].index])
            continue;
        out->shuffled_bytes += o[k].end - o[k].offset;
        struct piece_ctx pc = {pieces, &o[k]};
        int rc = split_range(&sp, o[k].offset, o[k].end, emit_piece, &pc);
        if (rc)
            return rc;
    }
    struct request_ctx rq = {reqs, unit};
    for (size_t k = 0; k < nruns; k++) {
        int rc = split_range(&sp, runs[k].begin, runs[k].end, emit_requests, &rq);
        if (rc)
            return rc;
    }
    return 0;
}

int sluice_tp_plan_make(const struct sluice_tp_member *members, size_t n, const struct sluice_tp_params *p,
                        struct sluice_tp_plan *out)
{
    if (!out || !p || (n && !members))
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    uint64_t unit = p->stripe_unit, block = p->block_size;
    if (block == 0 || (block & (block - 1)) || unit < block)
        return -EINVAL;

    out->nmembers = n;
    out->direct = calloc(n ? n : 1, 1);
    struct ord *o = calloc(n ? n : 1, sizeof(*o));
    struct run *runs = calloc(n ? n : 1, sizeof(*runs));
    struct vec pieces = {.elem = sizeof(struct sluice_tp_piece)};
    struct vec reqs = {.elem = sizeof(struct sluice_tp_request)};
    int rc = 0;
    if (!out->direct || !o || !runs) {
        rc = -ENOMEM;
        goto done;
    }
    size_t m = order_members(members, n, p, o, out->direct);
    uint64_t total;
    size_t nruns = make_runs(o, m, out->direct, block, runs, &total);
    out->round_size = p->buffer_size / unit * unit;
    if (out->round_size == 0)
        out->round_size = unit;
    if (nruns == 0)
        goto done; /* nothing to shuffle: every member goes direct */
    if (!p->aggregators || p->naggr == 0) {
        rc = -EINVAL;
        goto done;
    }
    rc = cut_domains(o, m, out->direct, runs, nruns, total, p, out);
    if (rc == 0) { /* a piece per member, plus one per round window that cuts one */
        size_t windows = 0;
        for (size_t d = 0; d < out->ndomains; d++)
            windows += out->domains[d].nrounds;
        vec_reserve(&pieces, m + windows + 1);
    }
    if (rc == 0)
        rc = split_all(o, m, runs, nruns, unit, out, &pieces, &reqs);

done:
    free(o);
    free(runs);
    out->pieces = pieces.p;
    out->npieces = pieces.n;
    out->requests = reqs.p;
    out->nrequests = reqs.n;
    if (rc)
        sluice_tp_plan_free(out);
    return rc;
}

/* Pieces and requests were produced in file order, which is (domain, round, offset) order
 * because domains and rounds are increasing ranges of the file. */

void sluice_tp_plan_free(struct sluice_tp_plan *plan)
{
    if (!plan)
        return;
    free(plan->direct);
    free(plan->domains);
    if (plan->pieces_huge)
        sluice_hugebuf_free(plan->pieces, plan->pieces_huge);
    else
        free(plan->pieces);
    free(plan->requests);
    memset(plan, 0, sizeof(*plan));
}

int sluice_tp_split_range(const struct sluice_tp_domain *d, size_t nd, uint64_t round_size, uint64_t a,
                          uint64_t b, sluice_tp_window_fn emit, void *ctx)
{
    struct splitter sp = {d, nd, round_size};
    return split_range(&sp, a, b, emit, ctx);
}

long sluice_tp_domain_of(const struct sluice_tp_plan *plan, int rank)
{
    for (size_t i = 0; i < plan->ndomains; i++)
        if (plan->domains[i].aggregator == rank)
            return (long)i;
    return -1;
}
