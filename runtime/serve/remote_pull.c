/* SPDX-License-Identifier: MIT */
/* Pulled writes (remote_pull.h): a few threads copy the pieces of a write out of rank 0's memory,
 * in order, each piece marked in place when its copy ends; the serving loop enqueues each
 * piece's device copy as it comes (remote_transfer.c), as it does for pieces MPI delivered. */
#include "serve/remote_pull.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "serve/remote_proto.h"
#include "threads/helper_threads.h"
#include "trace/trace.h"

/* Four copies at once reached 15-27 GB/s on the GPU machine, eight no more. */
#define PULL_THREADS_MAX 4

struct sluice_pull {
    unsigned char *to;
    uint64_t from, id;
    size_t size, npieces;
    size_t next;  /* the next piece to take (under pull_lock) */
    int copying;  /* pieces being copied now (under pull_lock) */
    int stopped;  /* no more pieces are taken (under pull_lock) */
    int *state;   /* per piece: 0 moving, 1 in place, -errno (atomic) */
    size_t left;  /* pieces not yet in place or failed (atomic) */
    uint64_t t0;  /* when the copy started */
    struct sluice_pull *queued; /* the next write with pieces to take */
};

static pthread_mutex_t pull_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pull_work = PTHREAD_COND_INITIALIZER; /* a piece to take */
static pthread_cond_t pull_idle = PTHREAD_COND_INITIALIZER; /* a piece's copy ended */
static struct sluice_pull *queue_head;
static int threads_started, nthreads;
static int peer_pid;

int sluice_pull_probe(int pid, uint64_t addr, uint64_t nonce)
{
    static int answer = -1;
    if (answer >= 0)
        return answer;
    uint64_t got = ~nonce;
    struct iovec here = {&got, sizeof got}, there = {(void *)(uintptr_t)addr, sizeof got};
    answer = pid > 0 && addr != 0 && process_vm_readv(pid, &here, 1, &there, 1, 0) == (ssize_t)sizeof got &&
             got == nonce;
    if (answer)
        peer_pid = pid;
    return answer;
}

/* Copies [off, off + k) of the write; 1, or -errno. */
static int copy_piece(const struct sluice_pull *p, size_t off, size_t k)
{
    while (k > 0) {
        struct iovec here = {p->to + off, k}, there = {(void *)(uintptr_t)(p->from + off), k};
        ssize_t n = process_vm_readv(peer_pid, &here, 1, &there, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EFAULT;
        off += (size_t)n;
        k -= (size_t)n;
    }
    return 1;
}

static void piece_done(struct sluice_pull *p, size_t i, int st)
{
    __atomic_store_n(&p->state[i], st, __ATOMIC_RELEASE);
    if (__atomic_sub_fetch(&p->left, 1, __ATOMIC_ACQ_REL) == 0 && sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CL_DIST_PULL, 0, p->t0, sluice_now_ns() - p->t0, p->id, p->size,
                            (uint64_t)(p->npieces > 1 ? nthreads : 0));
}

static void *pull_main(void *arg)
{
    (void)arg;
    sluice_helper_thread_enter("sluice-pull");
    pthread_mutex_lock(&pull_lock);
    for (;;) {
        struct sluice_pull *p = queue_head;
        if (p == NULL) {
            pthread_cond_wait(&pull_work, &pull_lock);
            continue;
        }
        size_t i = p->next++;
        if (p->next >= p->npieces) /* every piece taken: the next write's turn */
            queue_head = p->queued;
        p->copying++;
        pthread_mutex_unlock(&pull_lock);
        size_t k, off = sluice_remote_piece(p->size, i, &k);
        piece_done(p, i, copy_piece(p, off, k));
        pthread_mutex_lock(&pull_lock);
        if (--p->copying == 0 && p->stopped)
            pthread_cond_broadcast(&pull_idle);
    }
    return NULL; /* (never: the threads live as long as the serving rank) */
}

/* The pull threads, once: as many as the CPUs this process may use, up to PULL_THREADS_MAX. */
static void start_threads(void)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int want = cpus < 1 ? 1 : cpus > PULL_THREADS_MAX ? PULL_THREADS_MAX : cpus;
    threads_started = 1;
    for (int i = 0; i < want; i++) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, pull_main, NULL) == 0)
            nthreads++;
        pthread_attr_destroy(&a);
    }
}

struct sluice_pull *sluice_pull_start(unsigned char *to, uint64_t from, size_t size, uint64_t id)
{
    struct sluice_pull *p = calloc(1, sizeof *p);
    size_t n = sluice_remote_pieces(size);
    if (p == NULL || (p->state = calloc(n, sizeof *p->state)) == NULL) {
        free(p);
        return NULL;
    }
    *p = (struct sluice_pull){.to = to, .from = from, .id = id, .size = size, .npieces = n,
                              .state = p->state, .left = n, .t0 = sluice_now_ns()};
    pthread_mutex_lock(&pull_lock);
    if (!threads_started && n > 1)
        start_threads();
    if (n == 1 || nthreads == 0) { /* one piece (or no thread): no hand-off is worth its wake-up */
        p->next = n;
        pthread_mutex_unlock(&pull_lock);
        for (size_t i = 0; i < n; i++) {
            size_t k, off = sluice_remote_piece(size, i, &k);
            piece_done(p, i, copy_piece(p, off, k));
        }
        return p;
    }
    struct sluice_pull **tail = &queue_head;
    while (*tail != NULL)
        tail = &(*tail)->queued;
    *tail = p;
    pthread_cond_broadcast(&pull_work);
    pthread_mutex_unlock(&pull_lock);
    return p;
}

int sluice_pull_piece(const struct sluice_pull *p, size_t i)
{
    return __atomic_load_n(&p->state[i], __ATOMIC_ACQUIRE);
}

void sluice_pull_end(struct sluice_pull *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&pull_lock);
    p->stopped = 1;
    if (p->next < p->npieces) { /* pieces never taken: out of the queue */
        p->next = p->npieces;
        for (struct sluice_pull **q = &queue_head; *q != NULL; q = &(*q)->queued)
            if (*q == p) {
                *q = p->queued;
                break;
            }
    }
    while (p->copying > 0)
        pthread_cond_wait(&pull_idle, &pull_lock);
    pthread_mutex_unlock(&pull_lock);
    free(p->state);
    free(p);
}
