/* SPDX-License-Identifier: MIT */
/* Summary section: bytes from rank to rank by purpose (messages.h), as a matrix up to 16 ranks
 * and as the heaviest pairs beyond, and where the pictures of the run come from. */
#include <stdlib.h>
#include <string.h>

#include "messages.h"
#include "summary.h"

struct pair {
    int src, dst;
    uint64_t bytes, count;
};

static int by_bytes(const void *a, const void *b)
{
    const struct pair *p = a, *q = b;
    return (p->bytes < q->bytes) - (p->bytes > q->bytes);
}

static void print_purpose(const struct summary_ctx *ctx, const struct message *m, size_t n,
                          enum msg_purpose p)
{
    const struct trace_set *set = ctx->set;
    struct pair *pairs = NULL;
    size_t np = 0, cap = 0;
    uint64_t total = 0, count = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i].purpose != p)
            continue;
        size_t k = 0;
        while (k < np && !(pairs[k].src == m[i].src && pairs[k].dst == m[i].dst))
            k++;
        if (k == np) {
            if (np == cap) {
                cap = cap ? cap * 2 : 16;
                struct pair *g = realloc(pairs, cap * sizeof *g);
                if (!g)
                    break;
                pairs = g;
            }
            pairs[np++] = (struct pair){m[i].src, m[i].dst, 0, 0};
        }
        pairs[k].bytes += m[i].bytes;
        pairs[k].count++;
        total += m[i].bytes;
        count++;
    }
    char b[32];
    fprintf(ctx->out, "%s: %s in %llu messages between %zu pairs of ranks\n", msg_purpose_name(p),
            summary_bytes((double)total, b, sizeof b), (unsigned long long)count, np);
    if (np && ctx->per_rank && set->nranks <= 16) {
        fprintf(ctx->out, "  %-9s", "from\\to");
        for (size_t c = 0; c < set->nranks; c++)
            fprintf(ctx->out, " %11d", set->ranks[c].rank);
        fputc('\n', ctx->out);
        for (size_t r = 0; r < set->nranks; r++) {
            fprintf(ctx->out, "  %-9d", set->ranks[r].rank);
            for (size_t c = 0; c < set->nranks; c++) {
                uint64_t v = 0;
                for (size_t k = 0; k < np; k++)
                    if (pairs[k].src == set->ranks[r].rank && pairs[k].dst == set->ranks[c].rank)
                        v = pairs[k].bytes;
                fprintf(ctx->out, " %11s", v ? summary_bytes((double)v, b, sizeof b) : "-");
            }
            fputc('\n', ctx->out);
        }
    } else if (np) {
        qsort(pairs, np, sizeof *pairs, by_bytes);
        for (size_t k = 0; k < np && (int)k < ctx->top; k++)
            fprintf(ctx->out, "  rank %d -> rank %d: %s in %llu messages\n", pairs[k].src, pairs[k].dst,
                    summary_bytes((double)pairs[k].bytes, b, sizeof b), (unsigned long long)pairs[k].count);
    }
    free(pairs);
}

static void print_messages(const struct summary_ctx *ctx)
{
    struct timeline tl;
    timeline_init(&tl, ctx->set);
    struct message *m;
    size_t n;
    summary_heading(ctx, "Bytes rank to rank");
    int rc = messages_collect(ctx->set, &tl, &m, &n);
    timeline_free(&tl);
    if (rc != 0) {
        fprintf(ctx->out, "(out of memory)\n");
        return;
    }
    for (int p = 0; p < MSG_NPURPOSES; p++) {
        size_t k = 0;
        while (p == MSG_OTHER && k < n && m[k].purpose != MSG_OTHER)
            k++;
        if (p != MSG_OTHER || k < n) /* "other" (a tag no part claims) only when there is one */
            print_purpose(ctx, m, n, (enum msg_purpose)p);
    }
    free(m);
    summary_heading(ctx, "Pictures");
    fprintf(ctx->out,
            "sluice-trace perfetto OUT.json DIR   one timeline of every rank (ui.perfetto.dev)\n"
            "sluice-trace heatmap OUT.png DIR     bytes rank to rank by purpose; I/O bytes per rank "
            "over time\n"
            "sluice-trace time OUT.png DIR        each rank's user / sluice / MPI / sleep time\n"
            "sluice-trace io DIR                  checkpoint sets: requests, time, Young/Daly "
            "interval\n"
            "sluice-trace dag OUT.svg DIR         distributed OpenCL's command DAG and its rewrites\n"
            "sluice-trace dsm --png OUT.png DIR   software DSM: allocations, hit rates, hold times\n");
}

SUMMARY_SECTION(messages_section, "messages", 35, print_messages)
