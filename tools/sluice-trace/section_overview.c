/* SPDX-License-Identifier: MIT */
/* Summary section: which processes the trace holds (rank, pid, host, program, duration). */
#include "summary.h"

static void print_overview(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    FILE *o = ctx->out;
    int size = set->nfiles ? set->files[0]->header.size : 0;
    fprintf(o, "sluice trace: %zu file%s, %zu rank%s (launcher size %d)\n", set->nfiles,
            set->nfiles == 1 ? "" : "s", set->nranks, set->nranks == 1 ? "" : "s", size);
    summary_heading(ctx, "Processes");
    fprintf(o, "%-6s %-8s %-8s %-7s %-10s %-8s %-16s %s\n", "rank", "pid", "ppid", "threads", "seconds",
            "exit", "host", "program");
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        const struct sluice_tf_header *h = &f->header;
        char exit_s[32];
        if (h->fatal_signal)
            snprintf(exit_s, sizeof exit_s, "sig %u", h->fatal_signal);
        else if (h->exit_status >= 0)
            snprintf(exit_s, sizeof exit_s, "%d", h->exit_status);
        else
            snprintf(exit_s, sizeof exit_s, "?");
        size_t threads = 0;
        for (size_t t = 0; t < f->nthreads; t++)
            threads += f->threads[t].info.index != SLUICE_TF_NO_THREAD;
        fprintf(o, "%-6d %-8d %-8d %-7zu %-10.6f %-8s %-16s %s%s\n", h->rank, h->pid, h->ppid, threads,
                (double)(h->end_mono_ns - h->start_mono_ns) / 1e9, exit_s, h->hostname, h->exe,
                (h->flags & SLUICE_TF_FLAG_FORKED) ? " (fork child)" : "");
    }
}

SUMMARY_SECTION(overview_section, "processes", 10, print_overview)
