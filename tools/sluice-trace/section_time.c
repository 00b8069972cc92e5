/* SPDX-License-Identifier: MIT */
/* Summary section: where each rank's threads spent their time (user code, sluice, MPI waits,
 * sleeping), absolute and as a share of the accounted time. */
#include "summary.h"

static const char *const state_names[4] = {"user", "sluice", "mpi", "sleep"};

static void row(const struct summary_ctx *ctx, const char *who, size_t threads, const double s[4])
{
    double sum = s[0] + s[1] + s[2] + s[3];
    fprintf(ctx->out, "%-6s %7zu %12.6f", who, threads, sum);
    for (int k = 0; k < 4; k++)
        fprintf(ctx->out, " %12.6f %5.1f%%", s[k], sum > 0 ? 100.0 * s[k] / sum : 0.0);
    fputc('\n', ctx->out);
}

static void print_time(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    summary_heading(ctx, "Time decomposition (seconds of thread time)");
    fprintf(ctx->out, "%-6s %7s %12s", "rank", "threads", "accounted");
    for (int k = 0; k < 4; k++)
        fprintf(ctx->out, " %12s %6s", state_names[k], "");
    fputc('\n', ctx->out);
    double total[4] = {0}, lo[4] = {0}, hi[4] = {0};
    int lo_rank[4] = {0}, hi_rank[4] = {0};
    size_t total_threads = 0;
    for (size_t r = 0; r < set->nranks; r++) {
        double s[4] = {0};
        size_t threads = 0;
        for (size_t i = 0; i < set->ranks[r].nfiles; i++) {
            const struct sluice_trace_file *f = set->ranks[r].files[i];
            for (size_t t = 0; t < f->nthreads; t++) {
                if (f->threads[t].info.index == SLUICE_TF_NO_THREAD)
                    continue; /* the record of threads that got no memory has no times */
                threads++;
                for (int k = 0; k < 4; k++)
                    s[k] += (double)f->threads[t].info.time_ns[k] / 1e9;
            }
        }
        char who[16];
        snprintf(who, sizeof who, "%d", set->ranks[r].rank);
        if (ctx->per_rank && summary_rank_shown(ctx, set->ranks[r].rank))
            row(ctx, who, threads, s);
        double sum = s[0] + s[1] + s[2] + s[3];
        for (int k = 0; k < 4; k++) {
            total[k] += s[k];
            double share = sum > 0 ? 100.0 * s[k] / sum : 0.0;
            if (r == 0 || share < lo[k]) {
                lo[k] = share;
                lo_rank[k] = set->ranks[r].rank;
            }
            if (r == 0 || share > hi[k]) {
                hi[k] = share;
                hi_rank[k] = set->ranks[r].rank;
            }
        }
        total_threads += threads;
    }
    row(ctx, "total", total_threads, total);
    if (!ctx->per_rank) /* imbalance at a glance: who waits most, who computes least */
        for (int k = 0; k < 4; k++)
            fprintf(ctx->out, "%-6s share across ranks: min %5.1f%% (rank %d), max %5.1f%% (rank %d)\n",
                    state_names[k], lo[k], lo_rank[k], hi[k], hi_rank[k]);
}

SUMMARY_SECTION(time_section, "time", 30, print_time)
