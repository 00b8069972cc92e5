/* SPDX-License-Identifier: MIT */
/* A per-rank quantity folded into one line: total, min / median / max, and the outlier ranks
 * (those at over twice or under half the median), so that a summary of 1,000 ranks stays a few
 * lines long. Sections collect values with spread_add and print them with spread_print. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_SPREAD_H
#define SLUICE_TOOLS_SLUICE_TRACE_SPREAD_H

#include <stddef.h>
#include <stdio.h>

struct spread {
    double *v;
    int *rank;
    size_t n, cap;
};

void spread_add(struct spread *s, int rank, double value);
/* "label  ranks  total  min  median  max (rank)  outliers: rank (value) ..." with values to
 * `decimals` places, or as sizes (12.3 MiB) with unit_bytes. */
void spread_print(FILE *o, const char *label, struct spread *s, int decimals, int unit_bytes);
/* Column heads matching spread_print's line. */
void spread_heading(FILE *o, const char *first);
void spread_free(struct spread *s);

#endif
