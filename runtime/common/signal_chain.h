/* SPDX-License-Identifier: MIT */
/* Fatal-signal handlers that sit in front of whatever handler was there: the trace core (to
 * write the trace) and a serving rank of distributed OpenCL (to say which rank died) each keep
 * one chain. A chain remembers the handlers it replaced, leaves ignored signals ignored (sluice
 * must not change what the program does), and calls the replaced handler from inside its own.
 * Everything here is async-signal-safe except install. */
#ifndef SLUICE_COMMON_SIGNAL_CHAIN_H
#define SLUICE_COMMON_SIGNAL_CHAIN_H

#include <signal.h>
#include <stddef.h>

#define SLUICE_SIGNAL_CHAIN_MAX 8

struct sluice_signal_chain {
    int sigs[SLUICE_SIGNAL_CHAIN_MAX];
    size_t n;
    struct sigaction previous[SLUICE_SIGNAL_CHAIN_MAX];
};

/* libc's sigaction, not the program's view that sluice's own export gives (shim/signals.c):
 * resolved at the first call (install does one), then async-signal-safe. */
int sluice_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Installs fn (SA_SIGINFO | SA_ONSTACK) for the n signals of sigs (at most
 * SLUICE_SIGNAL_CHAIN_MAX), remembering the handlers it replaces in c. */
void sluice_signal_chain_install(struct sluice_signal_chain *c, const int *sigs, size_t n,
                                 void (*fn)(int, siginfo_t *, void *));

/* The handler sig had before install, or NULL if the chain does not hold sig. */
const struct sigaction *sluice_signal_chain_previous(const struct sluice_signal_chain *c, int sig);

/* Calls the handler sig had before, if it was a function (not SIG_DFL or SIG_IGN). Returns 1
 * if it called one. */
int sluice_signal_chain_call_previous(const struct sluice_signal_chain *c, int sig, siginfo_t *info,
                                      void *uctx);

#endif
