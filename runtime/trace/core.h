/* Internal interfaces between the files of the trace core (not for other parts: they use
 * trace.h). The unit tests and the benchmark use these to start and stop tracing without
 * environment variables. */
#ifndef SLUICE_TRACE_CORE_H
#define SLUICE_TRACE_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_trace_options {
    const char *dir;        /* statistics stream folder; NULL/"" = no statistics stream */
    uint64_t limit;         /* bytes of event memory per process */
    const char *debug;      /* SLUICE_DEBUG spelling; NULL/"" = off */
    unsigned backtrace;     /* frames per event, 0 = none */
    int rank, size;         /* launcher rank and size */
};

/* A run of events owned by one thread; only its thread appends, anyone may read the first
 * `count` events (published with a release store). */
struct sluice_trace_chunk {
    struct sluice_trace_chunk *_Atomic next;  /* published by the owner when it moves on */
    uint32_t capacity;
    _Atomic uint32_t count;
    struct sluice_tf_event ev[];
};

/* Per-thread state. Lives in its own mapping so that it survives the thread (the file is
 * written at exit) and can be created inside a signal handler. Fields written by the owner
 * and read by the writer are accessed with relaxed atomics (torn values are impossible on
 * 64-bit targets, and a dump is a snapshot anyway). */
struct sluice_trace_thread {
    struct sluice_trace_thread *next;   /* registry list, immutable once published */
    uint32_t index;
    int32_t tid;
    uint64_t generation;                /* fork generation that created it */
    uint64_t first_ns;
    uint64_t last_ns;                   /* 0 while the thread runs */
    uint32_t state;                     /* sluice_time_state */
    uint64_t state_since;
    uint64_t time_ns[SLUICE_TIME_STATES];
    int busy;                           /* recording in progress: guards against re-entry */
    struct sluice_trace_chunk *_Atomic head;  /* first chunk, published once */
    struct sluice_trace_chunk *cur;           /* owner only */
    uint64_t reentrant;
    uint64_t overflow[SLUICE_EV_COUNT];
};

/* Process-wide trace state (one instance, `sluice_trace_g`). */
struct sluice_trace_global {
    bool stats;                         /* statistics stream on */
    bool debug;                         /* debug stream on */
    uint64_t limit;
    uint32_t chunk_events;
    _Atomic uint64_t used;              /* bytes of chunks handed out */
    struct sluice_trace_thread *_Atomic threads;
    _Atomic uint32_t thread_count;
    _Atomic uint64_t generation;        /* bumped in a fork child */
    unsigned backtrace;
    int rank, size;
    int32_t pid, ppid;
    uint64_t start_mono_ns, start_real_ns;
    uint32_t flags;                     /* SLUICE_TF_FLAG_* */
    int exit_status;                    /* -1 until exit() tells us */
    _Atomic int dumped;                 /* this process's file is written (or being written) */
    char dir[4096];
    char hostname[64];
    char exe[256];
};
extern struct sluice_trace_global sluice_trace_g;

/* lifecycle (start.c) */
int sluice_trace_start(const struct sluice_trace_options *opt);
void sluice_trace_stop(void);             /* tests: disable and release everything */
void sluice_trace_after_fork_child(void); /* reset to an empty trace of this new process */

/* buffers (buffer.c) */
int sluice_trace_buffers_start(uint64_t limit);
void sluice_trace_buffers_release(void);
struct sluice_trace_thread *sluice_trace_thread_self(void);  /* creates on first use */
void sluice_trace_thread_exit(void *ts);                     /* pthread key destructor */
uint64_t sluice_trace_events_kept(void);
uint64_t sluice_trace_events_dropped(sluice_event_kind kind);

/* strings (strings.c); ids start at 1 */
int sluice_trace_strings_start(void);
void sluice_trace_strings_release(void);
uint32_t sluice_trace_strings_count(void);                   /* ids 1..count are readable */
const char *sluice_trace_strings_get(uint32_t id, uint32_t *len);
uint64_t sluice_trace_strings_dropped(void);
void sluice_trace_strings_fork_prepare(void);
void sluice_trace_strings_fork_parent(void);
void sluice_trace_strings_fork_child(void);

/* call sites (callsite.c) */
int sluice_trace_callsites_start(unsigned depth, uint64_t limit);
void sluice_trace_callsites_release(void);
uint32_t sluice_trace_callsite_capture(void);                /* 0 = none */
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

/* writer (writer.c): async-signal-safe; 0 on success, -errno on failure */
int sluice_trace_write_file(const char *path, int fatal_signal);
/* Writes this process's file into the trace folder (once per process). */
int sluice_trace_dump(int fatal_signal);
int sluice_trace_make_dir(void);          /* mkdir -p the trace folder; 0 or -errno */
/* The module map section (modules.c), streamed through the writer. */
struct sluice_trace_out;
int sluice_trace_write_modules(struct sluice_trace_out *o);
void sluice_trace_out_bytes(struct sluice_trace_out *o, const void *p, size_t n);

/* launcher environment (launcher_env.c) */
int sluice_trace_env_rank(void);
int sluice_trace_env_size(void);

#ifdef __cplusplus
}
#endif
#endif
