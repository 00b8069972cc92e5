/* SPDX-License-Identifier: MIT */
/* SIGTERM dispositions (runtime/ckpt/commit/commit_term.c): while sluice holds SIGTERM back to
 * drain node-local checkpoint versions first, the program's sigaction and signal calls for it
 * read and set the program's own disposition, which takes effect once the drain ends. Every other
 * signal, and SIGTERM when sluice does not hold it, goes straight to libc. */
#include "ckpt/commit/commit_term.h"
#include "common/export.h"
#include "common/real.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

/* A sanitizer runtime installs its own handlers through sigaction while it initialises, before
 * instrumented code may run (TSan crashed in this wrapper's function entry): every signal but
 * SIGTERM takes an uninstrumented path to libc, resolved as shim/opencl_dlsym.c resolves dlsym. */
#define NOT_INSTRUMENTED __attribute__((no_sanitize_address, no_sanitize_undefined, no_sanitize("thread")))
#define NEXT_OF(fn, type)                                                                                    \
    NOT_INSTRUMENTED static type next_##fn(void)                                                             \
    {                                                                                                        \
        static type p;                                                                                       \
        type f = __atomic_load_n(&p, __ATOMIC_ACQUIRE);                                                      \
        if (f == NULL) {                                                                                     \
            void *(*look)(void *, const char *) = sluice_real_dlsym_fn();                                    \
            f = look != NULL ? (type)look(RTLD_NEXT, #fn) : NULL;                                            \
            __atomic_store_n(&p, f, __ATOMIC_RELEASE);                                                       \
        }                                                                                                    \
        return f;                                                                                            \
    }
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
NEXT_OF(sigaction, sigaction_fn)
NEXT_OF(signal, signal_fn)
NEXT_OF(bsd_signal, signal_fn)
NEXT_OF(sysv_signal, signal_fn)

static int term_sigaction(const struct sigaction *act, struct sigaction *oldact)
{
    int rc;
    if (sluice_term_sigaction(act, oldact, &rc))
        return rc;
    return SLUICE_REAL(sigaction)(SIGTERM, act, oldact);
}

NOT_INSTRUMENTED SLUICE_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    return sig == SIGTERM ? term_sigaction(act, oldact) : next_sigaction()(sig, act, oldact);
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

NOT_INSTRUMENTED SLUICE_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    if (sig != SIGTERM)
        return next_signal()(sig, handler);
    return as_sigaction(sig, handler, 1, &old) ? old : SLUICE_REAL(signal)(sig, handler);
}

NOT_INSTRUMENTED SLUICE_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    if (sig != SIGTERM)
        return next_bsd_signal()(sig, handler);
    return as_sigaction(sig, handler, 1, &old) ? old : SLUICE_REAL(bsd_signal)(sig, handler);
}

NOT_INSTRUMENTED SLUICE_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    if (sig != SIGTERM)
        return next_sysv_signal()(sig, handler);
    return as_sigaction(sig, handler, 0, &old) ? old : SLUICE_REAL(sysv_signal)(sig, handler);
}
