/* SPDX-License-Identifier: MIT */
/* Progress of a long sluice-ckpt run (verify, extract, pack) on a terminal: bytes done of the total, rate,
 * time left, redrawn in place on stderr. Shown only for large work (PROGRESS_MIN_BYTES), only when stdout and
 * stderr are terminals, never with --quiet; the line is erased before anything else prints. */
#ifndef SLUICE_TOOLS_SLUICE_CKPT_PROGRESS_H
#define SLUICE_TOOLS_SLUICE_CKPT_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

#define PROGRESS_MIN_BYTES (64ull << 20)

struct tool_progress {
    int on;
    const char *label;
    uint64_t total, done;
    double start, last; /* seconds */
    int drawn;
    /* While a single library call writes a large output (pack, one big member): a thread
     * counts the bytes that reached the file. */
    pthread_t watcher;
    int watch_fd, watching;
    uint64_t watch_base;
    pthread_mutex_t lock;
};

/* Starts counting `total` bytes of work named `label` (kept by pointer). */
void tool_progress_start(struct tool_progress *p, const char *label, uint64_t total, int quiet);
/* `bytes` more are done; redraws at most four times a second. */
void tool_progress_add(struct tool_progress *p, uint64_t bytes);
/* Between watch and unwatch, the work done is what it was plus the size of file `fd`, polled
 * four times a second (for calls that write a whole container or member at once). Unwatch
 * goes back to the count before watch: the caller then adds the work done, as usual. */
void tool_progress_watch(struct tool_progress *p, int fd);
void tool_progress_unwatch(struct tool_progress *p);
/* Erases the line (call before printing a result, and at the end); the next add redraws it. */
void tool_progress_clear(struct tool_progress *p);
/* Erases the line of the progress being drawn, if any (tool_error calls it). */
void tool_progress_interrupt(void);

#endif
