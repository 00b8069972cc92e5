/* SPDX-License-Identifier: MIT */
/* Trace core costs, printed as a table (docs/TRACE.md quotes it). Medians of repeated runs:
 *   - one event (sluice_trace_instant: clock read + append), tracing on
 *   - one event with a call site captured (SLUICE_BACKTRACE = 4, 8, 16), from a deep stack
 *   - the clock read alone, for reference (most of an event's cost on a VM)
 *   - sluice_trace_instant with tracing off (the cost every wrapper pays when sluice is idle)
 *   - one debug-stream line (to /dev/null)
 *   - time accounting: one sluice_time_enter + sluice_time_leave pair
 *   - writing a trace file of 1M events
 * Usage: sluice-bench-trace [runs]   (default 15) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/core.h"

#define EVENTS 200000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char tmpdir[64];

static void start(unsigned backtrace, const char *debug, uint64_t limit)
{
    struct sluice_trace_options opt = {
        .dir = tmpdir, .limit = limit, .debug = debug, .backtrace = backtrace, .rank = 0, .size = 1};
    if (sluice_trace_start(&opt) != 0) {
        fprintf(stderr, "sluice-bench-trace: cannot start tracing\n");
        exit(1);
    }
}

/* ns per event for `n` instants; the budget holds them all so nothing is dropped. */
static double time_instants(int n)
{
    uint64_t t0 = sluice_now_ns();
    for (int i = 0; i < n; i++)
        sluice_trace_instant(SLUICE_EV_CKPT_WRITE, 3, (uint64_t)i, 0);
    return (double)(sluice_now_ns() - t0) / n;
}

/* Calls itself `depth` times, then records: call sites then have real frames to walk. */
__attribute__((noinline)) static double deep(int depth, int n)
{
    if (depth > 0) {
        double r = deep(depth - 1, n);
        __asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
        return r;
    }
    return time_instants(n);
}

static double run_median(int runs, unsigned backtrace, const char *debug, int stack, int n)
{
    double v[64];
    for (int r = 0; r < runs; r++) {
        start(backtrace, debug, (uint64_t)n * 64 + (16u << 20));
        v[r] = deep(stack, n);
        sluice_trace_stop();
    }
    return median(v, runs);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    if (runs < 1 || runs > 64) {
        fprintf(stderr, "usage: sluice-bench-trace [runs 1..64]\n");
        return 2;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-bench-trace-%d", (int)getpid());

    /* warm up page faults, the clock and libunwind's caches */
    run_median(1, 8, NULL, 24, EVENTS);

    double off_v[64];
    for (int r = 0; r < runs; r++) {
        sluice_trace_stop();
        off_v[r] = time_instants(EVENTS * 10);
    }
    double off = median(off_v, runs);
    double clk_v[64];
    for (int r = 0; r < runs; r++) {
        uint64_t t0 = sluice_now_ns(), sink = 0;
        for (int i = 0; i < EVENTS; i++)
            sink += sluice_now_ns();
        clk_v[r] = (double)(sluice_now_ns() - t0) / EVENTS;
        __asm__ volatile("" ::"r"(sink));
    }
    double clk = median(clk_v, runs);
    double on = run_median(runs, 0, NULL, 24, EVENTS);
    double bt4 = run_median(runs, 4, NULL, 24, EVENTS / 4);
    double bt8 = run_median(runs, 8, NULL, 24, EVENTS / 4);
    double bt16 = run_median(runs, 16, NULL, 24, EVENTS / 4);
    double dbg = run_median(runs, 0, "/dev/null", 24, EVENTS / 4);

    double acct_v[64];
    for (int r = 0; r < runs; r++) {
        start(0, NULL, 16u << 20);
        uint64_t t0 = sluice_now_ns();
        for (int i = 0; i < EVENTS; i++)
            sluice_time_leave(sluice_time_enter(SLUICE_TIME_SLUICE));
        acct_v[r] = (double)(sluice_now_ns() - t0) / EVENTS;
        sluice_trace_stop();
    }
    double acct = median(acct_v, runs);

    /* file write: 1M events (48 MB) */
    const int file_events = 1000000;
    start(0, NULL, (uint64_t)file_events * 64);
    for (int i = 0; i < file_events; i++)
        sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, (uint64_t)i, 0, 3, 4096, (uint64_t)i * 4096);
    char path[128];
    snprintf(path, sizeof path, "%s.sluicetrace", tmpdir);
    uint64_t t0 = sluice_now_ns();
    int werr = sluice_trace_write_file(path, 0);
    double write_ms = (double)(sluice_now_ns() - t0) / 1e6;
    sluice_trace_stop();
    unlink(path);
    rmdir(tmpdir);

    printf("sluice trace core costs (median of %d runs, %d events per run)\n", runs, EVENTS);
    printf("%-52s %12s\n", "operation", "ns/event");
    printf("%-52s %12.1f\n", "clock_gettime(CLOCK_MONOTONIC) alone (reference)", clk);
    printf("%-52s %12.1f\n", "sluice_trace_instant, tracing off", off);
    printf("%-52s %12.1f\n", "sluice_trace_instant, tracing on (clock + append)", on);
    printf("%-52s %12.1f\n", "  + time accounting enter/leave pair (per pair)", acct);
    printf("%-52s %12.1f   (capture %.1f)\n", "event with call site, SLUICE_BACKTRACE=4", bt4, bt4 - on);
    printf("%-52s %12.1f   (capture %.1f)\n", "event with call site, SLUICE_BACKTRACE=8", bt8, bt8 - on);
    printf("%-52s %12.1f   (capture %.1f)\n", "event with call site, SLUICE_BACKTRACE=16", bt16, bt16 - on);
    printf("%-52s %12.1f\n", "event with a SLUICE_DEBUG line (to /dev/null)", dbg);
    if (werr == 0)
        printf("%-52s %9.1f ms   (%.0f MB/s)\n", "write a trace file of 1M events (48 MB)", write_ms,
               48.0 / (write_ms / 1000.0));
    else
        printf("%-52s failed: %s\n", "write a trace file of 1M events", strerror(-werr));
    return 0;
}
