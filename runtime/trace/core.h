/* SPDX-License-Identifier: MIT */
/* Internal interfaces between the files of the trace core (not for other parts: they use
 * trace.h). The unit tests and the benchmark use these to start and stop tracing without
 * environment variables. */
#ifndef SLUICE_TRACE_CORE_H
#define SLUICE_TRACE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_trace_options {
    const char *dir;    /* statistics stream folder; NULL/"" = no statistics stream */
    uint64_t limit;     /* bytes of event memory per process */
    const char *debug;  /* SLUICE_DEBUG spelling; NULL/"" = off */
    unsigned backtrace; /* frames per event, 0 = none */
    int rank, size;     /* launcher rank and size */
};

struct sluice_trace_thread; /* state.h */
struct sluice_trace_out;    /* writer.c */

/* lifecycle (start.c) */
int sluice_trace_start(const struct sluice_trace_options *opt);
void sluice_trace_stop(void);             /* tests: disable and release everything */
void sluice_trace_after_fork_child(void); /* reset to an empty trace of this new process */

/* buffers (buffer.c) */
int sluice_trace_buffers_start(uint64_t limit);
void sluice_trace_buffers_release(void);
struct sluice_trace_thread *sluice_trace_thread_self(void); /* creates on first use */
void sluice_trace_thread_exit(void *ts);                    /* pthread key destructor */
uint64_t sluice_trace_events_kept(void);
uint64_t sluice_trace_events_dropped(sluice_event_kind kind);
uint64_t sluice_trace_bytes_used(void); /* of the SLUICE_TRACE_LIMIT budget */

/* strings (strings.c); ids start at 1 */
int sluice_trace_strings_start(void);
void sluice_trace_strings_release(void);
uint32_t sluice_trace_strings_count(void); /* ids 1..count are readable */
const char *sluice_trace_strings_get(uint32_t id, uint32_t *len);
uint64_t sluice_trace_strings_dropped(void);
void sluice_trace_strings_fork_prepare(void);
void sluice_trace_strings_fork_parent(void);
void sluice_trace_strings_fork_child(void);

/* call sites (callsite.c) */
int sluice_trace_callsites_start(unsigned depth, uint64_t limit);
void sluice_trace_callsites_release(void);
uint32_t sluice_trace_callsite_capture(void); /* 0 = none */
uint32_t sluice_trace_callsites_slots(void);
/* Frames of slot `i` (0-based) if it holds a call site: returns depth, 0 if empty. */
uint32_t sluice_trace_callsites_get(uint32_t i, const uint64_t **frames);
uint64_t sluice_trace_callsites_dropped(void);

/* debug stream (debug.c) */
bool sluice_trace_debug_wanted(const char *spec);
int sluice_trace_debug_open(const char *spec, int rank);
void sluice_trace_debug_close(void);
void sluice_trace_debug_after_fork(int rank);
void sluice_trace_debug_emit(const struct sluice_trace_thread *ts, const struct sluice_tf_event *ev);
struct sluice_textbuf; /* rawio.h */
void sluice_trace_debug_prefix(struct sluice_textbuf *b, uint64_t t_ns, uint64_t tid);
void sluice_trace_debug_write(const char *line, size_t len);
extern const char *const sluice_debug_tag_names[]; /* debug_tags.def's names, by tag */

/* writer (writer.c): async-signal-safe; 0 on success, -errno on failure */
int sluice_trace_write_file(const char *path, int fatal_signal);
/* Writes this process's file into the trace folder (once per process). */
int sluice_trace_dump(int fatal_signal);
int sluice_trace_make_dir(void); /* mkdir -p the trace folder; 0 or -errno */
/* The module map section (modules.c), streamed through the writer. */
int sluice_trace_write_modules(struct sluice_trace_out *o);
void sluice_trace_out_bytes(struct sluice_trace_out *o, const void *p, size_t n);

/* launcher environment (launcher_env.c) */
int sluice_trace_env_rank(void);
int sluice_trace_env_size(void);

#ifdef __cplusplus
}
#endif
#endif
