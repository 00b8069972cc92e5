/* SPDX-License-Identifier: MIT */
/* Export to the Chrome trace-event JSON format, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open. One process track per traced process, named "rank R (pid P) host",
 * sorted by rank; one thread track per thread. Events with a duration are complete events
 * ("X"), the rest thread-scoped instants ("i"). Ranks are aligned on the wall clock: each
 * file carries its monotonic and real-time start, so ts = real start + (t - monotonic start),
 * in microseconds from the earliest process start. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "chrome.h"
#include "trace/kinds.h"
#include "traceset.h"

static void json_string(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

/* Microseconds since `origin_ns` (real time) of monotonic time `t` in file `f`. */
static double ts_us(const struct sluice_trace_file *f, uint64_t t, uint64_t origin_ns)
{
    /* integers first: doubles cannot hold nanoseconds since 1970 exactly */
    int64_t ns =
        (int64_t)(f->header.start_real_ns - origin_ns) + ((int64_t)t - (int64_t)f->header.start_mono_ns);
    return (double)ns / 1000.0;
}

static void event_args(FILE *o, const struct sluice_trace_file *f, const struct sluice_tf_event *ev,
                       bool known)
{
    const uint64_t words[3] = {ev->a, ev->b, ev->c};
    fputs("{", o);
    bool first = true;
    for (int w = 0; w < 3; w++) {
        const char *meaning = known ? sluice_kinds[ev->kind].meaning[w] : (const char *[]){"a", "b", "c"}[w];
        if (meaning[0] == '\0')
            continue;
        char label[128];
        const char *paren = strstr(meaning, " (");
        size_t n = paren ? (size_t)(paren - meaning) : strlen(meaning);
        snprintf(label, sizeof label, "%.*s", (int)n, meaning);
        fputs(first ? "" : ",", o);
        first = false;
        json_string(o, label);
        fputc(':', o);
        const char *s =
            known && sluice_kind_word_is_string(ev->kind, w) ? sluice_trace_file_string(f, words[w]) : NULL;
        if (s)
            json_string(o, s);
        else if ((int64_t)words[w] < 0 && (int64_t)words[w] >= -65536)
            fprintf(o, "%" PRId64, (int64_t)words[w]);
        else
            fprintf(o, "%" PRIu64, words[w]);
    }
    if (ev->flags & SLUICE_EVF_ERROR)
        fprintf(o, "%s\"error\":true", first ? "" : ",");
    fputs("}", o);
}

static void export_set(FILE *o, const struct trace_set *set)
{
    uint64_t origin = UINT64_MAX;
    for (size_t i = 0; i < set->nfiles; i++)
        if (set->files[i]->header.start_real_ns < origin)
            origin = set->files[i]->header.start_real_ns;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", o);
    bool first = true;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        const struct sluice_tf_header *h = &f->header;
        char name[512];
        snprintf(name, sizeof name, "rank %d (pid %d) %s", h->rank, h->pid, h->hostname);
        fprintf(o, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":",
                first ? "" : ",\n", h->pid);
        json_string(o, name);
        fprintf(o,
                "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
                h->pid, h->rank);
        first = false;
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            if (r->info.index == SLUICE_TF_NO_THREAD)
                continue;
            fprintf(o,
                    ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
                    "\"thread %u "
                    "(tid %d)\"}}",
                    h->pid, r->info.tid, r->info.index, r->info.tid);
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                const char *kind = sluice_trace_file_kind(f, ev->kind);
                bool known =
                    kind && ev->kind < SLUICE_EV_COUNT && strcmp(kind, sluice_kinds[ev->kind].name) == 0;
                fputs(",\n{\"name\":", o);
                json_string(o, kind ? kind : "?");
                fputs(",\"cat\":", o);
                json_string(o, known ? sluice_kinds[ev->kind].category : "sluice");
                if (ev->dur_ns)
                    fprintf(o, ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f", ts_us(f, ev->t_ns, origin),
                            (double)ev->dur_ns / 1000.0);
                else
                    fprintf(o, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f", ts_us(f, ev->t_ns, origin));
                fprintf(o, ",\"pid\":%d,\"tid\":%d,\"args\":", h->pid, r->info.tid);
                event_args(o, f, ev, known);
                fputc('}', o);
            }
        }
    }
    fputs("\n]}\n", o);
}

int chrome_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *out_path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        if (c == 'o') {
            out_path = optarg;
        } else if (c == 'h') {
            printf("usage: sluice-trace chrome [-o OUT.json] DIR|FILE...\n"
                   "  Writes Chrome trace-event JSON (open it in ui.perfetto.dev or chrome://tracing);\n"
                   "  one process track per traced process (sorted by rank), one per thread.\n");
            return 0;
        } else {
            fprintf(stderr, "usage: sluice-trace chrome [-o OUT.json] DIR|FILE...\n");
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "sluice-trace chrome: no trace folder or file given\n"
                        "usage: sluice-trace chrome [-o OUT.json] DIR|FILE...\n");
        return 2;
    }
    struct trace_set set;
    if (trace_set_load(&set, argv + optind, argc - optind, stderr) != 0) {
        trace_set_free(&set);
        return 1;
    }
    FILE *o = stdout;
    if (out_path && !(o = fopen(out_path, "w"))) {
        perror(out_path);
        trace_set_free(&set);
        return 1;
    }
    export_set(o, &set);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    if (o != stdout && fclose(o) != 0) {
        perror(out_path);
        status = 1;
    }
    trace_set_free(&set);
    return status;
}
