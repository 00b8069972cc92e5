/* SPDX-License-Identifier: MIT */
/* Static facts about event kinds, expanded from events.def: names, categories, the meaning of
 * each payload word, and which words hold byte counts or string ids. Pure (util): used by the
 * debug stream, the reader and sluice-trace. */
#ifndef SLUICE_TRACE_KINDS_H
#define SLUICE_TRACE_KINDS_H

#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_kind_info {
    const char *name;       /* "PROCESS_START" */
    const char *category;   /* "core" */
    const char *meaning[3]; /* payload a, b, c ("" = unused) */
};

extern const struct sluice_kind_info sluice_kinds[SLUICE_EV_COUNT];

/* Name of `kind`, or NULL if out of range. */
const char *sluice_kind_name(unsigned kind);
/* Index (0..2) of the payload word that counts bytes ("bytes" in events.def), or -1. */
int sluice_kind_bytes_word(unsigned kind);
/* True if payload word `w` (0..2) of `kind` is a string id ("string id" in events.def). */
int sluice_kind_word_is_string(unsigned kind, int w);

#ifdef __cplusplus
}
#endif
#endif
