/* SPDX-License-Identifier: MIT */
/* See advice.h. */
#include "advice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"

static const char *const level_names[ADVICE_LEVELS] = {"staged", "protected", "durable"};
static const char *const class_names[ADVICE_CLASSES] = {"process", "node", "system"};

static int index_of(const char *const *names, int n, const char *s, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
            return i;
    return -1;
}

/* "NAME=VALUE[,NAME=VALUE...]" over names: each value (a positive duration) through
 * interval_parse_seconds into vals[index]. */
static int parse_list(const char *arg, const char *opt, const char *const *names, int n, double *vals,
                      char *err, size_t errlen)
{
    if (!strchr(arg, '='))
        return 0;
    bool seen[3] = {0}; /* ADVICE_LEVELS and ADVICE_CLASSES: 3 */
    const char *p = arg;
    for (;;) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        size_t vlen = comma ? (size_t)(comma - p) : strlen(p);
        int i = eq && eq < p + vlen ? index_of(names, n, p, (size_t)(eq - p)) : -1;
        if (i < 0) {
            snprintf(err, errlen, "--%s: '%.*s' names no %s (%s, %s, %s), in '%s'", opt, (int)vlen, p,
                     names == class_names ? "failure class" : "level", names[0], names[1], names[2], arg);
            return -1;
        }
        if (seen[i]) {
            snprintf(err, errlen, "--%s: %s given twice in '%s'", opt, names[i], arg);
            return -1;
        }
        char val[64];
        size_t len = vlen - (size_t)(eq + 1 - p);
        double v = -1;
        if (len < sizeof val) {
            memcpy(val, eq + 1, len);
            val[len] = 0;
            v = interval_parse_seconds(val);
        }
        if (v < 0) {
            snprintf(err, errlen, "--%s: %s wants a duration such as 24h, 30m or 3600, not '%.*s'", opt,
                     names[i], (int)len, eq + 1);
            return -1;
        }
        vals[i] = v;
        seen[i] = true;
        if (!comma)
            return 1;
        p = comma + 1;
    }
}

int advice_parse_mtbf(const char *arg, struct advice_inputs *in, char *err, size_t errlen)
{
    return parse_list(arg, "mtbf", class_names, ADVICE_CLASSES, in->mtbf, err, errlen);
}

int advice_parse_cost(const char *arg, struct advice_inputs *in, char *err, size_t errlen)
{
    double v[ADVICE_LEVELS] = {-1, -1, -1};
    int rc = parse_list(arg, "cost", level_names, ADVICE_LEVELS, v, err, errlen);
    for (int l = 0; rc == 1 && l < ADVICE_LEVELS; l++)
        if (v[l] >= 0) {
            in->cost[l] = v[l];
            in->source[l] = "given (--cost)";
            in->samples[l] = 0;
        }
    return rc;
}

static void print_cost(const struct advice_inputs *in, int l, FILE *out)
{
    if (in->cost[l] >= 0)
        fprintf(out, "    level %-9s C = %.6f s  (%s)\n", level_names[l], in->cost[l], in->source[l]);
    else
        fprintf(out, "    level %-9s C unknown  (%s)\n", level_names[l],
                l == ADVICE_PROTECTED ? "no protected level in this trace; --cost protected=S gives one"
                : l == ADVICE_DURABLE ? "no drained version in this trace; --cost durable=S"
                                      : "no checkpoint in this trace; --cost staged=S");
}

void advice_print_costs(const struct advice_inputs *in, FILE *out)
{
    fprintf(out, "\nMulti-level checkpoint costs (per checkpoint taken at each level):\n");
    for (int l = 0; l < ADVICE_LEVELS; l++)
        print_cost(in, l, out);
    fprintf(out, "(--mtbf process=T,node=T,system=T, the mean time between failures of the whole job that "
                 "each level's copy survives, gives the checkpoint interval and SLUICE_DRAIN_EVERY by the "
                 "multi-level optimum of Benoit et al.; --mtbf T alone gives Young's and Daly's one-level "
                 "interval)\n");
}

/* The level a failure class falls back to: the lowest present level that survives it. */
static int level_of(const struct advice_inputs *in, int cls)
{
    if (cls == ADVICE_PROCESS)
        return ADVICE_STAGED;
    if (cls == ADVICE_NODE && in->cost[ADVICE_PROTECTED] >= 0)
        return ADVICE_PROTECTED;
    return ADVICE_DURABLE;
}

struct block {
    int first, last; /* levels (indexes into the present levels) pooled */
    double c, lambda, x;
};

static double rate(double c, double lambda)
{
    return c > 0 ? sqrt(lambda / (2 * c)) : INFINITY;
}

/* Levels' multipliers m (m[0] = 1) rounded from the rational r, the least overhead of the 2^(n-1)
 * floor/ceiling choices: *interval and *overhead. A level with r infinite (never needed) is left out. */
static void round_multipliers(int n, const double *c, const double *lambda, const double *r, long *m,
                              double *interval, double *overhead)
{
    double best = INFINITY;
    for (unsigned pick = 0; pick < 1u << (n - 1); pick++) {
        long t[ADVICE_LEVELS] = {1, 0, 0};
        double a = c[0], b = lambda[0];
        for (int l = 1; l < n; l++) {
            if (!isfinite(r[l])) {
                t[l] = 0;
                continue;
            }
            double f = floor(r[l]);
            t[l] = (long)((pick >> (l - 1)) & 1 ? ceil(r[l]) : f);
            if (t[l] < 1)
                t[l] = 1;
            a += c[l] / (double)t[l];
            b += lambda[l] * (double)t[l];
        }
        double h = sqrt(2 * a * b);
        if (h < best) {
            best = h;
            memcpy(m, t, sizeof t);
            *interval = b > 0 ? sqrt(2 * a / b) : INFINITY;
            *overhead = h;
        }
    }
}

static void print_result(int n, const int *lv, const struct block *bk, int nb, const double *c,
                         const double *lambda, FILE *out)
{
    double x[ADVICE_LEVELS] = {0}, h = 0;
    for (int b = 0; b < nb; b++) {
        for (int l = bk[b].first; l <= bk[b].last; l++)
            x[l] = bk[b].x;
        h += sqrt(2 * bk[b].lambda * bk[b].c);
        if (bk[b].first != bk[b].last)
            fprintf(out,
                    "    pooled   levels %s to %s: alone, the lower would be taken less often than the "
                    "higher; as one level C = %.6f s, lambda %.6e /s, interval %.6g s, overhead %.6e\n",
                    level_names[lv[bk[b].first]], level_names[lv[bk[b].last]], bk[b].c, bk[b].lambda,
                    1 / bk[b].x, sqrt(2 * bk[b].lambda * bk[b].c));
    }
    double r[ADVICE_LEVELS];
    for (int l = 0; l < n; l++)
        r[l] = x[l] > 0 ? x[0] / x[l] : INFINITY;
    fprintf(out, "  optimum (rational)  overhead %.6e (%.4f%%)  checkpoint interval %.6g s", h, 100 * h,
            1 / x[0]);
    for (int l = 1; l < n; l++)
        fprintf(out, "  %s every %.6g checkpoints", level_names[lv[l]], r[l]);
    fprintf(out, "\n");
    long m[ADVICE_LEVELS];
    double t = 0, hm = 0;
    round_multipliers(n, c, lambda, r, m, &t, &hm);
    fprintf(out, "  advice              checkpoint interval %.6g s of work", t);
    for (int l = 1; l < n; l++) {
        if (!m[l])
            fprintf(out, ", %s never (no failure needs it)", level_names[lv[l]]);
        else if (lv[l] == ADVICE_DURABLE)
            fprintf(out, ", SLUICE_DRAIN_EVERY=%ld", m[l]);
        else
            fprintf(out, ", %s every %ld checkpoints", level_names[lv[l]], m[l]);
    }
    fprintf(out, ": overhead %.6e (%.4f%%)\n", hm, 100 * hm);
}

void advice_print(const struct advice_inputs *in, FILE *out)
{
    fprintf(out,
            "\nMulti-level interval advice (Benoit et al., IEEE TC 2017, first order: overhead = sum over "
            "levels of sqrt(2 lambda_l C_l)):\n  inputs\n");
    for (int l = 0; l < ADVICE_LEVELS; l++)
        print_cost(in, l, out);
    double lambda_of[ADVICE_LEVELS] = {0};
    for (int k = 0; k < ADVICE_CLASSES; k++) {
        if (in->mtbf[k] <= 0)
            continue;
        int l = level_of(in, k);
        lambda_of[l] += 1 / in->mtbf[k];
        fprintf(out, "    failures %-8s MTBF %.6g s -> recovered from level %s\n", class_names[k],
                in->mtbf[k], level_names[l]);
    }
    /* The present levels, lowest first: staged always (every checkpoint is staged), the others
     * where a cost is known. */
    int lv[ADVICE_LEVELS], n = 0;
    double c[ADVICE_LEVELS], lambda[ADVICE_LEVELS];
    for (int l = 0; l < ADVICE_LEVELS; l++) {
        if (in->cost[l] < 0) {
            if (lambda_of[l] > 0) {
                fprintf(out,
                        "  no advice: failures recovered from level %s are given, but not its cost (%s)\n",
                        level_names[l], l == ADVICE_STAGED ? "--cost staged=S" : "--cost durable=S");
                return;
            }
            if (l == ADVICE_STAGED) {
                fprintf(out, "  no advice: no checkpoint cost (--cost staged=S)\n");
                return;
            }
            continue;
        }
        lv[n] = l;
        c[n] = in->cost[l];
        lambda[n] = lambda_of[l];
        n++;
    }
    fprintf(out, "  per level (lambda: the sum of 1/MTBF of the failures it recovers)\n");
    for (int l = 0; l < n; l++)
        fprintf(out,
                "    level %-9s C = %.6f s  lambda %.6e /s  interval sqrt(2C/lambda) %.6g s  overhead "
                "sqrt(2 lambda C) %.6e\n",
                level_names[lv[l]], c[l], lambda[l], lambda[l] > 0 ? sqrt(2 * c[l] / lambda[l]) : INFINITY,
                sqrt(2 * lambda[l] * c[l]));
    /* Pool adjacent levels whose optimal rates break the nesting (x_1 >= x_2 >= ...). */
    struct block bk[ADVICE_LEVELS] = {0};
    int nb = 0;
    for (int l = 0; l < n; l++) {
        bk[nb] = (struct block){l, l, c[l], lambda[l], rate(c[l], lambda[l])};
        nb++;
        while (nb > 1 && bk[nb - 2].x < bk[nb - 1].x) {
            struct block *a = &bk[nb - 2], *b = &bk[nb - 1];
            a->last = b->last;
            a->c += b->c;
            a->lambda += b->lambda;
            a->x = rate(a->c, a->lambda);
            nb--;
        }
    }
    if (bk[0].x <= 0) {
        fprintf(out, "  no advice: no failure rate (every level's lambda is 0)\n");
        return;
    }
    print_result(n, lv, bk, nb, c, lambda, out);
}
