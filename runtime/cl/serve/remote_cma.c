/* SPDX-License-Identifier: MIT */
/* Copies between rank 0's memory and this serving rank's (remote_cma.h). Queued commands give
 * their ready pieces, in order, to a few copy threads; each piece is marked when its copy ends,
 * and the serving loop goes on with it (a write: its device copy; a read: DONE once all are in)
 * as it does for pieces MPI moved. */
#include "cl/serve/remote_cma.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "cl/serve/remote_proto.h"
#include "threads/helper_threads.h"
#include "trace/trace.h"

/* Four copies at once reached 15-27 GB/s on the GPU machine, eight no more. */
#define CMA_THREADS_MAX 4

/* Out of work, a copy thread polls (yielding its core) this long before it sleeps: a program's
 * transfers often come one after another, and a wake-up from the condition variable cost more
 * than a 256 KiB piece's copy. */
#define CMA_HOT_NS 200000u

struct sluice_cma {
    unsigned char *local;
    uint64_t remote, id;
    size_t size, npieces;
    int to_rank0;
    size_t next;  /* the next piece to take (under cma_lock) */
    size_t ready; /* pieces that may be taken (under cma_lock) */
    int copying;  /* pieces being copied now (under cma_lock) */
    int queued;   /* in the queue (under cma_lock) */
    int *state;   /* per piece: 0 not yet, 1 copied, -errno (atomic) */
    size_t left;  /* pieces neither copied nor failed (atomic) */
    uint64_t t0;  /* when the first piece was ready */
    struct sluice_cma *qnext;
};

static pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cma_work = PTHREAD_COND_INITIALIZER; /* a piece to take */
static pthread_cond_t cma_idle = PTHREAD_COND_INITIALIZER; /* a piece's copy ended */
static struct sluice_cma *queue;                           /* commands with pieces to copy */
static int has_work;                                       /* a piece may be taken (atomic hint) */
static int threads_started, nthreads;
static int rank0_pid;

int sluice_cma_probe(int pid, uint64_t addr, uint64_t nonce)
{
    static int answer = -1;
    if (answer >= 0)
        return answer;
    uint64_t got = ~nonce;
    struct iovec here = {&got, sizeof got}, there = {(void *)(uintptr_t)addr, sizeof got};
    answer = pid > 0 && addr != 0 && process_vm_readv(pid, &here, 1, &there, 1, 0) == (ssize_t)sizeof got &&
             got == nonce;
    if (answer)
        rank0_pid = pid;
    return answer;
}

/* Copies [off, off + k) of x; 1, or -errno. */
static int copy_piece(const struct sluice_cma *x, size_t off, size_t k)
{
    while (k > 0) {
        struct iovec here = {x->local + off, k}, there = {(void *)(uintptr_t)(x->remote + off), k};
        ssize_t n = x->to_rank0 ? process_vm_writev(rank0_pid, &here, 1, &there, 1, 0)
                                : process_vm_readv(rank0_pid, &here, 1, &there, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EFAULT;
        off += (size_t)n;
        k -= (size_t)n;
    }
    return 1;
}

static void piece_done(struct sluice_cma *x, size_t i, int st)
{
    __atomic_store_n(&x->state[i], st, __ATOMIC_RELEASE);
    if (__atomic_sub_fetch(&x->left, 1, __ATOMIC_ACQ_REL) == 0 && sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CL_DIST_CMA, 0, x->t0, sluice_now_ns() - x->t0, x->id, x->size,
                            (uint64_t)x->to_rank0);
}

static void unqueue(struct sluice_cma *x)
{
    for (struct sluice_cma **q = &queue; *q != NULL; q = &(*q)->qnext)
        if (*q == x) {
            *q = x->qnext;
            break;
        }
    x->queued = 0;
}

static void update_hint(void)
{
    int any = 0;
    for (struct sluice_cma *x = queue; x != NULL && !any; x = x->qnext)
        any = x->next < x->ready;
    __atomic_store_n(&has_work, any, __ATOMIC_RELAXED);
}

/* Takes the next ready piece of the first queued command that has one and copies it (called and
 * returning with cma_lock held); 0 when there is none. */
static int copy_next(void)
{
    struct sluice_cma *x = queue;
    while (x != NULL && x->next >= x->ready)
        x = x->qnext;
    if (x == NULL)
        return 0;
    size_t i = x->next++;
    if (x->next >= x->npieces) /* every piece taken */
        unqueue(x);
    update_hint();
    x->copying++;
    pthread_mutex_unlock(&cma_lock);
    size_t k, off = sluice_remote_piece(x->size, i, &k);
    piece_done(x, i, copy_piece(x, off, k));
    pthread_mutex_lock(&cma_lock);
    if (--x->copying == 0)
        pthread_cond_broadcast(&cma_idle);
    return 1;
}

static void *cma_main(void *arg)
{
    (void)arg;
    sluice_helper_thread_enter("sluice-cma");
    pthread_mutex_lock(&cma_lock);
    for (;;) {
        if (copy_next())
            continue;
        pthread_mutex_unlock(&cma_lock);
        uint64_t t0 = sluice_now_ns();
        while (!__atomic_load_n(&has_work, __ATOMIC_RELAXED) && sluice_now_ns() - t0 < CMA_HOT_NS)
            sched_yield();
        pthread_mutex_lock(&cma_lock);
        if (!has_work)
            pthread_cond_wait(&cma_work, &cma_lock);
    }
    return NULL; /* (never: the threads live as long as the serving rank) */
}

/* The copy threads, once: as many as the CPUs this process may use, up to CMA_THREADS_MAX. */
static void start_threads(void)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int want = cpus < 1 ? 1 : cpus > CMA_THREADS_MAX ? CMA_THREADS_MAX : cpus;
    threads_started = 1;
    for (int i = 0; i < want; i++) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, cma_main, NULL) == 0)
            nthreads++;
        pthread_attr_destroy(&a);
    }
}

/* Makes pieces below `ready` copyable (called with cma_lock held, returns without it). */
static void give(struct sluice_cma *x, size_t ready)
{
    if (ready > x->npieces)
        ready = x->npieces;
    if (ready <= x->ready || x->next >= x->npieces) {
        pthread_mutex_unlock(&cma_lock);
        return;
    }
    int first = x->ready == 0;
    if (first)
        x->t0 = sluice_now_ns();
    x->ready = ready;
    if (x->npieces == 1 || nthreads == 0) { /* no hand-off is worth its wake-up */
        size_t from = x->next;
        x->next = ready;
        if (x->next >= x->npieces)
            unqueue(x);
        x->copying++;
        pthread_mutex_unlock(&cma_lock);
        for (size_t i = from; i < ready; i++) {
            size_t k, off = sluice_remote_piece(x->size, i, &k);
            piece_done(x, i, copy_piece(x, off, k));
        }
        pthread_mutex_lock(&cma_lock);
        if (--x->copying == 0)
            pthread_cond_broadcast(&cma_idle);
        pthread_mutex_unlock(&cma_lock);
        return;
    }
    update_hint();
    pthread_cond_broadcast(&cma_work);
    /* A write's first piece is copied here while the threads wake up. Not a read's: its pieces
     * come one by one as the device has read them, and copying them here kept the serving loop
     * from noticing the next ones (16 MiB reads at 0.6-0.8 of MPI's rate, not 0.8-0.95). */
    if (first && !x->to_rank0)
        copy_next();
    pthread_mutex_unlock(&cma_lock);
}

struct sluice_cma *sluice_cma_start(unsigned char *local, uint64_t remote, size_t size, uint64_t id,
                                    int to_rank0, size_t ready)
{
    struct sluice_cma *x = calloc(1, sizeof *x);
    size_t n = sluice_remote_pieces(size);
    int *state = calloc(n, sizeof *state);
    if (x == NULL || state == NULL) {
        free(x);
        free(state);
        return NULL;
    }
    *x = (struct sluice_cma){.local = local,
                             .remote = remote,
                             .id = id,
                             .size = size,
                             .npieces = n,
                             .to_rank0 = to_rank0,
                             .state = state,
                             .left = n,
                             .queued = 1};
    pthread_mutex_lock(&cma_lock);
    if (!threads_started && n > 1)
        start_threads();
    struct sluice_cma **tail = &queue;
    while (*tail != NULL)
        tail = &(*tail)->qnext;
    *tail = x;
    give(x, ready);
    return x;
}

void sluice_cma_ready(struct sluice_cma *x, size_t ready)
{
    pthread_mutex_lock(&cma_lock);
    give(x, ready);
}

int sluice_cma_piece(const struct sluice_cma *x, size_t i)
{
    return __atomic_load_n(&x->state[i], __ATOMIC_ACQUIRE);
}

int sluice_cma_complete(const struct sluice_cma *x)
{
    return __atomic_load_n(&x->left, __ATOMIC_ACQUIRE) == 0;
}

void sluice_cma_end(struct sluice_cma *x)
{
    if (x == NULL)
        return;
    pthread_mutex_lock(&cma_lock);
    if (x->queued) /* pieces never taken stay uncopied */
        unqueue(x);
    x->next = x->npieces;
    update_hint();
    while (x->copying > 0)
        pthread_cond_wait(&cma_idle, &cma_lock);
    pthread_mutex_unlock(&cma_lock);
    free(x->state);
    free(x);
}
