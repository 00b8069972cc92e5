/* SPDX-License-Identifier: MIT */
/* See interval.h. */
#include "interval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double interval_young(double c, double m)
{
    return sqrt(2.0 * c * m);
}

double interval_daly(double c, double m)
{
    if (c >= 2.0 * m)
        return m;
    double x = c / (2.0 * m);
    return sqrt(2.0 * c * m) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - c;
}

double interval_parse_seconds(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || !isfinite(v))
        return -1;
    double unit = strcmp(end, "") == 0 || strcmp(end, "s") == 0      ? 1
                  : strcmp(end, "m") == 0 || strcmp(end, "min") == 0 ? 60
                  : strcmp(end, "h") == 0                            ? 3600
                  : strcmp(end, "d") == 0                            ? 86400
                                                                     : -1;
    return unit < 0 ? -1 : v * unit;
}
