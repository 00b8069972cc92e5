/* SPDX-License-Identifier: MIT */
/* See log.h. Formatting uses vsnprintf into a stack buffer; the write is a raw syscall so
 * that it never re-enters sluice's own write() wrapper. */
#include "common/log.h"

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

void sluice_log_raw(const char *msg, unsigned long len)
{
    int saved = errno;
    if (syscall(SYS_fcntl, 2, F_GETFD) != -1) {
        while (len > 0) {
            long n = syscall(SYS_write, 2, msg, len);
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
    char line[1024];
    const char *rank = rank_from_launcher();
    int n = rank ? snprintf(line, sizeof line, "sluice[%s]: %s", rank, level)
                 : snprintf(line, sizeof line, "sluice: %s", level);
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = (m < 0) ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
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

/* Leaves at once without running exit handlers: a raw exit_group, since the exported _exit is
 * sluice's own wrapper (it would run the exit commit that a fatal error promises to skip). */
static _Noreturn void exit_now(int status)
{
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
