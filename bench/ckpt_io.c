/* SPDX-License-Identifier: MIT */
/* Checkpoint write benchmark: one writer, several ways to reach the file system. Run by
 * bench/ckpt_io.sh (which launches each case under mpiexec and prints the table); each run
 * appends one result line per rank to --result FILE. Never a pass/fail test.
 *
 *   sluice-bench-ckpt_io --case fpp|romio|limit --dir DIR --total SIZE --result FILE
 *                        [--chunk SIZE] [--unit SIZE] [--romio-hints auto|enable]
 *                        [--cb-buffer SIZE]
 *
 *   fpp    every rank writes DIR/ckpt.<rank> with open/write (in --chunk requests), then fsync
 *          and close: the naive per-rank checkpoint. Unmodified, it is also case 2 when the
 *          script runs it under sluice with SLUICE_CAPTURE=DIR/ckpt.%r: then it closes without
 *          fsync (fsync of an open member would force one commit per rank) and the time until
 *          durable is when MPI_Finalize returns, since sluice's exit flush makes every member
 *          durable in the committed container before MPI is finalized.
 *   romio  the same bytes at the same offsets (exclusive prefix sum) in one shared file through
 *          MPI_File_write_at_all, then MPI_File_sync: ROMIO's default hints (romio_cb_write
 *          automatic) or --romio-hints enable with cb_buffer_size and striping_unit set.
 *   limit  run with one rank: writes the whole total to one file sequentially in --chunk
 *          requests and fsyncs it: the file system's sequential bandwidth.
 *
 * Rank r writes size(r) bytes: uneven (weights 1..2) and not a round number, the same in every
 * case. Times are CLOCK_REALTIME stamps (all ranks on one node share the clock; across nodes
 * they assume synchronized clocks) so that a time taken after MPI_Finalize can be reported.
 *
 * Request counting (cases without sluice): this executable defines write/pwrite/pwrite64 and
 * forwards them to the next definition (RTLD_NEXT); calls from the program and from MPI/ROMIO
 * on regular files of DIR's device are counted while the timed phase runs (one fstat per call,
 * negligible next to the MiB-sized writes). Under sluice the program's writes go to staging
 * on another device and are not counted; the script takes sluice's file-system requests from
 * the trace (COMMIT_FS_WRITE) instead. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ---- request counter ------------------------------------------------------------------------ */

#define NBINS 6 /* < 4 KiB, < 64 KiB, < 1 MiB, < 4 MiB, < 16 MiB, >= 16 MiB */
static const uint64_t bin_limit[NBINS - 1] = {4096, 65536, 1u << 20, 4u << 20, 16u << 20};

static struct {
    int on;
    dev_t dev;
    uint64_t unit;
    uint64_t requests, bytes, full_bytes;
    uint64_t bins[NBINS];
} cnt;

static void count(int fd, uint64_t off, int know_off, size_t n, ssize_t r)
{
    if (!cnt.on || r <= 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != cnt.dev)
        return;
    uint64_t len = (uint64_t)r;
    cnt.requests++;
    cnt.bytes += len;
    int b = 0;
    while (b < NBINS - 1 && len >= bin_limit[b])
        b++;
    cnt.bins[b]++;
    if (know_off && off % cnt.unit == 0 && len % cnt.unit == 0)
        cnt.full_bytes += len;
    (void)n;
}

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

ssize_t write(int fd, const void *buf, size_t n)
{
    static write_fn real;
    if (!real)
        real = (write_fn)dlsym(RTLD_NEXT, "write");
    off_t off = cnt.on ? lseek(fd, 0, SEEK_CUR) : -1;
    ssize_t r = real(fd, buf, n);
    count(fd, (uint64_t)off, off >= 0, n, r);
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    ssize_t r = real(fd, buf, n, off);
    count(fd, (uint64_t)off, 1, n, r);
    return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    ssize_t r = real(fd, buf, n, off);
    count(fd, (uint64_t)off, 1, n, r);
    return r;
}

/* ---- options ------------------------------------------------------------------------------- */

static struct {
    const char *kase, *dir, *result, *hints;
    uint64_t total, chunk, unit, cb_buffer;
} opt = {"fpp", NULL, NULL, "auto", 256u << 20, 4u << 20, 1u << 20, 16u << 20};

static uint64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    uint64_t m = 1;
    switch (*end) {
    case 'k':
    case 'K':
        m = 1u << 10;
        break;
    case 'm':
    case 'M':
        m = 1u << 20;
        break;
    case 'g':
    case 'G':
        m = 1u << 30;
        break;
    case '\0':
        break;
    default:
        fprintf(stderr, "sluice-bench-ckpt_io: bad size '%s'\n", s);
        exit(2);
    }
    if (v <= 0) {
        fprintf(stderr, "sluice-bench-ckpt_io: size must be positive: '%s'\n", s);
        exit(2);
    }
    return (uint64_t)(v * (double)m);
}

static void usage(void)
{
    fprintf(stderr, "usage: sluice-bench-ckpt_io --case fpp|romio|limit --dir DIR --total SIZE "
                    "--result FILE [--chunk SIZE] [--unit SIZE] [--romio-hints auto|enable] "
                    "[--cb-buffer SIZE]\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--case"))
            opt.kase = v;
        else if (!strcmp(a, "--dir"))
            opt.dir = v;
        else if (!strcmp(a, "--result"))
            opt.result = v;
        else if (!strcmp(a, "--total"))
            opt.total = parse_size(v);
        else if (!strcmp(a, "--chunk"))
            opt.chunk = parse_size(v);
        else if (!strcmp(a, "--unit"))
            opt.unit = parse_size(v);
        else if (!strcmp(a, "--cb-buffer"))
            opt.cb_buffer = parse_size(v);
        else if (!strcmp(a, "--romio-hints"))
            opt.hints = v;
        else
            usage();
    }
    if (!opt.dir || !opt.result)
        usage();
    if (strcmp(opt.kase, "fpp") && strcmp(opt.kase, "romio") && strcmp(opt.kase, "limit"))
        usage();
    if (strcmp(opt.hints, "auto") && strcmp(opt.hints, "enable"))
        usage();
}

/* ---- data ---------------------------------------------------------------------------------- */

/* Uneven, non-round share of the total for each rank; the last rank takes the remainder. */
static uint64_t rank_size(int r, int n)
{
    double wsum = 0;
    for (int k = 0; k < n; k++)
        wsum += 1.0 + (double)((k * 7) % 5) / 4.0;
    double w = 1.0 + (double)((r * 7) % 5) / 4.0;
    uint64_t s = (uint64_t)((double)opt.total * w / wsum);
    s -= s > 100000 ? (uint64_t)((r * 4099) % 65521) : 0;
    if (r == n - 1) {
        uint64_t others = 0;
        for (int k = 0; k < n - 1; k++)
            others += rank_size(k, n);
        s = opt.total > others ? opt.total - others : 0;
    }
    return s;
}

static void fill(unsigned char *buf, size_t n, int rank, uint64_t off)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)((off + i) * 131 + (uint64_t)rank * 7);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "sluice-bench-ckpt_io: %s %s: %s\n", what, path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- cases ------------------------------------------------------------------------------------ */

struct times {
    double t0, visible, durable;
};

/* Writes size bytes with write() in chunk-sized requests (the app's own pattern). */
static void write_all(int fd, const char *path, int rank, uint64_t size, unsigned char *buf)
{
    for (uint64_t done = 0; done < size;) {
        size_t n = size - done < opt.chunk ? (size_t)(size - done) : (size_t)opt.chunk;
        fill(buf, n, rank, done);
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("write", path);
        done += (uint64_t)w;
    }
}

static void case_fpp(int rank, int nprocs, int under_sluice, unsigned char *buf, struct times *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt.%d", opt.dir, rank);
    t->t0 = now_s();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open", path);
    write_all(fd, path, rank, rank_size(rank, nprocs), buf);
    if (under_sluice) {
        if (close(fd) != 0)
            die("close", path);
        t->visible = now_s();
        t->durable = 0; /* after MPI_Finalize */
        return;
    }
    t->visible = now_s();
    if (fsync(fd) != 0)
        die("fsync", path);
    if (close(fd) != 0)
        die("close", path);
    t->durable = now_s();
}

static void case_limit(unsigned char *buf, struct times *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/limit.dat", opt.dir);
    t->t0 = now_s();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open", path);
    write_all(fd, path, 0, opt.total, buf);
    t->visible = now_s();
    if (fsync(fd) != 0)
        die("fsync", path);
    if (close(fd) != 0)
        die("close", path);
    t->durable = now_s();
}

static void case_romio(int rank, int nprocs, unsigned char *buf, struct times *t)
{
    char path[4096], val[32];
    snprintf(path, sizeof path, "%s/shared.dat", opt.dir);
    MPI_Info info;
    MPI_Info_create(&info);
    if (!strcmp(opt.hints, "enable")) {
        MPI_Info_set(info, "romio_cb_write", "enable");
        snprintf(val, sizeof val, "%llu", (unsigned long long)opt.cb_buffer);
        MPI_Info_set(info, "cb_buffer_size", val);
        snprintf(val, sizeof val, "%llu", (unsigned long long)opt.unit);
        MPI_Info_set(info, "striping_unit", val);
    }
    uint64_t size = rank_size(rank, nprocs), off = 0;
    MPI_Exscan(&size, &off, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        off = 0;
    /* Collective calls of at most opt.chunk bytes each; every rank takes part in each. */
    uint64_t calls = (size + opt.chunk - 1) / opt.chunk, max_calls = 0;
    MPI_Allreduce(&calls, &max_calls, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_File fh;
    t->t0 = now_s();
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "sluice-bench-ckpt_io: MPI_File_open %s failed\n", path);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (uint64_t c = 0; c < max_calls; c++) {
        uint64_t done = c * opt.chunk;
        int n = done < size ? (int)(size - done < opt.chunk ? size - done : opt.chunk) : 0;
        fill(buf, (size_t)n, rank, done);
        MPI_File_write_at_all(fh, (MPI_Offset)(off + done), buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    t->visible = now_s();
    MPI_File_sync(fh);
    MPI_File_close(&fh);
    t->durable = now_s();
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    parse_args(argc, argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int under_sluice =
        getenv("SLUICE_CAPTURE") && getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "sluice");
    struct stat st;
    if (stat(opt.dir, &st) != 0)
        die("stat", opt.dir);
    cnt.dev = st.st_dev;
    cnt.unit = opt.unit;
    unsigned char *buf = malloc(opt.chunk);
    if (!buf)
        die("malloc", "buffer");

    struct times t = {0, 0, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    cnt.on = 1;
    if (!strcmp(opt.kase, "fpp"))
        case_fpp(rank, nprocs, under_sluice, buf, &t);
    else if (!strcmp(opt.kase, "romio"))
        case_romio(rank, nprocs, buf, &t);
    else
        case_limit(buf, &t);
    cnt.on = 0;
    /* Every rank is done with its checkpoint before any rank finalizes, as in a code that goes
     * on computing: under sluice a rank that reaches its exit flush early would otherwise
     * force a commit of the members closed so far, and the set would be committed twice. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (t.durable == 0)
        t.durable = now_s(); /* under sluice: the exit flush has made the container durable */

    /* One line per rank, appended (a single short write is atomic with O_APPEND). */
    char line[512];
    int len = snprintf(line, sizeof line,
                       "case=%s%s ranks=%d rank=%d total=%llu bytes_mine=%llu t0=%.6f "
                       "visible=%.6f durable=%.6f requests=%llu req_bytes=%llu full_bytes=%llu "
                       "bins=%llu,%llu,%llu,%llu,%llu,%llu\n",
                       opt.kase, under_sluice ? "+sluice" : "", nprocs, rank, (unsigned long long)opt.total,
                       (unsigned long long)(strcmp(opt.kase, "limit") ? rank_size(rank, nprocs) : opt.total),
                       t.t0, t.visible, t.durable, (unsigned long long)cnt.requests,
                       (unsigned long long)cnt.bytes, (unsigned long long)cnt.full_bytes,
                       (unsigned long long)cnt.bins[0], (unsigned long long)cnt.bins[1],
                       (unsigned long long)cnt.bins[2], (unsigned long long)cnt.bins[3],
                       (unsigned long long)cnt.bins[4], (unsigned long long)cnt.bins[5]);
    int fd = open(opt.result, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || write(fd, line, (size_t)len) != len) {
        fprintf(stderr, "sluice-bench-ckpt_io: cannot append to %s: %s\n", opt.result, strerror(errno));
        return 3;
    }
    close(fd);
    free(buf);
    return 0;
}
