/* SPDX-License-Identifier: MIT */
/* The progress thread's way to sleep: a timed wait that another thread can cut short.
 *
 * Short sleeps use clock_nanosleep and are never interrupted: a waker only bumps a counter
 * (no system call on the posting thread), and the sleeper sees it at most one short sleep
 * later. Long sleeps park on a futex with an absolute CLOCK_MONOTONIC deadline (the same
 * timing as clock_nanosleep(TIMER_ABSTIME)), and a waker that finds the sleeper parked issues
 * one FUTEX_WAKE, so posting after a long idle spell does not wait out the whole sleep. */
#ifndef SLUICE_PROGRESS_SLEEPER_H
#define SLUICE_PROGRESS_SLEEPER_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdatomic.h> /* not in C++ before C++23: the tests see plain integers (below) */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Sleeps of at most this long are plain clock_nanosleep; longer ones park. */
#define SLUICE_SLEEPER_PARK_NS 50000u

#ifdef __cplusplus
#define SLUICE_SLEEPER_ATOMIC(t) t /* C++ (tests) only hands the struct to the functions */
#else
#define SLUICE_SLEEPER_ATOMIC(t) _Atomic t
#endif

struct sluice_sleeper {
    SLUICE_SLEEPER_ATOMIC(uint32_t) seq; /* bumped by every wake */
    SLUICE_SLEEPER_ATOMIC(int) parked;   /* the sleeper is (about to be) in FUTEX_WAIT */
};

void sluice_sleeper_init(struct sluice_sleeper *s);
/* Sleeps up to ns nanoseconds; returns early if seq is no longer `seen`. Returns 1 if it was
 * woken (seq changed), 0 if the time ran out. */
int sluice_sleeper_wait(struct sluice_sleeper *s, uint64_t ns, uint32_t seen);
/* Bumps seq and, if the sleeper is parked, wakes it. Safe from any thread. */
void sluice_sleeper_wake(struct sluice_sleeper *s);
/* The wake counter to pass to the next wait, and whether the sleeper is parked now. */
uint32_t sluice_sleeper_seq(struct sluice_sleeper *s);
int sluice_sleeper_parked(struct sluice_sleeper *s);

#ifdef __cplusplus
}
#endif
#endif
