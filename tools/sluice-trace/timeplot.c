/* SPDX-License-Identifier: MIT */
/* See timeplot.h. One CSV row per thread (docs/TRACE.md):
 *   rank,pid,tid,role,user_s,sluice_s,mpi_s,sleep_s
 * from the thread records' time accounting; the picture stacks them per rank, the program's
 * main threads and sluice's own threads in two panels (a sleeping progress thread would
 * otherwise hide the program's share). */
#include "timeplot.h"

#include <getopt.h>

#include "plot.h"
#include "roles.h"
#include "traceset.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace time [--csv] OUT.png|OUT.csv DIR|FILE...\n"
                "  Each rank's thread time as user / sluice / MPI wait / sleep, stacked bars per rank\n"
                "  (the program's main threads, and sluice's threads). --csv writes the numbers\n"
                "  ('-' for stdout).\n");
}

int time_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool csv = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+ch", opts, NULL)) != -1) {
        if (c == 'c') {
            csv = true;
        } else {
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 2, "time", "wants an output and a trace folder or file", usage))
        return 2;
    const char *out = argv[optind++];
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "time", stderr) != 0)
        return 1;
    struct plot_out po;
    if (plot_out_open(&po, csv, out) != 0) {
        trace_set_free(&set);
        return 1;
    }
    FILE *o = po.f;
    fputs("rank,pid,tid,role,user_s,sluice_s,mpi_s,sleep_s\n", o);
    for (size_t i = 0; i < set.nfiles; i++) {
        const struct sluice_trace_file *f = set.files[i];
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            if (r->info.index == SLUICE_TF_NO_THREAD)
                continue;
            char role[64];
            fprintf(o, "%d,%d,%d,\"%s\"", f->header.rank, f->header.pid, r->info.tid,
                    role_of_thread(f, r, role, sizeof role));
            for (int k = 0; k < 4; k++)
                fprintf(o, ",%.9f", (double)r->info.time_ns[k] / 1e9);
            fputc('\n', o);
        }
    }
    int status = plot_out_close(&po, "time", argv[optind], set.nranks, 0);
    if (set.unreadable || set.incomplete)
        status = 1;
    trace_set_free(&set);
    return status;
}
