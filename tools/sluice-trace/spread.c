/* SPDX-License-Identifier: MIT */
/* See spread.h. */
#include "spread.h"

#include <stdlib.h>

#include "summary.h"

#define MAX_OUTLIERS 6 /* named on the line; the rest are counted */

void spread_add(struct spread *s, int rank, double value)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL)
            return;
        s->v = v;
        int *r = realloc(s->rank, cap * sizeof *r);
        if (r == NULL)
            return;
        s->rank = r;
        s->cap = cap;
    }
    s->v[s->n] = value;
    s->rank[s->n++] = rank;
}

void spread_free(struct spread *s)
{
    free(s->v);
    free(s->rank);
    *s = (struct spread){0};
}

static void put(FILE *o, double v, int decimals, int unit_bytes, int width)
{
    char buf[48];
    if (unit_bytes)
        summary_bytes(v, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "%.*f", decimals, v);
    fprintf(o, " %*s", width, buf);
}

void spread_heading(FILE *o, const char *first)
{
    fprintf(o, "  %-22s %6s %11s %11s %11s %11s %7s  %s\n", first, "ranks", "total", "min", "median", "max",
            "(rank)", "outliers: rank (value)");
}

/* Indexes into sort_ctx by value, then rank (qsort has no context argument). */
static const struct spread *sort_ctx;
static int by_value_q(const void *a, const void *b)
{
    const struct spread *s = sort_ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (s->v[i] != s->v[j])
        return s->v[i] < s->v[j] ? -1 : 1;
    return (s->rank[i] > s->rank[j]) - (s->rank[i] < s->rank[j]);
}

/* How far a value lies from the median, as a factor (1: at the median). */
static double distance(double v, double median)
{
    if (median <= 0)
        return v > 0 ? 1e300 : 1;
    return v >= median ? v / median : (v > 0 ? median / v : 1e300);
}

void spread_print(FILE *o, const char *label, struct spread *s, int decimals, int unit_bytes)
{
    if (s->n == 0)
        return;
    size_t *idx = malloc(s->n * sizeof *idx);
    if (idx == NULL)
        return;
    double total = 0;
    for (size_t i = 0; i < s->n; i++) {
        idx[i] = i;
        total += s->v[i];
    }
    sort_ctx = s;
    qsort(idx, s->n, sizeof *idx, by_value_q);
    double lo = s->v[idx[0]], hi = s->v[idx[s->n - 1]];
    double median = s->n % 2 ? s->v[idx[s->n / 2]] : (s->v[idx[s->n / 2 - 1]] + s->v[idx[s->n / 2]]) / 2;
    fprintf(o, "  %-22.22s %6zu", label, s->n);
    put(o, total, decimals, unit_bytes, 11);
    put(o, lo, decimals, unit_bytes, 11);
    put(o, median, decimals, unit_bytes, 11);
    put(o, hi, decimals, unit_bytes, 11);
    fprintf(o, " %7d ", s->rank[idx[s->n - 1]]);
    /* Outliers: over twice or under half the median, farthest first. */
    size_t nout = 0;
    for (size_t i = 0; i < s->n; i++)
        if (distance(s->v[i], median) > 2)
            idx[nout++] = i;
    for (size_t a = 1; a < nout; a++) /* farthest first: insertion sort, stable by rank */
        for (size_t b = a; b > 0 && distance(s->v[idx[b]], median) > distance(s->v[idx[b - 1]], median);
             b--) {
            size_t t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    if (nout == 0)
        fputs(" none", o);
    for (size_t i = 0; i < nout && i < MAX_OUTLIERS; i++) {
        char buf[48];
        if (unit_bytes)
            summary_bytes(s->v[idx[i]], buf, sizeof buf);
        else
            snprintf(buf, sizeof buf, "%.*f", decimals, s->v[idx[i]]);
        fprintf(o, " %d (%s)", s->rank[idx[i]], buf);
    }
    if (nout > MAX_OUTLIERS)
        fprintf(o, " +%zu more", nout - MAX_OUTLIERS);
    fputc('\n', o);
    free(idx);
}
