/* SPDX-License-Identifier: MIT */
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
                if (w >= 0 && name && strcmp(name, sluice_kinds[ev->kind].name) == 0 &&
                    !(ev->flags & SLUICE_EVF_ERROR))
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
        fprintf(ctx->out, "%-6s %-16s %12llu %14s %12.6f\n", who, name ? name : "?",
                (unsigned long long)t[k].count,
                has_bytes ? summary_bytes((double)t[k].bytes, b, sizeof b) : "-", (double)t[k].dur_ns / 1e9);
    }
}

/* min and max of a per-rank count, and which rank holds each */
struct spread {
    uint64_t min, max;
    int min_rank, max_rank;
    size_t ranks_with;
};

static void spread_add(struct spread *s, uint64_t v, int rank, bool first)
{
    if (first || v < s->min) {
        s->min = v;
        s->min_rank = rank;
    }
    if (first || v > s->max) {
        s->max = v;
        s->max_rank = rank;
    }
    s->ranks_with += v > 0;
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
    struct spread *sp = calloc(nk, sizeof *sp);
    if (!total || !t || !sp) {
        free(total);
        free(t);
        free(sp);
        return;
    }
    for (size_t r = 0; r < set->nranks; r++) {
        memset(t, 0, sizeof *t * nk);
        tally_files(set->ranks[r].files, set->ranks[r].nfiles, t, nk);
        char who[16];
        snprintf(who, sizeof who, "%d", set->ranks[r].rank);
        if (ctx->per_rank && summary_rank_shown(ctx, set->ranks[r].rank))
            print_rows(ctx, who, t, nk, widest);
        for (unsigned k = 0; k < nk; k++) {
            total[k].count += t[k].count;
            total[k].bytes += t[k].bytes;
            total[k].dur_ns += t[k].dur_ns;
            spread_add(&sp[k], t[k].count, set->ranks[r].rank, r == 0);
        }
    }
    print_rows(ctx, "total", total, nk, widest);
    if (!ctx->per_rank) {
        fprintf(ctx->out, "\nspread across %zu ranks (events per rank)\n%-16s %12s %12s %8s %12s %8s\n",
                set->nranks, "kind", "ranks", "min", "rank", "max", "rank");
        for (unsigned k = 0; k < nk; k++) {
            if (total[k].count == 0)
                continue;
            const char *name = sluice_trace_file_kind(widest, k);
            fprintf(ctx->out, "%-16s %12zu %12llu %8d %12llu %8d\n", name ? name : "?", sp[k].ranks_with,
                    (unsigned long long)sp[k].min, sp[k].min_rank, (unsigned long long)sp[k].max,
                    sp[k].max_rank);
        }
    }
    free(total);
    free(t);
    free(sp);
}

SUMMARY_SECTION(events_section, "events", 20, print_events)
