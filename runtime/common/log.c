/* SPDX-License-Identifier: MIT */
/* See log.h. Formatting uses vsnprintf into a stack buffer; the write is a raw syscall so
 * that it never re-enters sluice's own write() wrapper. */
#include "common/log.h"

#include "common/init_order.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *rank_from_launcher(void)
{
    static const char *const vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

/* A copy of fd 2 taken at start where checkpoints are captured: programs such as head and dd
 * close stderr before the exit commit runs, whose failure line must still reach the user.
 * CLOEXEC and high, so that exec'd programs and the program's own numbering never see it. */
static int kept_stderr = -1;

__attribute__((constructor(SLUICE_PRIO_CONFIG))) static void log_keep_stderr(void)
{
    const char *capture = getenv("SLUICE_CAPTURE");
    if (capture && *capture)
        kept_stderr = (int)syscall(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 200);
}

void sluice_log_raw(const char *msg, unsigned long len)
{
    int saved = errno;
    int fd = 2; /* the program's stderr while it has one (it may have redirected it) */
    if (syscall(SYS_fcntl, 2, F_GETFD) == -1)
        fd = kept_stderr >= 0 && syscall(SYS_fcntl, kept_stderr, F_GETFD) != -1 ? kept_stderr : -1;
    if (fd >= 0) {
        while (len > 0) {
            long n = syscall(SYS_write, fd, msg, len);
            if (n <= 0)
                break;
            msg += n;
            len -= (unsigned long)n;
        }
    }
    errno = saved;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[3 * 4096 + 512]; /* the longest message whole (three paths: commit_exit.c); the
                                * signal handlers write with sluice_log_raw instead */
    const char *rank = rank_from_launcher();
    int n = rank ? snprintf(line, sizeof line, "sluice[%s]: %s", rank, level)
                 : snprintf(line, sizeof line, "sluice: %s", level);
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = (m < 0) ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2) { /* longer still: marked as cut, never silently */
        len = sizeof line - 2;
        memcpy(line + len - 3, "...", 3);
    }
    line[len++] = '\n';
    sluice_log_raw(line, len);
}

void sluice_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void sluice_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

/* The MPI part's (mpi/launcher_watch.h): a rank stopped before its MPI started has the launcher
 * end the job instead of leaving the other ranks waiting for it in MPI's start-up. Weak: unit
 * tests link this file without the MPI part. */
extern void sluice_launcher_watch_fatal(int status) __attribute__((weak));

/* Leaves at once without running exit handlers: a raw exit_group, since the exported _exit is
 * sluice's own wrapper (it would run the exit commit that a fatal error promises to skip). */
static _Noreturn void exit_now(int status)
{
    if (sluice_launcher_watch_fatal)
        sluice_launcher_watch_fatal(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

void sluice_fatal_config(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
    exit_now(2);
}

void sluice_fatal(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
    exit_now(status);
}
