/* SPDX-License-Identifier: MIT */
/* See timeline.h. */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

static void read_samples(struct clock_map *m)
{
    const struct sluice_trace_file *f = m->f;
    int k = trace_kind_number(f, "CLOCK_SYNC");
    for (size_t t = 0; k >= 0 && t < f->nthreads; t++)
        for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
            const struct sluice_tf_event *ev = &f->threads[t].events[e];
            if (ev->kind != (unsigned)k || ev->a > 1)
                continue;
            int i = (int)ev->a; /* phase 0 start, 1 exit */
            if (m->samples == 2 || (m->samples == 1 && i == 0))
                continue; /* the first of each phase */
            if (m->samples == 0 && i == 1) {
                m->t[0] = ev->t_ns; /* no start sample: the exit one alone */
                m->off[0] = (int64_t)ev->b;
                m->samples = 1;
            } else {
                m->t[m->samples] = ev->t_ns;
                m->off[m->samples] = (int64_t)ev->b;
                m->samples++;
            }
            if (ev->c > m->unc_ns)
                m->unc_ns = ev->c;
        }
    if (m->samples == 2 && m->t[1] <= m->t[0])
        m->samples = 1;
}

void timeline_init(struct timeline *tl, const struct trace_set *set)
{
    timeline_init_clock(tl, set, TL_CLOCK_AUTO);
}

void timeline_init_clock(struct timeline *tl, const struct trace_set *set, enum timeline_clock how)
{
    memset(tl, 0, sizeof *tl);
    tl->origin_real_ns = UINT64_MAX;
    tl->one_host = true;
    uint64_t res = 1000;
    tl->maps = calloc(set->nfiles ? set->nfiles : 1, sizeof *tl->maps);
    tl->nmaps = tl->maps ? set->nfiles : 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_tf_header *h = &set->files[i]->header;
        if (strncmp(h->hostname, set->files[0]->header.hostname, sizeof h->hostname) != 0)
            tl->one_host = false;
        if (h->clock_res_ns > res)
            res = h->clock_res_ns;
        if (!tl->maps)
            continue;
        tl->maps[i].f = set->files[i];
        read_samples(&tl->maps[i]);
        if (h->rank == 0 && tl->maps[i].samples && !tl->ref)
            tl->ref = set->files[i];
    }
    tl->uncertainty_ns = res;
    for (size_t i = 0; i < tl->nmaps; i++) {
        struct clock_map *m = &tl->maps[i];
        bool same_host = tl->ref && strncmp(m->f->header.hostname, tl->ref->header.hostname,
                                            sizeof m->f->header.hostname) == 0;
        bool use = tl->ref && m->f != tl->ref && m->f->header.rank != 0 &&
                   (how == TL_CLOCK_SYNC || (how == TL_CLOCK_AUTO && !same_host));
        m->used = use;
        if (use) {
            tl->synced++;
            if (m->unc_ns > tl->uncertainty_ns)
                tl->uncertainty_ns = m->unc_ns;
        } else if (m->f != tl->ref) {
            tl->unsynced++;
        }
    }
    if (tl->ref && tl->synced)
        tl->synced++; /* the reference itself */
    else
        tl->ref = NULL; /* nobody placed by samples: everything by its own pair */
    /* The origin: the earliest process start on the axis. */
    tl->origin_real_ns = 0;
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < set->nfiles; i++) {
        int64_t s = timeline_ns(tl, set->files[i], set->files[i]->header.start_mono_ns);
        if (s < first)
            first = s;
    }
    tl->origin_real_ns = set->nfiles ? (uint64_t)first : 0;
}

void timeline_free(struct timeline *tl)
{
    free(tl->maps);
    tl->maps = NULL;
    tl->nmaps = 0;
}

const struct clock_map *timeline_map(const struct timeline *tl, const struct sluice_trace_file *f)
{
    struct timeline *m = (struct timeline *)tl; /* the cache only */
    if (m->last < m->nmaps && m->maps[m->last].f == f)
        return &m->maps[m->last];
    for (size_t i = 0; i < m->nmaps; i++)
        if (m->maps[i].f == f) {
            m->last = i;
            return &m->maps[i];
        }
    return NULL;
}

/* Real time of the file's monotonic time t by its own header pair; unsigned arithmetic so that a
 * hostile header wraps instead of overflowing. */
static uint64_t own_real(const struct sluice_trace_file *f, uint64_t t)
{
    return f->header.start_real_ns + (t - f->header.start_mono_ns);
}

int64_t timeline_ns(const struct timeline *tl, const struct sluice_trace_file *f, uint64_t t)
{
    const struct clock_map *m = timeline_map(tl, f);
    uint64_t real;
    if (m && tl->ref && m->used) {
        int64_t off = m->off[0];
        if (m->samples == 2 && t > m->t[0]) {
            if (t >= m->t[1])
                off = m->off[1];
            else /* linear drift between the samples */
                off = m->off[0] + (int64_t)((double)(m->off[1] - m->off[0]) * (double)(t - m->t[0]) /
                                            (double)(m->t[1] - m->t[0]));
        }
        real = own_real(tl->ref, t + (uint64_t)off);
    } else {
        real = own_real(f, t);
    }
    return (int64_t)(real - tl->origin_real_ns);
}
