/* SPDX-License-Identifier: MIT */
/* Publish-subscribe. The home of a chunk (or signal id) counts the subscriptions of each rank
 * and sends one M_PUBLISH per subscribed rank for every write-back (or signal); the rank keeps
 * it in its pending list and runs every local subscription of that chunk made before the
 * event arrived, once. Handlers run without D.lock, on the thread running the loop. */
#include <stdlib.h>

#include "dsm/dsm.h"

static size_t local_subs(uint32_t kind, unsigned long addr)
{
    size_t n = 0;
    for (struct dsm_sub *s = D.subs; s; s = s->next)
        n += s->active && s->kind == kind && s->addr == addr;
    return n;
}

void dsm_pubsub_msg(const struct dsm_msg *m, int src)
{
    (void)src;
    if (local_subs(m->kind, m->addr) == 0)
        return; /* unsubscribed since: the event is nobody's */
    struct dsm_event *e = calloc(1, sizeof *e);
    if (!e) {
        dsm_fail(SLUICE_DSM_ENOMEM, "out of memory: event of @%lu lost", (unsigned long)m->addr);
        return;
    }
    e->kind = m->kind;
    e->addr = m->addr;
    e->seq = D.sub_seq;
    if (D.ev_tail)
        D.ev_tail->next = e;
    else
        D.ev_head = e;
    D.ev_tail = e;
}

/* Subscriptions waiting for their M_SUB_ACK (several threads may subscribe at once). */
struct pending_sub {
    uint32_t kind;
    unsigned long addr;
    bool acked;
    struct pending_sub *next;
};
static struct pending_sub *pending_subs;

static bool sub_ack_arrived(void *arg)
{
    return ((struct pending_sub *)arg)->acked;
}

void dsm_pubsub_ack(const struct dsm_msg *m)
{
    for (struct pending_sub *p = pending_subs; p; p = p->next)
        if (p->kind == m->kind && p->addr == m->addr && !p->acked) {
            p->acked = true;
            return;
        }
}

int dsm_subscribe(uint32_t kind, unsigned long addr, sluice_dsm_handler fn, void *args)
{
    if (!fn)
        return dsm_fail(SLUICE_DSM_EINVAL, "subscribe to @%lu: no handler", addr);
    bool first = local_subs(kind, addr) == 0;
    struct dsm_sub *s = calloc(1, sizeof *s);
    if (!s)
        return dsm_fail(SLUICE_DSM_ENOMEM, "subscribe to @%lu: out of memory", addr);
    if (first) {
        /* Acknowledged, so that every write-back the home sees from now on is published. */
        struct dsm_msg m = {.type = M_SUB, .kind = (uint16_t)kind, .addr = addr};
        struct pending_sub p = {.kind = kind, .addr = addr, .next = pending_subs};
        pending_subs = &p;
        int rc = dsm_send(dsm_home_of(addr), &m, NULL, 0);
        if (rc == 0)
            rc = dsm_wait(sub_ack_arrived, &p,
                          kind == K_SIGNAL ? "subscribe to signal" : "subscribe to chunk", addr);
        for (struct pending_sub **pp = &pending_subs; *pp; pp = &(*pp)->next)
            if (*pp == &p) {
                *pp = p.next;
                break;
            }
        if (rc) {
            free(s);
            return rc;
        }
    }
    s->kind = kind;
    s->addr = addr;
    s->fn = fn;
    s->args = args;
    s->active = true;
    s->seq = ++D.sub_seq;
    s->next = D.subs;
    D.subs = s;
    D.nsubs_active++;
    return 0;
}

int dsm_unsubscribe(uint32_t kind, unsigned long addr, sluice_dsm_handler fn, void *args)
{
    for (struct dsm_sub *s = D.subs; s; s = s->next) {
        if (!s->active || s->kind != kind || s->addr != addr || s->fn != fn || s->args != args)
            continue;
        s->active = false;
        D.nsubs_active--;
        if (local_subs(kind, addr) == 0) {
            struct dsm_msg m = {.type = M_UNSUB, .kind = (uint16_t)kind, .addr = addr};
            return dsm_send(dsm_home_of(addr), &m, NULL, 0);
        }
        return 0;
    }
    return dsm_fail(SLUICE_DSM_ENOENT, "unsubscribe from @%lu: no such subscription", addr);
}

int dsm_signal(unsigned long id)
{
    struct dsm_msg m = {.type = M_SIGNAL, .kind = K_SIGNAL, .addr = id};
    return dsm_send(dsm_home_of(id), &m, NULL, 0);
}

/* Drops inactive subscriptions that no running dispatch still walks. */
static void sweep(void)
{
    struct dsm_sub **pp = &D.subs;
    while (*pp) {
        struct dsm_sub *s = *pp;
        if (!s->active) {
            *pp = s->next;
            free(s);
        } else {
            pp = &s->next;
        }
    }
}

static int dispatch_depth;

/* Runs the handlers of one pending event; called and returns with D.lock held. */
static bool run_one(void)
{
    struct dsm_event *e = D.ev_head;
    if (!e)
        return false;
    D.ev_head = e->next;
    if (!D.ev_head)
        D.ev_tail = NULL;
    dispatch_depth++;
    for (struct dsm_sub *s = D.subs; s; s = s->next) {
        if (!s->active || s->kind != e->kind || s->addr != e->addr || s->seq > e->seq)
            continue;
        sluice_dsm_handler fn = s->fn;
        void *args = s->args;
        pthread_mutex_unlock(&D.lock);
        fn(e->addr, args);
        pthread_mutex_lock(&D.lock);
    }
    dispatch_depth--;
    if (dispatch_depth == 0)
        sweep();
    free(e);
    return true;
}

int dsm_poll_events(void)
{
    dsm_poll();
    int n = 0;
    while (run_one())
        n++;
    return n;
}

static bool has_event(void *arg)
{
    (void)arg;
    return D.ev_head != NULL || D.nsubs_active == 0;
}

int dsm_loop(void)
{
    for (;;) {
        while (run_one())
            ;
        if (D.nsubs_active == 0)
            return 0;
        int rc = dsm_wait(has_event, NULL, "event loop waiting for an event", 0);
        if (rc)
            return rc;
    }
}

void dsm_pubsub_free_all(void)
{
    while (D.ev_head) {
        struct dsm_event *e = D.ev_head;
        D.ev_head = e->next;
        free(e);
    }
    D.ev_tail = NULL;
    struct dsm_sub *s = D.subs;
    while (s) {
        struct dsm_sub *n = s->next;
        free(s);
        s = n;
    }
    D.subs = NULL;
    D.nsubs_active = 0;
}
