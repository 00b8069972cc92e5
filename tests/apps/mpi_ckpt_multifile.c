/* SPDX-License-Identifier: MIT */
/* An MPI program that checkpoints several files per rank and step, written without sluice in
 * mind (the shape of common simulation codes and I/O benchmarks):
 *   DIR/s<k>/ckpt.<r>  a stdio checkpoint per step (fopen "w", fwrite in uneven pieces);
 *   DIR/state.<r>      a state file rewritten in place each step (open O_RDWR|O_CREAT, no
 *                      O_TRUNC; pwrite of a header at 0 and of a body after a hole);
 *   DIR/log.<r>        a log, one line per step (open O_WRONLY|O_CREAT|O_APPEND).
 * Each rank opens its three files at the start of the step; ranks are out of step inside it
 * (rank r starts writing r * STAGGER ms late) and meet at an MPI_Barrier between steps.
 *
 *   mpi_ckpt_multifile write DIR STEPS [--fsync] [--stagger MS] [--big]
 *       --fsync: fsync every file before closing it; --big: 16 MiB more per checkpoint;
 *       rank 0 prints "write_phase_s <seconds>" (open to last close, summed over the steps,
 *       without the stagger sleeps) and "bytes <program bytes>" on stdout.
 *   mpi_ckpt_multifile verify DIR STEPS NRANKS
 *       rank r checks the files of ranks r, r+size, ... (every step's checkpoint, the final
 *       state file and the whole log).
 * Exit status: 0 ok, 1 wrong data (the first difference on stderr), 2 usage, 3 an I/O call
 * failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int big;

static uint64_t ckpt_size(int r, int k)
{
    return (2u << 20) + 54321 + (uint64_t)r * 1237 + (uint64_t)k * 11 + (big ? (16u << 20) : 0);
}
#define STATE_HDR(r) (4097 + (uint64_t)(r))
#define STATE_BODY_AT (64 * 1024 + 333) /* a hole between header and body */
static uint64_t state_body(int r, int k)
{
    return 700001 + (uint64_t)r * 3 + (uint64_t)k * 5; /* grows: a step overwrites the last */
}
static uint64_t log_line(int r, int k)
{
    return 1001 + (uint64_t)r + (uint64_t)k;
}

static unsigned char byte_at(int what, int r, int k, uint64_t i)
{
    return (unsigned char)(i * 13 + (uint64_t)what * 71 + (uint64_t)r * 17 + (uint64_t)k * 101 + (i >> 10) +
                           1);
}

static void fill(unsigned char *buf, uint64_t n, int what, int r, int k)
{
    for (uint64_t i = 0; i < n; i++)
        buf[i] = byte_at(what, r, k, i);
}

static void die_io(const char *what, const char *path)
{
    fprintf(stderr, "mpi_ckpt_multifile: %s %s: %s\n", what, path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The files of one step, opened together at its start (as codes open their checkpoint
 * files, then write them); the writes come later, out of step across ranks. */
struct step_files {
    char ckpt[4096], state[4096], log[4096];
    FILE *ckpt_f;
    int state_fd, log_fd;
};

static void open_step(const char *dir, int r, int k, struct step_files *f)
{
    snprintf(f->ckpt, sizeof f->ckpt, "%s/s%d", dir, k);
    if (mkdir(f->ckpt, 0755) != 0 && errno != EEXIST)
        die_io("mkdir", f->ckpt);
    snprintf(f->ckpt, sizeof f->ckpt, "%s/s%d/ckpt.%d", dir, k, r);
    snprintf(f->state, sizeof f->state, "%s/state.%d", dir, r);
    snprintf(f->log, sizeof f->log, "%s/log.%d", dir, r);
    if (!(f->ckpt_f = fopen(f->ckpt, "w")))
        die_io("fopen", f->ckpt);
    if ((f->state_fd = open(f->state, O_RDWR | O_CREAT, 0644)) < 0)
        die_io("open", f->state);
    if ((f->log_fd = open(f->log, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0)
        die_io("open", f->log);
}

static void finish_fd(int fd, const char *p, int do_fsync)
{
    if (do_fsync && fsync(fd) != 0)
        die_io("fsync", p);
    if (close(fd) != 0)
        die_io("close", p);
}

static void write_step(struct step_files *f, int r, int k, int do_fsync, unsigned char *buf)
{
    uint64_t n = ckpt_size(r, k);
    fill(buf, n, 0, r, k);
    for (uint64_t off = 0; off < n;) {
        uint64_t want = n - off < 100003 ? n - off : 100003; /* uneven pieces */
        if (fwrite(buf + off, 1, want, f->ckpt_f) != want)
            die_io("fwrite", f->ckpt);
        off += want;
    }
    if (do_fsync && (fflush(f->ckpt_f) != 0 || fsync(fileno(f->ckpt_f)) != 0))
        die_io("fsync", f->ckpt);
    if (fclose(f->ckpt_f) != 0)
        die_io("fclose", f->ckpt);

    fill(buf, STATE_HDR(r), 1, r, k);
    if (pwrite(f->state_fd, buf, STATE_HDR(r), 0) != (ssize_t)STATE_HDR(r))
        die_io("pwrite", f->state);
    fill(buf, state_body(r, k), 2, r, k);
    if (pwrite(f->state_fd, buf, state_body(r, k), STATE_BODY_AT) != (ssize_t)state_body(r, k))
        die_io("pwrite", f->state);
    finish_fd(f->state_fd, f->state, do_fsync);

    fill(buf, log_line(r, k), 3, r, k);
    if (write(f->log_fd, buf, log_line(r, k)) != (ssize_t)log_line(r, k))
        die_io("write", f->log);
    finish_fd(f->log_fd, f->log, do_fsync);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Compares n bytes of fd at off with (what, r, k); returns 0 or prints the first difference. */
static int check_range(int fd, const char *p, uint64_t off, uint64_t n, int what, int r, int k,
                       unsigned char *buf)
{
    if (pread(fd, buf, n, (off_t)off) != (ssize_t)n) {
        fprintf(stderr, "mpi_ckpt_multifile: %s: short read at %llu\n", p, (unsigned long long)off);
        return 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        unsigned char want = what < 0 ? 0 : byte_at(what, r, k, i);
        if (buf[i] != want) {
            fprintf(stderr, "mpi_ckpt_multifile: %s: wrong byte at %llu\n", p, (unsigned long long)(off + i));
            return 1;
        }
    }
    return 0;
}

static int open_sized(const char *p, uint64_t size)
{
    int fd = open(p, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "mpi_ckpt_multifile: %s: %s\n", p, strerror(errno));
        return -1;
    }
    if ((uint64_t)st.st_size != size) {
        fprintf(stderr, "mpi_ckpt_multifile: %s: size %lld, expected %llu\n", p, (long long)st.st_size,
                (unsigned long long)size);
        close(fd);
        return -1;
    }
    return fd;
}

static int verify_rank(const char *dir, int steps, int r, unsigned char *buf)
{
    char p[4096];
    int bad = 0;
    for (int k = 1; k <= steps && !bad; k++) {
        snprintf(p, sizeof p, "%s/s%d/ckpt.%d", dir, k, r);
        int fd = open_sized(p, ckpt_size(r, k));
        bad = fd < 0 || check_range(fd, p, 0, ckpt_size(r, k), 0, r, k, buf);
        if (fd >= 0)
            close(fd);
    }
    snprintf(p, sizeof p, "%s/state.%d", dir, r);
    int fd = bad ? -1 : open_sized(p, STATE_BODY_AT + state_body(r, steps));
    bad = bad || fd < 0 || check_range(fd, p, 0, STATE_HDR(r), 1, r, steps, buf) ||
          check_range(fd, p, STATE_HDR(r), STATE_BODY_AT - STATE_HDR(r), -1, r, steps, buf) ||
          check_range(fd, p, STATE_BODY_AT, state_body(r, steps), 2, r, steps, buf);
    if (fd >= 0)
        close(fd);
    uint64_t total = 0;
    for (int k = 1; k <= steps; k++)
        total += log_line(r, k);
    snprintf(p, sizeof p, "%s/log.%d", dir, r);
    fd = bad ? -1 : open_sized(p, total);
    uint64_t off = 0;
    for (int k = 1; fd >= 0 && k <= steps && !bad; k++) {
        bad = check_range(fd, p, off, log_line(r, k), 3, r, k, buf);
        off += log_line(r, k);
    }
    if (fd >= 0)
        close(fd);
    return bad || fd < 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[2];
    int steps = atoi(argv[3]);
    int do_fsync = 0, stagger_ms = 0;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--fsync") == 0)
            do_fsync = 1;
        else if (strcmp(argv[i], "--big") == 0)
            big = 1;
        else if (strcmp(argv[i], "--stagger") == 0 && i + 1 < argc)
            stagger_ms = atoi(argv[++i]);
    }
    unsigned char *buf = malloc(ckpt_size(size + 64, steps + 1) + (1u << 20));
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 3);
    int rc = 0;
    if (strcmp(argv[1], "write") == 0) {
        double t = 0;
        for (int k = 1; k <= steps; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now_s();
            struct step_files f;
            open_step(dir, rank, k, &f);
            usleep((useconds_t)rank * (useconds_t)stagger_ms * 1000u);
            write_step(&f, rank, k, do_fsync, buf);
            MPI_Barrier(MPI_COMM_WORLD);
            t += now_s() - t0 - (double)(size - 1) * stagger_ms * 1e-3;
        }
        uint64_t mine = 0, all = 0;
        for (int k = 1; k <= steps; k++)
            mine += ckpt_size(rank, k) + STATE_HDR(rank) + state_body(rank, k) + log_line(rank, k);
        MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("write_phase_s %.3f\nbytes %llu\n", t, (unsigned long long)all);
    } else if (strcmp(argv[1], "verify") == 0 && argc >= 5) {
        int n = atoi(argv[4]);
        for (int r = rank; r < n && !rc; r += size)
            rc = verify_rank(dir, steps, r, buf);
    } else {
        rc = 2;
    }
    free(buf);
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
