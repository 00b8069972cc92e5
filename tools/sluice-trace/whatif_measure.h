/* SPDX-License-Identifier: MIT */
/* What `sluice-trace whatif`'s model takes from a trace: the last checkpoint version's members,
 * the home's metadata operations while it became durable, the program's own file operations,
 * and how the run's two-phase shuffle used the nodes (docs/TRACE.md, What if). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_WHATIF_MEASURE_H
#define SLUICE_TOOLS_SLUICE_TRACE_WHATIF_MEASURE_H

#include "traceset.h"

struct whatif_measured {
    double member_bytes;   /* b: mean member size of the last version */
    int members;           /* members of that version (0: no version in the trace) */
    double container_meta; /* m_c: the home's metadata operations while the version became durable */
    double file_meta;      /* m_f: per member file, the program's opens, closes and fsyncs */
    double durable_s;      /* that version's time until durable, or -1 */
    double shuffle_bytes;  /* bytes the run's writers sent to aggregators (COMMIT_SHUFFLE) */
    double remote_share;   /* x: the share of them sent to an aggregator on another host */
    double self_share;     /* s: the share a writer kept (its own aggregator side: no message) */
    double round_bytes;    /* the aggregators' round size (COMMIT_MEMORY), 16 MiB if none recorded */
    int direct;            /* the run took the direct path: no COMMIT_SHUFFLE (writers copy their stage) */
    int ranks, hosts;
};

void whatif_measure(const struct trace_set *set, struct whatif_measured *w);

#endif
