/* SPDX-License-Identifier: MIT */
/* See whatif_measure.h: the commit window and the threads that worked in it. */
#include "whatif_measure.h"

#include <string.h>

static int is_commit_kind(const struct sluice_trace_file *f, uint16_t kind)
{
    const char *name = sluice_trace_file_kind(f, kind);
    return name && strncmp(name, "COMMIT_", 7) == 0;
}

void whatif_print_window(const struct trace_set *set, const struct whatif_measured *w, FILE *o)
{
    uint64_t t0 = w->begin_ns, t1 = w->begin_ns + (uint64_t)(w->durable_s * 1e9 + 0.5);
    fprintf(o, "%llu %llu %d:%d", (unsigned long long)t0, (unsigned long long)t1, w->home_rank, w->home_tid);
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *th = &f->threads[t];
            for (uint64_t e = 0; e < th->info.events; e++) {
                const struct sluice_tf_event *ev = &th->events[e];
                int home = f->header.rank == w->home_rank && th->info.tid == w->home_tid;
                if (!home && ev->t_ns <= t1 && ev->t_ns + ev->dur_ns >= t0 && is_commit_kind(f, ev->kind)) {
                    fprintf(o, " %d:%d", f->header.rank, th->info.tid);
                    break;
                }
            }
        }
    }
    fputc('\n', o);
}
