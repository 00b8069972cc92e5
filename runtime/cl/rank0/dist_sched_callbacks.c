/* SPDX-License-Identifier: MIT */
/* Rank 0's scheduler: the program's event callbacks (clSetEventCallback) and the records whose last
 * reference went, both handled outside the scheduler's lock (a callback may call OpenCL; freeing a
 * record may release a queue or buffer, which talks to other ranks), and then the waiters woken. */
#include <pthread.h>
#include <stdlib.h>

#include "cl/rank0/dist_sched_internal.h"

struct pending_cb *dist_sched_to_call;
struct dist_event *dist_sched_graveyard; /* records whose last reference went */
int dist_sched_wake_waiters;
/* Bumped where waiters are woken: a waiter polls it before it sleeps (wait_locked). */
unsigned dist_sched_wake_gen;

void dist_sched_run_callbacks(void)
{
    for (;;) {
        pthread_mutex_lock(&dist_sched_lock);
        struct pending_cb *p = dist_sched_to_call;
        dist_sched_to_call = NULL;
        struct dist_event *dead = dist_sched_graveyard;
        dist_sched_graveyard = NULL;
        if (p == NULL && dead == NULL && dist_sched_wake_waiters) {
            dist_sched_wake_waiters = 0;
            __atomic_add_fetch(&dist_sched_wake_gen, 1, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&dist_sched_done);
        }
        pthread_mutex_unlock(&dist_sched_lock);
        if (p == NULL && dead == NULL)
            return;
        while (dead != NULL) {
            struct dist_event *n = dead->mnext;
            if (dead->hold != NULL)
                dist_mem_unref(dead->hold);
            if (dead->queue != NULL)
                dist_queue_unref(dead->queue);
            free(dead->free_after);
            free(dead);
            dead = n;
        }
        struct pending_cb *rev = NULL; /* in registration order */
        while (p != NULL) {
            struct pending_cb *n = p->next;
            p->next = rev;
            rev = p;
            p = n;
        }
        while (rev != NULL) {
            struct pending_cb *n = rev->next;
            rev->cb->fn((cl_event)rev->e, rev->status, rev->cb->user_data);
            free(rev->cb);
            dist_sched_release(rev->e);
            free(rev);
            rev = n;
        }
    }
}

cl_int dist_sched_callback(struct dist_event *e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                           void *user_data);
cl_int dist_sched_callback(struct dist_event *e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                           void *user_data)
{
    struct dist_event_cb *cb = malloc(sizeof *cb);
    if (cb == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    *cb = (struct dist_event_cb){type, fn, user_data, NULL};
    pthread_mutex_lock(&dist_sched_lock);
    /* Reached already (commands are submitted when enqueued; RUNNING is reported with COMPLETE):
     * called now, from this thread. */
    if (e->status <= type) {
        struct pending_cb *p = malloc(sizeof *p);
        if (p == NULL) {
            pthread_mutex_unlock(&dist_sched_lock);
            free(cb);
            return CL_OUT_OF_HOST_MEMORY;
        }
        *p = (struct pending_cb){cb, e, e->status < 0 ? e->status : type, dist_sched_to_call};
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        dist_sched_to_call = p;
    } else {
        /* at the end of the list: called in registration order */
        struct dist_event_cb **pp = &e->cbs;
        while (*pp != NULL)
            pp = &(*pp)->next;
        *pp = cb;
    }
    pthread_mutex_unlock(&dist_sched_lock);
    dist_sched_run_callbacks();
    return CL_SUCCESS;
}
