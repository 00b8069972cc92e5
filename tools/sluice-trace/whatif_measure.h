/* SPDX-License-Identifier: MIT */
/* What `sluice-trace whatif`'s model takes from a trace: the last checkpoint version's members,
 * the home's metadata operations while it became durable, the program's own file operations,
 * and how the run's two-phase shuffle used the nodes (docs/TRACE.md, What if). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_WHATIF_MEASURE_H
#define SLUICE_TOOLS_SLUICE_TRACE_WHATIF_MEASURE_H

#include "traceset.h"

#include <stdint.h>
#include <stdio.h>

struct whatif_measured {
    double member_bytes;     /* b: mean member size of the last version */
    int members;             /* members of that version (0: no version in the trace) */
    double container_meta;   /* m_c: the home's metadata operations while the version became durable */
    double file_meta;        /* m_f: per member file, the program's opens, closes and fsyncs */
    double durable_s;        /* that version's time until durable, or -1 */
    uint64_t begin_ns;       /* its COMMIT_DURABLE's start at the home (CLOCK_MONOTONIC) */
    int home_rank, home_tid; /* the home and its thread that recorded COMMIT_DURABLE */
    double shuffle_bytes;    /* bytes the run's writers sent to aggregators (COMMIT_SHUFFLE) */
    double remote_share;     /* x: the share of them sent to an aggregator on another host */
    double self_share;       /* s: the share a writer kept (its own aggregator side: no message) */
    double round_bytes;      /* the aggregators' round size (COMMIT_MEMORY), 16 MiB if none recorded */
    int direct;              /* the run took the direct path: no COMMIT_SHUFFLE (writers copy their stage) */
    int ranks, hosts;
};

void whatif_measure(const struct trace_set *set, struct whatif_measured *w);

/* `whatif --window`: prints "T0 T1 RANK:TID..." on one line, the last version's commit window at
 * its home (CLOCK_MONOTONIC ns, start and durable) and every thread, of any rank, that recorded a
 * COMMIT_* event overlapping it (the threads doing the commit; bench/whatif_cpu.py --window), the
 * home's thread that recorded COMMIT_DURABLE first. */
void whatif_print_window(const struct trace_set *set, const struct whatif_measured *w, FILE *o);

#endif
