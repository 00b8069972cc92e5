/* SPDX-License-Identifier: MIT */
/* sluice's public API, for programs that link the runtime directly instead of preloading it.
 * Nothing here is needed by an unmodified program: LD_PRELOAD and SLUICE_* variables suffice. */
#ifndef SLUICE_H
#define SLUICE_H

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the loaded library. */
const char *sluice_version(void);

/* Adds a labelled instant to the trace (no-op when tracing is off). */
void sluice_trace_mark(const char *label);

#ifdef __cplusplus
}
#endif
#endif
