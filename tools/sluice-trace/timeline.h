/* SPDX-License-Identifier: MIT */
/* One time axis for every process of a trace set. Each file's timestamps are its own
 * CLOCK_MONOTONIC; its header holds that clock and CLOCK_REALTIME read at the same moment, so
 * an event's place on the shared axis is real start + (t - monotonic start), in nanoseconds
 * from the earliest process start. On one host CLOCK_REALTIME is one clock and the mapping is
 * exact to the two reads' gap; across hosts it is as good as the hosts' clock synchronization
 * (NTP: typically a millisecond), which the exporters write into their metadata. */
#ifndef SLUICE_TRACE_TOOL_TIMELINE_H
#define SLUICE_TRACE_TOOL_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "traceset.h"

struct timeline {
    uint64_t origin_real_ns; /* CLOCK_REALTIME of the earliest process start */
    bool one_host;           /* every file from the same host name */
    uint64_t uncertainty_ns; /* bound on one host: the coarsest clock resolution, at least 1 us */
};

void timeline_init(struct timeline *tl, const struct trace_set *set);
/* Nanoseconds from the origin of monotonic time `t` of file `f`. */
int64_t timeline_ns(const struct timeline *tl, const struct sluice_trace_file *f, uint64_t t);

#endif
