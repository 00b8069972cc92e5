/* SPDX-License-Identifier: MIT */
/* The trace core's in-memory state, shared by its C files only (C11 atomics: not for C++;
 * tests use the functions in core.h). */
#ifndef SLUICE_TRACE_STATE_H
#define SLUICE_TRACE_STATE_H

#include <stdatomic.h>

#include "common/host_id.h"
#include "trace/core.h"
#include "trace/format.h"

/* A run of events owned by one thread; only its thread appends, anyone may read the first
 * `count` events (published with a release store). */
struct sluice_trace_chunk {
    struct sluice_trace_chunk *_Atomic next; /* published by the owner when it moves on */
    uint32_t bytes;                          /* size of this chunk's mapping */
    uint32_t capacity;
    _Atomic uint32_t count;
    struct sluice_tf_event ev[];
};

/* Per-thread state. Lives in its own mapping so that it survives the thread (the file is
 * written at exit) and can be created inside a signal handler. Fields written by the owner
 * and read by the writer are accessed with relaxed atomics (torn values are impossible on
 * 64-bit targets, and a dump is a snapshot anyway). */
struct sluice_trace_thread {
    struct sluice_trace_thread *next; /* registry list, immutable once published */
    uint32_t index;
    int32_t tid;
    uint64_t generation; /* fork generation that created it */
    uint64_t first_ns;
    uint64_t last_ns; /* 0 while the thread runs */
    uint32_t state;   /* sluice_time_state */
    uint64_t state_since;
    uint64_t time_ns[SLUICE_TIME_STATES];
    int busy;                                /* recording in progress: guards against re-entry */
    struct sluice_trace_chunk *_Atomic head; /* first chunk, published once */
    struct sluice_trace_chunk *cur;          /* owner only */
    uint32_t next_chunk_bytes;               /* chunks grow from 4 KiB to the maximum */
    uint64_t reentrant;
    uint64_t overflow[SLUICE_EV_COUNT];
};

/* Process-wide trace state (one instance, `sluice_trace_g`). */
struct sluice_trace_global {
    bool stats; /* statistics stream on */
    bool debug; /* debug stream on */
    uint64_t limit;
    uint32_t chunk_max_bytes;                          /* largest chunk (64 KiB, less for small limits) */
    _Atomic uint64_t used;                             /* bytes of chunks and thread states handed out */
    _Atomic uint64_t orphan_overflow[SLUICE_EV_COUNT]; /* events of threads that got no state */
    struct sluice_trace_thread *_Atomic threads;
    _Atomic uint32_t thread_count;
    _Atomic uint64_t generation; /* bumped in a fork child */
    unsigned backtrace;
    int rank, size;
    int32_t pid, ppid;
    uint64_t start_mono_ns, start_real_ns;
    uint32_t flags;     /* SLUICE_TF_FLAG_* */
    int exit_status;    /* -1 until exit() tells us */
    _Atomic int dumped; /* this process's file is written (or being written) */
    char dir[4096];
    char hostname[sizeof((struct sluice_tf_header *)0)->hostname]; /* as the file's header holds them */
    char exe[sizeof((struct sluice_tf_header *)0)->exe];
    char host_id[SLUICE_HOST_ID_LEN + 1]; /* in the file's name: pids repeat across hosts */
};
extern struct sluice_trace_global sluice_trace_g;

#endif
