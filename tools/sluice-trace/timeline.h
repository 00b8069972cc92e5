/* SPDX-License-Identifier: MIT */
/* One time axis for every process of a trace set, in nanoseconds from the earliest process
 * start on rank 0's clock.
 *
 * A rank on another host than rank 0 that recorded CLOCK_SYNC (its CLOCK_MONOTONIC against rank
 * 0's, measured by ping-pong when sluice's communicator was made and again before MPI was
 * finalized) is mapped onto rank 0's clock: offset linear in time between the two samples (drift), constant
 * outside them; rank 0's clock goes onto the axis through its header's pair of CLOCK_MONOTONIC and
 * CLOCK_REALTIME read at the same moment. The uncertainty is the worst sample's half round trip.
 * A process on rank 0's host, or without samples (no MPI, a fork child, a rank whose sample timed
 * out), is placed by its own pair: exact to the two reads' gap on rank 0's host (one
 * CLOCK_MONOTONIC, one CLOCK_REALTIME: better than a ping-pong), as good as the hosts' clock
 * synchronization (NTP: about a millisecond) elsewhere. TL_CLOCK_SYNC uses the samples on every
 * host (to check them against the exact mapping), TL_CLOCK_WALL never. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_TIMELINE_H
#define SLUICE_TOOLS_SLUICE_TRACE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "traceset.h"

struct clock_map {
    const struct sluice_trace_file *f;
    int samples;     /* 0, 1 or 2 CLOCK_SYNC samples */
    uint64_t t[2];   /* local time of each sample */
    int64_t off[2];  /* rank 0's clock minus this one's */
    uint64_t unc_ns; /* the worse sample's half round trip */
    bool used;       /* placed by its samples (else by its own CLOCK_REALTIME pair) */
};

struct timeline {
    uint64_t origin_real_ns;             /* CLOCK_REALTIME of the earliest process start */
    const struct sluice_trace_file *ref; /* rank 0's file with samples, or NULL */
    bool one_host;                       /* every file from the same host name */
    uint64_t uncertainty_ns;             /* bound over every file (see above) */
    size_t synced, unsynced;             /* files placed by samples / by their own pair */
    struct clock_map *maps;              /* one per file of the set, in its order */
    size_t nmaps;
    size_t last; /* lookup cache */
};

enum timeline_clock { TL_CLOCK_AUTO, TL_CLOCK_SYNC, TL_CLOCK_WALL };

void timeline_init(struct timeline *tl, const struct trace_set *set);
void timeline_init_clock(struct timeline *tl, const struct trace_set *set, enum timeline_clock how);
void timeline_free(struct timeline *tl);
/* Nanoseconds from the origin of monotonic time `t` of file `f`. */
int64_t timeline_ns(const struct timeline *tl, const struct sluice_trace_file *f, uint64_t t);
/* The map of `f` (NULL if f is not of the set). */
const struct clock_map *timeline_map(const struct timeline *tl, const struct sluice_trace_file *f);

#endif
