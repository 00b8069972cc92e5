/* SPDX-License-Identifier: MIT */
/* The summary command: loads a trace set and prints every registered section. */
#include "summary.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static struct summary_section *sections;

void summary_register(struct summary_section *s)
{
    struct summary_section **p = &sections;
    while (*p && (*p)->order <= s->order)
        p = &(*p)->next;
    s->next = *p;
    *p = s;
}

void summary_heading(const struct summary_ctx *ctx, const char *title)
{
    fprintf(ctx->out, "\n== %s ==\n", title);
}

const char *summary_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

/* LIST is "3,17,40-47": ranks and ranges separated by commas. 0 when well formed. */
static int check_rank_list(const char *list)
{
    const char *p = list;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                return -1;
        }
        if (*end != ',' && *end != 0)
            return -1;
        p = *end ? end + 1 : end;
    }
    return *list ? 0 : -1;
}

bool summary_rank_shown(const struct summary_ctx *ctx, int rank)
{
    if (ctx->ranks == NULL)
        return true;
    const char *p = ctx->ranks;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (rank >= a && rank <= b)
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace summary [--top N] [--no-symbols] [--per-rank|--ranks[=LIST]|--compact] "
                "DIR|FILE...\n"
                "  Prints, per rank and in total, what the trace files recorded.\n"
                "  --top N        rows in top-N tables (default 10)\n"
                "  --no-symbols   print call sites as module+offset, without addr2line\n"
                "  --per-rank     a row per rank in every table (default up to 16 ranks)\n"
                "  --ranks[=LIST] the same (the per-rank detail); with LIST (3,17,40-47) only those ranks\n"
                "  --compact      totals and the spread across ranks (min/max and which rank) only\n");
}

int summary_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"top", required_argument, NULL, 't'},
        {"no-symbols", no_argument, NULL, 'n'},
        {"per-rank", no_argument, NULL, 'r'},
        {"compact", no_argument, NULL, 'c'},
        {"ranks", optional_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct summary_ctx ctx = {.out = stdout, .top = 10, .symbolize = true};
    int per_rank = -1; /* -1: decided by the number of ranks */
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+t:nrch", opts, NULL)) != -1) {
        switch (c) {
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 100000) {
                fprintf(stderr, "sluice-trace summary: --top wants a positive number, not '%s'\n", optarg);
                return 2;
            }
            ctx.top = (int)v;
            break;
        }
        case 'n':
            ctx.symbolize = false;
            break;
        case 'r':
            per_rank = 1;
            break;
        case 'c':
            per_rank = 0;
            break;
        case 'R':
            if (optarg != NULL && check_rank_list(optarg) != 0) {
                fprintf(stderr, "sluice-trace summary: --ranks wants ranks such as 3,17,40-47, not '%s'\n",
                        optarg);
                return 2;
            }
            ctx.ranks = optarg;
            per_rank = 1;
            break;
        default:
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 1, "summary", "no trace folder or file given", usage))
        return 2;
    struct trace_set set;
    int loaded = trace_set_load(&set, argv + optind, argc - optind, stderr);
    if (loaded != 0) {
        trace_set_free(&set);
        return 1;
    }
    ctx.set = &set;
    ctx.per_rank = per_rank >= 0 ? per_rank == 1 : set.nranks <= 16;
    for (struct summary_section *s = sections; s; s = s->next)
        s->print(&ctx);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    trace_set_free(&set);
    return status;
}
