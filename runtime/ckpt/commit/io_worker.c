/* SPDX-License-Identifier: MIT */
/* The commit's I/O threads (io_worker.h). Each lane's thread starts on its first task, is
 * detached and lives as long as the process; a forked child starts its own on its first task. */
#include "ckpt/commit/io_worker.h"

#include "common/fd_guard.h"

#include "progress/progress.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

static struct lane {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    struct sluice_io_task *head, *tail;
    int started;
} lanes[SLUICE_IO_LANES] = {
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0},
};
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void *io_main(void *arg)
{
    struct lane *l = arg;
    sluice_fd_guard_thread_enter();
    for (;;) {
        pthread_mutex_lock(&l->lock);
        while (!l->head)
            pthread_cond_wait(&l->cv, &l->lock);
        struct sluice_io_task *t = l->head;
        l->head = t->next;
        if (!l->head)
            l->tail = NULL;
        pthread_mutex_unlock(&l->lock);
        t->run(t);
        __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
        sluice_progress_wake();
    }
    return NULL;
}

/* The child has no I/O thread and none of the parent's tasks. */
static void forget_in_child(void)
{
    for (int i = 0; i < SLUICE_IO_LANES; i++) {
        pthread_mutex_init(&lanes[i].lock, NULL);
        pthread_cond_init(&lanes[i].cv, NULL);
        lanes[i].head = lanes[i].tail = NULL;
        lanes[i].started = 0;
    }
}

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}

void sluice_io_submit(enum sluice_io_lane lane, struct sluice_io_task *t)
{
    struct lane *l = &lanes[lane];
    pthread_once(&fork_once, install_fork_handler);
    t->done = 0;
    t->next = NULL;
    pthread_mutex_lock(&l->lock);
    if (!l->started) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old); /* the program's signals are not ours */
        l->started = pthread_create(&th, &attr, io_main, l) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!l->started) {
        pthread_mutex_unlock(&l->lock);
        t->run(t);
        __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
        return;
    }
    if (l->tail)
        l->tail->next = t;
    else
        l->head = t;
    l->tail = t;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->lock);
}

void sluice_io_fifo_submit(struct sluice_io_fifo *q, enum sluice_io_lane lane, struct sluice_io_task *t)
{
    t->after = NULL;
    if (q->tail)
        q->tail->after = t;
    else
        q->head = t;
    q->tail = t;
    q->n++;
    sluice_io_submit(lane, t);
}

struct sluice_io_task *sluice_io_fifo_take(struct sluice_io_fifo *q)
{
    struct sluice_io_task *t = q->head;
    if (!t || !sluice_io_done(t))
        return NULL;
    q->head = t->after;
    if (!q->head)
        q->tail = NULL;
    q->n--;
    return t;
}
