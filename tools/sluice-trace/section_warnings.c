/* SPDX-License-Identifier: MIT */
/* Summary section: everything that makes the trace incomplete, so nobody mistakes a partial
 * record for the whole story: events dropped at the memory limit (per kind), events lost to
 * re-entry, strings and call sites not interned, processes that died on a signal. */
#include "summary.h"

static void print_warnings(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    FILE *o = ctx->out;
    summary_heading(ctx, "Warnings");
    int n = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        const struct sluice_tf_header *h = &f->header;
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            for (uint32_t k = 0; k < r->info.overflow_count; k++)
                if (r->overflow[k]) {
                    const char *name = sluice_trace_file_kind(f, k);
                    if (r->info.index == SLUICE_TF_NO_THREAD)
                        fprintf(
                            o,
                            "rank %d pid %d: %llu %s events dropped from threads that got no trace memory: "
                            "SLUICE_TRACE_LIMIT (%llu bytes) reached\n",
                            h->rank, h->pid, (unsigned long long)r->overflow[k], name ? name : "?",
                            (unsigned long long)h->trace_limit);
                    else
                        fprintf(
                            o,
                            "rank %d pid %d tid %d: %llu %s events dropped: SLUICE_TRACE_LIMIT (%llu bytes) "
                            "reached\n",
                            h->rank, h->pid, r->info.tid, (unsigned long long)r->overflow[k],
                            name ? name : "?", (unsigned long long)h->trace_limit);
                    n++;
                }
            if (r->info.reentrant) {
                fprintf(o,
                        "rank %d pid %d tid %d: %llu events dropped: recorded from a signal handler while "
                        "recording\n",
                        h->rank, h->pid, r->info.tid, (unsigned long long)r->info.reentrant);
                n++;
            }
        }
        if (f->end.strings_dropped) {
            fprintf(o, "rank %d pid %d: %llu strings not interned (string table full)\n", h->rank, h->pid,
                    (unsigned long long)f->end.strings_dropped);
            n++;
        }
        if (f->end.callsites_dropped) {
            fprintf(o, "rank %d pid %d: %llu call sites not interned (table full)\n", h->rank, h->pid,
                    (unsigned long long)f->end.callsites_dropped);
            n++;
        }
        if (h->fatal_signal) {
            fprintf(o, "rank %d pid %d: died on signal %u; trace written from the signal handler\n", h->rank,
                    h->pid, h->fatal_signal);
            n++;
        }
    }
    if (set->unreadable || set->incomplete) {
        fprintf(o, "%zu trace file%s could not be read, %zu incomplete (see messages above)\n",
                set->unreadable, set->unreadable == 1 ? "" : "s", set->incomplete);
        n++;
    }
    if (set->nfiles && set->files[0]->header.size > 0 && (size_t)set->files[0]->header.size != set->nranks) {
        fprintf(o, "%zu of %d ranks have a trace file\n", set->nranks, set->files[0]->header.size);
        n++;
    }
    if (n == 0)
        fprintf(o, "none: every event was kept\n");
}

SUMMARY_SECTION(warnings_section, "warnings", 90, print_warnings)
