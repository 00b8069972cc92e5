/* SPDX-License-Identifier: MIT */
/* Benchmark of the progress engine: how much CPU an idle progress thread burns (by longest
 * sleep), with and without an idle poller, and how long posted work waits before it runs
 * (thread idle at its longest sleep, and back to back). Prints tables; never passes or fails.
 *
 * Usage: sluice-bench-progress [idle-seconds-per-row (default 3)] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "progress/control.h"
#include "progress/progress.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t) != 0) {
    }
}

static void noop(void *arg)
{
    (void)arg;
}
static int idle_poller(void *arg)
{
    (void)arg;
    return 0;
}

static void idle_row(uint64_t cap_us, int with_poller, double seconds)
{
    sluice_progress_set_sleep_max_us(cap_us);
    int id = with_poller ? sluice_progress_add_poller(idle_poller, NULL) : -1;
    sluice_progress_post(noop, NULL);
    sluice_progress_drain();
    sleep_ns(200000000u); /* let the back-off reach the cap */
    struct sluice_progress_stats s0, s1;
    sluice_progress_get_stats(&s0);
    int64_t c0 = sluice_progress_thread_cpu_ns();
    uint64_t t0 = now_ns();
    sleep_ns((uint64_t)(seconds * 1e9));
    int64_t c1 = sluice_progress_thread_cpu_ns();
    uint64_t t1 = now_ns();
    sluice_progress_get_stats(&s1);
    if (id > 0)
        sluice_progress_remove_poller(id);
    double wall = (double)(t1 - t0) / 1e9;
    double cpu = (double)(c1 - c0) / 1e9;
    printf("%10llu  %-7s %8.2f  %12.3f  %10.3f%%  %10.0f\n", (unsigned long long)cap_us,
           with_poller ? "yes" : "no", wall, cpu * 1e3, 100.0 * cpu / wall,
           (double)(s1.sleeps - s0.sleeps) / wall);
}

/* ---- latency from post to run ---- */
static uint64_t posted_at;
static uint64_t ran_at;
static void stamp(void *arg)
{
    (void)arg;
    ran_at = now_ns();
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void latency_row(const char *label, uint64_t cap_us, int n, uint64_t gap_ns)
{
    sluice_progress_set_sleep_max_us(cap_us);
    uint64_t *lat = malloc(sizeof *lat * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (gap_ns)
            sleep_ns(gap_ns);
        posted_at = now_ns();
        sluice_progress_post(stamp, NULL);
        sluice_progress_drain();
        lat[i] = ran_at - posted_at;
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_u64);
    printf("%-34s %8llu  %6d  %9.1f  %9.1f  %9.1f  %9.1f\n", label, (unsigned long long)cap_us, n,
           lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3, lat[n - 1] / 1e3);
    free(lat);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    if (seconds <= 0) {
        fprintf(stderr, "usage: %s [idle-seconds-per-row > 0]\n", argv[0]);
        return 2;
    }
    printf("# idle progress thread: CPU time of the thread over wall time\n");
    printf("%10s  %-7s %8s  %12s  %11s  %10s\n", "cap_us", "poller", "wall_s", "thread_cpu_ms", "cpu_share",
           "sleeps/s");
    const uint64_t caps[] = {100, 500, 2000, 10000};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        idle_row(caps[i], 0, seconds);
    idle_row(2000, 1, seconds);

    printf("\n# latency from sluice_progress_post() to the item running (microseconds)\n");
    printf("%-34s %8s  %6s  %9s  %9s  %9s  %9s\n", "case", "cap_us", "n", "median", "p90", "p99", "max");
    latency_row("back to back", 2000, 20000, 0);
    latency_row("after 20 ms idle (thread parked)", 2000, 200, 20000000u);
    latency_row("after 20 ms idle (thread parked)", 10000, 200, 20000000u);
    latency_row("after 40 us idle (short sleeps)", 2000, 2000, 40000u);
    sluice_progress_shutdown();
    return 0;
}
