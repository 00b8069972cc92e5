/* SPDX-License-Identifier: MIT */
/* What the command engine tracks (remote_engine.h): its commands in flight (by id, for the wait
 * lists of later ones), the uses of each buffer (so that a coherence transfer and the uses around
 * it are ordered), the user events standing for other ranks' commands (set when rank 0 NOTIFYs),
 * the commands known failed, and the events of failed commands kept until nothing can still
 * notify them. */
#include <stdlib.h>
#include <string.h>

#include "cl/serve/remote_engine.h"

#define BUCKETS 1024

struct use {
    cl_event ev;
    int write, transfer;
    struct use *next;
};
struct track {
    uint64_t root;
    struct use *uses;
    struct track *next;
};
struct rdep {
    uint64_t id;
    cl_context ctx;
    cl_event ue;
    struct rdep *next;
};
struct failed {
    uint64_t id;
    int64_t status;
    struct failed *next;
};

/* A user event standing in a transfer's wait list for an earlier use of its buffer, set
 * complete once that use ended, however it ended (sluice_eng_shield). */
struct shield {
    cl_event use, ue;
    int set;    /* ue set, by the use's callback or by the sweep (atomic) */
    int called; /* the callback is done with it (atomic): then the sweep frees it */
    int flushed;
    struct shield *next;
};
static struct shield *shields;

static struct eng_cmd *table[BUCKETS];
struct eng_cmd *sluice_eng_all;
static size_t inflight;
static struct track *tracks;
static struct rdep *rdeps;
static struct failed *failures;
static struct failed *notified; /* NOTIFYs that came while commands were deferred */

/* The events of a failed command (ev[0..nheld)) and every event that may still notify them
 * (ev[nheld..n)), all retained, until the sweep after the one that saw those done. */
struct held {
    size_t n, nheld;
    int seen;
    struct held *next;
    cl_event ev[];
};
static struct held *held;

void sluice_eng_forget_notified(void)
{
    while (notified != NULL) {
        struct failed *f = notified;
        notified = f->next;
        free(f);
    }
}

struct eng_cmd *sluice_eng_find(uint64_t id)
{
    for (struct eng_cmd *c = table[id % BUCKETS]; c != NULL; c = c->hnext)
        if (c->id == id)
            return c;
    return NULL;
}

void sluice_eng_insert(struct eng_cmd *c)
{
    c->hnext = table[c->id % BUCKETS];
    table[c->id % BUCKETS] = c;
    c->next = sluice_eng_all;
    c->prev = NULL;
    if (sluice_eng_all != NULL)
        sluice_eng_all->prev = c;
    sluice_eng_all = c;
    inflight++;
}

void sluice_eng_unlink(struct eng_cmd *c)
{
    for (struct eng_cmd **p = &table[c->id % BUCKETS]; *p != NULL; p = &(*p)->hnext)
        if (*p == c) {
            *p = c->hnext;
            break;
        }
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        sluice_eng_all = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    inflight--;
}

int sluice_eng_done_event(cl_event ev)
{
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        return 1;
    return st <= CL_COMPLETE;
}

struct track *sluice_eng_track_of(uint64_t root)
{
    for (struct track *t = tracks; t != NULL; t = t->next)
        if (t->root == root)
            return t;
    struct track *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->root = root;
    t->next = tracks;
    tracks = t;
    return t;
}

/* Drops the uses of t whose events completed. */
static void drop_finished_uses(struct track *t)
{
    for (struct use **p = &t->uses; *p != NULL;) {
        struct use *u = *p;
        if (sluice_eng_done_event(u->ev)) {
            api()->clReleaseEvent(u->ev);
            *p = u->next;
            free(u);
        } else {
            p = &u->next;
        }
    }
}

/* Drops finished uses, then adds to wl the ones a new use must wait for. */
void sluice_eng_track_deps(struct track *t, int write, int transfer, cl_event *wl, size_t *n)
{
    drop_finished_uses(t);
    for (struct use *u = t->uses; u != NULL; u = u->next) {
        int need = transfer ? (write || u->write) : (u->transfer && (u->write || write));
        if (need && *n < MAX_WAIT)
            wl[(*n)++] = u->ev;
    }
}

/* Drops finished uses everywhere and the tracks left empty (buffers released long ago). */
void sluice_eng_track_prune(void)
{
    for (struct track **pt = &tracks; *pt != NULL;) {
        struct track *t = *pt;
        drop_finished_uses(t);
        if (t->uses == NULL) {
            *pt = t->next;
            free(t);
        } else {
            pt = &t->next;
        }
    }
}

void sluice_eng_track_add(struct track *t, cl_event ev, int write, int transfer)
{
    struct use *u = malloc(sizeof *u);
    if (u == NULL || api()->clRetainEvent(ev) != CL_SUCCESS) {
        free(u);
        return;
    }
    *u = (struct use){ev, write, transfer, t->uses};
    t->uses = u;
}

/* *none: 1 when it completed already, -1 when it failed already (see failed_dep). */
cl_event sluice_eng_remote_dep(uint64_t id, cl_context ctx, int *none)
{
    for (struct failed *f = notified; f != NULL; f = f->next)
        if (f->id == id) {
            *none = f->status >= 0 ? 1 : -1;
            return NULL;
        }
    for (struct rdep *r = rdeps; r != NULL; r = r->next)
        if (r->id == id && r->ctx == ctx)
            return r->ue;
    struct rdep *r = calloc(1, sizeof *r);
    cl_int err = CL_SUCCESS;
    cl_event ue = r ? api()->clCreateUserEvent(ctx, &err) : NULL;
    if (ue == NULL) {
        free(r);
        return NULL;
    }
    *r = (struct rdep){id, ctx, ue, rdeps};
    rdeps = r;
    return ue;
}

/* A dependency known failed already. Waiting on a failed event does not work (PoCL leaves the
 * command queued forever), so such a command is failed without being enqueued. */
int sluice_eng_failed_dep(uint64_t id)
{
    for (struct failed *f = failures; f != NULL; f = f->next)
        if (f->id == id)
            return 1;
    return 0;
}

cl_int sluice_eng_wait_list_check(cl_event *wl, size_t *n, size_t *own, int release)
{
    cl_int r = CL_SUCCESS;
    size_t kept = 0, kept_own = 0;
    for (size_t i = 0; i < *n; i++) {
        cl_int st = CL_COMPLETE;
        int failed = api()->clGetEventInfo(wl[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                         CL_SUCCESS &&
                     st < 0;
        if (failed && i < *own)
            r = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        if (failed) {
            if (release)
                api()->clReleaseEvent(wl[i]);
            continue;
        }
        kept_own += i < *own;
        wl[kept++] = wl[i];
    }
    *n = kept;
    *own = kept_own;
    return r;
}

/* The use ended: its shield is set at once, on the implementation's thread (the loop would add a
 * wake-up to every move behind a kernel in flight: a 3-rank stencil's median went from 0.44 to
 * 0.62 s), and the loop flushes and frees it. */
static void CL_CALLBACK shield_ended(cl_event ev, cl_int st, void *arg)
{
    (void)ev;
    (void)st;
    struct shield *h = arg;
    if (!__atomic_exchange_n(&h->set, 1, __ATOMIC_ACQ_REL))
        api()->clSetUserEventStatus(h->ue, CL_COMPLETE);
    __atomic_store_n(&h->called, 1, __ATOMIC_RELEASE); /* (h may be freed from here on) */
    sluice_engine_wake();
}

cl_event sluice_eng_shield(cl_event use, cl_context ctx)
{
    cl_int st = CL_COMPLETE, err = CL_SUCCESS;
    if (api()->clGetEventInfo(use, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
        st <= CL_COMPLETE)
        return NULL; /* ended: nothing to wait for */
    struct shield *h = malloc(sizeof *h);
    cl_event ue = h != NULL ? api()->clCreateUserEvent(ctx, &err) : NULL;
    if (ue == NULL || api()->clRetainEvent(use) != CL_SUCCESS) {
        if (ue != NULL)
            api()->clReleaseEvent(ue);
        free(h);
        return use; /* (out of memory: the use itself, failures and all) */
    }
    *h = (struct shield){use, ue, 0, 0, 0, shields};
    shields = h;
    if (api()->clSetEventCallback(use, CL_COMPLETE, shield_ended, h) != CL_SUCCESS)
        h->called = 1; /* no callback: the sweep sets it */
    return ue;
}

static void flush_inflight(void);

void sluice_eng_shields_sweep(void)
{
    int flush = 0;
    for (struct shield **p = &shields; *p != NULL;) {
        struct shield *h = *p;
        cl_int st = CL_COMPLETE;
        int ended = api()->clGetEventInfo(h->use, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                        CL_SUCCESS ||
                    st <= CL_COMPLETE;
        /* No callback comes for a use its wait list failed (PoCL): set here. */
        if (ended && !__atomic_exchange_n(&h->set, 1, __ATOMIC_ACQ_REL))
            api()->clSetUserEventStatus(h->ue, CL_COMPLETE);
        if (!__atomic_load_n(&h->set, __ATOMIC_ACQUIRE)) {
            p = &h->next;
            continue;
        }
        if (!h->flushed)
            flush = h->flushed = 1;
        int called = __atomic_load_n(&h->called, __ATOMIC_ACQUIRE);
        if (!called && !(ended && st < 0)) {
            p = &h->next; /* its callback is still to come */
            continue;
        }
        api()->clReleaseEvent(h->ue);
        api()->clReleaseEvent(h->use);
        *p = h->next;
        if (called)
            free(h);
        /* else: failed without a callback; one that still came would find h (kept, as the
         * engine keeps failed commands' records), with `set` telling it to leave ue alone */
    }
    if (flush)
        flush_inflight();
}

/* After a user event of ours was set: flush the queues of commands in flight, which may wait
 * for it (some devices only look at their queues when flushed). */
static void flush_inflight(void)
{
    cl_command_queue seen[16];
    size_t n = 0;
    for (struct eng_cmd *c = sluice_eng_all; c != NULL; c = c->next) {
        size_t i = 0;
        while (i < n && seen[i] != c->q)
            i++;
        if (i < n || c->q == NULL)
            continue;
        api()->clFlush(c->q);
        if (n < 16)
            seen[n++] = c->q;
    }
}

void sluice_engine_notify(uint64_t id, int64_t status)
{
    pthread_mutex_lock(&sluice_eng_lock);
    if (sluice_eng_deferring()) {
        struct failed *f = malloc(sizeof *f);
        if (f != NULL) {
            *f = (struct failed){id, status, notified};
            notified = f;
        }
    }
    for (struct rdep **p = &rdeps; *p != NULL;) {
        struct rdep *r = *p;
        if (r->id == id) {
            api()->clSetUserEventStatus(r->ue, status < 0 ? (cl_int)status : CL_COMPLETE);
            api()->clReleaseEvent(r->ue);
            *p = r->next;
            free(r);
        } else {
            p = &r->next;
        }
    }
    flush_inflight();
    pthread_mutex_unlock(&sluice_eng_lock);
}

void sluice_engine_abandon(void)
{
    pthread_mutex_lock(&sluice_eng_lock);
    while (rdeps != NULL) {
        struct rdep *r = rdeps;
        api()->clSetUserEventStatus(r->ue, CL_DEVICE_NOT_AVAILABLE);
        api()->clReleaseEvent(r->ue);
        rdeps = r->next;
        free(r);
    }
    pthread_mutex_unlock(&sluice_eng_lock);
}

size_t sluice_engine_inflight(void)
{
    pthread_mutex_lock(&sluice_eng_lock);
    size_t n = inflight;
    pthread_mutex_unlock(&sluice_eng_lock);
    return n;
}

void sluice_eng_failed_add(uint64_t id, int64_t status)
{
    struct failed *f = malloc(sizeof *f);
    if (f != NULL) {
        *f = (struct failed){id, status, failures};
        failures = f;
    }
}

/* A command failed by its wait list while another event of that list was still running stays on
 * that event's notify list: PoCL before 7.0 keeps it there without a reference (pocl_create_event_sync
 * in lib/CL/pocl_util.c; fixed by PoCL commit 15b5538e0, "event: add retain event during event
 * sync"), and pocl_broadcast (lib/CL/devices/common.c) locks it when that event finishes. Freeing
 * it before then aborts a PoCL worker in pocl_lock_events_inorder ("Invalid argument") or notifies
 * whatever event took its memory. So a failed command's events are kept until every event that
 * may list them is done: its own wait list, every event of a command in flight (the queue's and
 * the buffers' implicit dependencies are among them) and every user event not set yet. PoCL sets
 * an event's status before it broadcasts (pocl_update_event_finished), so they are released one
 * sweep (100 ms) after all of those were seen done. Takes c's events and wait list. */
static void hold_add(struct held *h, size_t cap, cl_event e, int retain)
{
    if (e == NULL || h->n >= cap) /* (cap counts every event that can come) */
        return;
    if (retain && (sluice_eng_done_event(e) || api()->clRetainEvent(e) != CL_SUCCESS))
        return;
    h->ev[h->n++] = e;
}

void sluice_eng_hold_failed(struct eng_cmd *c)
{
    if (c->ev == NULL && c->map_ev == NULL && c->piece_ev == NULL)
        return; /* failed before anything was enqueued */
    size_t cap = 2 + c->npieces + c->nwait;
    for (struct eng_cmd *d = sluice_eng_all; d != NULL; d = d->next)
        cap += 2 + (d->piece_ev != NULL ? d->npieces : 0);
    for (struct rdep *r = rdeps; r != NULL; r = r->next)
        cap++;
    struct held *h = malloc(sizeof *h + cap * sizeof(cl_event));
    if (h == NULL) { /* out of memory: its events stay (never released) rather than freed too early */
        c->ev = c->map_ev = NULL;
        free(c->piece_ev);
        c->piece_ev = NULL;
        return;
    }
    *h = (struct held){0, 0, 0, held};
    hold_add(h, cap, c->ev, 0);
    hold_add(h, cap, c->map_ev, 0);
    for (size_t i = 0; c->piece_ev != NULL && i < c->npieces; i++)
        hold_add(h, cap, c->piece_ev[i], 0);
    h->nheld = h->n;
    c->ev = c->map_ev = NULL;
    free(c->piece_ev);
    c->piece_ev = NULL;
    for (size_t i = 0; i < c->nwait; i++)
        hold_add(h, cap, c->wait[i], 0); /* its references move here */
    c->nwait = 0;
    for (struct eng_cmd *d = sluice_eng_all; d != NULL; d = d->next) {
        hold_add(h, cap, d->ev, 1);
        hold_add(h, cap, d->map_ev, 1);
        for (size_t i = 0; d->piece_ev != NULL && i < d->npieces; i++)
            hold_add(h, cap, d->piece_ev[i], 1);
    }
    for (struct rdep *r = rdeps; r != NULL; r = r->next)
        hold_add(h, cap, r->ue, 1);
    held = h;
}

/* Every 100 ms (sluice_engine_progress). */
void sluice_eng_held_sweep(void)
{
    for (struct held **p = &held; *p != NULL;) {
        struct held *h = *p;
        if (!h->seen) {
            size_t i = h->nheld;
            while (i < h->n && sluice_eng_done_event(h->ev[i]))
                i++;
            h->seen = i == h->n;
            p = &h->next;
            continue;
        }
        for (size_t i = 0; i < h->n; i++)
            api()->clReleaseEvent(h->ev[i]);
        *p = h->next;
        free(h);
    }
}
