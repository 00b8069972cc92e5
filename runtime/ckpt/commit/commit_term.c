/* SPDX-License-Identifier: MIT */
/* The end of an allocation (docs/REDUNDANCY.md, "SIGTERM"): batch systems send SIGTERM, then
 * SIGKILL after a grace time. With node-local versions (SLUICE_DRAIN_EVERY above 1) a SIGTERM
 * that killed at once would leave the newest versions on the nodes only; so sluice holds the
 * signal back, drains every set this process holds members of (at most SLUICE_TERM_DRAIN
 * seconds), then hands the signal to the program's own disposition as if sluice had not been
 * there: the same siginfo, the program's handler, flags and mask, or the default action (the
 * process dies of SIGTERM). The handler only wakes a thread (async-signal-safe); the drain runs
 * in that thread. The program's sigaction/signal calls for SIGTERM (shim/signals.c) see and set
 * the program's disposition, never sluice's handler. An ignored SIGTERM stays ignored. */
#include "ckpt/commit/commit_term.h"
#include "ckpt/commit/commit_internal.h"

#include "common/fd_guard.h"
#include "common/log.h"
#include "common/signal_chain.h"
#include "config/config.h"
#include "trace/trace.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int commit_flush_sets_once(uint64_t deadline_ns, int *nsets); /* commit_member.c */

enum { OFF, ARMED, IGNORED, HELD, HANDING, DELIVERED };

static _Atomic int state = OFF;  /* OFF and DELIVERED: the program's calls pass through */
static struct sigaction program; /* the disposition the program set (or inherited) */
static atomic_flag lock = ATOMIC_FLAG_INIT;
static siginfo_t held_info; /* the SIGTERM held back, delivered as it came */
static int held_on_main;    /* it came to the main thread */
static sem_t wake;
static _Atomic int thread_up; /* the drain thread waits on `wake` (reset after fork) */

/* The lock is taken with every signal blocked: a handler never interrupts its holder. */
static void take(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
}
static void give(const sigset_t *old)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int is_ignore(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN;
}

/* The program's disposition in place, and the held signal sent again. Linux lets a process
 * queue a signal with its original siginfo (SI_USER, the sender's pid) only from its main
 * thread (rt_sigqueueinfo compares the caller's thread id); elsewhere it is a plain kill.
 * Async-signal-safe. */
static void deliver(void)
{
    sigset_t old;
    take(&old);
    atomic_store(&state, DELIVERED);
    sluice_real_sigaction(SIGTERM, &program, NULL);
    int ignored = is_ignore(&program);
    give(&old);
    long pid = syscall(SYS_getpid);
    if (ignored)
        return;
    if (syscall(SYS_gettid) != pid || syscall(SYS_rt_sigqueueinfo, pid, SIGTERM, &held_info) != 0)
        syscall(SYS_kill, pid, SIGTERM);
}

static void on_term(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)uctx;
    int saved = errno, expect = ARMED;
    if (atomic_compare_exchange_strong(&state, &expect, HELD)) {
        if (info)
            held_info = *info;
        else {
            memset(&held_info, 0, sizeof held_info);
            held_info.si_signo = SIGTERM;
            held_info.si_code = SI_USER;
        }
        held_on_main = syscall(SYS_gettid) == syscall(SYS_getpid);
        if (atomic_load(&thread_up))
            sem_post(&wake);
        else
            deliver(); /* nothing node-local in this process yet: nothing to drain */
    } else if (expect == HANDING && syscall(SYS_gettid) == syscall(SYS_getpid)) {
        deliver(); /* the drain thread's nudge: the main thread sends the held signal on */
    }
    errno = saved;
}

static void *drain_main(void *arg)
{
    (void)arg;
    sluice_fd_guard_thread_enter();
    while (sem_wait(&wake) != 0)
        ;
    uint64_t t0 = sluice_now_ns(), budget = (uint64_t)sluice_config.TERM_DRAIN * 1000000000ull;
    int nsets = 0;
    int rc = commit_flush_sets_once(t0 + budget, &nsets);
    uint64_t took = sluice_now_ns() - t0;
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CKPT_TERM_DRAIN, rc ? SLUICE_EVF_ERROR : 0, t0, took, (uint64_t)nsets,
                            (uint64_t)(rc < 0 ? -rc : 0), budget);
    if (rc)
        sluice_log_warn("SIGTERM: checkpoint sets not drained to the file system in %.1f s of the %u s "
                        "allowed (SLUICE_TERM_DRAIN): %s; their node-local versions stay for a restart on "
                        "these nodes or `sluice-ckpt scavenge`",
                        (double)took / 1e9, (unsigned)sluice_config.TERM_DRAIN, strerror(-rc));
    long pid = syscall(SYS_getpid);
    /* A signal the main thread got goes back to it, with its siginfo (deliver); a main thread
     * that is gone leaves the plain kill. */
    atomic_store(&state, HANDING);
    if (!held_on_main || syscall(SYS_tgkill, pid, pid, SIGTERM) != 0)
        deliver();
    return NULL;
}

static void after_fork_child(void)
{
    atomic_store(&thread_up, 0); /* the drain thread stayed in the parent */
    atomic_flag_clear(&lock);
}

void commit_term_arm(void)
{
    if (sluice_config.TERM_DRAIN == 0)
        return;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_term;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&ours.sa_mask);
    sigset_t old;
    take(&old);
    if (sluice_real_sigaction(SIGTERM, &ours, &program) == 0) {
        atomic_store(&state, ARMED);
        if (is_ignore(&program)) { /* inherited: stays ignored (and so across exec) */
            sluice_real_sigaction(SIGTERM, &program, NULL);
            atomic_store(&state, IGNORED);
        }
    }
    give(&old);
    pthread_atfork(NULL, NULL, after_fork_child);
}

void commit_term_ready(void)
{
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    if (atomic_load(&thread_up) || atomic_load(&state) == OFF)
        return;
    pthread_mutex_lock(&once);
    if (!atomic_load(&thread_up) && sem_init(&wake, 0, 0) == 0) {
        sigset_t all, old;
        pthread_t t;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not ours */
        if (pthread_create(&t, NULL, drain_main, NULL) == 0) {
            pthread_detach(t);
            pthread_setname_np(t, "sluice-term");
            atomic_store(&thread_up, 1);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&once);
}

int sluice_term_sigaction(const struct sigaction *act, struct sigaction *oldact, int *rc)
{
    int s = atomic_load(&state);
    if (s == OFF || s == DELIVERED)
        return 0;
    sigset_t old;
    take(&old);
    s = atomic_load(&state);
    int mine = s != OFF && s != DELIVERED;
    if (mine) {
        if (oldact)
            *oldact = program;
        *rc = 0;
        if (act) {
            program = *act;
            if (is_ignore(act) && s != HELD && s != HANDING) {
                *rc = sluice_real_sigaction(SIGTERM, act, NULL);
                atomic_store(&state, IGNORED);
            } else if (s == IGNORED) {
                struct sigaction ours;
                memset(&ours, 0, sizeof ours);
                ours.sa_sigaction = on_term;
                ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
                sigfillset(&ours.sa_mask);
                *rc = sluice_real_sigaction(SIGTERM, &ours, NULL);
                atomic_store(&state, ARMED);
            }
        }
    }
    give(&old);
    return mine;
}
