/* SPDX-License-Identifier: MIT */
/* A participant's share of the two-phase write of a set laid out as one global array: the home
 * plans only the regions (headers and array, planner_array.h), so its work and bytes per version
 * are O(members + domains), never O(rows); each participant cuts its own pieces from the layout
 * record, a writer O(its rows), an aggregator O(the rows in its domain), all at once.
 *
 * MSG_TWOPHASE, form COMMIT_TP_FORM_ARRAY (after the common fields, twophase_part.c):
 *   {record, nmem x (seq, offset, size, member_rank),   (its members)
 *    ndom x (aggregator, begin, end, base, nrounds),    (the domains its members touch, and its
 *                                                        own, in file order)
 *    nwho x (member_rank, src),                         (aggregator: the members that touch its
 *                                                        domain)
 *    nreq x (round, offset, size, full),                (aggregator: its domain's requests)
 *    npeers x rank}                                     (the ranks of its node it exchanges
 *                                                        pieces with) */
#include "ckpt/commit/twophase_part.h"

#include "ckpt/container/container.h"
#include "ckpt/twophase/planner_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- home ------------------------------------------------------------------------------------ */

/* Where a member lies: header and rows, and the range of domains each touches ([lo, hi) indexes). */
struct place {
    size_t hd_lo, hd_hi, row_lo, row_hi;
};

/* The domains (increasing, disjoint) that [a, b) touches: [*lo, *hi). */
static void touched(const struct sluice_tp_plan *p, uint64_t a, uint64_t b, size_t *lo, size_t *hi)
{
    size_t l = 0, h = p->ndomains;
    while (l < h) { /* the first domain ending past a */
        size_t mid = l + (h - l) / 2;
        if (p->domains[mid].end <= a)
            l = mid + 1;
        else
            h = mid;
    }
    *lo = l;
    while (a < b && h < p->ndomains && p->domains[h].begin < b)
        h++;
    *hi = a < b && h > l ? h : l;
}

struct array_home {
    uint32_t id;
    const char *tmp;
    uint64_t unit;
    uint32_t chunk;
    const char *record;
    const struct sluice_tp_plan *plan;
    const struct commit_tp_member *m;
    struct place *at;           /* per member */
    size_t *mem_first, *mem_by; /* members by staging rank */
    size_t *who_first, *who_by; /* members by domain they touch */
    long *dom_of;               /* per rank: its domain, or -1 */
    unsigned char *dom_mark;    /* scratch: domains of one share */
    size_t *req_first;          /* per domain: its first request */
    struct commit_tp_peers *peers;
};

static void put_share(const struct array_home *h, int r)
{
    const struct sluice_tp_plan *p = h->plan;
    struct cmsg msg;
    commit_twophase_put_head(&msg, h->id, h->tmp, h->unit, h->chunk, p->round_size, COMMIT_TP_FORM_ARRAY);
    cmsg_put_str(&msg, h->record);
    size_t mb = h->mem_first[r], me = h->mem_first[r + 1];
    cmsg_put_u32(&msg, (uint32_t)(me - mb));
    long own = h->dom_of[r];
    if (own >= 0)
        h->dom_mark[own] = 1;
    for (size_t x = mb; x < me; x++) {
        const struct commit_tp_member *mm = &h->m[h->mem_by[x]];
        const struct place *pl = &h->at[h->mem_by[x]];
        cmsg_put_u64(&msg, mm->seq);
        cmsg_put_u64(&msg, mm->offset);
        cmsg_put_u64(&msg, mm->size);
        cmsg_put_u32(&msg, (uint32_t)mm->member_rank);
        for (size_t g = pl->hd_lo; g < pl->hd_hi; g++)
            h->dom_mark[g] = 1;
        for (size_t g = pl->row_lo; g < pl->row_hi; g++)
            h->dom_mark[g] = 1;
    }
    uint32_t nd = 0;
    for (size_t g = 0; g < p->ndomains; g++)
        nd += h->dom_mark[g];
    cmsg_put_u32(&msg, nd);
    h->peers->me = r;
    for (size_t g = 0; g < p->ndomains; g++) {
        if (!h->dom_mark[g])
            continue;
        h->dom_mark[g] = 0; /* clean for the next share */
        commit_twophase_put_domain(&msg, &p->domains[g]);
        commit_twophase_peers_offer(h->peers, p->domains[g].aggregator);
    }
    size_t wb = own >= 0 ? h->who_first[own] : 0, we = own >= 0 ? h->who_first[own + 1] : 0;
    cmsg_put_u32(&msg, (uint32_t)(we - wb));
    for (size_t x = wb; x < we; x++) {
        cmsg_put_u32(&msg, (uint32_t)h->m[h->who_by[x]].member_rank);
        cmsg_put_u32(&msg, (uint32_t)h->m[h->who_by[x]].src);
        commit_twophase_peers_offer(h->peers, h->m[h->who_by[x]].src);
    }
    size_t q = own >= 0 ? h->req_first[own] : 0, qe = own >= 0 ? h->req_first[own + 1] : 0;
    cmsg_put_u32(&msg, (uint32_t)(qe - q));
    for (; q < qe; q++) {
        const struct sluice_tp_request *rq = &p->requests[q];
        cmsg_put_u32(&msg, rq->round);
        cmsg_put_u64(&msg, rq->offset);
        cmsg_put_u64(&msg, rq->size);
        cmsg_put_u32(&msg, (uint32_t)rq->full);
    }
    commit_twophase_peers_put(&msg, h->peers, -1);
    commit_send(r, &msg);
}

/* Counting sort of `n` items into `nb` buckets; an item may go to several (key() calls back
 * into each). first[b]..first[b + 1] index by[]. */
struct fill {
    size_t *first, *by;
    int pass;
};

static void into(struct fill *f, size_t bucket, size_t item)
{
    if (f->pass == 0)
        f->first[bucket + 2]++;
    else
        f->by[f->first[bucket + 1]++] = item;
}

int commit_twophase_send_array_parts(uint32_t id, const char *tmp, uint64_t unit, uint32_t chunk,
                                     const struct sluice_array *array, const struct sluice_tp_plan *plan,
                                     const struct commit_tp_member *m, size_t n)
{
    int size = commit_g.size;
    char record[SLUICE_CONTAINER_ARRAY_MAX];
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    if (sluice_array_format(array, record, sizeof record) < 0 ||
        sluice_array_grid(array, array->nprocs, grid, NULL, 0) != 0)
        return -EINVAL;
    size_t nd = plan->ndomains;
    struct commit_tp_peers peers;
    struct array_home h = {
        .id = id, .tmp = tmp, .unit = unit, .chunk = chunk, .record = record, .plan = plan, .m = m};
    h.peers = &peers;
    h.at = malloc((n ? n : 1) * sizeof *h.at);
    h.mem_first = calloc((size_t)size + 2, sizeof(size_t));
    h.who_first = calloc(nd + 2, sizeof(size_t));
    h.dom_of = malloc((size_t)size * sizeof(long));
    h.dom_mark = calloc(nd ? nd : 1, 1);
    h.req_first = calloc(nd + 1, sizeof(size_t));
    int rc = h.at && h.mem_first && h.who_first && h.dom_of && h.dom_mark && h.req_first ? 0 : -ENOMEM;
    int prc = commit_twophase_peers_init(&peers, size);
    if (rc == 0)
        rc = prc;
    size_t nwho = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t head, lo, hi;
        sluice_tp_array_bounds(array, grid, m[i].member_rank, &head, &lo, &hi);
        struct place *pl = &h.at[i];
        touched(plan, head, head + array->header, &pl->hd_lo, &pl->hd_hi);
        touched(plan, lo, hi, &pl->row_lo, &pl->row_hi);
        nwho += (pl->hd_hi - pl->hd_lo) + (pl->row_hi - pl->row_lo);
    }
    if (rc == 0) {
        h.mem_by = malloc((n ? n : 1) * sizeof(size_t));
        h.who_by = malloc((nwho ? nwho : 1) * sizeof(size_t));
        if (!h.mem_by || !h.who_by)
            rc = -ENOMEM;
    }
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        struct fill fm = {h.mem_first, h.mem_by, pass}, fw = {h.who_first, h.who_by, pass};
        for (size_t i = 0; i < n; i++) {
            if (m[i].src >= 0 && m[i].src < size)
                into(&fm, (size_t)m[i].src, i);
            /* A member whose header and rows touch one domain is listed there once. */
            const struct place *pl = &h.at[i];
            for (size_t g = pl->hd_lo; g < pl->hd_hi; g++)
                into(&fw, g, i);
            for (size_t g = pl->row_lo; g < pl->row_hi; g++)
                if (g < pl->hd_lo || g >= pl->hd_hi)
                    into(&fw, g, i);
        }
        if (pass == 0) {
            for (int r = 2; r < size + 2; r++)
                h.mem_first[r] += h.mem_first[r - 1];
            for (size_t g = 2; g < nd + 2; g++)
                h.who_first[g] += h.who_first[g - 1];
        }
    }
    int sent = 0;
    if (rc == 0) {
        for (int r = 0; r < size; r++)
            h.dom_of[r] = -1;
        for (size_t g = 0; g < nd; g++)
            if (plan->domains[g].aggregator >= 0 && plan->domains[g].aggregator < size)
                h.dom_of[plan->domains[g].aggregator] = (long)g;
        for (size_t q = 0; q < plan->nrequests; q++)
            h.req_first[plan->requests[q].domain + 1]++;
        for (size_t g = 1; g <= nd; g++)
            h.req_first[g] += h.req_first[g - 1];
        for (int r = 0; r < size; r++) {
            if (h.mem_first[r + 1] == h.mem_first[r] && h.dom_of[r] < 0)
                continue; /* no member here, no domain: not a participant */
            put_share(&h, r);
            sent++;
        }
    }
    free(h.at);
    free(h.mem_first);
    free(h.mem_by);
    free(h.who_first);
    free(h.who_by);
    free(h.dom_of);
    free(h.dom_mark);
    free(h.req_first);
    commit_twophase_peers_free(&peers);
    return rc ? rc : sent;
}

/* ---- participant ----------------------------------------------------------------------------- */

/* What the cut needs, kept from the decode (twophase_part.h). */
struct commit_tp_array_cut {
    struct sluice_array a;
    struct sluice_tp_array_who *mine;
    size_t nmine;
    struct sluice_tp_array_who *who;
    size_t nwho;
    long own;
};

int commit_twophase_part_decode_array(struct cmsg *in, int me, struct commit_tp_part *out)
{
    struct sluice_tp_plan *p = &out->plan;
    struct sluice_array a;
    char err[256];
    const char *record = cmsg_get_str(in);
    if (in->bad || sluice_array_parse(record, &a, err, sizeof err) != 0 || a.nprocs == 0)
        return -EPROTO;
    uint32_t n = cmsg_get_u32(in);
    if (in->bad || (uint64_t)n * 28 > in->len)
        return -EPROTO;
    struct sluice_tp_array_who *mine = calloc(n ? n : 1, sizeof *mine), *who = NULL;
    out->n = p->nmembers = n;
    out->m = calloc(n ? n : 1, sizeof *out->m);
    p->direct = calloc(n ? n : 1, 1); /* all 0: a share holds shuffled members only */
    int rc = mine && out->m && p->direct ? 0 : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        struct commit_tp_member *mm = &out->m[i];
        mm->seq = cmsg_get_u64(in);
        mm->offset = cmsg_get_u64(in);
        mm->size = cmsg_get_u64(in);
        mm->member_rank = (int)cmsg_get_u32(in);
        mm->src = me;
        mm->writer = -1;
        mine[i] = (struct sluice_tp_array_who){mm->member_rank, me, i};
    }
    uint32_t nd = rc == 0 ? cmsg_get_u32(in) : 0;
    if (rc == 0 && (in->bad || (uint64_t)nd * 32 > in->len))
        rc = -EPROTO;
    if (rc == 0 && !(p->domains = calloc(nd ? nd : 1, sizeof *p->domains)))
        rc = -ENOMEM;
    p->ndomains = rc == 0 ? nd : 0;
    for (uint32_t g = 0; rc == 0 && g < nd; g++) {
        struct sluice_tp_domain *dm = &p->domains[g];
        commit_twophase_get_domain(in, dm);
        /* The cutting walks domains in file order: increasing and disjoint, or malformed. */
        if (dm->begin >= dm->end || dm->base > dm->begin || (g > 0 && p->domains[g - 1].end > dm->begin))
            rc = -EPROTO;
        if (dm->nrounds > p->max_rounds)
            p->max_rounds = dm->nrounds;
    }
    long own = rc == 0 ? sluice_tp_domain_of(p, me) : -1;
    uint32_t nwho = rc == 0 ? cmsg_get_u32(in) : 0;
    if (rc == 0 && (in->bad || (uint64_t)nwho * 8 > in->len || (nwho && own < 0)))
        rc = -EPROTO;
    if (rc == 0 && !(who = calloc(nwho ? nwho : 1, sizeof *who)))
        rc = -ENOMEM;
    for (uint32_t x = 0; rc == 0 && x < nwho; x++) {
        who[x].member_rank = (int)cmsg_get_u32(in);
        who[x].src = (int)cmsg_get_u32(in);
        who[x].local = COMMIT_TP_NOT_MINE;
        for (uint32_t i = 0; who[x].src == me && i < n; i++)
            if (mine[i].member_rank == who[x].member_rank)
                who[x].local = i;
        if (who[x].src == me && who[x].local == COMMIT_TP_NOT_MINE)
            rc = -EPROTO; /* a member of mine the share does not list */
    }
    uint32_t nq = rc == 0 ? cmsg_get_u32(in) : 0;
    if (rc == 0 && (in->bad || (uint64_t)nq * 24 > in->len || (nq && own < 0)))
        rc = -EPROTO;
    if (rc == 0 && !(p->requests = calloc(nq ? nq : 1, sizeof *p->requests)))
        rc = -ENOMEM;
    p->nrequests = rc == 0 ? nq : 0;
    for (uint32_t q = 0; rc == 0 && q < nq; q++) {
        struct sluice_tp_request *rq = &p->requests[q];
        rq->domain = (uint32_t)own;
        rq->round = cmsg_get_u32(in);
        rq->offset = cmsg_get_u64(in);
        rq->size = cmsg_get_u64(in);
        rq->full = (int)cmsg_get_u32(in);
    }
    if (rc == 0 && in->bad)
        rc = -EPROTO;
    if (rc == 0)
        rc = commit_twophase_get_peers(in, out);
    if (rc == 0 && !(out->cut = malloc(sizeof *out->cut)))
        rc = -ENOMEM;
    if (rc) {
        free(mine);
        free(who);
        commit_twophase_part_free(out);
        return rc;
    }
    *out->cut = (struct commit_tp_array_cut){a, mine, n, who, nwho, own};
    return 0;
}

void commit_twophase_part_cut_free(struct commit_tp_array_cut *cut)
{
    if (!cut)
        return;
    free(cut->mine);
    free(cut->who);
    free(cut);
}

int commit_twophase_part_cut_array(struct commit_tp_part *out)
{
    struct commit_tp_array_cut *c = out->cut;
    struct sluice_tp_plan *p = &out->plan;
    int rc = sluice_tp_array_share(&c->a, p->domains, p->ndomains, p->round_size, c->mine, c->nmine, c->own,
                                   c->who, c->nwho, &p->pieces, &p->npieces, &p->pieces_huge);
    if (rc == -EINVAL)
        rc = -EPROTO;
    for (size_t k = 0; rc == 0 && k < p->npieces; k++)
        p->shuffled_bytes += p->pieces[k].size;
    commit_twophase_part_cut_free(c);
    out->cut = NULL;
    if (rc)
        commit_twophase_part_free(out);
    return rc;
}
