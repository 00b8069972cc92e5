/* SPDX-License-Identifier: MIT */
/* sluice-trace: reads the trace files sluice writes into SLUICE_TRACE_DIR (docs/TRACE.md).
 * One command per subcommand file; this file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "calls.h"
#include "dag.h"
#include "dsm.h"
#include "dump.h"
#include "heatmap.h"
#include "io.h"
#include "perfetto.h"
#include "sluice_version.h"
#include "summary.h"
#include "timeplot.h"
#include "whatif.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"summary", summary_main,
     "per rank and in total: events by kind, bytes, time decomposition, call sites, "
     "warnings"},
    {"dump", dump_main, "every event, one line each"},
    {"calls", calls_main, "intercepted calls by call site, symbolized to function and file:line"},
    {"perfetto", perfetto_main, "one timeline of every rank (trace-event JSON) for ui.perfetto.dev"},
    {"chrome", perfetto_main, "the same as perfetto (its old name)"},
    {"heatmap", heatmap_main,
     "PNG (or --csv) of bytes rank to rank by purpose, and I/O bytes per rank over time"},
    {"dag", dag_main, "the distributed OpenCL command DAG as Graphviz (.dot, or .svg with dot)"},
    {"io", io_main, "checkpoint sets and versions: requests, metadata, writers, costs, Young/Daly interval"},
    {"whatif", whatif_main,
     "checkpoint time of file-per-process vs the container at 1k-100k ranks (a model)"},
    {"time", time_main, "PNG (or --csv) of each rank's user / sluice / MPI / sleep time, stacked"},
    {"dsm", dsm_main, "the software DSM: allocations, hit rates per rank and chunk, hold times, messages"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace COMMAND [options] DIR|FILE...\n\n"
                "Reads the per-rank trace files sluice writes into SLUICE_TRACE_DIR.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(to, "  %-9s %s\n", commands[i].name, commands[i].help);
    fprintf(to, "\n'sluice-trace COMMAND --help' for a command's options; --version prints the version. Exit "
                "status: 0 ok, 1 unreadable or "
                "incomplete input, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sluice-trace %s\n", SLUICE_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "sluice-trace: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
