/* Summary section: event counts and bytes by kind, per rank and in total. Kinds are named by
 * the file's own kind table, so traces from a newer sluice still read. */
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "trace/kinds.h"

struct tally {
    uint64_t count, bytes, dur_ns;
};

/* Adds the events of `files` into t (indexed by kind, `nk` entries). */
static void tally_files(struct sluice_trace_file *const *files, size_t nfiles, struct tally *t, unsigned nk)
{
    for (size_t i = 0; i < nfiles; i++) {
        const struct sluice_trace_file *f = files[i];
        for (size_t th = 0; th < f->nthreads; th++) {
            const struct sluice_trace_rthread *r = &f->threads[th];
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                if (ev->kind >= nk)
                    continue;
                t[ev->kind].count++;
                t[ev->kind].dur_ns += ev->dur_ns;
                int w = sluice_kind_bytes_word(ev->kind);
                /* the byte word is only meaningful if the producer's kind is ours */
                const char *name = sluice_trace_file_kind(f, ev->kind);
                if (w >= 0 && name && strcmp(name, sluice_kinds[ev->kind].name) == 0 && !(ev->flags & SLUICE_EVF_ERROR))
                    t[ev->kind].bytes += w == 0 ? ev->a : w == 1 ? ev->b : ev->c;
            }
        }
    }
}

static void print_rows(const struct summary_ctx *ctx, const char *who, const struct tally *t, unsigned nk,
                       const struct sluice_trace_file *names)
{
    char b[32];
    for (unsigned k = 0; k < nk; k++) {
        if (t[k].count == 0)
            continue;
        const char *name = sluice_trace_file_kind(names, k);
        bool has_bytes = sluice_kind_bytes_word(k) >= 0;
        fprintf(ctx->out, "%-6s %-16s %12llu %14s %12.6f\n", who, name ? name : "?", (unsigned long long)t[k].count,
                has_bytes ? summary_bytes((double)t[k].bytes, b, sizeof b) : "-", (double)t[k].dur_ns / 1e9);
    }
}

static void print_events(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    unsigned nk = 0;
    const struct sluice_trace_file *widest = set->files[0];
    for (size_t i = 0; i < set->nfiles; i++)
        if (set->files[i]->nkinds > nk) {
            nk = set->files[i]->nkinds;
            widest = set->files[i];
        }
    summary_heading(ctx, "Events by kind");
    fprintf(ctx->out, "%-6s %-16s %12s %14s %12s\n", "rank", "kind", "count", "bytes", "seconds");
    struct tally *total = calloc(nk, sizeof *total), *t = calloc(nk, sizeof *t);
    if (!total || !t) {
        free(total);
        free(t);
        return;
    }
    for (size_t r = 0; r < set->nranks; r++) {
        memset(t, 0, sizeof *t * nk);
        tally_files(set->ranks[r].files, set->ranks[r].nfiles, t, nk);
        char who[16];
        snprintf(who, sizeof who, "%d", set->ranks[r].rank);
        print_rows(ctx, who, t, nk, widest);
        for (unsigned k = 0; k < nk; k++) {
            total[k].count += t[k].count;
            total[k].bytes += t[k].bytes;
            total[k].dur_ns += t[k].dur_ns;
        }
    }
    print_rows(ctx, "total", total, nk, widest);
    free(total);
    free(t);
}

SUMMARY_SECTION(events_section, "events", 20, print_events)
