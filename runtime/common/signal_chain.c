/* SPDX-License-Identifier: MIT */
/* sluice_signal_chain (signal_chain.h). */
#include "common/signal_chain.h"

#include "common/real.h"

#include <errno.h>
#include <string.h>

int sluice_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int (*f)(int, const struct sigaction *, struct sigaction *) = SLUICE_REAL(sigaction);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(sig, act, old);
}

void sluice_signal_chain_install(struct sluice_signal_chain *c, const int *sigs, size_t n,
                                 void (*fn)(int, siginfo_t *, void *))
{
    c->n = n < SLUICE_SIGNAL_CHAIN_MAX ? n : SLUICE_SIGNAL_CHAIN_MAX;
    for (size_t i = 0; i < c->n; i++) {
        c->sigs[i] = sigs[i];
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = fn;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sluice_real_sigaction(sigs[i], &sa, &c->previous[i]) != 0) {
            memset(&c->previous[i], 0, sizeof c->previous[i]); /* SIG_DFL: nothing replaced */
            continue;
        }
        /* An ignored signal stays ignored: sluice must not change what the program does. */
        if (!(c->previous[i].sa_flags & SA_SIGINFO) && c->previous[i].sa_handler == SIG_IGN)
            sluice_real_sigaction(sigs[i], &c->previous[i], NULL);
    }
}

const struct sigaction *sluice_signal_chain_previous(const struct sluice_signal_chain *c, int sig)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->sigs[i] == sig)
            return &c->previous[i];
    return NULL;
}

int sluice_signal_chain_call_previous(const struct sluice_signal_chain *c, int sig, siginfo_t *info,
                                      void *uctx)
{
    const struct sigaction *old = sluice_signal_chain_previous(c, sig);
    if (old != NULL && (old->sa_flags & SA_SIGINFO) && old->sa_sigaction != NULL) {
        old->sa_sigaction(sig, info, uctx);
        return 1;
    }
    if (old != NULL && !(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL &&
        old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return 1;
    }
    return 0;
}
