/* SPDX-License-Identifier: MIT */
/* `sluice-trace summary`: a list of sections, each in its own file (section_*.c), printed in
 * ascending `order`. A part of sluice that records its own events adds a section by adding
 * one file with SUMMARY_SECTION(...); nothing else changes. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_SUMMARY_H
#define SLUICE_TOOLS_SLUICE_TRACE_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "traceset.h"

struct summary_ctx {
    const struct trace_set *set;
    FILE *out;
    int top;           /* rows in "top N" tables */
    bool symbolize;    /* run addr2line on call sites */
    bool per_rank;     /* a row per rank (default for up to 16 ranks; else spreads) */
    const char *ranks; /* --ranks=LIST: the ranks whose rows are shown (NULL: all) */
};

/* Whether a per-rank row or table of `rank` is shown (--ranks=LIST). */
bool summary_rank_shown(const struct summary_ctx *ctx, int rank);

struct summary_section {
    const char *name;
    int order; /* 10 overview, 20 events, 30 time, 40 call sites, 90 warnings */
    void (*print)(const struct summary_ctx *ctx);
    struct summary_section *next;
};

void summary_register(struct summary_section *s);
int summary_main(int argc, char **argv);

#define SUMMARY_SECTION(var, title, ord, fn)                                                                 \
    static struct summary_section var = {title, ord, fn, NULL};                                              \
    __attribute__((constructor)) static void var##_register(void)                                            \
    {                                                                                                        \
        summary_register(&var);                                                                              \
    }

/* Shared formatting. */
void summary_heading(const struct summary_ctx *ctx, const char *title);
/* Bytes as "12.3 MiB". */
const char *summary_bytes(double bytes, char *buf, size_t len);

#endif
