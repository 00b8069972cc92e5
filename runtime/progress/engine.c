/* SPDX-License-Identifier: MIT */
/* The progress engine (progress.h, control.h): one background thread per process that runs
 * posted work in order and calls pollers, and sleeps with adaptive back-off when there is
 * nothing to do.
 *
 * Invariants:
 *  - `lock` guards the queue, the poller table and the thread's life; it is never held while
 *    a work item or a poller runs, so those may post, add or remove pollers, or fork.
 *  - If the queue is not empty, a thread is running, unless the engine is shut down, in which
 *    case post() runs the item itself and the queue stays empty.
 *  - Items get sequence numbers in posting order. drain() waits until no item numbered up to
 *    the last one posted before the call is queued or running. Running items can nest (an
 *    item that drains runs later items inside itself), always outermost = lowest number, so
 *    the outermost running number and the queue head answer that.
 *  - The thread blocks every signal: signals stay with the application's threads. */
#include "progress/progress.h"
#include "threads/helper_threads.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "common/init_order.h"
#include "common/log.h"
#include "config/config.h"
#include "progress/backoff.h"
#include "progress/control.h"
#include "progress/sleeper.h"
#include "trace/trace.h"

#define MAX_POLLERS 64
#define MIN_SLEEP_NS 1000u         /* first idle sleep: 1 us */
#define DEFAULT_SLEEP_MAX_US 2000u /* vars.def default, for code linked without the config */
/* Deep idle: once the thread has found no work for this long and no MPI transfer is in flight,
 * its back-off may grow on to SLUICE_PROGRESS_IDLE_SLEEP. Each wake-up of an idle thread costs
 * 20-40 us of CPU (timer, futex, one pass of the pollers: MPI_Improbe): 500 of them a second
 * were 1.1-1.4% of a core per rank; 50 a second are 0.1-0.2%. A post still wakes it at once;
 * only a message from another rank to a rank idle that long waits up to one such sleep. */
#define DEEP_IDLE_AFTER_NS (100u * 1000u * 1000u)
/* A program thread entering a blocking MPI call helps (sluice_progress_help) while the engine
 * found work this recently: a commit's quiet spells (a peer computing, a file being synced)
 * last well under a second. Outside it the call goes straight to MPI. */
#define HELP_WINDOW_NS (1000u * 1000u * 1000u)

struct work {
    void (*fn)(void *);
    void *arg;
    uint64_t seq; /* 1, 2, 3... in posting order */
    struct work *next;
};

struct poller {
    sluice_poller_fn fn;
    void *arg;
    int id;          /* 0: free slot */
    bool any_thread; /* may run on a program thread that helps (sluice_progress_help) */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* an item or a poller call ended */
    pthread_mutex_t ctl;    /* serializes starting/stopping the thread */
    struct work *head, *tail;
    uint64_t posted;    /* sequence number of the last item posted */
    int depth;          /* items running now (nested on the progress thread) */
    uint64_t outer_seq; /* sequence number of the outermost running item */
    struct poller pollers[MAX_POLLERS];
    int next_poller_id;
    int poller_slots;   /* slots in use are all below this (high-water mark) */
    int calling_poller; /* id of the poller the thread is in, 0 if none */
    pthread_t thread;
    bool running, stop_requested;
    bool stop_soon; /* sluice_progress_stop_begin: end once idle, unless work is posted again */
    bool joinable;  /* `thread` was started and is not joined yet (it may have ended its loop) */
    atomic_bool shut_down;
    struct sluice_sleeper sleeper;
    _Atomic uint64_t sleep_max_us_override;
    struct {
        _Atomic uint64_t rounds, sleeps, parks, items_run, wakeups, longest_sleep_ns, last_sleep_ns,
            threads_started, helped;
    } stats;
} E = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .changed = PTHREAD_COND_INITIALIZER,
    .ctl = PTHREAD_MUTEX_INITIALIZER,
};

static _Thread_local bool on_progress_thread;
static _Thread_local bool in_pollers; /* this thread is inside run_pollers */

/* sluice's progress runs in one context at a time: the progress thread's rounds (posted items
 * and pollers) and a program thread helping while it waits in MPI (sluice_progress_help, the
 * any-thread pollers only) each hold `ctx`, so items and pollers never run concurrently, as
 * when the progress thread alone ran them. Helpers only try it: they never wait for it. */
static pthread_mutex_t ctx = PTHREAD_MUTEX_INITIALIZER;
/* When a round last found work (ns), for sluice_progress_wants_help. */
static _Atomic uint64_t last_work_ns;
/* MPI-busy mode: transfers in flight that move only inside MPI calls (sluice_progress_mpi_busy).
 * While any are and one completed within the last busy window, an idle round yields or sleeps
 * SLUICE_PROGRESS_BUSY_SLEEP instead of backing off to SLUICE_PROGRESS_SLEEP_MAX: Open MPI
 * without its single-copy mechanism moves a large message only while both sides call MPI, so a
 * 2 ms sleep between polls stretched a 1 GiB commit 11x. Once the window passes with no
 * completion (a peer not there yet), an idle round polls every 100 us on free cores and backs
 * off normally where the cores are all taken (mpi_busy_wait): no unbounded spinning. */
static _Atomic int mpi_busy;
static _Atomic uint64_t mpi_busy_last_ns;
/* Answers awaited from other ranks (sluice_progress_expect): no deep idle while any are, so that
 * an answer waits at most SLUICE_PROGRESS_SLEEP_MAX, not SLUICE_PROGRESS_IDLE_SLEEP. */
static _Atomic int expecting;
/* Program threads blocked until the commits are done (sluice_progress_urgent). */
static _Atomic int urgent;
#define MPI_BUSY_WINDOW_NS (50u * 1000u * 1000u)

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void sluice_progress_mpi_busy(int delta)
{
    if (atomic_fetch_add_explicit(&mpi_busy, delta, memory_order_acq_rel) + delta > 0) {
        atomic_store_explicit(&mpi_busy_last_ns, now_ns(), memory_order_relaxed);
        sluice_progress_wake();
    }
}

void sluice_progress_urgent(int delta)
{
    if (atomic_fetch_add_explicit(&urgent, delta, memory_order_acq_rel) + delta > 0)
        sluice_progress_wake();
}

void sluice_progress_expect(int delta)
{
    if (atomic_fetch_add_explicit(&expecting, delta, memory_order_acq_rel) + delta > 0)
        sluice_progress_wake(); /* a deep sleep in progress ends now, the next one is short */
}

/* A yield of the MPI-busy mode that took longer than CONTENDED_YIELD_NS gave the core to
 * another thread: every core is taken. Yielding on then keeps this thread runnable beside the
 * threads whose work it waits for (the commit's I/O threads, the program's), and the scheduler
 * shares the cores among them all: 4 emulated nodes on 2 cores encoded a partner copy at 119-126
 * MB/s with yields, 159-186 MB/s with 50 us sleeps (SLUICE_PROGRESS_BUSY_SLEEP=50). So for
 * CONTENDED_FOR_NS after such a yield, an idle busy round sleeps CONTENDED_SLEEP_NS instead; then
 * a yield tests the cores again. Where a core is free, a yield returns at once and the mode spins
 * as before. Progress thread only. */
#define CONTENDED_YIELD_NS (20u * 1000u)
#define CONTENDED_SLEEP_NS (50u * 1000u)
#define CONTENDED_FOR_NS (20u * 1000u * 1000u)
static uint64_t contended_since; /* 0: no contended yield seen */

static bool contended_yield(uint64_t now)
{
    return contended_since != 0 && now - contended_since < CONTENDED_FOR_NS;
}

/* The poll interval of the MPI-busy mode past its window, on free cores. */
#define MPI_BUSY_LATE_SLEEP_NS (100u * 1000u)

/* An idle round where a peer or a blocked program thread may need this thread any moment, but
 * not within the busy window: poll every MPI_BUSY_LATE_SLEEP_NS where a yield shows a free core
 * (a sleep, not a spin); where every core is taken, or SLUICE_PROGRESS_BUSY_SLEEP sets the
 * polls, false: the normal back-off. Past the busy window a peer is not there yet (an
 * aggregator still writing earlier rounds) and may post its side any moment: a large message
 * then moves only while this side polls too, so a 2 ms back-off there held a 128 MiB shuffle at
 * 1 GB/s (a writer whose first round is the aggregator's fifth slept 79 ms in 2 ms steps while
 * its 4 MiB went across). */
static bool late_poll(uint64_t now)
{
    if (sluice_config.PROGRESS_BUSY_SLEEP != 0 || contended_yield(now))
        return false;
    sched_yield();
    if (now_ns() - now > CONTENDED_YIELD_NS) {
        contended_since = now;
        return false;
    }
    struct timespec t = {0, (long)MPI_BUSY_LATE_SLEEP_NS};
    nanosleep(&t, NULL);
    return true;
}

/* An idle round while MPI transfers are in flight or a program thread waits on the commits: true
 * when it was handled (yield or a short sleep), false when the normal back-off applies. */
static bool mpi_busy_wait(uint64_t did)
{
    bool busy = atomic_load_explicit(&mpi_busy, memory_order_acquire) > 0;
    if (!busy && atomic_load_explicit(&urgent, memory_order_acquire) <= 0)
        return false;
    uint64_t now = now_ns();
    if (did > 0) {
        if (busy)
            atomic_store_explicit(&mpi_busy_last_ns, now, memory_order_relaxed);
        return false;
    }
    if (!busy || now - atomic_load_explicit(&mpi_busy_last_ns, memory_order_relaxed) > MPI_BUSY_WINDOW_NS)
        return late_poll(now);
    uint64_t us = sluice_config.PROGRESS_BUSY_SLEEP;
    if (us == 0 && contended_yield(now)) {
        struct timespec t = {0, (long)CONTENDED_SLEEP_NS};
        nanosleep(&t, NULL);
    } else if (us == 0) {
        sched_yield();
        if (now_ns() - now > CONTENDED_YIELD_NS)
            contended_since = now; /* another thread ran meanwhile: the cores are all taken */
    } else {
        struct timespec t = {0, (long)(us * 1000u)};
        nanosleep(&t, NULL);
    }
    return true;
}

int sluice_progress_is_self(void)
{
    return on_progress_thread;
}

/* The back-off's cap: SLUICE_PROGRESS_SLEEP_MAX, or SLUICE_PROGRESS_IDLE_SLEEP when the thread
 * has been idle since `idle_since_ns` for DEEP_IDLE_AFTER_NS with no MPI transfer in flight and
 * no answer expected. A
 * cap set by sluice_progress_set_sleep_max_us is the cap, deep idle or not. */
static uint64_t sleep_max_ns(uint64_t idle_since_ns)
{
    uint64_t us = atomic_load_explicit(&E.sleep_max_us_override, memory_order_relaxed);
    if (us != 0)
        return us * 1000u;
    us = sluice_config.PROGRESS_SLEEP_MAX;
    if (us == 0)
        us = DEFAULT_SLEEP_MAX_US;
    uint64_t deep = sluice_config.PROGRESS_IDLE_SLEEP;
    if (deep > us && idle_since_ns != 0 && now_ns() - idle_since_ns > DEEP_IDLE_AFTER_NS &&
        atomic_load_explicit(&mpi_busy, memory_order_acquire) <= 0 &&
        atomic_load_explicit(&expecting, memory_order_acquire) <= 0)
        us = deep;
    return us * 1000u;
}

static void stat_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Runs queued items one by one, in posting order, until the queue is empty. */
static uint64_t run_queue(void)
{
    uint64_t n = 0;
    for (;;) {
        pthread_mutex_lock(&E.lock);
        struct work *w = E.head;
        if (w == NULL) {
            pthread_mutex_unlock(&E.lock);
            return n;
        }
        E.head = w->next;
        if (E.head == NULL)
            E.tail = NULL;
        if (E.depth++ == 0)
            E.outer_seq = w->seq;
        pthread_mutex_unlock(&E.lock);

        w->fn(w->arg);
        free(w);
        n++;

        pthread_mutex_lock(&E.lock);
        E.depth--;
        pthread_cond_broadcast(&E.changed);
        pthread_mutex_unlock(&E.lock);
    }
}

/* Calls every registered poller once (a helping program thread: only those that may run on any
 * thread, and only if no other thread runs them now); returns the sum of what they report. */
static uint64_t run_pollers(bool helping)
{
    uint64_t did = 0;
    in_pollers = true;
    pthread_mutex_lock(&E.lock);
    int slots = E.poller_slots;
    pthread_mutex_unlock(&E.lock);
    for (int i = 0; i < slots; i++) {
        pthread_mutex_lock(&E.lock);
        struct poller p = E.pollers[i];
        bool skip = p.id == 0 || (helping && !p.any_thread);
        if (!skip)
            E.calling_poller = p.id;
        pthread_mutex_unlock(&E.lock);
        if (skip)
            continue;

        int r = p.fn(p.arg);
        if (r > 0)
            did += (uint64_t)r;

        pthread_mutex_lock(&E.lock);
        E.calling_poller = 0;
        pthread_cond_broadcast(&E.changed);
        pthread_mutex_unlock(&E.lock);
    }
    in_pollers = false;
    if (did > 0)
        atomic_store_explicit(&last_work_ns, now_ns(), memory_order_relaxed);
    return did;
}

bool sluice_progress_wants_help(void)
{
    if (atomic_load_explicit(&mpi_busy, memory_order_relaxed) > 0)
        return true;
    uint64_t last = atomic_load_explicit(&last_work_ns, memory_order_relaxed);
    return last != 0 && now_ns() - last < HELP_WINDOW_NS;
}

int sluice_progress_help(void)
{
    if (on_progress_thread || in_pollers || atomic_load(&E.shut_down))
        return 0;
    if (pthread_mutex_trylock(&ctx) != 0)
        return 0; /* the progress thread is at it */
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLUICE);
    uint64_t did = run_pollers(true);
    sluice_time_leave(prev);
    pthread_mutex_unlock(&ctx);
    if (did > 0)
        stat_add(&E.stats.helped, did);
    return did > 0 ? (int)(did > 1000000 ? 1000000 : did) : 0;
}

/* Decides to exit and gives up `running` in one step under the lock, so that a post racing
 * with the exit either is seen here (the queue is not empty) or starts a new thread. */
static bool should_exit(void)
{
    pthread_mutex_lock(&E.lock);
    bool done = (E.stop_requested || E.stop_soon) && E.head == NULL;
    if (done) {
        E.running = false;
        E.stop_requested = false;
        E.stop_soon = false;
    }
    pthread_mutex_unlock(&E.lock);
    return done;
}

/* The thread alternates between busy spells (consecutive rounds that found work) and idle
 * spells (from the first sleep until work shows up again). Each spell becomes one event
 * (PROGRESS_WAKE with the work done, PROGRESS_SLEEP with the longest sleep), not one per round
 * or per sleep, so that neither an idle nor a busy-polling process floods its trace buffer. */
struct spell {
    uint64_t start_ns; /* 0: not in such a spell */
    uint64_t amount;   /* busy: work done; idle: longest sleep requested (ns) */
};

static void end_spell(struct spell *s, sluice_event_kind kind)
{
    if (s->start_ns != 0 && sluice_trace_active()) {
        uint64_t now = sluice_now_ns();
        sluice_trace_record(kind, 0, s->start_ns, now - s->start_ns, s->amount, 0, 0);
    }
    s->start_ns = 0;
    s->amount = 0;
}

static void extend_spell(struct spell *s, uint64_t amount, bool is_max)
{
    if (s->start_ns == 0)
        s->start_ns = sluice_trace_active() ? sluice_now_ns() : 1;
    if (is_max)
        s->amount = amount > s->amount ? amount : s->amount;
    else
        s->amount += amount;
}

static void *progress_main(void *unused)
{
    (void)unused;
    on_progress_thread = true;
    /* Short sleeps mean what they say: the default 50 us timer slack would turn the 1 us first
     * sleep of a back-off, and MPI-busy sleeps, into 50 us ones. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    sluice_helper_thread_enter(NULL /* named by its starter */);
    sluice_time_state outer = sluice_time_enter(SLUICE_TIME_SLUICE);

    struct sluice_backoff backoff;
    uint64_t idle_since = 0; /* when the current idle spell began (0: not idle) */
    uint64_t cap = sleep_max_ns(0);
    sluice_backoff_init(&backoff, MIN_SLEEP_NS, cap);
    struct spell idle = {0, 0}, busy = {0, 0};
    uint32_t seen = sluice_sleeper_seq(&E.sleeper);

    while (!should_exit()) {
        pthread_mutex_lock(&ctx);
        uint64_t items = run_queue();
        uint64_t did = items + run_pollers(false);
        pthread_mutex_unlock(&ctx);
        stat_add(&E.stats.rounds, 1);
        stat_add(&E.stats.items_run, items);
        if (items > 0)
            atomic_store_explicit(&last_work_ns, now_ns(), memory_order_relaxed);

        uint32_t seq = sluice_sleeper_seq(&E.sleeper);
        bool woken = seq != seen;
        seen = seq;
        bool busy_waited = mpi_busy_wait(did);
        if (did > 0 || woken || busy_waited) {
            idle_since = 0;
            sluice_backoff_reset(&backoff);
            end_spell(&idle, SLUICE_EV_PROGRESS_SLEEP);
            if (did > 0)
                extend_spell(&busy, did, false);
            continue;
        }
        end_spell(&busy, SLUICE_EV_PROGRESS_WAKE);

        if (idle_since == 0)
            idle_since = now_ns();
        uint64_t now_cap = sleep_max_ns(idle_since);
        if (now_cap != cap) {
            /* A higher cap (deep idle) continues the back-off where it is; a lower one restarts it. */
            uint64_t at = backoff.cur_ns;
            sluice_backoff_init(&backoff, MIN_SLEEP_NS, now_cap);
            if (now_cap > cap)
                backoff.cur_ns = at;
            cap = now_cap;
        }
        uint64_t ns = sluice_backoff_next(&backoff);
        extend_spell(&idle, ns, true);
        stat_add(&E.stats.sleeps, 1);
        if (ns > SLUICE_SLEEPER_PARK_NS)
            stat_add(&E.stats.parks, 1);
        atomic_store_explicit(&E.stats.last_sleep_ns, ns, memory_order_relaxed);
        if (ns > atomic_load_explicit(&E.stats.longest_sleep_ns, memory_order_relaxed))
            atomic_store_explicit(&E.stats.longest_sleep_ns, ns, memory_order_relaxed);

        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
        int w = sluice_sleeper_wait(&E.sleeper, ns, seen);
        sluice_time_leave(prev);
        if (w)
            stat_add(&E.stats.wakeups, 1);
    }
    end_spell(&busy, SLUICE_EV_PROGRESS_WAKE);
    end_spell(&idle, SLUICE_EV_PROGRESS_SLEEP);
    sluice_time_leave(outer);
    sluice_helper_thread_leave();
    return NULL;
}

/* Starts the thread if none runs. Caller holds E.lock, which a thread that ended its loop without
 * being joined yet (sluice_progress_stop_begin) is joined without. Work or a poller arriving is
 * work for the thread: a stop asked for by stop_begin is called off. */
static void ensure_running_locked(void)
{
    E.stop_soon = false;
    if (E.running || atomic_load(&E.shut_down))
        return;
    if (E.joinable) {
        pthread_t old = E.thread;
        E.joinable = false;
        pthread_mutex_unlock(&E.lock);
        pthread_join(old, NULL);
        pthread_mutex_lock(&E.lock);
        if (E.running || atomic_load(&E.shut_down))
            return; /* another poster started one meanwhile */
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&E.thread, NULL, progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        /* No thread: behave as if shut down, so that work still runs (on the poster). */
        sluice_log_error("cannot start the progress thread (%s); running its work inline", strerror(rc));
        atomic_store(&E.shut_down, true);
        return;
    }
    pthread_setname_np(E.thread, "sluice-progress");
    E.running = true;
    E.joinable = true;
    stat_add(&E.stats.threads_started, 1);
}

static int add_poller(sluice_poller_fn fn, void *arg, bool any_thread)
{
    pthread_mutex_lock(&E.lock);
    int id = -1;
    for (int i = 0; i < MAX_POLLERS; i++) {
        if (E.pollers[i].id == 0) {
            id = ++E.next_poller_id;
            E.pollers[i] = (struct poller){fn, arg, id, any_thread};
            if (i + 1 > E.poller_slots)
                E.poller_slots = i + 1;
            break;
        }
    }
    if (id > 0)
        ensure_running_locked();
    pthread_mutex_unlock(&E.lock);
    if (id < 0)
        sluice_log_error("progress engine: more than %d pollers; poller not added", MAX_POLLERS);
    else
        sluice_progress_wake();
    return id;
}

int sluice_progress_add_poller(sluice_poller_fn fn, void *arg)
{
    return add_poller(fn, arg, false);
}

int sluice_progress_add_poller_any_thread(sluice_poller_fn fn, void *arg)
{
    return add_poller(fn, arg, true);
}

void sluice_progress_remove_poller(int id)
{
    if (id <= 0)
        return;
    pthread_mutex_lock(&E.lock);
    for (int i = 0; i < E.poller_slots; i++)
        if (E.pollers[i].id == id)
            E.pollers[i] = (struct poller){NULL, NULL, 0, false};
    while (E.poller_slots > 0 && E.pollers[E.poller_slots - 1].id == 0)
        E.poller_slots--;
    /* After return the poller must not be running: wait out a call in progress, unless we are
     * that call (a poller removing itself). */
    while (!in_pollers && E.calling_poller == id)
        pthread_cond_wait(&E.changed, &E.lock);
    pthread_mutex_unlock(&E.lock);
}

void sluice_progress_post(void (*fn)(void *arg), void *arg)
{
    struct work *w = NULL;
    if (!atomic_load(&E.shut_down))
        w = malloc(sizeof *w);
    if (w != NULL) {
        w->fn = fn;
        w->arg = arg;
        w->next = NULL;
        pthread_mutex_lock(&E.lock);
        ensure_running_locked();
        if (E.running) {
            if (E.tail)
                E.tail->next = w;
            else
                E.head = w;
            E.tail = w;
            w->seq = ++E.posted;
            pthread_mutex_unlock(&E.lock);
            sluice_progress_wake();
            return;
        }
        pthread_mutex_unlock(&E.lock);
        free(w);
    }
    /* Shut down (process exit) or out of memory: the work still gets done, here. */
    fn(arg);
}

void sluice_progress_wake(void)
{
    sluice_sleeper_wake(&E.sleeper);
}

void sluice_progress_drain(void)
{
    if (on_progress_thread || in_pollers) {
        /* A work item or poller waiting for earlier work (on the progress thread, or on a program
         * thread helping, which holds ctx): run it here instead of deadlocking. */
        run_queue();
        return;
    }
    pthread_mutex_lock(&E.lock);
    uint64_t ticket = E.posted;
    while ((E.head != NULL && E.head->seq <= ticket) || (E.depth > 0 && E.outer_seq <= ticket))
        pthread_cond_wait(&E.changed, &E.lock);
    pthread_mutex_unlock(&E.lock);
}

void sluice_progress_stop(void)
{
    if (on_progress_thread)
        return;
    pthread_mutex_lock(&E.ctl);
    pthread_mutex_lock(&E.lock);
    bool join = E.joinable; /* running, or ended after stop_begin */
    pthread_t t = E.thread;
    if (E.running)
        E.stop_requested = true;
    E.joinable = false;
    pthread_mutex_unlock(&E.lock);
    if (join) {
        sluice_progress_wake();
        pthread_join(t, NULL);
    }
    pthread_mutex_unlock(&E.ctl);
}

void sluice_progress_stop_begin(void)
{
    if (on_progress_thread)
        return;
    pthread_mutex_lock(&E.lock);
    bool running = E.running;
    if (running)
        E.stop_soon = true;
    pthread_mutex_unlock(&E.lock);
    if (running)
        sluice_progress_wake();
}

void sluice_progress_run_here(void (*fn)(void *arg), void *arg)
{
    pthread_mutex_lock(&ctx);
    fn(arg);
    pthread_mutex_unlock(&ctx);
}

void sluice_progress_shutdown(void)
{
    /* Stop first: the thread finishes the queue; after that nothing can be queued. */
    sluice_progress_stop();
    pthread_mutex_lock(&E.lock);
    atomic_store(&E.shut_down, true);
    pthread_mutex_unlock(&E.lock);
    sluice_progress_stop(); /* a post that raced with the first stop started a new thread */
}

void sluice_progress_set_sleep_max_us(uint64_t us)
{
    atomic_store(&E.sleep_max_us_override, us);
    atomic_store(&E.stats.longest_sleep_ns, 0);
    sluice_progress_wake();
}

void sluice_progress_get_stats(struct sluice_progress_stats *o)
{
    o->rounds = atomic_load(&E.stats.rounds);
    o->sleeps = atomic_load(&E.stats.sleeps);
    o->parks = atomic_load(&E.stats.parks);
    o->items_run = atomic_load(&E.stats.items_run);
    o->wakeups = atomic_load(&E.stats.wakeups);
    o->longest_sleep_ns = atomic_load(&E.stats.longest_sleep_ns);
    o->last_sleep_ns = atomic_load(&E.stats.last_sleep_ns);
    o->threads_started = atomic_load(&E.stats.threads_started);
    o->helped = atomic_load(&E.stats.helped);
    pthread_mutex_lock(&E.lock);
    o->running = E.running;
    pthread_mutex_unlock(&E.lock);
}

int64_t sluice_progress_thread_cpu_ns(void)
{
    pthread_mutex_lock(&E.lock);
    bool running = E.running;
    pthread_t t = E.thread;
    pthread_mutex_unlock(&E.lock);
    clockid_t cid;
    struct timespec ts;
    if (!running || pthread_getcpuclockid(t, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* fork: the child has no progress thread. Work and pollers queued by the parent belong to the
 * parent (its thread runs them); the child starts empty and gets a thread on first use. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&E.lock);
}
static void atfork_parent(void)
{
    pthread_mutex_unlock(&E.lock);
}
static void atfork_child(void)
{
    atomic_store(&mpi_busy, 0);
    atomic_store(&last_work_ns, 0);
    pthread_mutex_init(&ctx, NULL);
    struct work *w = E.head;
    while (w) {
        struct work *next = w->next;
        free(w);
        w = next;
    }
    E.head = E.tail = NULL;
    E.posted = 0;
    E.depth = 0;
    memset(E.pollers, 0, sizeof E.pollers);
    E.poller_slots = 0;
    E.calling_poller = 0;
    E.running = false;
    E.stop_requested = false;
    E.stop_soon = false;
    E.joinable = false;
    sluice_sleeper_init(&E.sleeper);
    atomic_store(&E.stats.threads_started, 0);
    /* atfork_prepare took E.lock on the thread that forked, which is the child's only thread: it
     * is released, not made anew (a lock made anew while held reads, to ThreadSanitizer, as held
     * for good, and sluice_progress_stop's ctl-then-lock order as its inversion). ctl may have
     * been held by another thread of the parent: made anew. */
    pthread_mutex_unlock(&E.lock);
    pthread_mutex_init(&E.ctl, NULL);
    pthread_cond_init(&E.changed, NULL);
}

__attribute__((constructor(SLUICE_PRIO_PROGRESS))) static void progress_load(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* At exit the progress thread finishes its queue and stops before MPI is finalized
 * (SLUICE_PRIO_MPI's destructor runs after this one). */
__attribute__((destructor(SLUICE_PRIO_PROGRESS))) static void progress_unload(void)
{
    sluice_progress_shutdown();
}
