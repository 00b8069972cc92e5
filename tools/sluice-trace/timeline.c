/* SPDX-License-Identifier: MIT */
/* See timeline.h. */
#include "timeline.h"

#include <string.h>

void timeline_init(struct timeline *tl, const struct trace_set *set)
{
    tl->origin_real_ns = UINT64_MAX;
    tl->one_host = true;
    tl->uncertainty_ns = 1000;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_tf_header *h = &set->files[i]->header;
        if (h->start_real_ns < tl->origin_real_ns)
            tl->origin_real_ns = h->start_real_ns;
        if (strncmp(h->hostname, set->files[0]->header.hostname, sizeof h->hostname) != 0)
            tl->one_host = false;
        if (h->clock_res_ns > tl->uncertainty_ns)
            tl->uncertainty_ns = h->clock_res_ns;
    }
    if (set->nfiles == 0)
        tl->origin_real_ns = 0;
}

int64_t timeline_ns(const struct timeline *tl, const struct sluice_trace_file *f, uint64_t t)
{
    /* integers only (doubles cannot hold nanoseconds since 1970 exactly), and unsigned, so that a
     * hostile header wraps instead of overflowing */
    return (int64_t)((f->header.start_real_ns - tl->origin_real_ns) + (t - f->header.start_mono_ns));
}
