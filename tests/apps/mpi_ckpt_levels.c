/* SPDX-License-Identifier: MIT */
/* An MPI program that rewrites one checkpoint file per rank every step, written without sluice
 * in mind, for the checkpoint levels (docs/REDUNDANCY.md):
 *
 *   mpi_ckpt_levels write DIR STEPS [PAUSE_MS]
 *       step s: every rank writes DIR/ckpt.<rank> (sizes uneven: 0 bytes to a few MiB), then
 *       MPI_Barrier, then computes for PAUSE_MS (default 0); after the last step rank 0 creates
 *       DIR/.written and every rank waits (at most 120 s)
 * until DIR/.release exists and ends with MPI_Finalize: a job killed after its last checkpoint, or released.
 *   mpi_ckpt_levels write DIR STEPS PAUSE_MS term
 *       the same with a SIGTERM handler of its own (installed with sigaction, which must then
 *       report it back as the disposition): it writes "sigterm code C from pid P" to
 *       DIR/.term.<rank>; the rank then stops waiting, finalizes MPI and exits with status 43.
 *       Odd ranks set it the System V way instead (sigignore, ssignal, siginterrupt, sigset,
 *       each checked against what sigaction reports) and write "sigterm sysv"
 *   mpi_ckpt_levels write DIR STEPS PAUSE_MS bytes=N
 *       the same with members of N bytes for every rank and step (bench/redundancy.sh: sizes
 *       large enough that a rate is a rate, not latency)
 *   mpi_ckpt_levels verify DIR STEP NMEMBERS [bytes=N]
 *       rank r checks members r, r + size, ... < NMEMBERS against step STEP's bytes (of N bytes
 *       each where they were written with bytes=N).
 * Exit status: 0 ok, 1 wrong data (the first difference on stderr), 2 usage, 3 an I/O call
 * failed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fixed_size; /* bytes=N: every member N bytes; 0: the uneven sizes below */

static uint64_t member_size(int rank, int step)
{
    static const uint64_t sizes[] = {0, 1, (3u << 20) + 12345, 777777, 4096, 65537};
    return fixed_size ? fixed_size : sizes[(unsigned)(rank + step) % 6];
}

static unsigned char byte_at(int rank, int step, uint64_t i)
{
    return (unsigned char)(i * 31 + (uint64_t)rank * 17 + (uint64_t)step * 101 + (i >> 9));
}

static int io_fail(const char *what, const char *path)
{
    perror(what);
    fprintf(stderr, "mpi_ckpt_levels: %s %s failed\n", what, path);
    return 3;
}

static int term_fd = -1;
static volatile sig_atomic_t got_term;

/* Async-signal-safe: digits by hand, one write to a descriptor opened before. */
static void on_term(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    (void)uctx;
    char line[96] = "sigterm code ", *p = line + strlen("sigterm code ");
    long v[2] = {si ? si->si_code : -99, si ? (long)si->si_pid : -1};
    for (int k = 0; k < 2; k++) {
        char d[24];
        int n = 0;
        unsigned long u = v[k] < 0 ? (unsigned long)-v[k] : (unsigned long)v[k];
        do
            d[n++] = (char)('0' + u % 10);
        while ((u /= 10) > 0);
        if (v[k] < 0)
            *p++ = '-';
        while (n > 0)
            *p++ = d[--n];
        if (k == 0)
            p = stpcpy(p, " from pid ");
    }
    *p++ = '\n';
    if (write(term_fd, line, (size_t)(p - line)) < 0)
        _exit(44);
    got_term = 1; /* a graceful end: every rank leaves its wait and finalizes */
}

/* The System V calls, which glibc builds on its internal sigaction: each must set and read the
 * program's disposition as sigaction sees it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void on_term_sysv(int sig)
{
    static const char line[] = "sigterm sysv\n";
    (void)sig;
    got_term = 1;
    if (write(term_fd, line, sizeof line - 1) < 0)
        return;
}

static const char *install_term_sysv(void)
{
    struct sigaction now;
    if (sigignore(SIGTERM) != 0 || sigaction(SIGTERM, NULL, &now) != 0 || now.sa_handler != SIG_IGN)
        return "sigignore";
    if (ssignal(SIGTERM, on_term_sysv) != SIG_IGN || sigaction(SIGTERM, NULL, &now) != 0 ||
        now.sa_handler != on_term_sysv)
        return "ssignal";
    if (siginterrupt(SIGTERM, 1) != 0 || sigaction(SIGTERM, NULL, &now) != 0 || (now.sa_flags & SA_RESTART) ||
        now.sa_handler != on_term_sysv)
        return "siginterrupt";
    if (sigset(SIGTERM, SIG_DFL) != on_term_sysv || sigset(SIGTERM, on_term_sysv) != SIG_DFL ||
        sigaction(SIGTERM, NULL, &now) != 0 || now.sa_handler != on_term_sysv || (now.sa_flags & SA_SIGINFO))
        return "sigset";
    return NULL;
}
#pragma GCC diagnostic pop

/* The program's own SIGTERM handler; sigaction must report it back as the disposition. */
static int install_term(const char *dir, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.term.%d", dir, rank);
    term_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rank % 2) {
        const char *bad = term_fd < 0 ? "open" : install_term_sysv();
        if (bad)
            fprintf(stderr, "mpi_ckpt_levels: the SIGTERM disposition set by %s is not the one reported\n",
                    bad);
        return bad ? 4 : 0;
    }
    struct sigaction sa, now;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_term;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (term_fd < 0 || sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGTERM, NULL, &now) != 0 ||
        !(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_term) {
        fprintf(stderr, "mpi_ckpt_levels: the SIGTERM handler is not reported back as installed\n");
        return 4;
    }
    return 0;
}

static int do_write(const char *dir, int steps, int pause_ms, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", dir, rank);
    for (int step = 1; step <= steps; step++) {
        uint64_t n = member_size(rank, step);
        unsigned char *buf = malloc(n ? n : 1);
        for (uint64_t i = 0; i < n; i++)
            buf[i] = byte_at(rank, step, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return io_fail("open", path);
        for (uint64_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, n - off > 65536 ? 65536 : n - off);
            if (w <= 0)
                return io_fail("write", path);
            off += (uint64_t)w;
        }
        if (close(fd) != 0)
            return io_fail("close", path);
        free(buf);
        MPI_Barrier(MPI_COMM_WORLD);
        usleep((useconds_t)pause_ms * 1000);
    }
    char release[4200];
    snprintf(release, sizeof release, "%s/.written", dir);
    if (rank == 0)
        close(open(release, O_WRONLY | O_CREAT, 0644)); /* every rank closed its last step */
    snprintf(release, sizeof release, "%s/.release", dir);
    for (int i = 0; i < 60000 && !got_term && access(release, F_OK) != 0; i++)
        usleep(2000);
    return got_term ? 43 : 0;
}

static int do_verify(const char *dir, int step, int nmembers, int rank, int size)
{
    char path[4096];
    for (int m = rank; m < nmembers; m += size) {
        snprintf(path, sizeof path, "%s/ckpt.%d", dir, m);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            return io_fail("open", path);
        uint64_t n = member_size(m, step), off = 0;
        unsigned char buf[65536];
        for (;;) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r < 0)
                return io_fail("read", path);
            if (r == 0)
                break;
            for (ssize_t i = 0; i < r; i++) {
                if (off + (uint64_t)i >= n || buf[i] != byte_at(m, step, off + (uint64_t)i)) {
                    fprintf(stderr, "%s: wrong byte at %llu (not step %d)\n", path,
                            (unsigned long long)(off + (uint64_t)i), step);
                    return 1;
                }
            }
            off += (uint64_t)r;
        }
        close(fd);
        if (off != n) {
            fprintf(stderr, "%s: %llu bytes, step %d has %llu\n", path, (unsigned long long)off, step,
                    (unsigned long long)n);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, rc = 2;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc == 6 && strcmp(argv[1], "write") == 0 && strcmp(argv[5], "term") == 0)
        rc = install_term(argv[2], rank);
    else if (argc == 6 && strncmp(argv[5], "bytes=", 6) == 0) {
        char *end;
        fixed_size = strtoull(argv[5] + 6, &end, 10);
        rc = fixed_size > 0 && *end == '\0' ? 0 : 2;
    }
    if (rc == 4)
        MPI_Abort(MPI_COMM_WORLD, 4); /* its handler is not in place: the others would wait for its steps */
    if ((argc == 4 || argc == 5 || (argc == 6 && rc == 0)) && strcmp(argv[1], "write") == 0)
        rc = do_write(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 0, rank);
    else if ((argc == 5 || (argc == 6 && rc == 0)) && strcmp(argv[1], "verify") == 0)
        rc = do_verify(argv[2], atoi(argv[3]), atoi(argv[4]), rank, size);
    else if (rank == 0)
        fprintf(stderr, "usage: mpi_ckpt_levels write DIR STEPS [PAUSE_MS [term|bytes=N]] | verify DIR STEP "
                        "NMEMBERS [bytes=N]\n");
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
