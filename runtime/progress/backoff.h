/* SPDX-License-Identifier: MIT */
/* Adaptive back-off of an idle loop: the sleep starts at `min_ns`, doubles on every idle round
 * up to `max_ns`, and drops back to `min_ns` as soon as there is work or a wake-up. Pure code. */
#ifndef SLUICE_PROGRESS_BACKOFF_H
#define SLUICE_PROGRESS_BACKOFF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_backoff {
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t cur_ns;
};

/* max_ns below min_ns is raised to min_ns. */
void sluice_backoff_init(struct sluice_backoff *b, uint64_t min_ns, uint64_t max_ns);
void sluice_backoff_reset(struct sluice_backoff *b);
/* The sleep for this idle round; the next one will be twice as long (capped). */
uint64_t sluice_backoff_next(struct sluice_backoff *b);

#ifdef __cplusplus
}
#endif
#endif
