/* SPDX-License-Identifier: MIT */
/* Starting and stopping the trace core, and turning a fork child into a fresh trace. Called
 * by the library constructor (lifecycle.c) from the configuration, and by tests directly. */
#include <string.h>
#include <time.h>

#include "common/host_id.h"
#include "common/host_name.h"
#include "common/log.h"
#include "common/real.h"
#include "sluice_runtime_deps.h"
#include "trace/rawio.h"
#include "trace/state.h"

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void identify_process(void)
{
    sluice_trace_g.pid = (int32_t)syscall(SYS_getpid);
    sluice_trace_g.ppid = (int32_t)syscall(SYS_getppid);
    sluice_trace_g.start_mono_ns = sluice_now_ns();
    sluice_trace_g.start_real_ns = realtime_ns();
}

int sluice_trace_start(const struct sluice_trace_options *opt)
{
    sluice_trace_stop();
    struct sluice_trace_global *g = &sluice_trace_g;
    g->stats = opt->dir && opt->dir[0];
    g->debug = sluice_trace_debug_wanted(opt->debug);
    if (!g->stats && !g->debug)
        return 0;
    g->rank = opt->rank;
    g->size = opt->size;
    g->backtrace = opt->backtrace;
    g->flags = 0;
    g->exit_status = -1;
    atomic_store(&g->dumped, 0);
    identify_process();
    g->dir[0] = '\0';
    if (g->stats) {
        /* A relative folder is taken relative to the directory the process started in, not
         * wherever it happens to be at exit (programs chdir). */
        size_t pre = 0;
        if (opt->dir[0] != '/') {
            if (!SLUICE_REAL(getcwd)(g->dir, sizeof g->dir - 1))
                return -ENAMETOOLONG;
            pre = strlen(g->dir);
            g->dir[pre++] = '/';
        }
        size_t n = strlen(opt->dir);
        while (n > 1 && opt->dir[n - 1] == '/')
            n--;
        if (pre + n >= sizeof g->dir)
            return -ENAMETOOLONG;
        memcpy(g->dir + pre, opt->dir, n);
        g->dir[pre + n] = '\0';
    }
    sluice_host_name(g->hostname);
    sluice_host_id(g->host_id);
    long n = SLUICE_REAL(readlink)("/proc/self/exe", g->exe, sizeof g->exe - 1);
    g->exe[n > 0 ? n : 0] = '\0';

    sluice_trace_buffers_start(g->stats ? opt->limit : 0);
    if (sluice_trace_strings_start() != 0)
        return -ENOMEM;
    if (g->backtrace && sluice_trace_callsites_start(g->backtrace, opt->limit) != 0) {
        sluice_log_warn(
            "SLUICE_BACKTRACE: cannot load %s (Debian package %s) or map the call-site table; call sites are "
            "not recorded",
            SLUICE_LIBUNWIND, SLUICE_LIBUNWIND_DEB);
        g->backtrace = 0;
    }
    int err = 0;
    if (g->debug)
        err = sluice_trace_debug_open(opt->debug, g->rank);
    sluice_trace_enabled = true;
    return err;
}

void sluice_trace_stop(void)
{
    sluice_trace_enabled = false;
    sluice_trace_debug_close();
    sluice_trace_buffers_release();
    sluice_trace_strings_release();
    sluice_trace_callsites_release();
    sluice_trace_g.stats = sluice_trace_g.debug = false;
    sluice_trace_g.backtrace = 0;
}

/* The child of fork() is a new process with one thread: it starts with empty buffers (its
 * parent's events go to the parent's file), keeps the interned strings (ids stay valid), and
 * writes its own file at exit. */
void sluice_trace_after_fork_child(void)
{
    sluice_trace_buffers_release();
    identify_process();
    sluice_trace_g.flags |= SLUICE_TF_FLAG_FORKED;
    sluice_trace_g.exit_status = -1;
    atomic_store(&sluice_trace_g.dumped, 0);
    if (sluice_trace_g.debug)
        sluice_trace_debug_after_fork(sluice_trace_g.rank);
}
