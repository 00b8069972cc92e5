/* SPDX-License-Identifier: MIT */
/* Costs of checkpoint capture as a program sees them. The timed loops run in a child (this
 * same binary, "child" mode) started without LD_PRELOAD, with the library preloaded and no
 * SLUICE_* variable, and preloaded with 1 and 5 capture patterns; variants are interleaved so
 * machine noise hits them alike, and medians are printed.
 *
 *   1. open()+close() of a path that no pattern matches, with digits in it (the filter's worst
 *      case) and without (the common case): what every other file of the program pays.
 *   2. stat() of a non-matching path.
 *   3. The matcher alone, in this process: the decision every path-taking wrapper makes
 *      (fast filter, then normalization and fnmatch only if the filter passes), without the
 *      system call's noise.
 *   4. Sequential write bandwidth into a captured member (staged) versus a plain file in the
 *      same folder, and the open-to-close time the program sees; the commit runs after close.
 *
 *   sluice-bench-capture [rounds]      (default 7 rounds of each variant) */
#include "ckpt/commit/pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* CPU time of the calling thread (user + system): per-call costs are measured with it, so that
 * other processes on a shared machine (and sluice's own background thread) do not inflate
 * them; bandwidths use wall time. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- child side: one measurement, printed as a number on stdout --------------------------- */

static int child(int argc, char **argv)
{
    const char *what = argv[2], *path = argv[3];
    long iters = atol(argv[4]);
    if (strcmp(what, "open") == 0) {
        for (long i = 0; i < iters / 10; i++) /* warm-up: resolve symbols, fault pages */
            close(open(path, O_RDONLY));
        uint64_t t0 = cpu_ns();
        for (long i = 0; i < iters; i++) {
            int fd = open(path, O_RDONLY);
            if (fd < 0) {
                perror(path);
                return 1;
            }
            close(fd);
        }
        printf("%.1f\n", (double)(cpu_ns() - t0) / (double)iters);
        return 0;
    }
    if (strcmp(what, "stat") == 0) {
        struct stat st;
        for (long i = 0; i < iters / 10; i++)
            stat(path, &st);
        uint64_t t0 = cpu_ns();
        for (long i = 0; i < iters; i++)
            stat(path, &st);
        printf("%.1f\n", (double)(cpu_ns() - t0) / (double)iters);
        return 0;
    }
    if (strcmp(what, "write") == 0) { /* iters = MiB; prints MB/s of open..close */
        size_t chunk = 1 << 20;
        char *buf = malloc(chunk);
        memset(buf, 0x5a, chunk);
        uint64_t t0 = now_ns();
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        for (long i = 0; i < iters; i++)
            if (write(fd, buf, chunk) != (ssize_t)chunk) {
                perror("write");
                return 1;
            }
        close(fd);
        double s = (double)(now_ns() - t0) / 1e9;
        printf("%.1f\n", (double)iters * 1.048576 / s);
        free(buf);
        return 0;
    }
    (void)argc;
    return 2;
}

/* ---- parent side ----------------------------------------------------------------------------- */

static char **make_env(const char *preload, const char *capture, const char *stage)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "SLUICE_", 7) != 0 && strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[k++] = environ[i];
    char buf[8192];
    if (preload) {
        snprintf(buf, sizeof buf, "LD_PRELOAD=%s", preload);
        env[k++] = strdup(buf);
    }
    if (capture) {
        snprintf(buf, sizeof buf, "SLUICE_CAPTURE=%s", capture);
        env[k++] = strdup(buf);
        snprintf(buf, sizeof buf, "SLUICE_STAGE_DIR=%s", stage);
        env[k++] = strdup(buf);
    }
    env[k] = NULL;
    return env;
}

/* Runs this binary in child mode and returns the number it printed (and its wall time). */
static double run_child(char **env, const char *what, const char *path, long iters, double *wall_s)
{
    char iters_s[32];
    snprintf(iters_s, sizeof iters_s, "%ld", iters);
    char *argv[] = {"/proc/self/exe", "child", (char *)what, (char *)path, iters_s, NULL};
    int pfd[2];
    if (pipe(pfd) != 0)
        exit(1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    pid_t pid;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = '\0';
    argv[0] = self;
    uint64_t t0 = now_ns();
    if (posix_spawn(&pid, self, &fa, NULL, argv, env) != 0) {
        perror("posix_spawn");
        exit(1);
    }
    close(pfd[1]);
    char out[64] = {0};
    ssize_t got = read(pfd[0], out, sizeof out - 1);
    close(pfd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (wall_s)
        *wall_s = (double)(now_ns() - t0) / 1e9;
    if (got <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child %s %s failed\n", what, path);
        exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    return atof(out);
}

/* In-process cost of deciding "captured or not" for one path, ns per decision: the best of 7
 * runs (on a shared machine the minimum is the figure that other processes did not inflate). */
static double decide_ns(const struct sluice_pattern_set *set, const char *path)
{
    double v[7];
    volatile int sink = 0;
    for (int r = 0; r < 7; r++) {
        long n = 2000000;
        uint64_t t0 = cpu_ns();
        for (long i = 0; i < n; i++) {
            if (sluice_pattern_may_match(set, path, false)) {
                char abs[4096], key[4096];
                int rank;
                if (sluice_path_absolute("/", path, abs, sizeof abs) >= 0)
                    sink += sluice_pattern_match(set, abs, &rank, key, sizeof key);
            }
        }
        v[r] = (double)(cpu_ns() - t0) / (double)n;
    }
    (void)sink;
    qsort(v, 7, sizeof v[0], cmp_double);
    return v[0];
}

enum { V_PLAIN, V_INERT, V_CAP1, V_CAP5, V_COUNT };
static const char *vname[V_COUNT] = {"no preload", "preloaded, inert", "1 pattern", "5 patterns"};

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "child") == 0)
        return child(argc, argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1)
        rounds = 1;
    char dir[] = "/tmp/sluice-bench-capture.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char stage[4200], p_nodigit[4200], p_digit[4200], cap1[8192], cap5[8192];
    /* The stage folder where it is by default: node-local memory (/dev/shm). */
    snprintf(stage, sizeof stage, "/dev/shm/sluice-bench-capture.%ld", (long)getpid());
    snprintf(p_nodigit, sizeof p_nodigit, "%s/input.dat", dir);
    snprintf(p_digit, sizeof p_digit, "%s/mesh_0042.vtk", dir);
    snprintf(cap1, sizeof cap1, "%s/ckpt.%%r", dir);
    snprintf(cap5, sizeof cap5,
             "%s/ckpt.%%r:%s/restart_*_%%r.dat:%s/chk_*/rank_%%r.bin:%s/rank%%r/ckpt.dat:%s/out_%%r.h5", dir,
             dir, dir, dir, dir);
    for (const char *p = p_nodigit; p; p = p == p_nodigit ? p_digit : NULL)
        close(open(p, O_WRONLY | O_CREAT, 0644));
    char **env[V_COUNT] = {make_env(NULL, NULL, NULL), make_env(SLUICE_LIB_PATH, NULL, NULL),
                           make_env(SLUICE_LIB_PATH, cap1, stage), make_env(SLUICE_LIB_PATH, cap5, stage)};

    struct {
        const char *what, *path, *label;
        long iters;
    } tests[] = {
        {"open", p_nodigit, "open+close, non-matching path without digits", 100000},
        {"open", p_digit, "open+close, non-matching path with digits", 100000},
        {"stat", p_digit, "stat, non-matching path with digits", 100000},
    };
    printf("sluice-bench-capture: %d rounds per variant, medians of thread CPU time per call; library %s\n\n",
           rounds, SLUICE_LIB_PATH);
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        double v[V_COUNT][64];
        for (int r = 0; r < rounds && r < 64; r++)
            for (int k = 0; k < V_COUNT; k++)
                v[k][r] = run_child(env[k], tests[t].what, tests[t].path, tests[t].iters, NULL);
        printf("%s (%ld calls per run)\n", tests[t].label, tests[t].iters);
        double base = 0;
        for (int k = 0; k < V_COUNT; k++) {
            qsort(v[k], (size_t)rounds, sizeof v[k][0], cmp_double);
            double med = v[k][rounds / 2];
            if (k == 0)
                base = med;
            printf("  %-18s %8.1f ns/call   added %+7.1f ns\n", vname[k], med, med - base);
        }
        printf("\n");
    }

    /* The decision alone. */
    struct sluice_pattern_set s1, s5;
    char err[256];
    if (sluice_pattern_compile(&s1, cap1, "/", err, sizeof err) != 0 ||
        sluice_pattern_compile(&s5, cap5, "/", err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    char p_near[4200], p_member[4200];
    snprintf(p_near, sizeof p_near, "/var/tmp/ckpt.7"); /* passes the filter, another folder */
    snprintf(p_member, sizeof p_member, "%s/ckpt.7", dir);
    printf("capture decision alone, in process (ns of CPU per path, best of 7 x 2M)\n");
    printf("  %-44s %8s %8s\n", "path", "1 pat", "5 pat");
    const char *paths[] = {p_nodigit, p_digit, "/usr/lib/x86_64-linux-gnu/libm.so.6", p_near, p_member};
    const char *labels[] = {"non-matching, no digits", "non-matching, digits", "library path with digits",
                            "near miss (passes the filter, other folder)", "captured member (full match)"};
    for (int i = 0; i < 5; i++)
        printf("  %-44s %8.1f %8.1f\n", labels[i], decide_ns(&s1, paths[i]), decide_ns(&s5, paths[i]));
    printf("\n");
    sluice_pattern_free(&s1);
    sluice_pattern_free(&s5);

    /* Write bandwidth: plain file vs captured member, same folder, 256 MiB in 1 MiB writes. */
    long mib = 256;
    char plain[4200], member[4200];
    snprintf(plain, sizeof plain, "%s/plain.out", dir);
    snprintf(member, sizeof member, "%s/ckpt.0", dir);
    double bw_plain[64], bw_cap[64], wall_plain[64], wall_cap[64];
    for (int r = 0; r < rounds && r < 64; r++) {
        bw_plain[r] = run_child(env[V_PLAIN], "write", plain, mib, &wall_plain[r]);
        bw_cap[r] = run_child(env[V_CAP1], "write", member, mib, &wall_cap[r]);
    }
    qsort(bw_plain, (size_t)rounds, sizeof(double), cmp_double);
    qsort(bw_cap, (size_t)rounds, sizeof(double), cmp_double);
    qsort(wall_plain, (size_t)rounds, sizeof(double), cmp_double);
    qsort(wall_cap, (size_t)rounds, sizeof(double), cmp_double);
    printf("sequential write, %ld MiB in 1 MiB writes, folder %s\n", mib, dir);
    printf("  %-30s %8.0f MB/s open..close   process wall %6.3f s\n", "plain file", bw_plain[rounds / 2],
           wall_plain[rounds / 2]);
    printf("  %-30s %8.0f MB/s open..close   process wall %6.3f s (includes the commit)\n",
           "captured member (staged)", bw_cap[rounds / 2], wall_cap[rounds / 2]);
    printf("  stage folder: %s\n", stage);

    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, stage);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
