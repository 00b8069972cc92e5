/* SPDX-License-Identifier: MIT */
/* Optimal checkpoint intervals from the cost of one checkpoint C and the mean time between
 * failures M (seconds):
 *   Young (1974):  T = sqrt(2 C M)
 *   Daly (2006):   T = sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C   for C < 2M,
 *                  T = M                                                      otherwise
 * (J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9);
 * J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
 * FGCS 22(3).) */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_INTERVAL_H
#define SLUICE_TOOLS_SLUICE_TRACE_INTERVAL_H

double interval_young(double cost_s, double mtbf_s);
double interval_daly(double cost_s, double mtbf_s);
/* "24h", "30m", "3600s", "2d", "1.5h" or plain seconds; -1 when not a positive duration. */
double interval_parse_seconds(const char *s);

#endif
