/* SPDX-License-Identifier: MIT */
/* The debug stream as the other rooms use it: which subsystems are selected (SLUICE_DEBUG,
 * trace/debug_tags.def), a reason line for one of them, and the check macro that returns an
 * error code with its reason (PoCL's POCL_RETURN_ERROR_ON). The events' own lines are written
 * by the trace core (debug.c). */
#ifndef SLUICE_TRACE_DEBUG_H
#define SLUICE_TRACE_DEBUG_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sluice_debug_tag {
#define SLUICE_DEBUG_TAG(name, what) SLUICE_DEBUG_##name,
#include "trace/debug_tags.def"
#undef SLUICE_DEBUG_TAG
    SLUICE_DEBUG_NTAGS
};

/* Bit 1 << tag for each selected subsystem; 0 while the debug stream is off. */
extern unsigned sluice_debug_tags;

static inline bool sluice_debug_on(enum sluice_debug_tag tag)
{
    return (__atomic_load_n(&sluice_debug_tags, __ATOMIC_RELAXED) >> tag) & 1u;
}

/* One line "sluice[rank] +secs pid P tid T TAG: text" on the debug stream if `tag` is selected.
 * Formats with vsnprintf: not for signal handlers. */
void sluice_debug_say(enum sluice_debug_tag tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* if (cond) return code, saying why on the debug stream under the including file's subsystem,
 * SLUICE_DEBUG_HERE (a tag name, defined before use: `#define SLUICE_DEBUG_HERE dist`):
 *     SLUICE_RETURN_ERROR_ON(q == NULL, CL_INVALID_COMMAND_QUEUE, "no queue");
 * SLUICE_ERROR_ON sets `r` instead of returning, for a check that must release a lock first. */
#define SLUICE_DEBUG_TAG_OF(here) SLUICE_DEBUG_TAG_OF_(here)
#define SLUICE_DEBUG_TAG_OF_(here) SLUICE_DEBUG_##here
#define SLUICE_DEBUG_REASON(code_name, ...)                                                                  \
    do {                                                                                                     \
        if (sluice_debug_on(SLUICE_DEBUG_TAG_OF(SLUICE_DEBUG_HERE)))                                         \
            sluice_debug_reason(SLUICE_DEBUG_TAG_OF(SLUICE_DEBUG_HERE), __func__, code_name, __VA_ARGS__);   \
    } while (0)
#define SLUICE_RETURN_ERROR_ON(cond, code, ...)                                                              \
    do {                                                                                                     \
        if (__builtin_expect(!!(cond), 0)) {                                                                 \
            SLUICE_DEBUG_REASON(#code, __VA_ARGS__);                                                         \
            return (code);                                                                                   \
        }                                                                                                    \
    } while (0)
#define SLUICE_ERROR_ON(r, cond, code, ...)                                                                  \
    do {                                                                                                     \
        if ((r) == 0 && __builtin_expect(!!(cond), 0)) {                                                     \
            SLUICE_DEBUG_REASON(#code, __VA_ARGS__);                                                         \
            (r) = (code);                                                                                    \
        }                                                                                                    \
    } while (0)

/* The line of the macros above: "TAG: function: reason -> CODE". */
void sluice_debug_reason(enum sluice_debug_tag tag, const char *func, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#ifdef __cplusplus
}
#endif
#endif
