/* SPDX-License-Identifier: MIT */
/* Multi-level checkpoint interval advice for `sluice-trace io` (docs/REDUNDANCY.md, "Interval
 * advice"): the first-order optimum of A. Benoit, A. Cavelan, V. Le Fevre, Y. Robert, H. Sun,
 * "Towards optimal multi-level checkpointing", IEEE Transactions on Computers 66(7), 2017.
 * Level l (staged, protected, durable) costs C_l per checkpoint taken at it and recovers the
 * failures of rate lambda_l that no lower level survives; a checkpoint of level l is also one
 * of every lower level. Taken x_l times per second of work, the overhead is
 * sum_l (x_l C_l + lambda_l / (2 x_l)), least at x_l = sqrt(lambda_l / 2C_l), where it is
 * sum_l sqrt(2 lambda_l C_l). The levels nest (x_1 >= x_2 >= x_3): adjacent levels whose optima
 * break the order are pooled (C and lambda added) until it holds. The checkpoint interval is
 * 1/x_1, and a higher level is taken every m_l = x_1/x_l checkpoints, rounded to the whole
 * number (floor or ceiling) of least overhead sqrt(2 A B), A = sum C_l/m_l, B = sum lambda_l m_l,
 * at the interval sqrt(2A/B). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_ADVICE_H
#define SLUICE_TOOLS_SLUICE_TRACE_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { ADVICE_STAGED, ADVICE_PROTECTED, ADVICE_DURABLE, ADVICE_LEVELS };
enum { ADVICE_PROCESS, ADVICE_NODE, ADVICE_SYSTEM, ADVICE_CLASSES };

struct advice_inputs {
    double cost[ADVICE_LEVELS]; /* seconds; < 0: unknown */
    const char *source[ADVICE_LEVELS];
    int samples[ADVICE_LEVELS];  /* checkpoints or drains measured (0: given) */
    double mtbf[ADVICE_CLASSES]; /* seconds; 0: not given */
};

/* "node=24h,system=720h": failure classes process, node, system with durations
 * (interval_parse_seconds). 1 when arg is such a list (filled in), 0 when it is no list (a
 * single duration), -1 with one line in err when it is a bad one. */
int advice_parse_mtbf(const char *arg, struct advice_inputs *in, char *err, size_t errlen);
/* "durable=12.5" or "protected=0.4s": a level's cost given by hand; same returns. */
int advice_parse_cost(const char *arg, struct advice_inputs *in, char *err, size_t errlen);

/* The measured costs and how to ask (no failure classes given). */
void advice_print_costs(const struct advice_inputs *in, FILE *out);
/* The formula's inputs and outputs. */
void advice_print(const struct advice_inputs *in, FILE *out);

#endif
