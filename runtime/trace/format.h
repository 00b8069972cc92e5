/* SPDX-License-Identifier: MIT */
/* The on-disk layout of a sluice trace file (one per process, docs/TRACE.md).
 *
 * Lists inside a section carry no count: a reader walks the payload to its length.
 *
 * Shared by the writer (engine, runs at exit or inside a fatal-signal handler) and the
 * reader (util: tools and tests). Everything is in the writer's native byte order; the header
 * carries an endianness marker so a reader on a different machine refuses instead of
 * misreading. Layout:
 *
 *   header                                       struct sluice_tf_header
 *   section*                                     each: struct sluice_tf_section, payload
 *                                                padded to 8 bytes, then a u64 FNV-1a checksum
 *                                                of the padded payload followed by the section
 *                                                header (as it finally reads)
 *   END section                                  last; its payload is struct sluice_tf_end
 *
 * A file without a valid END section is truncated; a checksum mismatch is corruption. */
#ifndef SLUICE_TRACE_FORMAT_H
#define SLUICE_TRACE_FORMAT_H

#include <stdint.h>

#include "common/hash.h"      /* the sections' checksum */
#include "common/host_name.h" /* the host name's length */

#define SLUICE_TF_MAGIC "SLUICETR" /* 8 bytes, no terminator in the file */
#define SLUICE_TF_VERSION 2u       /* 2: host name and program path hold the longest Linux allows */
#define SLUICE_TF_ENDIAN 0x01020304u
#define SLUICE_TF_SUFFIX ".sluicetrace"

/* Header flags. */
#define SLUICE_TF_FLAG_SIGNAL 0x1u  /* written from a fatal-signal handler */
#define SLUICE_TF_FLAG_DROPPED 0x2u /* some events were not kept (see OVERFLOW) */
#define SLUICE_TF_FLAG_FORKED 0x4u  /* the process is a fork child of a traced parent */

/* Section tags. */
enum sluice_tf_tag {
    SLUICE_TF_STRINGS = 1,   /* per string: u32 id, u32 len, bytes (no NUL), padded to 4 */
    SLUICE_TF_KINDS = 2,     /* u32 count, then per kind: u32 len, name bytes; index = kind */
    SLUICE_TF_THREAD = 3,    /* struct sluice_tf_thread, then `events` struct sluice_tf_event */
    SLUICE_TF_CALLSITES = 4, /* per site: u32 id, u32 depth, u64 frames[depth] (innermost first) */
    SLUICE_TF_MODULES = 5,   /* per executable mapping: struct sluice_tf_module, path bytes
                                (no NUL) padded to 8 */
    SLUICE_TF_END = 0x454e44 /* "END": struct sluice_tf_end */
};

struct sluice_tf_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* sizeof(struct sluice_tf_header) */
    uint32_t endian;      /* SLUICE_TF_ENDIAN as written by the producer */
    uint32_t event_size;  /* sizeof(struct sluice_tf_event) */
    int32_t rank;         /* launcher rank (0 when not under a launcher) */
    int32_t size;         /* launcher size (1 when not under a launcher) */
    int32_t pid;
    int32_t ppid;
    uint64_t start_mono_ns;   /* CLOCK_MONOTONIC when tracing started in this process */
    uint64_t start_real_ns;   /* CLOCK_REALTIME at the same moment (to align ranks) */
    uint64_t end_mono_ns;     /* CLOCK_MONOTONIC when the file was written */
    uint64_t clock_res_ns;    /* clock_getres(CLOCK_MONOTONIC) */
    uint32_t clock_id;        /* CLOCK_MONOTONIC (the clock of every timestamp) */
    uint32_t flags;           /* SLUICE_TF_FLAG_* */
    uint64_t trace_limit;     /* SLUICE_TRACE_LIMIT in bytes */
    uint32_t backtrace_depth; /* SLUICE_BACKTRACE */
    int32_t exit_status;      /* exit() status, or -1 if unknown */
    uint32_t fatal_signal;    /* signal number if written from a handler, else 0 */
    uint32_t kind_count;      /* SLUICE_EV_COUNT of the producer */
    char hostname[72];        /* NUL-terminated: SLUICE_HOST_NAME_MAX bytes at most */
    char exe[4096];           /* /proc/self/exe, NUL-terminated: PATH_MAX bytes at most */
};

struct sluice_tf_section {
    uint32_t tag;
    uint32_t reserved;
    uint64_t length; /* payload bytes, excluding padding and checksum */
};

/* One event, identical in memory and on disk. */
struct sluice_tf_event {
    uint64_t t_ns;     /* CLOCK_MONOTONIC start */
    uint64_t dur_ns;   /* 0 for instants */
    uint16_t kind;     /* sluice_event_kind (its number in events.def) */
    uint16_t flags;    /* SLUICE_EVF_* */
    uint32_t callsite; /* id in the CALLSITES section, 0 = none */
    uint64_t a, b, c;  /* payload: meaning per kind in events.def */
};

#define SLUICE_TF_NO_THREAD                                                                                  \
    0xffffffffu /* index of the record counting events of threads that                                       \
                   got no memory at all (limit reached); tid -1 */
struct sluice_tf_thread {
    uint32_t index;          /* order of first use in the process, or SLUICE_TF_NO_THREAD */
    int32_t tid;             /* kernel thread id */
    uint64_t first_ns;       /* when the thread first touched the trace */
    uint64_t last_ns;        /* thread exit, or when the file was written */
    uint64_t time_ns[4];     /* user, sluice, mpi, sleep (sluice_time_state order) */
    uint64_t events;         /* events that follow */
    uint64_t dropped;        /* events not kept (sum of overflow[]) */
    uint64_t reentrant;      /* events dropped because recording re-entered (signal) */
    uint32_t overflow_count; /* entries in overflow[] that follow (= kind_count) */
    uint32_t reserved;
    /* followed by u64 overflow[overflow_count], then the events */
};

struct sluice_tf_module {
    uint64_t start, end; /* executable mapping [start, end) */
    uint64_t offset;     /* file offset of start */
    uint64_t bias;       /* load bias: file virtual address = ip - bias */
    uint32_t path_len;
    uint32_t reserved;
};

struct sluice_tf_end {
    uint64_t sections;          /* sections before END */
    uint64_t bytes;             /* file bytes before END's section header */
    uint64_t strings_dropped;   /* strings not interned (table full) */
    uint64_t callsites_dropped; /* call sites not interned (table full) */
    uint64_t header_fnv;        /* FNV-1a of the file header */
};

/* The sizes are part of the format: a change here is a new version. */
#ifdef __cplusplus
#define SLUICE_TF_ASSERT static_assert
#else
#define SLUICE_TF_ASSERT _Static_assert
#endif
SLUICE_TF_ASSERT(sizeof(struct sluice_tf_header) == 4272, "trace header layout");
SLUICE_TF_ASSERT(sizeof(((struct sluice_tf_header *)0)->hostname) > SLUICE_HOST_NAME_MAX,
                 "a whole host name");
SLUICE_TF_ASSERT(sizeof(struct sluice_tf_event) == 48, "trace event layout");
SLUICE_TF_ASSERT(sizeof(struct sluice_tf_thread) == 88, "trace thread record layout");
SLUICE_TF_ASSERT(sizeof(struct sluice_tf_module) == 40, "trace module record layout");
SLUICE_TF_ASSERT(sizeof(struct sluice_tf_end) == 40, "trace end record layout");

#endif
