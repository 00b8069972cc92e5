/* SPDX-License-Identifier: MIT */
/* Summary section: the OpenCL side of a trace (docs/OPENCL.md). Per rank: calls by function with the
 * host time spent in them, and per device the commands it ran, its busy time (from event
 * profiling) and the bytes moved host-to-device, device-to-host and device-to-device. Beyond
 * 16 ranks (or with --compact) the ranks are folded: each quantity's distribution over ranks
 * with its outliers, functions and devices summed (docs/TRACE.md, "sluice-trace"). Event kinds are
 * matched by name through each file's own kind table. */
#include <stdlib.h>
#include <string.h>

#include "spread.h"
#include "summary.h"
#include "trace/trace.h"

enum { K_CALL, K_ENQUEUE, K_EXEC, K_TRANSFER, K_DEVICE, K_N };
static const char *const kind_names[K_N] = {"CL_CALL", "CL_ENQUEUE", "CL_DEVICE_EXEC", "CL_TRANSFER",
                                            "CL_DEVICE"};

struct fn_row {
    const char *name;
    uint64_t calls, errors, host_ns, enqueues;
};

struct dev_row {
    const struct sluice_trace_file *file; /* device handles are per process */
    uint64_t handle;
    const char *name, *platform;
    uint64_t commands, busy_ns, bytes[3];
};

struct rank_tally {
    struct fn_row *fns;
    size_t nfns;
    struct dev_row *devs;
    size_t ndevs;
    uint64_t host_ns, busy_ns, events;
};

static struct fn_row *fn_of(struct rank_tally *t, const char *name)
{
    for (size_t i = 0; i < t->nfns; i++)
        if (strcmp(t->fns[i].name, name) == 0)
            return &t->fns[i];
    struct fn_row *grown = realloc(t->fns, (t->nfns + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    t->fns = grown;
    t->fns[t->nfns] = (struct fn_row){.name = name};
    return &t->fns[t->nfns++];
}

static struct dev_row *dev_of(struct rank_tally *t, const struct sluice_trace_file *f, uint64_t handle)
{
    for (size_t i = 0; i < t->ndevs; i++)
        if (t->devs[i].file == f && t->devs[i].handle == handle)
            return &t->devs[i];
    struct dev_row *grown = realloc(t->devs, (t->ndevs + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    t->devs = grown;
    t->devs[t->ndevs] = (struct dev_row){.file = f, .handle = handle, .name = "?", .platform = "?"};
    return &t->devs[t->ndevs++];
}

static void tally_file(struct rank_tally *t, const struct sluice_trace_file *f)
{
    int kind_of[256];
    for (unsigned k = 0; k < 256; k++) {
        kind_of[k] = -1;
        const char *n = k < f->nkinds ? sluice_trace_file_kind(f, k) : NULL;
        for (int j = 0; n != NULL && j < K_N; j++)
            if (strcmp(n, kind_names[j]) == 0)
                kind_of[k] = j;
    }
    for (size_t th = 0; th < f->nthreads; th++) {
        const struct sluice_trace_rthread *r = &f->threads[th];
        for (uint64_t e = 0; e < r->info.events; e++) {
            const struct sluice_tf_event *ev = &r->events[e];
            int k = ev->kind < 256 ? kind_of[ev->kind] : -1;
            if (k < 0)
                continue;
            t->events++;
            if (k == K_CALL || k == K_ENQUEUE) {
                const char *name = sluice_trace_file_string(f, ev->a);
                struct fn_row *row = fn_of(t, name ? name : "?");
                if (row == NULL)
                    continue;
                row->calls++;
                row->host_ns += ev->dur_ns;
                row->errors += (ev->flags & SLUICE_EVF_ERROR) != 0;
                row->enqueues += k == K_ENQUEUE;
                t->host_ns += ev->dur_ns;
            } else if (k == K_EXEC) {
                struct dev_row *d = dev_of(t, f, ev->b);
                if (d != NULL) {
                    d->commands++;
                    d->busy_ns += ev->dur_ns;
                }
                t->busy_ns += ev->dur_ns;
            } else if (k == K_TRANSFER) {
                struct dev_row *d = dev_of(t, f, ev->c);
                if (d != NULL && ev->a < 3)
                    d->bytes[ev->a] += ev->b;
            } else if (k == K_DEVICE) {
                struct dev_row *d = dev_of(t, f, ev->a);
                const char *n = sluice_trace_file_string(f, ev->b), *p = sluice_trace_file_string(f, ev->c);
                if (d != NULL) {
                    d->name = n ? n : "?";
                    d->platform = p ? p : "?";
                }
            }
        }
    }
}

static int by_host_time(const void *a, const void *b)
{
    const struct fn_row *x = a, *y = b;
    return (x->host_ns < y->host_ns) - (x->host_ns > y->host_ns);
}

static void print_rank(const struct summary_ctx *ctx, int rank, struct rank_tally *t)
{
    FILE *o = ctx->out;
    uint64_t calls = 0;
    for (size_t i = 0; i < t->nfns; i++)
        calls += t->fns[i].calls;
    fprintf(o, "rank %d: %llu OpenCL calls, %.3f ms on the host inside them; %.3f ms of device execution\n",
            rank, (unsigned long long)calls, (double)t->host_ns / 1e6, (double)t->busy_ns / 1e6);
    qsort(t->fns, t->nfns, sizeof *t->fns, by_host_time);
    fprintf(o, "  %-44s %10s %8s %8s %12s\n", "function (by host time)", "calls", "enqueue", "errors",
            "host ms");
    size_t shown = 0;
    for (size_t i = 0; i < t->nfns && (ctx->top <= 0 || shown < (size_t)ctx->top); i++, shown++)
        fprintf(o, "  %-44s %10llu %8s %8llu %12.3f\n", t->fns[i].name, (unsigned long long)t->fns[i].calls,
                t->fns[i].enqueues ? "yes" : "", (unsigned long long)t->fns[i].errors,
                (double)t->fns[i].host_ns / 1e6);
    if (shown < t->nfns)
        fprintf(o, "  (%zu more functions)\n", t->nfns - shown);
    if (t->ndevs == 0)
        return;
    fprintf(o, "  %-44s %10s %12s %11s %11s %11s\n", "device", "commands", "device ms", "host->dev",
            "dev->host", "dev->dev");
    for (size_t i = 0; i < t->ndevs; i++) {
        const struct dev_row *d = &t->devs[i];
        char label[128], b0[32], b1[32], b2[32];
        snprintf(label, sizeof label, "%zu %.24s | %.14s", i, d->name, d->platform);
        fprintf(o, "  %-44.44s %10llu %12.3f %11s %11s %11s\n", label, (unsigned long long)d->commands,
                (double)d->busy_ns / 1e6, summary_bytes((double)d->bytes[0], b0, sizeof b0),
                summary_bytes((double)d->bytes[1], b1, sizeof b1),
                summary_bytes((double)d->bytes[2], b2, sizeof b2));
    }
}

/* Functions summed over ranks: calls, errors and host time, and the rank that spent longest. */
struct fn_total {
    const char *name;
    uint64_t calls, errors, host_ns, max_ns;
    int ranks, max_rank;
};

struct all_ranks {
    struct spread calls, host_ms, commands, busy_ms, bytes[3];
    struct fn_total *fns;
    size_t nfns;
    struct dev_row *devs; /* by name and platform; .handle counts devices */
    size_t ndevs;
    int ranks_with_devs;
};

static void fold_rank(struct all_ranks *a, int rank, const struct rank_tally *t)
{
    uint64_t calls = 0, commands = 0, bytes[3] = {0};
    for (size_t i = 0; i < t->nfns; i++) {
        const struct fn_row *f = &t->fns[i];
        calls += f->calls;
        size_t k = 0;
        while (k < a->nfns && strcmp(a->fns[k].name, f->name) != 0)
            k++;
        if (k == a->nfns) {
            struct fn_total *g = realloc(a->fns, (a->nfns + 1) * sizeof *g);
            if (g == NULL)
                continue;
            a->fns = g;
            a->fns[a->nfns++] = (struct fn_total){.name = f->name, .max_rank = rank};
        }
        struct fn_total *g = &a->fns[k];
        g->calls += f->calls;
        g->errors += f->errors;
        g->host_ns += f->host_ns;
        g->ranks++;
        if (f->host_ns > g->max_ns) {
            g->max_ns = f->host_ns;
            g->max_rank = rank;
        }
    }
    for (size_t i = 0; i < t->ndevs; i++) {
        const struct dev_row *d = &t->devs[i];
        commands += d->commands;
        for (int b = 0; b < 3; b++)
            bytes[b] += d->bytes[b];
        size_t k = 0;
        while (k < a->ndevs &&
               (strcmp(a->devs[k].name, d->name) != 0 || strcmp(a->devs[k].platform, d->platform) != 0))
            k++;
        if (k == a->ndevs) {
            struct dev_row *g = realloc(a->devs, (a->ndevs + 1) * sizeof *g);
            if (g == NULL)
                continue;
            a->devs = g;
            a->devs[a->ndevs++] = (struct dev_row){.name = d->name, .platform = d->platform};
        }
        a->devs[k].handle++;
        a->devs[k].commands += d->commands;
        a->devs[k].busy_ns += d->busy_ns;
    }
    a->ranks_with_devs += t->ndevs > 0;
    spread_add(&a->calls, rank, (double)calls);
    spread_add(&a->host_ms, rank, (double)t->host_ns / 1e6);
    spread_add(&a->commands, rank, (double)commands);
    spread_add(&a->busy_ms, rank, (double)t->busy_ns / 1e6);
    for (int b = 0; b < 3; b++)
        spread_add(&a->bytes[b], rank, (double)bytes[b]);
}

static int by_total_host_time(const void *a, const void *b)
{
    const struct fn_total *x = a, *y = b;
    return (x->host_ns < y->host_ns) - (x->host_ns > y->host_ns);
}

/* Every rank folded into distributions: a few lines whatever the number of ranks. */
static void print_folded(const struct summary_ctx *ctx, struct all_ranks *a)
{
    FILE *o = ctx->out;
    fprintf(o, "%zu ranks recorded OpenCL events (per-rank tables: --ranks, or --ranks=LIST)\n", a->calls.n);
    spread_heading(o, "per rank");
    spread_print(o, "OpenCL calls", &a->calls, 0, 0);
    spread_print(o, "host ms in calls", &a->host_ms, 3, 0);
    if (a->ranks_with_devs > 0) {
        spread_print(o, "device commands", &a->commands, 0, 0);
        spread_print(o, "device ms", &a->busy_ms, 3, 0);
        spread_print(o, "host->dev", &a->bytes[0], 0, 1);
        spread_print(o, "dev->host", &a->bytes[1], 0, 1);
        spread_print(o, "dev->dev", &a->bytes[2], 0, 1);
    }
    qsort(a->fns, a->nfns, sizeof *a->fns, by_total_host_time);
    fprintf(o, "  %-44s %6s %10s %8s %12s %12s %7s\n", "function (by host time, all ranks)", "ranks", "calls",
            "errors", "host ms", "most ms", "(rank)");
    size_t shown = 0;
    for (size_t i = 0; i < a->nfns && (ctx->top <= 0 || shown < (size_t)ctx->top); i++, shown++)
        fprintf(o, "  %-44s %6d %10llu %8llu %12.3f %12.3f %7d\n", a->fns[i].name, a->fns[i].ranks,
                (unsigned long long)a->fns[i].calls, (unsigned long long)a->fns[i].errors,
                (double)a->fns[i].host_ns / 1e6, (double)a->fns[i].max_ns / 1e6, a->fns[i].max_rank);
    if (shown < a->nfns)
        fprintf(o, "  (%zu more functions)\n", a->nfns - shown);
    if (a->ndevs > 0)
        fprintf(o, "  %-44s %6s %10s %12s\n", "devices (name | platform)", "count", "commands", "device ms");
    for (size_t i = 0; i < a->ndevs; i++) {
        char label[128];
        snprintf(label, sizeof label, "%.28s | %.14s", a->devs[i].name, a->devs[i].platform);
        fprintf(o, "  %-44.44s %6llu %10llu %12.3f\n", label, (unsigned long long)a->devs[i].handle,
                (unsigned long long)a->devs[i].commands, (double)a->devs[i].busy_ns / 1e6);
    }
}

static void print_opencl(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    bool heading = false;
    struct all_ranks a = {0};
    for (size_t r = 0; r < set->nranks; r++) {
        struct rank_tally t = {0};
        for (size_t i = 0; i < set->ranks[r].nfiles; i++)
            tally_file(&t, set->ranks[r].files[i]);
        if (t.events > 0) {
            if (!heading)
                summary_heading(ctx, "OpenCL");
            heading = true;
            if (ctx->per_rank) {
                if (summary_rank_shown(ctx, set->ranks[r].rank))
                    print_rank(ctx, set->ranks[r].rank, &t);
            } else {
                fold_rank(&a, set->ranks[r].rank, &t);
            }
        }
        free(t.fns);
        free(t.devs);
    }
    if (!ctx->per_rank && heading)
        print_folded(ctx, &a);
    spread_free(&a.calls);
    spread_free(&a.host_ms);
    spread_free(&a.commands);
    spread_free(&a.busy_ms);
    for (int b = 0; b < 3; b++)
        spread_free(&a.bytes[b]);
    free(a.fns);
    free(a.devs);
}

SUMMARY_SECTION(opencl_section, "OpenCL", 50, print_opencl)
