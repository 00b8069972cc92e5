/* SPDX-License-Identifier: MIT */
/* Summary section: which processes the trace holds (rank, pid, host, program, duration). A row
 * per process where rows are per rank (up to 16 ranks, --per-rank, --ranks=LIST: those ranks'
 * processes); beyond, folded: how many processes, hosts and programs, the spread of threads and
 * seconds, the exit statuses counted, and a row for each process that did not exit 0 (up to
 * --top of them), so that 1,000 ranks stay a dozen lines. */
#include "summary.h"

#include <string.h>

#include "spread.h"

static void exit_text(const struct sluice_tf_header *h, char *buf, size_t len)
{
    if (h->fatal_signal)
        snprintf(buf, len, "sig %u", h->fatal_signal);
    else if (h->exit_status >= 0)
        snprintf(buf, len, "%d", h->exit_status);
    else
        snprintf(buf, len, "?");
}

static size_t thread_count(const struct sluice_trace_file *f)
{
    size_t threads = 0;
    for (size_t t = 0; t < f->nthreads; t++)
        threads += f->threads[t].info.index != SLUICE_TF_NO_THREAD;
    return threads;
}

static double seconds(const struct sluice_tf_header *h)
{
    return (double)(h->end_mono_ns - h->start_mono_ns) / 1e9;
}

static void print_row(FILE *o, const struct sluice_trace_file *f)
{
    const struct sluice_tf_header *h = &f->header;
    char exit_s[32];
    exit_text(h, exit_s, sizeof exit_s);
    fprintf(o, "%-6d %-8d %-8d %-7zu %-10.6f %-8s %-16s %s%s\n", h->rank, h->pid, h->ppid, thread_count(f),
            seconds(h), exit_s, h->hostname, h->exe,
            (h->flags & SLUICE_TF_FLAG_FORKED) ? " (fork child)" : "");
}

static void print_heading(FILE *o)
{
    fprintf(o, "%-6s %-8s %-8s %-7s %-10s %-8s %-16s %s\n", "rank", "pid", "ppid", "threads", "seconds",
            "exit", "host", "program");
}

/* Distinct values of a header string field among the files (hosts, programs). */
static size_t distinct(const struct trace_set *set, const char *(*field)(const struct sluice_trace_file *))
{
    size_t n = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        size_t j = 0;
        while (j < i && strcmp(field(set->files[j]), field(set->files[i])) != 0)
            j++;
        n += j == i;
        if (n > 64) /* "more than 64" is all a reader needs, and keeps this linear */
            break;
    }
    return n;
}
static const char *host_of(const struct sluice_trace_file *f)
{
    return f->header.hostname;
}
static const char *exe_of(const struct sluice_trace_file *f)
{
    return f->header.exe;
}

static void print_folded(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    FILE *o = ctx->out;
    struct spread threads = {0}, secs = {0};
    size_t ok = 0, unusual = 0, unknown = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        spread_add(&threads, f->header.rank, (double)thread_count(f));
        spread_add(&secs, f->header.rank, seconds(&f->header));
        bool zero = !f->header.fatal_signal && f->header.exit_status == 0;
        bool known = f->header.fatal_signal || f->header.exit_status >= 0;
        ok += zero;
        unusual += known && !zero;
        unknown += !known;
    }
    size_t hosts = distinct(set, host_of), exes = distinct(set, exe_of);
    fprintf(o, "%zu processes on %s%zu host%s, %s%zu program%s; %zu exited 0, %zu otherwise, %zu not known\n",
            set->nfiles, hosts > 64 ? "more than " : "", hosts > 64 ? 64 : hosts, hosts == 1 ? "" : "s",
            exes > 64 ? "more than " : "", exes > 64 ? 64 : exes, exes == 1 ? "" : "s", ok, unusual, unknown);
    spread_heading(o, "per process");
    spread_print(o, "threads", &threads, 0, 0);
    spread_print(o, "seconds", &secs, 3, 0);
    spread_free(&threads);
    spread_free(&secs);
    if (!unusual)
        return;
    fprintf(o, "processes that did not exit 0 (%zu%s):\n", unusual,
            unusual > (size_t)ctx->top ? ", first --top of them" : "");
    print_heading(o);
    size_t shown = 0;
    for (size_t i = 0; i < set->nfiles && shown < (size_t)ctx->top; i++) {
        const struct sluice_tf_header *h = &set->files[i]->header;
        if (h->fatal_signal || h->exit_status > 0) {
            print_row(o, set->files[i]);
            shown++;
        }
    }
}

static void print_overview(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    FILE *o = ctx->out;
    int size = set->nfiles ? set->files[0]->header.size : 0;
    fprintf(o, "sluice trace: %zu file%s, %zu rank%s (launcher size %d)\n", set->nfiles,
            set->nfiles == 1 ? "" : "s", set->nranks, set->nranks == 1 ? "" : "s", size);
    summary_heading(ctx, "Processes");
    if (!ctx->per_rank) {
        print_folded(ctx);
        return;
    }
    print_heading(o);
    for (size_t i = 0; i < set->nfiles; i++)
        if (summary_rank_shown(ctx, set->files[i]->header.rank))
            print_row(o, set->files[i]);
}

SUMMARY_SECTION(overview_section, "processes", 10, print_overview)
