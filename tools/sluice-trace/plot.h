/* SPDX-License-Identifier: MIT */
/* Pictures: the C tool writes the numbers as CSV and hands them to sluice-trace-plot.py
 * (matplotlib), installed beside the executable. */
#ifndef SLUICE_TRACE_TOOL_PLOT_H
#define SLUICE_TRACE_TOOL_PLOT_H

#include <stdio.h>

/* A temporary file for a CSV; its path goes into path (PATH_MAX). NULL with a message on error. */
FILE *plot_tmp_csv(char *path, size_t len);
/* Runs `python3 sluice-trace-plot.py WHAT CSV PNG TITLE`; 0 on success, else 1 with the reason
 * on stderr (no python, no matplotlib, no script). */
int plot_run(const char *what, const char *csv, const char *png, const char *title);

#endif
