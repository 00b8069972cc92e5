/* SPDX-License-Identifier: MIT */
/* See heatmap.h. The numbers are written as one CSV (docs/TRACE.md gives its columns):
 *   kind,purpose,from_rank,to_rank,t_start_s,t_end_s,bytes,count,host
 * "rank" rows: one per rank of the set (from_rank) with its host, so that a rank without traffic
 * still shows and the picture can group ranks by node;
 * "message" rows: bytes from rank to rank per purpose (messages.h), t empty;
 * "io" rows: bytes per rank and time bin per operation (container writes, checkpoint bytes
 * staged, container reads), to_rank empty. Only rows with bytes or messages are written.
 * With a PNG output the CSV goes to sluice-trace-plot.py. */
#include "heatmap.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"
#include "plot.h"
#include "timeline.h"
#include "traceset.h"

static void csv_field(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

static int write_messages(FILE *o, const struct trace_set *set, const struct timeline *tl)
{
    struct message *m;
    size_t n;
    if (messages_collect(set, tl, &m, &n) != 0)
        return -1;
    /* Sum per (purpose, from, to): sort a copy by that key. */
    for (int p = 0; p < MSG_NPURPOSES; p++)
        for (size_t r = 0; r < set->nranks; r++)
            for (size_t c = 0; c < set->nranks; c++) {
                uint64_t bytes = 0, count = 0;
                for (size_t i = 0; i < n; i++)
                    if ((int)m[i].purpose == p && m[i].src == set->ranks[r].rank &&
                        m[i].dst == set->ranks[c].rank) {
                        bytes += m[i].bytes;
                        count++;
                    }
                if (count == 0)
                    continue;
                fputs("message,", o);
                csv_field(o, msg_purpose_name((enum msg_purpose)p));
                fprintf(o, ",%d,%d,,,%" PRIu64 ",%" PRIu64 ",\n", set->ranks[r].rank, set->ranks[c].rank,
                        bytes, count);
            }
    free(m);
    return 0;
}

static const struct {
    const char *kind, *label;
    int word; /* payload word holding the bytes */
} io_kinds[] = {
    {"COMMIT_FS_WRITE", "container write", 1},
    {"CKPT_CLOSE", "checkpoint staged (size at close)", 1},
    {"CONTAINER_READ", "container read", 1},
};
#define NIO (sizeof io_kinds / sizeof io_kinds[0])

static void write_io(FILE *o, const struct trace_set *set, const struct timeline *tl, int bins)
{
    int64_t span = 1;
    for (size_t i = 0; i < set->nfiles; i++) {
        int64_t end = timeline_ns(tl, set->files[i], set->files[i]->header.end_mono_ns);
        if (end > span)
            span = end;
    }
    uint64_t *bytes = calloc((size_t)bins * 2, sizeof *bytes);
    if (!bytes)
        return;
    uint64_t *count = bytes + bins;
    for (size_t k = 0; k < NIO; k++)
        for (size_t r = 0; r < set->nranks; r++) {
            memset(bytes, 0, sizeof *bytes * (size_t)bins * 2);
            bool any = false;
            for (size_t i = 0; i < set->ranks[r].nfiles; i++) {
                const struct sluice_trace_file *f = set->ranks[r].files[i];
                int kind = trace_kind_number(f, io_kinds[k].kind);
                if (kind < 0)
                    continue;
                for (size_t t = 0; t < f->nthreads; t++)
                    for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
                        const struct sluice_tf_event *ev = &f->threads[t].events[e];
                        if (ev->kind != (unsigned)kind)
                            continue;
                        int64_t ts = timeline_ns(tl, f, ev->t_ns);
                        int b = ts <= 0 ? 0 : ts >= span ? bins - 1 : (int)((double)ts / (double)span * bins);
                        const uint64_t w[3] = {ev->a, ev->b, ev->c};
                        bytes[b] += w[io_kinds[k].word];
                        count[b]++;
                        any = true;
                    }
            }
            for (int b = 0; any && b < bins; b++) {
                if (count[b] == 0)
                    continue;
                fputs("io,", o);
                csv_field(o, io_kinds[k].label);
                fprintf(o, ",%d,,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",\n", set->ranks[r].rank,
                        (double)span * b / bins / 1e9, (double)span * (b + 1) / bins / 1e9, bytes[b],
                        count[b]);
            }
        }
    free(bytes);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace heatmap [--csv] [--bins N] OUT.png|OUT.csv DIR|FILE...\n"
                "  Bytes from each rank to each rank by purpose (checkpoint shuffle, OpenCL data, control,\n"
                "  DSM), and\n"
                "  I/O bytes per rank over time (N bins, default 40). --csv writes the numbers instead\n"
                "  of the picture ('-' for stdout).\n");
}

int heatmap_main(int argc, char **argv)
{
    static const struct option opts[] = {{"csv", no_argument, NULL, 'c'},
                                         {"bins", required_argument, NULL, 'b'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool csv = false;
    int bins = 40, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+cb:h", opts, NULL)) != -1) {
        if (c == 'c') {
            csv = true;
        } else if (c == 'b') {
            if (trace_opt_int("heatmap", "bins", optarg, 1, 10000, &bins) != 0)
                return 2;
        } else {
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 2, "heatmap", "wants an output and a trace folder or file", usage))
        return 2;
    const char *out = argv[optind++];
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "heatmap", stderr) != 0)
        return 1;
    struct timeline tl;
    timeline_init(&tl, &set);
    struct plot_out po;
    if (plot_out_open(&po, csv, out) != 0) {
        trace_set_free(&set);
        return 1;
    }
    FILE *o = po.f;
    fputs("kind,purpose,from_rank,to_rank,t_start_s,t_end_s,bytes,count,host\n", o);
    for (size_t r = 0; r < set.nranks; r++) {
        fprintf(o, "rank,,%d,,,,0,0,", set.ranks[r].rank);
        csv_field(o, set.ranks[r].nfiles ? set.ranks[r].files[0]->header.hostname : "");
        fputc('\n', o);
    }
    int status = write_messages(o, &set, &tl) == 0 ? 0 : 1;
    write_io(o, &set, &tl, bins);
    status = plot_out_close(&po, "heatmap", argv[optind], set.nranks, status);
    if (set.unreadable || set.incomplete)
        status = 1;
    timeline_free(&tl);
    trace_set_free(&set);
    return status;
}
