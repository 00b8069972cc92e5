/* SPDX-License-Identifier: MIT */
#include "common/cpulist.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_cpu(const char **p, long *out)
{
    if (!isdigit((unsigned char)**p))
        return -1;
    char *end = NULL;
    long v = strtol(*p, &end, 10);
    if (v >= CPU_SETSIZE)
        return -1;
    *out = v;
    *p = end;
    return 0;
}

int sluice_cpulist_parse(const char *s, cpu_set_t *set, char *err, size_t errlen)
{
    CPU_ZERO(set);
    const char *p = s;
    for (;;) {
        long lo = 0, hi = 0;
        if (read_cpu(&p, &lo) != 0)
            goto bad;
        hi = lo;
        if (*p == '-') {
            p++;
            if (read_cpu(&p, &hi) != 0 || hi < lo)
                goto bad;
        }
        for (long c = lo; c <= hi; c++)
            CPU_SET((size_t)c, set);
        if (*p == '\0')
            return 0;
        if (*p++ != ',')
            goto bad;
    }
bad:
    snprintf(err, errlen,
             "'%s' is not a CPU list (CPUs from 0 to %d as in 0-3,8: ranges low-high separated by commas)", s,
             CPU_SETSIZE - 1);
    return -1;
}

void sluice_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET((size_t)c, set))
            continue;
        int hi = c;
        while (hi + 1 < CPU_SETSIZE && CPU_ISSET((size_t)(hi + 1), set))
            hi++;
        int n = hi == c ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", c)
                        : snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, hi);
        if (n < 0 || (size_t)n >= len - used) {
            buf[len - 1] = '\0';
            return;
        }
        used += (size_t)n;
        c = hi;
    }
}

unsigned long long sluice_cpulist_mask64(const cpu_set_t *set)
{
    unsigned long long m = 0;
    for (int c = 0; c < 64 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET((size_t)c, set))
            m |= 1ull << c;
    return m;
}
