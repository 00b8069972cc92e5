/* SPDX-License-Identifier: MIT */
/* A set of trace files loaded for a command: every *.sluicetrace in a folder, or the files
 * named, validated by the reader and sorted by rank, then pid. Rank groups gather the files
 * of one rank (a rank can hold several processes: fork children, a shell and its command). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_TRACESET_H
#define SLUICE_TOOLS_SLUICE_TRACE_TRACESET_H

#include <stdbool.h>
#include <stdio.h>

#include "trace/reader.h"

struct trace_rank {
    int rank;
    struct sluice_trace_file **files;
    size_t nfiles;
};

struct trace_set {
    struct sluice_trace_file **files;
    size_t nfiles;
    struct trace_rank *ranks; /* ascending rank */
    size_t nranks;
    size_t unreadable; /* files rejected by the reader (reported on err) */
    size_t incomplete; /* leftover *.tmp files: a writer was interrupted */
};

/* Loads each path (a folder or a file). Problems are reported on `err`, one line each.
 * Returns 0 if at least one file loaded, -1 otherwise. */
int trace_set_load(struct trace_set *set, char *const *paths, int npaths, FILE *err);
void trace_set_free(struct trace_set *set);

/* One line on `err` naming the ranks below the launcher size that have no file (crashed, killed,
 * or never started), for commands whose output would otherwise just lack them. */
void trace_set_report_missing(const struct trace_set *set, const char *command, FILE *err);

/* What every subcommand does with its trace arguments: load them, or free what was loaded and
 * return -1 (the error is printed); then name the ranks that have no trace file. */
int trace_set_open(struct trace_set *set, char *const *paths, int npaths, const char *command, FILE *err);

/* p (an array of *cap elements of `size` bytes) grown by doubling to hold `need`; out of memory
 * ends the command with one line naming it. */
void *trace_grow(void *p, size_t *cap, size_t need, size_t size, const char *command);

/* The number `f`'s producer gave the kind called `name`, or -1 if it has none. */
int trace_kind_number(const struct sluice_trace_file *f, const char *name);

/* Time of an event relative to its process's start, in seconds. */
double trace_rel_seconds(const struct sluice_trace_file *f, uint64_t t_ns);

/* The end of every subcommand's option loop: -h prints the usage on stdout and gives exit code
 * 0, any other option it did not take prints it on stderr and gives 2. */
int trace_opt_help(int c, void (*usage)(FILE *));

/* --NAME N for a whole number in lo..hi: 0 with *out set, or 2 after one line naming it. */
int trace_opt_int(const char *command, const char *name, const char *arg, long lo, long hi, int *out);

/* Whether fewer than `need` arguments are left (nleft); if so, "sluice-trace COMMAND: WHAT" and
 * the usage are printed on stderr (the caller exits 2). */
bool trace_args_missing(int nleft, int need, const char *command, const char *what, void (*usage)(FILE *));

#endif
