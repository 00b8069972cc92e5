/* SPDX-License-Identifier: MIT */
/* Ranks that change each other's checkpoint files while those files' version commits, as
 * programs that rotate checkpoints do (rank 0 removes the previous step's files), and a checker
 * that reads back what must have survived.
 *
 *   mpi_ckpt_cross_ops DIR OP WHO        every rank writes DIR/ckpt.<r> (or DIR/d.<r>/ckpt for
 *                                        rmdir); after a barrier, the actors apply OP to their
 *                                        victims' members at once
 *   mpi_ckpt_cross_ops DIR OP WHO check N  one process: every name holds what it must, else
 *                                        one line per difference and exit 1
 * OP: unlink, rename (to DIR/moved.<v>, outside the pattern), truncate (to CUT bytes), otrunc
 * (reopened with O_TRUNC and rewritten with other bytes), rmdir (the member, then its folder).
 * WHO: rank0 (rank 0 acts on every other rank), neighbour (rank r acts on r+1, all at once). */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SIZE = 100000, CUT = 777, REWRITE = 5000 };

static void fill(unsigned char *b, size_t n, int r, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(r * 31 + salt * 101 + i * 7 + (i >> 9));
}

static void member(char *out, size_t len, const char *dir, const char *op, int r)
{
    if (strcmp(op, "rmdir") == 0)
        snprintf(out, len, "%s/d.%d/ckpt", dir, r);
    else
        snprintf(out, len, "%s/ckpt.%d", dir, r);
}

static int write_all(const char *path, const unsigned char *b, size_t n, int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, b + done, n - done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    return close(fd);
}

static int act(const char *dir, const char *op, int v)
{
    char path[4096], to[4096];
    member(path, sizeof path, dir, op, v);
    if (strcmp(op, "unlink") == 0)
        return unlink(path);
    if (strcmp(op, "rename") == 0) {
        snprintf(to, sizeof to, "%s/moved.%d", dir, v);
        return rename(path, to);
    }
    if (strcmp(op, "truncate") == 0)
        return truncate(path, CUT);
    if (strcmp(op, "otrunc") == 0) {
        static unsigned char b[REWRITE];
        fill(b, sizeof b, v, 1);
        return write_all(path, b, sizeof b, O_TRUNC);
    }
    if (strcmp(op, "rmdir") == 0) {
        if (unlink(path) != 0)
            return -1;
        snprintf(to, sizeof to, "%s/d.%d", dir, v);
        return rmdir(to);
    }
    errno = EINVAL;
    return -1;
}

static int run(const char *dir, const char *op, const char *who)
{
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char path[4096];
    if (strcmp(op, "rmdir") == 0) {
        snprintf(path, sizeof path, "%s/d.%d", dir, r);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            perror(path);
            return 1;
        }
    }
    static unsigned char b[SIZE];
    fill(b, sizeof b, r, 0);
    member(path, sizeof path, dir, op, r);
    if (write_all(path, b, sizeof b, O_TRUNC) != 0) {
        perror(path);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    if (strcmp(who, "rank0") == 0 && r == 0) {
        for (int v = 1; v < n; v++)
            if (act(dir, op, v) != 0) {
                fprintf(stderr, "rank %d: %s of rank %d's member: %s\n", r, op, v, strerror(errno));
                bad = 1;
            }
    } else if (strcmp(who, "neighbour") == 0 && r + 1 < n) {
        if (act(dir, op, r + 1) != 0) {
            fprintf(stderr, "rank %d: %s of rank %d's member: %s\n", r, op, r + 1, strerror(errno));
            bad = 1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return bad;
}

/* What DIR must hold for rank v's member after the job; 0 if it is right. */
static int check_one(const char *dir, const char *op, int v)
{
    static unsigned char want[SIZE], got[SIZE + 1];
    char path[4096], moved[4096];
    member(path, sizeof path, dir, op, v);
    size_t wn = SIZE;
    const char *expect = path;
    int gone = 0;
    fill(want, SIZE, v, 0);
    if (v > 0) { /* rank 0's member is nobody's victim */
        if (strcmp(op, "unlink") == 0 || strcmp(op, "rmdir") == 0) {
            gone = 1;
        } else if (strcmp(op, "rename") == 0) {
            gone = 1;
            snprintf(moved, sizeof moved, "%s/moved.%d", dir, v);
            expect = moved;
        } else if (strcmp(op, "truncate") == 0) {
            wn = CUT;
        } else if (strcmp(op, "otrunc") == 0) {
            fill(want, REWRITE, v, 1);
            wn = REWRITE;
        }
    }
    int bad = 0;
    if (gone && access(path, F_OK) == 0) {
        fprintf(stderr, "check: %s still exists after %s\n", path, op);
        bad = 1;
    }
    if (gone && expect == path) {
        if (strcmp(op, "rmdir") == 0) {
            snprintf(moved, sizeof moved, "%s/d.%d", dir, v);
            if (access(moved, F_OK) == 0) {
                fprintf(stderr, "check: folder %s still exists after rmdir\n", moved);
                bad = 1;
            }
        }
        return bad;
    }
    int fd = open(expect, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "check: %s: %s (lost)\n", expect, strerror(errno));
        return 1;
    }
    size_t n = 0;
    ssize_t k;
    while (n < sizeof got && (k = read(fd, got + n, sizeof got - n)) > 0)
        n += (size_t)k;
    close(fd);
    if (n != wn || memcmp(got, want, wn) != 0) {
        size_t at = 0;
        while (at < n && at < wn && got[at] == want[at])
            at++;
        fprintf(stderr, "check: %s holds %zu bytes, %zu expected, first difference at byte %zu\n", expect, n,
                wn, at);
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR OP WHO [check N]\n", argv[0]);
        return 2;
    }
    if (argc >= 6 && strcmp(argv[4], "check") == 0) {
        int bad = 0, n = atoi(argv[5]);
        for (int v = 0; v < n; v++)
            bad |= check_one(argv[1], argv[2], v);
        return bad;
    }
    MPI_Init(&argc, &argv);
    int bad = run(argv[1], argv[2], argv[3]);
    MPI_Finalize();
    return bad;
}
