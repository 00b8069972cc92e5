/* SPDX-License-Identifier: MIT */
/* Summary section: everything that makes the trace incomplete, so nobody mistakes a partial
 * record for the whole story: events dropped at the memory limit (per kind), events lost to
 * re-entry, strings and call sites not interned, processes that died on a signal. A line per
 * process where rows are per rank (--ranks=LIST: those ranks'); beyond 16 ranks, one line per
 * kind of warning with its total, how many processes and the first of their ranks. */
#include "summary.h"

#include <stdarg.h>
#include <string.h>

#define FOLD_MAX 64  /* kinds of warning folded (event kinds dropped, signals) */
#define FOLD_RANKS 8 /* ranks named per folded line */

struct fold {
    char what[160];
    unsigned long long total;
    size_t procs;
    int ranks[FOLD_RANKS];
};

struct folds {
    struct fold f[FOLD_MAX];
    size_t n;
};

/* Adds one process's warning: to its folded line (what, count) or, per rank, as its own line. */
static void warn(const struct summary_ctx *ctx, struct folds *fo, int *n, int rank, unsigned long long count,
                 const char *what, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void warn(const struct summary_ctx *ctx, struct folds *fo, int *n, int rank, unsigned long long count,
                 const char *what, const char *fmt, ...)
{
    (*n)++;
    if (ctx->per_rank) {
        if (!summary_rank_shown(ctx, rank))
            return;
        va_list ap;
        va_start(ap, fmt);
        vfprintf(ctx->out, fmt, ap);
        va_end(ap);
        return;
    }
    size_t i = 0;
    while (i < fo->n && strcmp(fo->f[i].what, what) != 0)
        i++;
    if (i == fo->n) {
        if (fo->n == FOLD_MAX)
            i = FOLD_MAX - 1; /* the last line takes the rest */
        else
            snprintf(fo->f[fo->n++].what, sizeof fo->f[0].what, "%s", what);
    }
    struct fold *f = &fo->f[i];
    if (f->procs < FOLD_RANKS)
        f->ranks[f->procs] = rank;
    f->procs++;
    f->total += count;
}

static void print_folds(FILE *o, const struct folds *fo)
{
    for (size_t i = 0; i < fo->n; i++) {
        const struct fold *f = &fo->f[i];
        fprintf(o, "%llu %s, in %zu process%s: rank%s", f->total, f->what, f->procs,
                f->procs == 1 ? "" : "es", f->procs == 1 ? "" : "s");
        for (size_t k = 0; k < f->procs && k < FOLD_RANKS; k++)
            fprintf(o, "%s %d", k ? "," : "", f->ranks[k]);
        if (f->procs > FOLD_RANKS)
            fprintf(o, " +%zu more", f->procs - FOLD_RANKS);
        fputc('\n', o);
    }
}

static void print_warnings(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    FILE *o = ctx->out;
    summary_heading(ctx, "Warnings");
    int n = 0;
    static struct folds fo; /* one summary per run */
    fo.n = 0;
    char what[160];
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        const struct sluice_tf_header *h = &f->header;
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            for (uint32_t k = 0; k < r->info.overflow_count; k++)
                if (r->overflow[k]) {
                    const char *name = sluice_trace_file_kind(f, k);
                    snprintf(what, sizeof what, "%s events dropped: SLUICE_TRACE_LIMIT reached",
                             name ? name : "?");
                    if (r->info.index == SLUICE_TF_NO_THREAD)
                        warn(ctx, &fo, &n, h->rank, r->overflow[k], what,
                             "rank %d pid %d: %llu %s events dropped from threads that got no trace memory: "
                             "SLUICE_TRACE_LIMIT (%llu bytes) reached\n",
                             h->rank, h->pid, (unsigned long long)r->overflow[k], name ? name : "?",
                             (unsigned long long)h->trace_limit);
                    else
                        warn(ctx, &fo, &n, h->rank, r->overflow[k], what,
                             "rank %d pid %d tid %d: %llu %s events dropped: SLUICE_TRACE_LIMIT (%llu bytes) "
                             "reached\n",
                             h->rank, h->pid, r->info.tid, (unsigned long long)r->overflow[k],
                             name ? name : "?", (unsigned long long)h->trace_limit);
                }
            if (r->info.reentrant)
                warn(ctx, &fo, &n, h->rank, r->info.reentrant,
                     "events dropped: recorded from a signal handler while recording",
                     "rank %d pid %d tid %d: %llu events dropped: recorded from a signal handler while "
                     "recording\n",
                     h->rank, h->pid, r->info.tid, (unsigned long long)r->info.reentrant);
        }
        if (f->end.strings_dropped)
            warn(ctx, &fo, &n, h->rank, f->end.strings_dropped, "strings not interned (string table full)",
                 "rank %d pid %d: %llu strings not interned (string table full)\n", h->rank, h->pid,
                 (unsigned long long)f->end.strings_dropped);
        if (f->end.callsites_dropped)
            warn(ctx, &fo, &n, h->rank, f->end.callsites_dropped, "call sites not interned (table full)",
                 "rank %d pid %d: %llu call sites not interned (table full)\n", h->rank, h->pid,
                 (unsigned long long)f->end.callsites_dropped);
        if (h->fatal_signal) {
            snprintf(what, sizeof what, "deaths on signal %u (traces written from the signal handler)",
                     h->fatal_signal);
            warn(ctx, &fo, &n, h->rank, 1, what,
                 "rank %d pid %d: died on signal %u; trace written from the signal handler\n", h->rank,
                 h->pid, h->fatal_signal);
        }
    }
    print_folds(o, &fo);
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
