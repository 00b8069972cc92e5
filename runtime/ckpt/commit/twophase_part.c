/* SPDX-License-Identifier: MIT */
/* One participant's share of a two-phase plan: encoded by the home, decoded by the participant
 * (twophase_part.h). The home buckets members and pieces by rank once (counting sort), so the
 * shares of all participants cost O(members + pieces + ranks) to build.
 *
 * MSG_TWOPHASE: {id, tmp, unit, chunk, round_size, form,
 *   form 0, pieces (this file):
 *                nmem, nmem x (seq, offset, size),    (its shuffled members only)
 *                ndom, ndom x (aggregator, begin, end, base, nrounds),
 *                npieces, runs of them until npieces are told:
 *                  (1, domain, round, file_off, size, src, member_off, member or ~0)
 *                  or (count >= 2, domain, round, first file_off, file_off step, size, src,
 *                      first member_off, member_off step, member or ~0): count pieces that
 *                      differ only by constant steps (the rows of a block: a share of 4,096
 *                      rows of 512 bytes was 197 KB, now a few KB),
 *                nreq, nreq x (domain, round, offset, size, full),  (domains and members local)
 *                npeers, npeers x rank}   (the ranks of its node it exchanges pieces with)
 *   form 1, a set laid out as an array: twophase_part_array.c} */
#include "ckpt/commit/twophase_part.h"

#include "config/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- wire helpers ---------------------------------------------------------------------------- */

void commit_twophase_put_head(struct cmsg *msg, uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                              uint64_t round_size, uint32_t form)
{
    cmsg_init(msg, MSG_TWOPHASE);
    cmsg_put_u32(msg, id);
    cmsg_put_str(msg, tmp);
    cmsg_put_u64(msg, unit);
    cmsg_put_u32(msg, chunk);
    cmsg_put_u64(msg, round_size);
    cmsg_put_u32(msg, form);
}

void commit_twophase_put_domain(struct cmsg *msg, const struct sluice_tp_domain *d)
{
    cmsg_put_u32(msg, (uint32_t)d->aggregator);
    cmsg_put_u64(msg, d->begin);
    cmsg_put_u64(msg, d->end);
    cmsg_put_u64(msg, d->base);
    cmsg_put_u32(msg, d->nrounds);
}

void commit_twophase_get_domain(struct cmsg *in, struct sluice_tp_domain *d)
{
    d->aggregator = (int)cmsg_get_u32(in);
    d->begin = cmsg_get_u64(in);
    d->end = cmsg_get_u64(in);
    d->base = cmsg_get_u64(in);
    d->nrounds = cmsg_get_u32(in);
}

int commit_twophase_peers_init(struct commit_tp_peers *p, int size)
{
    p->me = -1;
    p->n = 0;
    p->v = malloc((size_t)(size > 0 ? size : 1) * sizeof *p->v);
    p->seen = calloc((size_t)(size > 0 ? size : 1), 1);
    return p->v && p->seen ? 0 : -ENOMEM;
}

void commit_twophase_peers_offer(struct commit_tp_peers *p, int rank)
{
    /* The home's SLUICE_CB_SHARED decides for the whole commit: both ends of every pair follow
     * the lists it sends, whatever their own environment says. */
    if (!sluice_config.CB_SHARED || rank < 0 || rank >= commit_g.size || rank == p->me || p->seen[rank] ||
        !commit_twophase_same_node(rank, p->me))
        return;
    p->seen[rank] = 1;
    p->v[p->n++] = rank;
}

static int by_rank(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

void commit_twophase_peers_put(struct cmsg *msg, struct commit_tp_peers *p, int next_me)
{
    qsort(p->v, p->n, sizeof *p->v, by_rank);
    cmsg_put_u32(msg, (uint32_t)p->n);
    for (size_t i = 0; i < p->n; i++) {
        cmsg_put_u32(msg, (uint32_t)p->v[i]);
        p->seen[p->v[i]] = 0;
    }
    p->n = 0;
    p->me = next_me;
}

void commit_twophase_peers_free(struct commit_tp_peers *p)
{
    free(p->v);
    free(p->seen);
}

int commit_twophase_get_peers(struct cmsg *in, struct commit_tp_part *out)
{
    uint32_t n = cmsg_get_u32(in);
    if (in->bad || (uint64_t)n * 4 > in->len)
        return -EPROTO;
    out->peers = malloc((n ? n : 1) * sizeof *out->peers);
    if (!out->peers)
        return -ENOMEM;
    out->npeers = n;
    for (uint32_t i = 0; i < n; i++) {
        out->peers[i] = (int)cmsg_get_u32(in);
        if (i > 0 && out->peers[i] <= out->peers[i - 1])
            return -EPROTO; /* ascending, each once */
    }
    return in->bad ? -EPROTO : 0;
}

/* ---- home ------------------------------------------------------------------------------------ */

/* Rank buckets of n items by key (key < 0: in none): first[r]..first[r + 1] index by[], which
 * lists the items of rank r in increasing order. */
struct buckets {
    size_t *first, *by;
};

static int bucket(struct buckets *b, size_t n, int size, int (*key)(const void *, size_t), const void *arg)
{
    b->first = calloc((size_t)size + 2, sizeof(size_t));
    b->by = malloc((n ? n : 1) * sizeof(size_t));
    if (!b->first || !b->by)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int k = key(arg, i);
        if (k >= 0 && k < size)
            b->first[k + 2]++;
    }
    for (int r = 2; r < size + 2; r++)
        b->first[r] += b->first[r - 1];
    for (size_t i = 0; i < n; i++) {
        int k = key(arg, i);
        if (k >= 0 && k < size)
            b->by[b->first[k + 1]++] = i;
    }
    return 0; /* first[r] is now the start of rank r's items, first[r + 1] their end */
}

/* A share lists its rank's shuffled members; the others are its node writer's (MSG_WRITE). */
static int member_key(const void *arg, size_t i)
{
    const struct commit_tp_member *m = (const struct commit_tp_member *)arg + i;
    return m->writer >= 0 ? -1 : m->src;
}

static int piece_key(const void *arg, size_t i)
{
    return ((const struct sluice_tp_plan *)arg)->pieces[i].src;
}

struct home_ctx {
    uint32_t id;
    const char *tmp;
    uint64_t unit;
    uint32_t chunk;
    const struct sluice_tp_plan *plan;
    const struct commit_tp_member *m;
    struct buckets mb, pb;
    size_t *local;     /* per member: its index among its rank's members */
    long *dom_of;      /* per rank: the domain it aggregates, or -1 */
    size_t *dom_first; /* per domain: its first piece (pieces are sorted by domain) */
    size_t *req_first; /* per domain: its first request */
    size_t *merged;    /* scratch: one participant's pieces */
    uint32_t *ldom;    /* scratch: global domain -> local, for the domains of one share */
    uint32_t *doms;    /* scratch: the domains of one share, in order */
    struct commit_tp_peers peers;
};

/* How many of the share's pieces from merged[x] on differ only by constant steps of their file
 * offset and member offset (same domain, round, size, sender and member). */
static size_t run_length(const struct home_ctx *h, int r, size_t x, size_t np)
{
    const struct sluice_tp_piece *P = h->plan->pieces;
    const size_t *M = h->merged;
    if (x + 1 >= np)
        return 1;
    const struct sluice_tp_piece *a = &P[M[x]];
    uint64_t dfo = P[M[x + 1]].file_off - a->file_off, dmo = P[M[x + 1]].member_off - a->member_off;
    size_t n = 1;
    while (x + n < np) {
        const struct sluice_tp_piece *b = &P[M[x + n]];
        if (b->file_off - P[M[x + n - 1]].file_off != dfo ||
            b->member_off - P[M[x + n - 1]].member_off != dmo || b->domain != a->domain ||
            b->round != a->round || b->size != a->size || b->src != a->src ||
            (b->src == r && b->member != a->member))
            break;
        n++;
    }
    return n;
}

static void put_share(struct home_ctx *h, int r)
{
    const struct sluice_tp_plan *p = h->plan;
    /* Pieces r sends, merged with the pieces of the domain r aggregates (both ascending). */
    size_t a = h->pb.first[r], ae = h->pb.first[r + 1], np = 0;
    long d = h->dom_of[r];
    size_t b = d >= 0 ? h->dom_first[d] : 0, be = d >= 0 ? h->dom_first[d + 1] : 0;
    while (a < ae || b < be) {
        size_t k = (b >= be || (a < ae && h->pb.by[a] < b)) ? h->pb.by[a++] : b++;
        if (np == 0 || h->merged[np - 1] != k)
            h->merged[np++] = k;
    }
    struct cmsg msg;
    commit_twophase_put_head(&msg, h->id, h->tmp, h->unit, h->chunk, p->round_size, COMMIT_TP_FORM_PIECES);
    cmsg_put_u32(&msg, (uint32_t)(h->mb.first[r + 1] - h->mb.first[r]));
    for (size_t x = h->mb.first[r]; x < h->mb.first[r + 1]; x++) {
        size_t i = h->mb.by[x];
        cmsg_put_u64(&msg, h->m[i].seq);
        cmsg_put_u64(&msg, h->m[i].offset);
        cmsg_put_u64(&msg, h->m[i].size);
    }
    /* The domains of these pieces and r's own, in the plan's order (pieces are sorted by
     * domain, so the merged list meets them in order). */
    uint32_t nd = 0;
    for (size_t x = 0; x <= np; x++) {
        long g = x < np ? (long)p->pieces[h->merged[x]].domain : d;
        if (g < 0 || h->ldom[g] != UINT32_MAX)
            continue;
        size_t at = nd; /* r's own domain may come last but belong earlier */
        while (at > 0 && (long)h->doms[at - 1] > g)
            at--;
        memmove(h->doms + at + 1, h->doms + at, (nd - at) * sizeof *h->doms);
        h->doms[at] = (uint32_t)g;
        h->ldom[g] = 0;
        nd++;
    }
    for (uint32_t x = 0; x < nd; x++)
        h->ldom[h->doms[x]] = x;
    cmsg_put_u32(&msg, nd);
    for (uint32_t x = 0; x < nd; x++) {
        commit_twophase_put_domain(&msg, &p->domains[h->doms[x]]);
    }
    cmsg_put_u32(&msg, (uint32_t)np);
    for (size_t x = 0; x < np;) {
        const struct sluice_tp_piece *pc = &p->pieces[h->merged[x]];
        size_t count = run_length(h, r, x, np);
        uint32_t member = pc->src == r ? (uint32_t)h->local[pc->member] : UINT32_MAX;
        cmsg_put_u32(&msg, (uint32_t)count);
        if (count == 1) {
            cmsg_put_u32(&msg, h->ldom[pc->domain]);
            cmsg_put_u32(&msg, pc->round);
            cmsg_put_u64(&msg, pc->file_off);
            cmsg_put_u64(&msg, pc->size);
            cmsg_put_u32(&msg, (uint32_t)pc->src);
            cmsg_put_u64(&msg, pc->member_off);
            cmsg_put_u32(&msg, member);
        } else {
            const struct sluice_tp_piece *nx = &p->pieces[h->merged[x + 1]];
            cmsg_put_u32(&msg, h->ldom[pc->domain]);
            cmsg_put_u32(&msg, pc->round);
            cmsg_put_u64(&msg, pc->file_off);
            cmsg_put_u64(&msg, nx->file_off - pc->file_off);
            cmsg_put_u64(&msg, pc->size);
            cmsg_put_u32(&msg, (uint32_t)pc->src);
            cmsg_put_u64(&msg, pc->member_off);
            cmsg_put_u64(&msg, nx->member_off - pc->member_off);
            cmsg_put_u32(&msg, member);
        }
        x += count;
    }
    size_t q = d >= 0 ? h->req_first[d] : 0, qe = d >= 0 ? h->req_first[d + 1] : 0;
    cmsg_put_u32(&msg, (uint32_t)(qe - q));
    for (; q < qe; q++) {
        const struct sluice_tp_request *rq = &p->requests[q];
        cmsg_put_u32(&msg, h->ldom[rq->domain]);
        cmsg_put_u32(&msg, rq->round);
        cmsg_put_u64(&msg, rq->offset);
        cmsg_put_u64(&msg, rq->size);
        cmsg_put_u32(&msg, (uint32_t)rq->full);
    }
    /* Its node's ranks among the aggregators it sends to and the writers that send to it. */
    h->peers.me = r;
    for (uint32_t x = 0; x < nd; x++)
        commit_twophase_peers_offer(&h->peers, p->domains[h->doms[x]].aggregator);
    for (size_t k = d >= 0 ? h->dom_first[d] : 0; d >= 0 && k < h->dom_first[d + 1]; k++)
        commit_twophase_peers_offer(&h->peers, p->pieces[k].src);
    commit_twophase_peers_put(&msg, &h->peers, -1);
    /* Back to "no local domain" for the next share. */
    for (uint32_t x = 0; x < nd; x++)
        h->ldom[h->doms[x]] = UINT32_MAX;
    commit_send(r, &msg);
}

int commit_twophase_send_parts(uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                               const struct sluice_tp_plan *plan, const struct commit_tp_member *m, size_t n)
{
    int size = commit_g.size;
    struct home_ctx h = {.id = id, .tmp = tmp, .unit = unit, .chunk = chunk, .plan = plan, .m = m};
    int rc = bucket(&h.mb, n, size, member_key, m);
    if (rc == 0)
        rc = bucket(&h.pb, plan->npieces, size, piece_key, plan);
    h.local = malloc((n ? n : 1) * sizeof(size_t));
    h.dom_of = malloc((size_t)size * sizeof(long));
    h.dom_first = calloc(plan->ndomains + 1, sizeof(size_t));
    h.req_first = calloc(plan->ndomains + 1, sizeof(size_t));
    h.merged = malloc((plan->npieces ? plan->npieces : 1) * sizeof(size_t));
    h.ldom = malloc((plan->ndomains ? plan->ndomains : 1) * sizeof(uint32_t));
    h.doms = malloc((plan->ndomains ? plan->ndomains : 1) * sizeof(uint32_t));
    if (rc == 0 && !(h.local && h.dom_of && h.dom_first && h.req_first && h.merged && h.ldom && h.doms))
        rc = -ENOMEM;
    if (rc == 0)
        rc = commit_twophase_peers_init(&h.peers, size);
    int sent = 0;
    if (rc == 0) {
        for (int r = 0; r < size; r++) {
            h.dom_of[r] = -1;
            for (size_t x = h.mb.first[r]; x < h.mb.first[r + 1]; x++)
                h.local[h.mb.by[x]] = x - h.mb.first[r];
        }
        for (size_t g = 0; g < plan->ndomains; g++) {
            int a = plan->domains[g].aggregator;
            if (a >= 0 && a < size)
                h.dom_of[a] = (long)g;
            h.ldom[g] = UINT32_MAX;
        }
        for (size_t k = 0; k < plan->npieces; k++)
            h.dom_first[plan->pieces[k].domain + 1]++;
        for (size_t q = 0; q < plan->nrequests; q++)
            h.req_first[plan->requests[q].domain + 1]++;
        for (size_t g = 1; g <= plan->ndomains; g++) {
            h.dom_first[g] += h.dom_first[g - 1];
            h.req_first[g] += h.req_first[g - 1];
        }
        for (int r = 0; r < size; r++) {
            if (h.mb.first[r + 1] == h.mb.first[r] && h.dom_of[r] < 0)
                continue; /* no member here, no domain: not a participant */
            put_share(&h, r);
            sent++;
        }
    }
    free(h.mb.first);
    free(h.mb.by);
    free(h.pb.first);
    free(h.pb.by);
    free(h.local);
    free(h.dom_of);
    free(h.dom_first);
    free(h.req_first);
    free(h.merged);
    free(h.ldom);
    free(h.doms);
    commit_twophase_peers_free(&h.peers);
    return rc ? rc : sent;
}

/* ---- participant ----------------------------------------------------------------------------- */

void commit_twophase_part_free(struct commit_tp_part *p)
{
    commit_twophase_part_cut_free(p->cut);
    p->cut = NULL;
    free(p->peers);
    p->peers = NULL;
    p->npeers = 0;
    sluice_tp_plan_free(&p->plan);
    free(p->m);
    p->m = NULL;
    p->n = 0;
}

int commit_twophase_part_cut(struct commit_tp_part *out)
{
    return out->cut ? commit_twophase_part_cut_array(out) : 0;
}

/* calloc of n items, never of 0 bytes. */
static void *items(size_t n, size_t each)
{
    return calloc(n ? n : 1, each);
}

/* A count no message of len bytes can hold (each item takes at least min bytes): malformed. */
static int too_many(const struct cmsg *in, uint32_t n, size_t min)
{
    return (uint64_t)n * min > in->len;
}

int commit_twophase_part_decode(struct cmsg *in, int me, struct commit_tp_part *out)
{
    memset(out, 0, sizeof *out);
    struct sluice_tp_plan *p = &out->plan;
    out->id = cmsg_get_u32(in);
    snprintf(out->tmp, sizeof out->tmp, "%s", cmsg_get_str(in));
    out->unit = cmsg_get_u64(in);
    out->chunk = cmsg_get_u32(in);
    p->round_size = cmsg_get_u64(in);
    uint32_t form = cmsg_get_u32(in);
    if (in->bad || (form != COMMIT_TP_FORM_PIECES && form != COMMIT_TP_FORM_ARRAY))
        return -EPROTO;
    if (form == COMMIT_TP_FORM_ARRAY)
        return commit_twophase_part_decode_array(in, me, out);
    uint32_t n = cmsg_get_u32(in);
    if (in->bad || too_many(in, n, 24))
        return -EPROTO;
    out->n = p->nmembers = n;
    out->m = items(n, sizeof *out->m);
    p->direct = items(n, 1); /* all 0: a share holds shuffled members only */
    if (!out->m || !p->direct)
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        out->m[i].seq = cmsg_get_u64(in);
        out->m[i].offset = cmsg_get_u64(in);
        out->m[i].size = cmsg_get_u64(in);
        out->m[i].src = me;
        out->m[i].member_rank = -1;
        out->m[i].writer = -1;
    }
    uint32_t nd = cmsg_get_u32(in);
    if (in->bad || too_many(in, nd, 32))
        goto bad;
    p->ndomains = nd;
    if (!(p->domains = items(nd, sizeof *p->domains)))
        goto nomem;
    for (uint32_t g = 0; g < nd; g++) {
        commit_twophase_get_domain(in, &p->domains[g]);
    }
    /* Every piece is at least a byte of this rank's members or of its domains: a count past
     * those bytes is malformed (and no allocation follows it). */
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        bytes += out->m[i].size;
    for (uint32_t g = 0; g < nd; g++)
        bytes += p->domains[g].end > p->domains[g].begin ? p->domains[g].end - p->domains[g].begin : 0;
    uint32_t np = cmsg_get_u32(in);
    if (in->bad || np > bytes)
        goto bad;
    p->npieces = np;
    p->pieces = items(np, sizeof *p->pieces);
    if (!p->pieces)
        goto nomem;
    for (uint32_t k = 0; k < np;) {
        uint32_t count = cmsg_get_u32(in);
        if (in->bad || count == 0 || count > np - k)
            goto bad;
        uint32_t dom = cmsg_get_u32(in), round = cmsg_get_u32(in);
        uint64_t fo = cmsg_get_u64(in), dfo = count > 1 ? cmsg_get_u64(in) : 0;
        uint64_t size = cmsg_get_u64(in);
        int src = (int)cmsg_get_u32(in);
        uint64_t mo = cmsg_get_u64(in), dmo = count > 1 ? cmsg_get_u64(in) : 0;
        uint32_t mem = cmsg_get_u32(in);
        if (in->bad || dom >= nd || (mem != UINT32_MAX && (mem >= n || src != me)))
            goto bad;
        for (uint32_t j = 0; j < count; j++, k++) {
            struct sluice_tp_piece *pc = &p->pieces[k];
            pc->domain = dom;
            pc->round = round;
            pc->file_off = fo + j * dfo;
            pc->size = size;
            pc->src = src;
            pc->member_off = mo + j * dmo;
            pc->member = mem == UINT32_MAX ? COMMIT_TP_NOT_MINE : mem;
            p->shuffled_bytes += pc->size;
        }
    }
    uint32_t nq = cmsg_get_u32(in);
    if (in->bad || too_many(in, nq, 28))
        goto bad;
    p->nrequests = nq;
    if (!(p->requests = items(nq, sizeof *p->requests)))
        goto nomem;
    for (uint32_t q = 0; q < nq; q++) {
        struct sluice_tp_request *rq = &p->requests[q];
        rq->domain = cmsg_get_u32(in);
        rq->round = cmsg_get_u32(in);
        rq->offset = cmsg_get_u64(in);
        rq->size = cmsg_get_u64(in);
        rq->full = (int)cmsg_get_u32(in);
        if (rq->domain >= nd)
            goto bad;
    }
    if (in->bad)
        goto bad;
    int prc = commit_twophase_get_peers(in, out);
    if (prc == -ENOMEM)
        goto nomem;
    if (prc)
        goto bad;
    for (uint32_t g = 0; g < nd; g++)
        if (p->domains[g].nrounds > p->max_rounds)
            p->max_rounds = p->domains[g].nrounds;
    return 0;
bad:
    commit_twophase_part_free(out);
    return -EPROTO;
nomem:
    commit_twophase_part_free(out);
    return -ENOMEM;
}
