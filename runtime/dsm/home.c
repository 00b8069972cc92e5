/* SPDX-License-Identifier: MIT */
/* The home side that every protocol shares: a record per chunk (or signal) homed on this
 * rank, created by the first request that names its size; lookups (answered once the chunk
 * has been written); subscriptions and publication. Protocol messages go to the chunk's
 * protocol, which serves one request at a time per chunk and queues the others here. */
#include <stdlib.h>
#include <string.h>

#include "dsm/dsm.h"

/* Finds (or, with create, makes) the record of addr. A record may be unsized (size 0) when a
 * lookup or a subscription comes before the first access: that access sizes it. */
struct dsm_home *dsm_home_get(uint64_t addr, uint32_t kind, bool create)
{
    struct dsm_home_key k = {.addr = addr, .kind = kind};
    struct dsm_home *h = NULL;
    HASH_FIND(hh, D.homes, &k, sizeof k, h);
    if (h || !create)
        return h;
    h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->key = k;
    h->owner = -1;
    h->last_writer = -1;
    h->sharers = calloc((size_t)D.size, 1);
    if (!h->sharers) {
        free(h);
        return NULL;
    }
    HASH_ADD(hh, D.homes, key, sizeof h->key, h);
    return h;
}

int dsm_home_size(struct dsm_home *h, size_t size, int proto)
{
    if (h->size == size && (h->data || size == 0))
        return 0;
    if (h->size != 0)
        return SLUICE_DSM_ESIZE;
    h->data = calloc(1, size);
    if (!h->data)
        return SLUICE_DSM_ENOMEM;
    h->size = size;
    h->proto = proto;
    return 0;
}

void dsm_home_queue(struct dsm_home *h, const struct dsm_msg *m, const void *payload, size_t len)
{
    struct dsm_queued *q = calloc(1, sizeof *q);
    void *p = len ? malloc(len) : NULL;
    if (!q || (len && !p)) {
        free(q);
        free(p);
        dsm_fail(SLUICE_DSM_ENOMEM, "home of chunk @%lu: out of memory queueing a request",
                 (unsigned long)m->addr);
        return;
    }
    q->m = *m;
    if (len)
        memcpy(p, payload, len);
    q->payload = p;
    q->len = len;
    if (h->queue_tail)
        h->queue_tail->next = q;
    else
        h->queue = q;
    h->queue_tail = q;
}

void dsm_home_run_queue(struct dsm_home *h)
{
    while (h->busy_type == 0 && h->queue) {
        struct dsm_queued *q = h->queue;
        h->queue = q->next;
        if (!h->queue)
            h->queue_tail = NULL;
        dsm_protocol(h->proto)->home_msg(&q->m, q->payload, q->len, q->m.src);
        free(q->payload);
        free(q);
    }
}

static void reply(int dst, uint32_t type, const struct dsm_home *h, uint64_t addr, uint32_t kind)
{
    struct dsm_msg r = {.type = type, .kind = (uint16_t)kind, .addr = addr};
    if (h) {
        r.size = h->size;
        r.version = h->version;
        r.proto = (uint16_t)h->proto;
    }
    dsm_send(dst, &r, NULL, 0);
}

static void publish(struct dsm_home *h)
{
    if (!h->subs)
        return;
    for (int r = 0; r < D.size; r++)
        if (h->subs[r] > 0) {
            struct dsm_msg p = {
                .type = M_PUBLISH, .kind = (uint16_t)h->key.kind, .addr = h->key.addr, .version = h->version};
            dsm_send(r, &p, NULL, 0);
        }
}

void dsm_home_written(struct dsm_home *h)
{
    for (size_t i = 0; i < h->nwaiters; i++)
        reply(h->lookup_waiters[i], M_LOOKUP_REPLY, h, h->key.addr, K_CHUNK);
    free(h->lookup_waiters);
    h->lookup_waiters = NULL;
    h->nwaiters = 0;
    publish(h);
}

static void lookup(const struct dsm_msg *m, int src)
{
    struct dsm_home *h = dsm_home_get(m->addr, K_CHUNK, true);
    if (!h)
        return;
    if (h->version > 0) {
        reply(src, M_LOOKUP_REPLY, h, m->addr, K_CHUNK);
        return;
    }
    int *w = realloc(h->lookup_waiters, (h->nwaiters + 1) * sizeof *w);
    if (!w)
        return;
    h->lookup_waiters = w;
    w[h->nwaiters++] = src;
}

static void subscribe(const struct dsm_msg *m, int src, int delta)
{
    struct dsm_home *h = dsm_home_get(m->addr, m->kind, true);
    if (!h)
        return;
    if (!h->subs)
        h->subs = calloc((size_t)D.size, sizeof *h->subs);
    if (!h->subs)
        return;
    h->subs[src] += delta;
    if (h->subs[src] < 0)
        h->subs[src] = 0;
    if (delta > 0)
        reply(src, M_SUB_ACK, NULL, m->addr, m->kind);
}

void dsm_home_msg(const struct dsm_msg *m, const void *payload, size_t len, int src)
{
    switch (m->type) {
    case M_LOOKUP:
        lookup(m, src);
        return;
    case M_SUB:
        subscribe(m, src, 1);
        return;
    case M_UNSUB:
        subscribe(m, src, -1);
        return;
    case M_SIGNAL: {
        struct dsm_home *h = dsm_home_get(m->addr, K_SIGNAL, true);
        if (h) {
            h->version++;
            publish(h);
        }
        return;
    }
    default:
        dsm_protocol(m->proto)->home_msg(m, payload, len, src);
    }
}

void dsm_home_free_all(void)
{
    struct dsm_home *h, *tmp;
    HASH_ITER(hh, D.homes, h, tmp)
    {
        HASH_DEL(D.homes, h);
        while (h->queue) {
            struct dsm_queued *q = h->queue;
            h->queue = q->next;
            free(q->payload);
            free(q);
        }
        free(h->lookup_waiters);
        free(h->subs);
        free(h->sharers);
        free(h->data);
        free(h);
    }
}
