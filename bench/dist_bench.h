/* SPDX-License-Identifier: MIT */
/* What the two distributed-OpenCL benchmarks (dist_opencl.c, dist_mpi_pingpong.c) share, so that
 * their figures are comparable line by line: the size sweep and its parsing, how many repetitions
 * a size gets, the clock, and the statistics (median, p10, p90 of per-repetition times).
 * Header-only (static functions): every bench source is its own executable. */
#ifndef SLUICE_BENCH_DIST_BENCH_H
#define SLUICE_BENCH_DIST_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DIST_MAX_SIZES = 64 };

/* The default sweep: 1 KiB to 256 MiB in factors of 4 (the range of docs/PERFORMANCE.md,
 * "Distributed OpenCL"). */
static const char *const dist_default_sizes = "1K 4K 16K 64K 256K 1M 4M 16M 64M 256M";
static const char *const dist_quick_sizes = "1K 64K 1M";

struct dist_opts {
    size_t sizes[DIST_MAX_SIZES];
    int nsizes;
    int lat_reps;  /* round trips timed for latency */
    double volume; /* bytes moved per size and direction: sets the repetitions */
    int min_reps, max_reps;
};

static inline double dist_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "64K", "16M", "1G" or plain bytes (binary suffixes, as everywhere in sluice); 0 on error. */
static inline size_t dist_parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K':
    case 'k':
        v <<= 10;
        end++;
        break;
    case 'M':
    case 'm':
        v <<= 20;
        end++;
        break;
    case 'G':
    case 'g':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    return (*end == '\0' && end != s) ? (size_t)v : 0;
}

/* Parses a blank-separated size list into o->sizes; returns 0, or -1 naming the bad word. */
static inline int dist_parse_sizes(struct dist_opts *o, const char *list, const char *prog)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    o->nsizes = 0;
    for (char *save = NULL, *w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
        size_t v = dist_parse_size(w);
        if (v == 0 || o->nsizes == DIST_MAX_SIZES) {
            fprintf(stderr, "%s: bad size '%s' (sizes like 1K 64K 16M, at most %d)\n", prog, w,
                    DIST_MAX_SIZES);
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static inline void dist_default_opts(struct dist_opts *o)
{
    memset(o, 0, sizeof *o);
    dist_parse_sizes(o, dist_default_sizes, "");
    o->lat_reps = 200;
    o->volume = 256.0 * 1024 * 1024;
    o->min_reps = 3;
    o->max_reps = 100;
}

/* --quick: three sizes and a quarter of the work, for smoke tests. */
static inline void dist_quick_opts(struct dist_opts *o)
{
    dist_parse_sizes(o, dist_quick_sizes, "");
    o->lat_reps = 50;
    o->volume = 16.0 * 1024 * 1024;
    o->max_reps = 20;
}

/* Handles the options both programs take; returns 1 if argv[*i] was one (advancing *i past its
 * value), 0 if not, -1 on a bad value. */
static inline int dist_common_opt(struct dist_opts *o, int argc, char **argv, int *i, const char *prog)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
        dist_quick_opts(o);
        return 1;
    }
    if (!v)
        return 0;
    if (strcmp(a, "--sizes") == 0) {
        ++*i;
        return dist_parse_sizes(o, v, prog) == 0 ? 1 : -1;
    }
    if (strcmp(a, "--lat-reps") == 0 || strcmp(a, "--max-reps") == 0 || strcmp(a, "--volume") == 0) {
        ++*i;
        if (strcmp(a, "--volume") == 0) {
            o->volume = (double)dist_parse_size(v);
            return o->volume > 0 ? 1 : -1;
        }
        int n = atoi(v);
        if (n < 1)
            return -1;
        *(strcmp(a, "--lat-reps") == 0 ? &o->lat_reps : &o->max_reps) = n;
        if (o->min_reps > o->max_reps)
            o->min_reps = o->max_reps;
        return 1;
    }
    return 0;
}

static const char *const dist_common_usage =
    "  --sizes \"1K 64K 16M\"  sizes of the bandwidth sweep (default 1K..256M in factors of 4)\n"
    "  --volume SIZE         bytes moved per size and direction, sets the repetitions (default 256M)\n"
    "  --max-reps N          at most N repetitions per size (default 100; at least 3)\n"
    "  --lat-reps N          round trips timed for latency (default 200)\n"
    "  --quick               1K 64K 1M, 16M per size, 50 round trips: a smoke run\n";

/* Repetitions for one size: enough to move `volume` bytes, within [min_reps, max_reps]. */
static inline int dist_reps_for(const struct dist_opts *o, size_t size)
{
    double r = o->volume / (double)size;
    if (r < o->min_reps)
        return o->min_reps;
    if (r > o->max_reps)
        return o->max_reps;
    return (int)r;
}

static inline int dist_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct dist_stats {
    double median, p10, p90;
};

/* Sorts t[0..n) in place; nearest-rank percentiles. */
static inline struct dist_stats dist_stats_of(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, dist_cmp_double);
    struct dist_stats s = {t[n / 2], t[(n - 1) / 10], t[(n - 1) - (n - 1) / 10]};
    if (n % 2 == 0)
        s.median = 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return s;
}

#endif
