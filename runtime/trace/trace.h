/* SPDX-License-Identifier: MIT */
/* Trace core: the in-memory statistics stream every part of sluice records into.
 *
 * Contract for callers (the trace part owns the implementation):
 *  - sluice_trace_active() is an inline load; when false, callers skip all trace work.
 *  - Recording is lock-free: each thread appends fixed-size events to its own buffer.
 *    Memory is bounded by SLUICE_TRACE_LIMIT; overflow is counted, never fatal.
 *  - Strings (paths, function names) are interned once and referenced by id.
 *  - Time accounting: each thread's wall time is split into user code, sluice code,
 *    MPI waits and sleeping; wrappers bracket their work with sluice_time_enter/leave.
 *  - Event kinds are listed once in trace/events.def. */
#ifndef SLUICE_TRACE_TRACE_H
#define SLUICE_TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
#define SLUICE_EVENT(number, name, category, a, b, c) SLUICE_EV_##name = number,
#include "trace/events.def"
#undef SLUICE_EVENT
} sluice_event_kind;

/* The number of kinds: one slot per line of events.def. The numbers are dense (kinds.c checks
 * each is unique and below this), so every kind is below SLUICE_EV_COUNT. */
enum {
#define SLUICE_EVENT(number, name, category, a, b, c) SLUICE_EV_SLOT_##name,
#include "trace/events.def"
#undef SLUICE_EVENT
    SLUICE_EV_COUNT
};

typedef enum {
    SLUICE_TIME_USER = 0, /* the application's own code */
    SLUICE_TIME_SLUICE,   /* inside sluice (wrappers, runtime work) */
    SLUICE_TIME_MPI,      /* waiting on MPI */
    SLUICE_TIME_SLEEP,    /* micro-sleeping (progress engine back-off) */
    SLUICE_TIME_STATES
} sluice_time_state;

/* Set by the trace part's constructor when SLUICE_TRACE_DIR or SLUICE_DEBUG is set. */
extern bool sluice_trace_enabled;
static inline bool sluice_trace_active(void)
{
    return __builtin_expect(sluice_trace_enabled, 0);
}

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). */
uint64_t sluice_now_ns(void);

/* Records one event that started at t_ns and lasted dur_ns (0 for instants), with three
 * payload words whose meaning events.def documents per kind. flags: SLUICE_EVF_*. */
#define SLUICE_EVF_ERROR 0x1u /* the call failed; payload c carries errno or the error code */
void sluice_trace_record(sluice_event_kind kind, uint32_t flags, uint64_t t_ns, uint64_t dur_ns, uint64_t a,
                         uint64_t b, uint64_t c);

static inline void sluice_trace_instant(sluice_event_kind kind, uint64_t a, uint64_t b, uint64_t c)
{
    if (sluice_trace_active())
        sluice_trace_record(kind, 0, sluice_now_ns(), 0, a, b, c);
}

/* This process ends now with _exit(status), skipping exit()'s handlers: records its exit and
 * writes its trace file as exit() would have. */
void sluice_trace_exit_now(int status);

/* Interns a string for this process's trace; returns a stable id (0 = none). */
uint32_t sluice_trace_string(const char *s);

/* Time accounting: switch this thread to `state`, returning the previous state. */
sluice_time_state sluice_time_enter(sluice_time_state state);
void sluice_time_leave(sluice_time_state previous);

#ifdef __cplusplus
}
#endif
#endif
