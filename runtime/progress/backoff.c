/* SPDX-License-Identifier: MIT */
/* See backoff.h. Doubling reaches the cap in log2(max/min) rounds (11 rounds from 1 us to
 * 2 ms), so a burst of work after an idle spell is noticed within one maximum sleep, and an
 * idle thread wakes max_ns apart. */
#include "progress/backoff.h"

void sluice_backoff_init(struct sluice_backoff *b, uint64_t min_ns, uint64_t max_ns)
{
    if (min_ns == 0)
        min_ns = 1;
    if (max_ns < min_ns)
        max_ns = min_ns;
    b->min_ns = min_ns;
    b->max_ns = max_ns;
    b->cur_ns = min_ns;
}

void sluice_backoff_reset(struct sluice_backoff *b)
{
    b->cur_ns = b->min_ns;
}

uint64_t sluice_backoff_next(struct sluice_backoff *b)
{
    uint64_t now = b->cur_ns;
    b->cur_ns = (now > b->max_ns / 2) ? b->max_ns : now * 2;
    return now;
}
