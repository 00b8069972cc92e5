/* SPDX-License-Identifier: MIT */
/* SIGTERM dispositions (runtime/ckpt/commit/commit_term.c): while sluice holds SIGTERM back to
 * drain node-local checkpoint versions first, the program's sigaction and signal calls for it
 * read and set the program's own disposition, which takes effect once the drain ends. Every other
 * signal, and SIGTERM when sluice does not hold it, goes straight to libc. glibc builds signal,
 * bsd_signal, sysv_signal, ssignal, sigset, sigignore and siginterrupt on its internal sigaction,
 * which no wrapper of sigaction sees: each is wrapped here, the whole class that sets or reads
 * a disposition (sighold, sigrelse and sigpause change the mask only). */
#include "ckpt/commit/commit_term.h"
#include "common/export.h"
#include "common/real.h"

#include <dlfcn.h>
#include <pthread.h>
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
NEXT_OF(ssignal, signal_fn)
NEXT_OF(sigset, signal_fn)
typedef int (*sigignore_fn)(int);
typedef int (*siginterrupt_fn)(int, int);
NEXT_OF(sigignore, sigignore_fn)
NEXT_OF(siginterrupt, siginterrupt_fn)

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

/* ssignal (SVID) is signal. */
NOT_INSTRUMENTED SLUICE_EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
    sighandler_t old;
    if (sig != SIGTERM)
        return next_ssignal()(sig, handler);
    return as_sigaction(sig, handler, 1, &old) ? old : next_ssignal()(sig, handler);
}

/* sigset (System V) as glibc builds it: SIG_HOLD adds the signal to the mask and reports the
 * disposition (SIG_HOLD where it was blocked); any other sets it with no flags and an empty mask
 * and unblocks the signal. For SIGTERM on sigaction's path: sluice's hold sees it. */
static sighandler_t term_sigset(sighandler_t disp)
{
    sigset_t set, was;
    struct sigaction a, o;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    if (disp == SIG_HOLD) {
        if (pthread_sigmask(SIG_BLOCK, &set, &was) != 0)
            return SIG_ERR;
        if (sigismember(&was, SIGTERM))
            return SIG_HOLD;
        return term_sigaction(NULL, &o) == 0 ? o.sa_handler : SIG_ERR;
    }
    memset(&a, 0, sizeof a);
    a.sa_handler = disp;
    sigemptyset(&a.sa_mask);
    if (term_sigaction(&a, &o) != 0 || pthread_sigmask(SIG_UNBLOCK, &set, &was) != 0)
        return SIG_ERR;
    return sigismember(&was, SIGTERM) ? SIG_HOLD : o.sa_handler;
}

NOT_INSTRUMENTED SLUICE_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    return sig == SIGTERM ? term_sigset(disp) : next_sigset()(sig, disp);
}

static int term_sigignore(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = SIG_IGN;
    sigemptyset(&a.sa_mask);
    return term_sigaction(&a, NULL);
}

NOT_INSTRUMENTED SLUICE_EXPORT int sigignore(int sig)
{
    return sig == SIGTERM ? term_sigignore() : next_sigignore()(sig);
}

/* siginterrupt: the disposition as it is, with SA_RESTART cleared (flag) or set. */
static int term_siginterrupt(int flag)
{
    struct sigaction a;
    if (term_sigaction(NULL, &a) != 0)
        return -1;
    if (flag)
        a.sa_flags &= ~SA_RESTART;
    else
        a.sa_flags |= SA_RESTART;
    return term_sigaction(&a, NULL);
}

NOT_INSTRUMENTED SLUICE_EXPORT int siginterrupt(int sig, int flag)
{
    return sig == SIGTERM ? term_siginterrupt(flag) : next_siginterrupt()(sig, flag);
}
