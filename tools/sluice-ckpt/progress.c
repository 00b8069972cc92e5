/* SPDX-License-Identifier: MIT */
/* See progress.h. */
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
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
    *p = (struct tool_progress){.lock = PTHREAD_MUTEX_INITIALIZER};
    p->on = !quiet && total >= PROGRESS_MIN_BYTES && isatty(1) && isatty(2);
    p->label = label;
    p->total = total;
    p->start = now();
}

static void draw(struct tool_progress *p);

void tool_progress_add(struct tool_progress *p, uint64_t bytes)
{
    pthread_mutex_lock(&p->lock);
    p->done += bytes;
    if (p->on)
        draw(p);
    pthread_mutex_unlock(&p->lock);
}

static uint64_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void *watch_main(void *arg)
{
    struct tool_progress *p = arg;
    for (;;) {
        struct timespec quarter = {0, 250 * 1000 * 1000};
        nanosleep(&quarter, NULL);
        pthread_mutex_lock(&p->lock);
        if (!p->watching) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        p->done = p->watch_base + file_size(p->watch_fd);
        draw(p);
        pthread_mutex_unlock(&p->lock);
    }
}

void tool_progress_watch(struct tool_progress *p, int fd)
{
    p->watch_base = p->done;
    p->watch_fd = fd;
    p->watching = p->on && pthread_create(&p->watcher, NULL, watch_main, p) == 0;
}

void tool_progress_unwatch(struct tool_progress *p)
{
    if (p->watching) {
        pthread_mutex_lock(&p->lock);
        p->watching = 0;
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->watcher, NULL);
    }
    p->done = p->watch_base;
}

static void draw(struct tool_progress *p)
{
    double t = now();
    if (p->drawn && t - p->last < 0.25 && p->done < p->total)
        return;
    p->last = t;
    /* An output file also holds the container's index and padding: never past 100%. */
    uint64_t d = p->done < p->total ? p->done : p->total;
    double secs = t - p->start, rate = secs > 0 ? (double)d / secs : 0;
    char done[32], total[32], speed[32], left[32];
    human(done, sizeof done, (double)d);
    human(total, sizeof total, (double)p->total);
    human(speed, sizeof speed, rate);
    if (rate > 0)
        snprintf(left, sizeof left, "%.0f s left", (double)(p->total - d) / rate);
    else
        snprintf(left, sizeof left, "time left unknown");
    fprintf(stderr, "\r\033[K%s: %s of %s (%" PRIu64 "%%), %s/s, %s", p->label, done, total,
            p->total ? d * 100 / p->total : 100, speed, left);
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
