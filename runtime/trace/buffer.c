/* SPDX-License-Identifier: MIT */
/* The statistics stream's memory: per-thread chunk lists, filled without locks.
 *
 * Each thread owns a list of fixed-size chunks and is the only writer of it; the file writer
 * (at exit or in a signal handler) reads the published prefix of every list. Chunks come from
 * one process-wide budget (SLUICE_TRACE_LIMIT) handed out by an atomic counter; once it is
 * spent, events are counted per kind and dropped. A thread's chunks grow from 4 KiB to 64 KiB,
 * so that many threads with few events each do not exhaust the budget with empty space. Thread
 * states are charged to the budget too: a program creating threads without end cannot grow
 * the trace without bound (events of threads refused a state are counted process-wide).
 * Chunks and thread states are mmap'ed, not
 * malloc'ed, so that a thread can start recording inside a signal handler and so that the
 * state of a finished thread stays readable until the file is written. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/state.h"

bool sluice_trace_enabled;
struct sluice_trace_global sluice_trace_g = {.exit_status = -1};

/* initial-exec: the library is preloaded, so its TLS is static and access is one load;
 * the generation tells a stale pointer (after fork or a test's stop) from a live one. */
static __thread struct sluice_trace_thread *tls_thread __attribute__((tls_model("initial-exec")));
static __thread uint64_t tls_generation __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static bool exit_key_ok;
static _Atomic bool budget_spent;
#define CHUNK_MIN 4096u

#define RELAXED_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* MAP_POPULATE: a chunk is about to be filled front to back, and one populating mmap costs
 * far less than a page fault per 85 events (measured with sluice-bench-trace). */
static void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t thread_state_bytes(void)
{
    size_t page = 4096;
    return (sizeof(struct sluice_trace_thread) + page - 1) & ~(page - 1);
}

int sluice_trace_buffers_start(uint64_t limit)
{
    sluice_trace_g.limit = limit;
    /* 64 KiB chunks amortize the mmap; small budgets get smaller chunks so that a budget of
     * a few KiB still holds events (at least 16 chunks where possible, never below 4 KiB). */
    uint32_t max = 64u << 10;
    while (max > CHUNK_MIN && (uint64_t)max * 16 > limit)
        max /= 2;
    sluice_trace_g.chunk_max_bytes = max;
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
        atomic_store(&sluice_trace_g.orphan_overflow[k], 0);
    atomic_store(&sluice_trace_g.used, 0);
    atomic_store(&budget_spent, false);
    if (!exit_key_ok && pthread_key_create(&exit_key, sluice_trace_thread_exit) == 0)
        exit_key_ok = true;
    return 0;
}

static void release_list(struct sluice_trace_thread *t)
{
    while (t) {
        struct sluice_trace_thread *next = t->next;
        struct sluice_trace_chunk *c = atomic_load_explicit(&t->head, memory_order_acquire);
        while (c) {
            struct sluice_trace_chunk *cn = atomic_load_explicit(&c->next, memory_order_acquire);
            munmap(c, c->bytes);
            c = cn;
        }
        munmap(t, thread_state_bytes());
        t = next;
    }
}

/* Drops every thread's state and starts a new generation: used by a fork child (the
 * parent's events belong to the parent's file) and by tests. Only the calling thread may run. */
void sluice_trace_buffers_release(void)
{
    struct sluice_trace_thread *list = atomic_exchange(&sluice_trace_g.threads, NULL);
    atomic_fetch_add(&sluice_trace_g.generation, 1);
    atomic_store(&sluice_trace_g.thread_count, 0);
    atomic_store(&sluice_trace_g.used, 0);
    atomic_store(&budget_spent, false);
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
        atomic_store(&sluice_trace_g.orphan_overflow[k], 0);
    tls_thread = NULL;
    if (exit_key_ok)
        pthread_setspecific(exit_key, NULL);
    release_list(list);
}

/* Takes `bytes` from the budget; false once it is spent. */
static bool budget_take(uint64_t bytes)
{
    if (atomic_load_explicit(&budget_spent, memory_order_relaxed))
        return false;
    uint64_t prev = atomic_fetch_add(&sluice_trace_g.used, bytes);
    if (prev + bytes > sluice_trace_g.limit) {
        atomic_fetch_sub(&sluice_trace_g.used, bytes);
        if (bytes <= CHUNK_MIN) /* not even the smallest piece fits: stop trying */
            atomic_store(&budget_spent, true);
        return false;
    }
    return true;
}

static void budget_give(uint64_t bytes)
{
    atomic_fetch_sub(&sluice_trace_g.used, bytes);
}

static struct sluice_trace_thread *thread_register(void)
{
    /* The debug stream alone needs a state but no event memory: charge only the statistics
     * stream's budget. */
    bool charge = sluice_trace_g.stats;
    if (charge && !budget_take(thread_state_bytes()))
        return NULL;
    struct sluice_trace_thread *t = map_zeroed(thread_state_bytes());
    if (!t) {
        if (charge)
            budget_give(thread_state_bytes());
        return NULL;
    }
    uint64_t now = sluice_now_ns();
    t->tid = (int32_t)syscall(SYS_gettid);
    t->generation = atomic_load_explicit(&sluice_trace_g.generation, memory_order_relaxed);
    t->first_ns = now;
    t->state = SLUICE_TIME_USER;
    t->state_since = now;
    t->next_chunk_bytes = CHUNK_MIN;
    t->index = atomic_fetch_add(&sluice_trace_g.thread_count, 1);
    struct sluice_trace_thread *head = atomic_load(&sluice_trace_g.threads);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&sluice_trace_g.threads, &head, t));
    tls_thread = t;
    tls_generation = t->generation;
    if (exit_key_ok)
        pthread_setspecific(exit_key, t);
    return t;
}

struct sluice_trace_thread *sluice_trace_thread_self(void)
{
    struct sluice_trace_thread *t = tls_thread;
    if (__builtin_expect(t != NULL && tls_generation == atomic_load_explicit(&sluice_trace_g.generation,
                                                                             memory_order_relaxed),
                         1))
        return t;
    return thread_register();
}

/* Closes the thread's time accounting; its events stay for the file. */
void sluice_trace_thread_exit(void *p)
{
    struct sluice_trace_thread *t = p;
    if (!t || t != tls_thread || tls_generation != atomic_load(&sluice_trace_g.generation))
        return;
    uint64_t now = sluice_now_ns();
    RELAXED_ADD(t->time_ns[t->state], now - t->state_since);
    __atomic_store_n(&t->state_since, now, __ATOMIC_RELAXED); /* read by writers on other threads */
    __atomic_store_n(&t->last_ns, now, __ATOMIC_RELAXED);
}

static struct sluice_trace_chunk *chunk_new(struct sluice_trace_thread *t)
{
    uint32_t bytes = t->next_chunk_bytes;
    if (bytes > sluice_trace_g.chunk_max_bytes)
        bytes = sluice_trace_g.chunk_max_bytes;
    while (!budget_take(bytes)) {
        if (bytes <= CHUNK_MIN)
            return NULL;
        bytes /= 2; /* the last few KiB of the budget still hold events */
    }
    struct sluice_trace_chunk *c = map_zeroed(bytes);
    if (!c) {
        budget_give(bytes);
        return NULL;
    }
    c->bytes = bytes;
    c->capacity = (uint32_t)((bytes - sizeof *c) / sizeof(struct sluice_tf_event));
    t->next_chunk_bytes = bytes < sluice_trace_g.chunk_max_bytes ? bytes * 2 : bytes;
    return c;
}

static void append(struct sluice_trace_thread *t, const struct sluice_tf_event *ev)
{
    struct sluice_trace_chunk *c = t->cur;
    uint32_t n = c ? atomic_load_explicit(&c->count, memory_order_relaxed) : 0;
    if (!c || n == c->capacity) {
        struct sluice_trace_chunk *fresh = chunk_new(t);
        if (!fresh) {
            RELAXED_ADD(t->overflow[ev->kind], 1);
            return;
        }
        if (c)
            atomic_store_explicit(&c->next, fresh, memory_order_release);
        else
            atomic_store_explicit(&t->head, fresh, memory_order_release);
        t->cur = c = fresh;
        n = 0;
    }
    c->ev[n] = *ev;
    atomic_store_explicit(&c->count, n + 1, memory_order_release);
}

void sluice_trace_record(sluice_event_kind kind, uint32_t flags, uint64_t t_ns, uint64_t dur_ns, uint64_t a,
                         uint64_t b, uint64_t c)
{
    if (!sluice_trace_enabled || (unsigned)kind >= SLUICE_EV_COUNT)
        return;
    struct sluice_trace_thread *t = sluice_trace_thread_self();
    if (!t) { /* no memory for this thread's state: count the event process-wide */
        atomic_fetch_add_explicit(&sluice_trace_g.orphan_overflow[kind], 1, memory_order_relaxed);
        return;
    }
    if (t->busy) { /* a signal handler interrupted a recording on this thread */
        RELAXED_ADD(t->reentrant, 1);
        return;
    }
    t->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    struct sluice_tf_event ev = {
        .t_ns = t_ns,
        .dur_ns = dur_ns,
        .kind = (uint16_t)kind,
        .flags = (uint16_t)flags,
        .callsite = sluice_trace_g.backtrace ? sluice_trace_callsite_capture() : 0,
        .a = a,
        .b = b,
        .c = c,
    };
    if (sluice_trace_g.stats)
        append(t, &ev);
    if (sluice_trace_g.debug)
        sluice_trace_debug_emit(t, &ev);
    atomic_signal_fence(memory_order_seq_cst);
    t->busy = 0;
}

uint64_t sluice_trace_events_kept(void)
{
    uint64_t n = 0;
    for (struct sluice_trace_thread *t = atomic_load(&sluice_trace_g.threads); t; t = t->next)
        for (struct sluice_trace_chunk *c = atomic_load(&t->head); c; c = atomic_load(&c->next))
            n += atomic_load(&c->count);
    return n;
}

uint64_t sluice_trace_events_dropped(sluice_event_kind kind)
{
    uint64_t n = 0;
    for (struct sluice_trace_thread *t = atomic_load(&sluice_trace_g.threads); t; t = t->next)
        n += __atomic_load_n(&t->overflow[kind], __ATOMIC_RELAXED);
    return n + atomic_load(&sluice_trace_g.orphan_overflow[kind]);
}

uint64_t sluice_trace_bytes_used(void)
{
    return atomic_load(&sluice_trace_g.used);
}
