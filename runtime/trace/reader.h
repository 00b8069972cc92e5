/* SPDX-License-Identifier: MIT */
/* Reader of sluice trace files (format.h). Pure C (util): sluice-trace and the tests use it.
 * It validates everything before handing data out: structure, lengths, checksums, the END
 * record, and references between sections. A truncated or corrupted file is rejected with
 * one line saying what is wrong and where. */
#ifndef SLUICE_TRACE_READER_H
#define SLUICE_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_trace_rthread {
    struct sluice_tf_thread info;
    const uint64_t *overflow;             /* info.overflow_count entries, by kind */
    const struct sluice_tf_event *events; /* info.events entries, in recording order */
};

struct sluice_trace_rcallsite {
    uint32_t id, depth;
    const uint64_t *frames; /* innermost first */
};

struct sluice_trace_rmodule {
    struct sluice_tf_module m;
    char *path;
};

struct sluice_trace_file {
    char *path;
    struct sluice_tf_header header;
    char **strings;    /* by id; [0] and missing ids are NULL */
    uint32_t nstrings; /* highest id + 1 */
    char **kinds;      /* the producer's kind names, by kind number */
    uint32_t nkinds;
    struct sluice_trace_rthread *threads; /* by index: order of first use */
    size_t nthreads;
    struct sluice_trace_rcallsite *callsites;
    size_t ncallsites;
    struct sluice_trace_rmodule *modules;
    size_t nmodules;
    struct sluice_tf_end end;
    void *data; /* the file's bytes (events and frames point into it) */
    size_t size;
    bool mapped; /* data is a read-only mapping of the file */
};

/* Reads and validates `path`. 0 on success; -1 with one line in err otherwise. */
int sluice_trace_file_read(const char *path, struct sluice_trace_file **out, char *err, size_t errlen);
/* Same for bytes in memory (the reader keeps its own copy); `name` is used in messages. */
int sluice_trace_file_parse(const void *data, size_t size, const char *name, struct sluice_trace_file **out,
                            char *err, size_t errlen);
void sluice_trace_file_free(struct sluice_trace_file *f);

/* Lookups; NULL when absent. */
const char *sluice_trace_file_string(const struct sluice_trace_file *f, uint64_t id);
const char *sluice_trace_file_kind(const struct sluice_trace_file *f, unsigned kind);
const struct sluice_trace_rcallsite *sluice_trace_file_callsite(const struct sluice_trace_file *f,
                                                                uint32_t id);
/* The executable mapping holding `ip`. */
const struct sluice_trace_rmodule *sluice_trace_file_module(const struct sluice_trace_file *f, uint64_t ip);

#ifdef __cplusplus
}
#endif
#endif
