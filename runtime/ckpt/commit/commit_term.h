/* SPDX-License-Identifier: MIT */
/* SIGTERM held back until this process's checkpoint sets are drained (commit_term.c,
 * docs/REDUNDANCY.md, "SIGTERM"). */
#ifndef SLUICE_CKPT_COMMIT_COMMIT_TERM_H
#define SLUICE_CKPT_COMMIT_COMMIT_TERM_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Puts sluice's SIGTERM handler in front of the program's disposition (SLUICE_TERM_DRAIN above
 * 0; an ignored SIGTERM stays ignored). Until commit_term_ready, a SIGTERM goes to the program
 * at once. */
void commit_term_arm(void);
/* This process holds node-local versions: a SIGTERM from now on drains first (starts the
 * drain thread once). */
void commit_term_ready(void);
/* The program's sigaction for SIGTERM while sluice holds it: reads and sets the program's
 * disposition (*rc the call's result) and returns 1; 0 when the call is to pass through. */
int sluice_term_sigaction(const struct sigaction *act, struct sigaction *oldact, int *rc);

#ifdef __cplusplus
}
#endif
#endif
