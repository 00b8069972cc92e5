/* SPDX-License-Identifier: MIT */
/* The trace core's life in a preloaded process: started by a constructor from the
 * configuration (SLUICE_TRACE_DIR, SLUICE_DEBUG, SLUICE_TRACE_LIMIT, SLUICE_BACKTRACE),
 * written at exit after every other part's destructor (see trace_at_exit), and written from
 * fatal-signal handlers too. With neither SLUICE_TRACE_DIR nor SLUICE_DEBUG set, the
 * constructor returns at once: nothing is allocated, no handler is installed. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/init_order.h"
#include "common/log.h"
#include "common/signal_chain.h"
#include "config/config.h"
#include "trace/rawio.h"
#include "trace/state.h"

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static struct sluice_signal_chain chain;

/* Records the signal, writes the file, then behaves as if sluice had not been there: the
 * previous handler runs, or the default action kills the process with the same signal. */
static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    sluice_trace_instant(SLUICE_EV_SIGNAL_FATAL, (uint64_t)sig, info ? (uint64_t)(uintptr_t)info->si_addr : 0,
                         0);
    sluice_trace_dump(sig);
    errno = saved;
    const struct sigaction *old = sluice_signal_chain_previous(&chain, sig);
    if (!sluice_signal_chain_call_previous(&chain, sig, info, uctx) && old != NULL &&
        old->sa_handler == SIG_DFL) {
        /* Restore the default and re-raise: delivered when this handler returns (the signal
         * is blocked meanwhile), or the faulting instruction faults again. */
        sluice_real_sigaction(sig, old, NULL);
        syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
    }
    errno = saved;
}

static void install_signal_handlers(void)
{
    sluice_signal_chain_install(&chain, fatal_signals, sizeof fatal_signals / sizeof fatal_signals[0],
                                on_fatal_signal);
}

static void fork_prepare(void)
{
    sluice_trace_strings_fork_prepare();
}
static void fork_parent(void)
{
    sluice_trace_strings_fork_parent();
}
static void fork_child(void)
{
    sluice_trace_strings_fork_child();
    if (!sluice_trace_enabled)
        return;
    sluice_trace_after_fork_child();
    sluice_trace_instant(SLUICE_EV_FORK_CHILD, (uint64_t)sluice_trace_g.pid, (uint64_t)sluice_trace_g.ppid,
                         0);
}

/* The file is written from an on_exit() handler, not from the destructor: ld.so registers
 * the destructors' runner (_dl_fini) after our constructor, so at exit() our on_exit handler
 * runs after every library destructor, other parts' at-exit work included, and it alone
 * learns the exit status. The destructor is the fallback for an unload without exit(). */
static bool exit_handler_registered;

static void trace_at_exit(int status, void *arg)
{
    (void)arg;
    if (!sluice_trace_enabled)
        return;
    sluice_trace_g.exit_status = status;
    sluice_trace_instant(SLUICE_EV_PROCESS_EXIT, (uint64_t)(int64_t)status, 0, 0);
    sluice_trace_dump(0);
}

void sluice_trace_exit_now(int status)
{
    trace_at_exit(status, NULL);
}

__attribute__((constructor(SLUICE_PRIO_TRACE))) static void sluice_trace_init(void)
{
    const char *dir = sluice_config.TRACE_DIR;
    const char *debug = sluice_config.DEBUG;
    if (!(dir && dir[0]) && !sluice_trace_debug_wanted(debug))
        return;
    struct sluice_trace_options opt = {
        .dir = dir,
        .limit = sluice_config.TRACE_LIMIT,
        .debug = debug,
        .backtrace = (unsigned)sluice_config.BACKTRACE,
        .rank = sluice_trace_env_rank(),
        .size = sluice_trace_env_size(),
    };
    int err = sluice_trace_start(&opt);
    if (err == -ENAMETOOLONG && dir && dir[0])
        sluice_fatal_config("SLUICE_TRACE_DIR=%s: path too long", dir);
    if (err != 0 && sluice_trace_g.debug)
        sluice_log_warn("SLUICE_DEBUG=%s: cannot open: %s; debug stream off", debug, strerror(-err));
    if (sluice_trace_g.stats) {
        int e = sluice_trace_make_dir();
        if (e != 0) /* keep recording: the folder may appear before exit; say so now */
            sluice_log_warn("SLUICE_TRACE_DIR=%s: cannot create it: %s", sluice_trace_g.dir, strerror(-e));
    }
    /* Both streams want the fatal signal: the file is written, or the debug line printed. */
    install_signal_handlers();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    exit_handler_registered = on_exit(trace_at_exit, NULL) == 0;
    sluice_trace_instant(SLUICE_EV_PROCESS_START, (uint64_t)sluice_trace_g.pid, (uint64_t)sluice_trace_g.ppid,
                         (uint64_t)sluice_trace_g.size);
}

__attribute__((destructor(SLUICE_PRIO_TRACE))) static void sluice_trace_fini(void)
{
    if (!sluice_trace_enabled || exit_handler_registered)
        return;
    sluice_trace_instant(SLUICE_EV_PROCESS_EXIT, (uint64_t)(int64_t)sluice_trace_g.exit_status, 0, 0);
    sluice_trace_dump(0);
}
