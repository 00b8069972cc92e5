/* SPDX-License-Identifier: MIT */
/* See calls.h. Events recorded with a call site (SLUICE_BACKTRACE=N) are grouped by what was
 * called (the kind; for OpenCL calls and enqueues the function) and by the program's stack
 * (frames as module+offset, which are equal across processes where addresses are not), then
 * listed by count with the time spent and the ranks, and each stack symbolized to function and
 * file:line with one addr2line per module (symbolize.h). Events of sluice's own threads
 * (progress, write-behind, dist scheduler: roles.h) are no calls of the program and are left
 * out unless --all. */
#include "calls.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "roles.h"
#include "symbolize.h"
#include "traceset.h"

struct group {
    char *key; /* what, then the frames as module+offset */
    const char *what;
    const struct sluice_trace_file *file; /* one occurrence, for printing its frames */
    const struct sluice_trace_rcallsite *cs;
    uint64_t count, dur_ns;
    int *ranks;
    size_t nranks;
};

struct table {
    struct group *g;
    size_t n, cap;
};

static char *group_key(const struct sluice_trace_file *f, const char *what,
                       const struct sluice_trace_rcallsite *cs)
{
    size_t cap = strlen(what) + 2 + 32 * (size_t)cs->depth, len = 0;
    char *key = malloc(cap);
    if (!key)
        return NULL;
    len = (size_t)snprintf(key, cap, "%s|", what);
    for (uint32_t i = 0; i < cs->depth; i++) {
        char mo[600];
        symbolize_module_offset(f, cs->frames[i], mo, sizeof mo);
        size_t n = strlen(mo);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            char *g = realloc(key, cap);
            if (!g) {
                free(key);
                return NULL;
            }
            key = g;
        }
        memcpy(key + len, mo, n);
        key[len + n] = ';';
        key[len + n + 1] = '\0';
        len += n + 1;
    }
    return key;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

static int by_count(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->count != y->count)
        return (x->count < y->count) - (x->count > y->count);
    return strcmp(x->key, y->key);
}

/* Groups are found by binary search over the sorted part, appended unsorted, sorted per file. */
static struct group *group_of(struct table *t, size_t sorted, char *key, const char *what,
                              const struct sluice_trace_file *f, const struct sluice_trace_rcallsite *cs)
{
    struct group probe = {.key = key};
    struct group *g = sorted ? bsearch(&probe, t->g, sorted, sizeof *t->g, by_key) : NULL;
    for (size_t i = sorted; !g && i < t->n; i++)
        if (strcmp(t->g[i].key, key) == 0)
            g = &t->g[i];
    if (g) {
        free(key);
        return g;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct group *n = realloc(t->g, sizeof *n * cap);
        if (!n) {
            free(key);
            return NULL;
        }
        t->g = n;
        t->cap = cap;
    }
    t->g[t->n] = (struct group){.key = key, .what = what, .file = f, .cs = cs};
    return &t->g[t->n++];
}

static void add_rank(struct group *g, int rank)
{
    for (size_t i = 0; i < g->nranks; i++)
        if (g->ranks[i] == rank)
            return;
    int *r = realloc(g->ranks, sizeof *r * (g->nranks + 1));
    if (r) {
        g->ranks = r;
        g->ranks[g->nranks++] = rank;
    }
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: sluice-trace calls [--top N] [--no-symbols] [--all] DIR|FILE...\n"
            "  Intercepted calls by call site (needs SLUICE_BACKTRACE=N in the run): count, time, ranks,\n"
            "  and the program's stack as function at file:line (one addr2line per module). --all: also\n"
            "  the events of sluice's own threads (progress, write-behind, scheduler).\n");
}

int calls_main(int argc, char **argv)
{
    static const struct option opts[] = {{"top", required_argument, NULL, 't'},
                                         {"no-symbols", no_argument, NULL, 'n'},
                                         {"all", no_argument, NULL, 'a'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int top = 20, c;
    bool symbols = true, all = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+t:nah", opts, NULL)) != -1) {
        if (c == 't') {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 1000000) {
                fprintf(stderr, "sluice-trace calls: --top wants a positive number, not '%s'\n", optarg);
                return 2;
            }
            top = (int)v;
        } else if (c == 'n') {
            symbols = false;
        } else if (c == 'a') {
            all = true;
        } else {
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 1, "calls", "no trace folder or file given", usage))
        return 2;
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "calls", stderr) != 0)
        return 1;
    struct table t = {0};
    uint64_t with = 0, without = 0;
    for (size_t i = 0; i < set.nfiles; i++) {
        const struct sluice_trace_file *f = set.files[i];
        int k_call = trace_kind_number(f, "CL_CALL"), k_enq = trace_kind_number(f, "CL_ENQUEUE");
        size_t sorted = t.n;
        for (size_t th = 0; th < f->nthreads; th++) {
            char role[64];
            role_of_thread(f, &f->threads[th], role, sizeof role);
            if (!all && (strncmp(role, "progress", 8) == 0 || strcmp(role, "write-behind") == 0 ||
                         strcmp(role, "dist scheduler") == 0))
                continue;
            for (uint64_t e = 0; e < f->threads[th].info.events; e++) {
                const struct sluice_tf_event *ev = &f->threads[th].events[e];
                const struct sluice_trace_rcallsite *cs =
                    ev->callsite ? sluice_trace_file_callsite(f, ev->callsite) : NULL;
                if (!cs) {
                    without++;
                    continue;
                }
                with++;
                const char *what = NULL;
                if ((int)ev->kind == k_call || (int)ev->kind == k_enq)
                    what = sluice_trace_file_string(f, ev->a);
                if (!what)
                    what = sluice_trace_file_kind(f, ev->kind);
                char *key = group_key(f, what ? what : "?", cs);
                struct group *g = key ? group_of(&t, sorted, key, what ? what : "?", f, cs) : NULL;
                if (!g)
                    continue;
                g->count++;
                g->dur_ns += ev->dur_ns;
                add_rank(g, f->header.rank);
            }
        }
        qsort(t.g, t.n, sizeof *t.g, by_key);
    }
    printf(
        "%llu events with a call site, %llu without, in %zu files of %zu ranks; %zu distinct (call, stack)\n",
        (unsigned long long)with, (unsigned long long)without, set.nfiles, set.nranks, t.n);
    if (with == 0)
        printf("(no call sites: run with SLUICE_BACKTRACE=4 to record them)\n");
    qsort(t.g, t.n, sizeof *t.g, by_count);
    if (symbols && t.n)
        symbolize_batch(&set);
    for (size_t i = 0; i < t.n && (int)i < top; i++) {
        const struct group *g = &t.g[i];
        printf("\n#%zu  %s: %llu calls, %.6f s, %zu rank%s\n", i + 1, g->what, (unsigned long long)g->count,
               (double)g->dur_ns / 1e9, g->nranks, g->nranks == 1 ? "" : "s");
        for (uint32_t k = 0; k < g->cs->depth; k++) {
            char frame[2048];
            symbolize_frame(g->file, g->cs->frames[k], symbols, frame, sizeof frame);
            printf("      %s\n", frame);
        }
    }
    for (size_t i = 0; i < t.n; i++) {
        free(t.g[i].key);
        free(t.g[i].ranks);
    }
    free(t.g);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    trace_set_free(&set);
    return status;
}
