/* SPDX-License-Identifier: MIT */
/* `sluice-trace dump`: one line per event (per process, in time order across its threads), the
 * same shape as the SLUICE_DEBUG stream, with strings resolved. For debugging and grep. Times are
 * seconds from the process's own start (+S), or with --timeline seconds on the set's one time axis
 * (@S, timeline.h: rank 0's clock), so that lines of different processes compare. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "symbolize.h"
#include "timeline.h"
#include "trace/kinds.h"
#include "traceset.h"

static void print_word(FILE *o, const struct sluice_trace_file *f, unsigned kind, int w, uint64_t v,
                       bool known)
{
    if (known && sluice_kind_word_is_string(kind, w)) {
        const char *s = sluice_trace_file_string(f, v);
        if (s) {
            fprintf(o, "\"%s\"", s);
            return;
        }
    }
    if ((int64_t)v < 0 && (int64_t)v >= -65536)
        fprintf(o, "%lld", (long long)(int64_t)v);
    else
        fprintf(o, "%llu", (unsigned long long)v);
}

static const struct timeline *axis; /* --timeline: the set's time axis, else NULL */

static void print_event(FILE *o, const struct sluice_trace_file *f, const struct sluice_trace_rthread *t,
                        const struct sluice_tf_event *ev, bool sites)
{
    const char *name = sluice_trace_file_kind(f, ev->kind);
    /* Labels come from our events.def when the producer's kind is the same kind. */
    bool known = name && ev->kind < SLUICE_EV_COUNT && strcmp(name, sluice_kinds[ev->kind].name) == 0;
    if (axis)
        fprintf(o, "rank %d pid %d tid %d @%.6f %s", f->header.rank, f->header.pid, t->info.tid,
                (double)timeline_ns(axis, f, ev->t_ns) / 1e9, name ? name : "?");
    else
        fprintf(o, "rank %d pid %d tid %d +%.6f %s", f->header.rank, f->header.pid, t->info.tid,
                trace_rel_seconds(f, ev->t_ns), name ? name : "?");
    const uint64_t words[3] = {ev->a, ev->b, ev->c};
    for (int w = 0; w < 3; w++) {
        const char *meaning = known ? sluice_kinds[ev->kind].meaning[w] : (const char *[]){"a", "b", "c"}[w];
        if (meaning[0] == '\0')
            continue;
        const char *paren = strstr(meaning, " (");
        int n = paren ? (int)(paren - meaning) : (int)strlen(meaning);
        fprintf(o, "%s%.*s=", w == 0 ? " " : ", ", n, meaning);
        print_word(o, f, ev->kind, w, words[w], known);
    }
    if (ev->dur_ns)
        fprintf(o, " dur=%lluns", (unsigned long long)ev->dur_ns);
    if (ev->flags & SLUICE_EVF_ERROR)
        fprintf(o, " ERROR");
    if (ev->callsite) {
        fprintf(o, " site=%u", ev->callsite);
        const struct sluice_trace_rcallsite *cs = sluice_trace_file_callsite(f, ev->callsite);
        if (sites && cs) {
            char frame[512];
            symbolize_module_offset(f, cs->frames[0], frame, sizeof frame);
            fprintf(o, " at %s", frame);
        }
    }
    fputc('\n', o);
}

struct ref {
    const struct sluice_trace_rthread *t;
    const struct sluice_tf_event *ev;
};

static int by_time(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    if (x->ev->t_ns != y->ev->t_ns)
        return x->ev->t_ns < y->ev->t_ns ? -1 : 1;
    if (x->t != y->t) /* same instant: thread order, then recording order */
        return x->t->info.index < y->t->info.index ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* One process's events in time order across its threads. */
static void dump_file(FILE *o, const struct sluice_trace_file *f)
{
    size_t n = 0;
    for (size_t t = 0; t < f->nthreads; t++)
        n += f->threads[t].info.events;
    struct ref *refs = malloc(sizeof *refs * (n ? n : 1));
    if (!refs) { /* fall back to thread order */
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t e = 0; e < f->threads[t].info.events; e++)
                print_event(o, f, &f->threads[t], &f->threads[t].events[e], true);
        return;
    }
    size_t k = 0;
    for (size_t t = 0; t < f->nthreads; t++)
        for (uint64_t e = 0; e < f->threads[t].info.events; e++)
            refs[k++] = (struct ref){&f->threads[t], &f->threads[t].events[e]};
    qsort(refs, n, sizeof *refs, by_time);
    for (size_t i = 0; i < n; i++)
        print_event(o, f, refs[i].t, refs[i].ev, true);
    free(refs);
}

int dump_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'}, {"timeline", no_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
    int c, aligned = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: sluice-trace dump [--timeline] DIR|FILE...\n  Prints every event, one line each; "
                   "times from each process's start (+S), or with --timeline on one axis for all (@S).\n");
            return 0;
        }
        if (c == 't') {
            aligned = 1;
            continue;
        }
        fprintf(stderr, "usage: sluice-trace dump [--timeline] DIR|FILE...\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "sluice-trace dump: no trace folder or file given\nusage: sluice-trace dump "
                        "[--timeline] DIR|FILE...\n");
        return 2;
    }
    struct trace_set set;
    if (trace_set_load(&set, argv + optind, argc - optind, stderr) != 0) {
        trace_set_free(&set);
        return 1;
    }
    struct timeline tl;
    if (aligned) {
        timeline_init(&tl, &set);
        axis = &tl;
    }
    for (size_t i = 0; i < set.nfiles; i++)
        dump_file(stdout, set.files[i]);
    if (aligned) {
        axis = NULL;
        timeline_free(&tl);
    }
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    trace_set_free(&set);
    return status;
}
