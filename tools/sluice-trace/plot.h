/* SPDX-License-Identifier: MIT */
/* Pictures: the C tool writes the numbers as CSV and hands them to sluice-trace-plot.py
 * (matplotlib), installed beside the executable. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_PLOT_H
#define SLUICE_TOOLS_SLUICE_TRACE_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A temporary file for a CSV; its path goes into path (PATH_MAX). NULL with a message on error. */
FILE *plot_tmp_csv(char *path, size_t len);
/* Runs `python3 sluice-trace-plot.py WHAT CSV PNG TITLE`; 0 on success, else 1 with the reason
 * on stderr (no python, no matplotlib, no script). */
int plot_run(const char *what, const char *csv, const char *png, const char *title);

/* The output of a command that draws a picture from a CSV or, with --csv, writes that CSV. */
struct plot_out {
    bool csv;        /* --csv: the numbers go to out itself ('-': stdout) */
    const char *out; /* OUT.png, or with csv the CSV's path */
    FILE *f;         /* where the command writes its rows */
    char tmp[4096];  /* the temporary CSV behind a picture */
};
/* Opens p->f: out itself with csv, else a temporary file. -1 with the reason on stderr. */
int plot_out_open(struct plot_out *p, bool csv, const char *out);
/* Closes p->f and, without --csv and while status is 0, draws OUT with `sluice-trace-plot.py WHAT`
 * titled "SOURCE: N ranks"; the temporary file is removed. Returns status, or 1 when either failed. */
int plot_out_close(struct plot_out *p, const char *what, const char *source, size_t nranks, int status);

#endif
