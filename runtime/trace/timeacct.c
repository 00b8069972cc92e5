/* SPDX-License-Identifier: MIT */
/* Per-thread time accounting: a thread is always in exactly one state (user, sluice, MPI
 * wait, sleep); each switch adds the time since the previous switch to the state it leaves.
 * Wrappers bracket their work with sluice_time_enter/leave, so nesting works naturally:
 * leave() restores whatever state enter() replaced. */
#include "trace/state.h"

static void switch_to(struct sluice_trace_thread *t, uint32_t state)
{
    uint64_t now = sluice_now_ns();
    __atomic_store_n(&t->time_ns[t->state], t->time_ns[t->state] + (now - t->state_since), __ATOMIC_RELAXED);
    __atomic_store_n(&t->state_since, now, __ATOMIC_RELAXED); /* read by writers on other threads */
    __atomic_store_n(&t->state, state, __ATOMIC_RELAXED);
}

sluice_time_state sluice_time_enter(sluice_time_state state)
{
    if (!sluice_trace_enabled || (unsigned)state >= SLUICE_TIME_STATES)
        return SLUICE_TIME_USER;
    struct sluice_trace_thread *t = sluice_trace_thread_self();
    if (!t)
        return SLUICE_TIME_USER;
    sluice_time_state prev = (sluice_time_state)t->state;
    if (prev != state)
        switch_to(t, state);
    return prev;
}

void sluice_time_leave(sluice_time_state previous)
{
    if (!sluice_trace_enabled || (unsigned)previous >= SLUICE_TIME_STATES)
        return;
    struct sluice_trace_thread *t = sluice_trace_thread_self();
    if (t && t->state != (uint32_t)previous)
        switch_to(t, previous);
}
