/* SPDX-License-Identifier: MIT */
/* See progress.h. */
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct tool_progress *drawing; /* the one whose line is on the terminal */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void human(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void tool_progress_start(struct tool_progress *p, const char *label, uint64_t total, int quiet)
{
    *p = (struct tool_progress){0};
    p->on = !quiet && total >= PROGRESS_MIN_BYTES && isatty(1) && isatty(2);
    p->label = label;
    p->total = total;
    p->start = now();
}

void tool_progress_add(struct tool_progress *p, uint64_t bytes)
{
    p->done += bytes;
    if (!p->on)
        return;
    double t = now();
    if (p->drawn && t - p->last < 0.25 && p->done < p->total)
        return;
    p->last = t;
    double secs = t - p->start, rate = secs > 0 ? (double)p->done / secs : 0;
    char done[32], total[32], speed[32], left[32];
    human(done, sizeof done, (double)p->done);
    human(total, sizeof total, (double)p->total);
    human(speed, sizeof speed, rate);
    if (rate > 0 && p->done <= p->total)
        snprintf(left, sizeof left, "%.0f s left", (double)(p->total - p->done) / rate);
    else
        snprintf(left, sizeof left, "time left unknown");
    fprintf(stderr, "\r\033[K%s: %s of %s (%" PRIu64 "%%), %s/s, %s", p->label, done, total,
            p->total ? p->done * 100 / p->total : 100, speed, left);
    fflush(stderr);
    p->drawn = 1;
    drawing = p;
}

void tool_progress_clear(struct tool_progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = 0;
    }
    if (drawing == p)
        drawing = NULL;
}

void tool_progress_interrupt(void)
{
    if (drawing)
        tool_progress_clear(drawing);
}
