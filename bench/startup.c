/* SPDX-License-Identifier: MIT */
/* Start-up cost of libsluice.so: runs a short program (default /bin/true) many times with no
 * preload, with the library preloaded and no SLUICE_* variable (inert), and preloaded with the
 * trace on, interleaving the three so machine noise hits them alike. Prints medians.
 *
 *   sluice-bench-startup [runs] [program]     (default 200 runs of /bin/true) */
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Environment without any SLUICE_* or LD_PRELOAD entry, plus `extra` entries. */
static char **make_env(const char *const *extra)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "SLUICE_", 7) != 0 && strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[k++] = environ[i];
    for (; extra && *extra; extra++)
        env[k++] = (char *)*extra;
    env[k] = NULL;
    return env;
}

static uint64_t run_once(const char *prog, char **env)
{
    char *argv[] = {(char *)prog, NULL};
    pid_t pid;
    uint64_t t0 = now_ns();
    if (posix_spawn(&pid, prog, NULL, NULL, argv, env) != 0) {
        perror("posix_spawn");
        exit(1);
    }
    int st;
    waitpid(pid, &st, 0);
    return now_ns() - t0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    const char *prog = argc > 2 ? argv[2] : "/bin/true";
    if (runs < 5)
        runs = 5;
    static char preload[4096], tracedir[256];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", SLUICE_LIB_PATH);
    snprintf(tracedir, sizeof tracedir, "SLUICE_TRACE_DIR=/tmp/sluice-bench-startup-%d", (int)getpid());
    const char *inert[] = {preload, NULL};
    const char *traced[] = {preload, tracedir, NULL};
    char **envs[3] = {make_env(NULL), make_env(inert), make_env(traced)};
    const char *names[3] = {"no preload", "preloaded, no SLUICE_* (inert)",
                            "preloaded, SLUICE_TRACE_DIR set"};
    uint64_t *t[3];
    for (int v = 0; v < 3; v++)
        t[v] = calloc((size_t)runs, sizeof(uint64_t));
    for (int i = 0; i < 3; i++) /* warm the page cache */
        for (int v = 0; v < 3; v++)
            run_once(prog, envs[v]);
    for (int i = 0; i < runs; i++)
        for (int v = 0; v < 3; v++)
            t[v][i] = run_once(prog, envs[v]);
    printf("start-up cost of %s, %d runs each, interleaved (library: %s)\n", prog, runs, SLUICE_LIB_PATH);
    printf("%-34s %12s %12s %12s %14s\n", "variant", "median us", "p10 us", "p90 us", "vs no preload");
    double base = 0;
    for (int v = 0; v < 3; v++) {
        qsort(t[v], (size_t)runs, sizeof(uint64_t), cmp_u64);
        double med = t[v][runs / 2] / 1e3, p10 = t[v][runs / 10] / 1e3, p90 = t[v][runs * 9 / 10] / 1e3;
        if (v == 0)
            base = med;
        printf("%-34s %12.1f %12.1f %12.1f %+13.1f us\n", names[v], med, p10, p90, med - base);
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/sluice-bench-startup-%d", (int)getpid());
    if (system(cmd) != 0)
        return 1;
    return 0;
}
