/* SPDX-License-Identifier: MIT */
/* Progress of a long sluice-ckpt run on a terminal: bytes done of the total, rate, time left,
 * redrawn in place on stderr. Shown only for large work (PROGRESS_MIN_BYTES), only when stdout
 * and stderr are terminals, never with --quiet; the line is erased before anything else prints. */
#ifndef SLUICE_CKPT_PROGRESS_H
#define SLUICE_CKPT_PROGRESS_H

#include <stdint.h>

#define PROGRESS_MIN_BYTES (64ull << 20)

struct tool_progress {
    int on;
    const char *label;
    uint64_t total, done;
    double start, last; /* seconds */
    int drawn;
};

/* Starts counting `total` bytes of work named `label` (kept by pointer). */
void tool_progress_start(struct tool_progress *p, const char *label, uint64_t total, int quiet);
/* `bytes` more are done; redraws at most four times a second. */
void tool_progress_add(struct tool_progress *p, uint64_t bytes);
/* Erases the line (call before printing a result, and at the end); the next add redraws it. */
void tool_progress_clear(struct tool_progress *p);
/* Erases the line of the progress being drawn, if any (tool_error calls it). */
void tool_progress_interrupt(void);

#endif
