/* SPDX-License-Identifier: MIT */
/* SIGTERM dispositions (runtime/ckpt/commit/commit_term.c): while sluice holds SIGTERM back to
 * drain node-local checkpoint versions first, the program's sigaction and signal calls for it
 * read and set the program's own disposition, which takes effect once the drain ends. Every other
 * signal, and SIGTERM when sluice does not hold it, goes straight to libc. */
#include "ckpt/commit/commit_term.h"
#include "common/export.h"
#include "common/real.h"

#include <signal.h>
#include <string.h>

SLUICE_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    int rc;
    if (sig == SIGTERM && sluice_term_sigaction(act, oldact, &rc))
        return rc;
    return SLUICE_REAL(sigaction)(sig, act, oldact);
}

/* signal() as glibc builds it on sigaction: BSD semantics (the handler stays, the signal is
 * blocked while it runs, calls restart); sysv_signal: reset to the default, not blocked. */
static int as_sigaction(int sig, sighandler_t handler, int bsd, sighandler_t *old)
{
    struct sigaction a, o;
    memset(&a, 0, sizeof a);
    a.sa_handler = handler;
    sigemptyset(&a.sa_mask);
    if (bsd)
        sigaddset(&a.sa_mask, sig);
    a.sa_flags = bsd ? SA_RESTART : SA_RESETHAND | SA_NODEFER;
    int rc;
    if (sig != SIGTERM || !sluice_term_sigaction(&a, &o, &rc))
        return 0;
    *old = rc == 0 ? o.sa_handler : SIG_ERR;
    return 1;
}

SLUICE_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    return as_sigaction(sig, handler, 1, &old) ? old : SLUICE_REAL(signal)(sig, handler);
}

SLUICE_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    return as_sigaction(sig, handler, 1, &old) ? old : SLUICE_REAL(bsd_signal)(sig, handler);
}

SLUICE_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    return as_sigaction(sig, handler, 0, &old) ? old : SLUICE_REAL(sysv_signal)(sig, handler);
}
