/* SPDX-License-Identifier: MIT */
/* Restart reads of a set stored as one global array (docs/LAYOUT.md): a job of M ranks, on any
 * grid, reads per-rank names of a set written by N ranks. Rank r gets rank 0's header and its
 * block of the new decomposition, cut from the array region of the container: verified chunk by
 * chunk where the container has chunk checksums (commit_array_chunks.c), else after the old
 * members whose blocks it overlaps passed their whole checksums. When the decomposition
 * is the writer's, the stored member is the answer and the ordinary read serves it. */
#include "ckpt/commit/commit_array.h"

#include "ckpt/twophase/planner_array.h"
#include "common/log.h"
#include "common/real.h"
#include "mpi/roles.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* The rank number in path where key has %r, or -1. */
static long rank_of(const char *key, const char *path)
{
    long rank = -1;
    while (*key) {
        if (key[0] == '%' && key[1] == 'r') {
            long v = 0;
            int digits = 0;
            while (*path >= '0' && *path <= '9' && digits < 10) {
                v = v * 10 + (*path++ - '0');
                digits++;
            }
            if (!digits || (rank >= 0 && v != rank))
                return -1;
            rank = v;
            key += 2;
        } else if (*key++ != *path++) {
            return -1;
        }
    }
    return *path ? -1 : rank;
}

/* The record of c, the grid of this job (SLUICE_LAYOUT's for the set, else the writer's when it
 * has this job's size, else MPI_Dims_create's), and whether it is the writer's decomposition. */
static int this_job(const struct sluice_container *c, const char *key, struct sluice_array *a,
                    uint32_t grid[SLUICE_ARRAY_DIMS_MAX], int *same)
{
    if (sluice_array_parse(c->meta.array_record, a, NULL, 0) != 0)
        return -EIO;
    int m = sluice_launch_size();
    uint32_t size = m > 0 ? (uint32_t)m : 1;
    struct sluice_array spec, want = *a;
    if (commit_array_spec_for_key(key, &spec) && spec.ndims == a->ndims)
        memcpy(want.grid, spec.grid, sizeof want.grid);
    else if (size != a->nprocs)
        memset(want.grid, 0, sizeof want.grid);
    if (sluice_array_grid(&want, size, grid, NULL, 0) != 0)
        sluice_array_dims_create(size, a->ndims, grid);
    *same = size == a->nprocs;
    for (int d = 0; d < a->ndims; d++)
        *same &= grid[d] == a->grid[d];
    a->nprocs = size;
    return 0;
}

int commit_array_size(const struct sluice_container *c, const char *key, const char *path, uint64_t *size)
{
    struct sluice_array a;
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    int same;
    long r = rank_of(key, path);
    if (r < 0 || this_job(c, key, &a, grid, &same) != 0 || same)
        return 1;
    if ((uint64_t)r >= a.nprocs)
        return -ENOENT;
    struct sluice_array_block b;
    sluice_array_block(&a, grid, (uint32_t)r, &b);
    *size = sluice_array_member_bytes(&a, &b);
    return 0;
}

/* 1 when the blocks of ranks x (grid gx) and y (grid gy) share an element. */
static int overlap(const struct sluice_array *a, const struct sluice_array_block *x,
                   const struct sluice_array_block *y)
{
    for (int d = 0; d < a->ndims; d++)
        if (x->lo[d] + x->n[d] <= y->lo[d] || y->lo[d] + y->n[d] <= x->lo[d])
            return 0;
    return 1;
}

/* The old members whose blocks overlap b pass their checksums. 0 or -EIO (with a line). */
static int verify_sources(const struct sluice_container *c, const struct sluice_array *old,
                          const struct sluice_array_block *b)
{
    uint32_t og[SLUICE_ARRAY_DIMS_MAX];
    if (sluice_array_grid(old, old->nprocs, og, NULL, 0) != 0)
        return -EIO;
    char err[2 * 4096];
    for (uint32_t i = 0; i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        if (m->member_rank < 0 || (uint32_t)m->member_rank >= old->nprocs)
            continue;
        struct sluice_array_block ob;
        sluice_array_block(old, og, (uint32_t)m->member_rank, &ob);
        if ((m->member_rank == 0 && old->header) || overlap(old, &ob, b)) {
            if (sluice_container_verify_member(c, i, err, sizeof err) != 0) {
                sluice_log_error("%s", err);
                return -EIO;
            }
        }
    }
    return 0;
}

static int pread_all(int fd, unsigned char *buf, uint64_t len, uint64_t off)
{
    while (len) {
        ssize_t n = SLUICE_REAL(pread)(fd, buf, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        buf += n;
        len -= (uint64_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* Iovecs per read (Linux's IOV_MAX), and the largest gap between two rows that one read spans:
 * at most a row (the bytes read at most twice those wanted) or a page (read ahead anyway). */
#define ROWS_IOV IOV_MAX
#define ROWS_GAP_MAX (UINT64_C(64) << 10)

static uint64_t gap_limit(uint64_t row_len)
{
    uint64_t g = row_len > 4096 ? row_len : 4096;
    return g < ROWS_GAP_MAX ? g : ROWS_GAP_MAX;
}

/* Block b's rows into dst (row k at k * row_len) with few reads: rows adjacent in the file are
 * one span, and rows a small gap apart one preadv whose gaps land in a scratch buffer, instead
 * of one pread per row (a 48^3 block of doubles has 2,304 rows of 384 bytes). 0 or -errno. */
static int read_rows(int fd, unsigned char *dst, const struct sluice_array *a,
                     const struct sluice_array_block *b)
{
    uint64_t len = b->row_len, gmax = gap_limit(len);
    struct iovec *iov = malloc(ROWS_IOV * sizeof *iov);
    unsigned char *scratch = malloc(gmax);
    int rc = iov && scratch ? 0 : -ENOMEM;
    for (uint64_t k = 0; rc == 0 && k < b->nrows;) {
        uint64_t off = a->array_offset + sluice_array_row_offset(a, b, k), end = off + len;
        int n = 0;
        iov[n++] = (struct iovec){dst + k * len, len};
        for (k++; k < b->nrows && n + 2 <= ROWS_IOV && end - off < (UINT64_C(1) << 30); k++) {
            uint64_t o = a->array_offset + sluice_array_row_offset(a, b, k);
            if (o < end || o - end > gmax)
                break; /* out of order, or too far: the next read */
            if (o > end)
                iov[n++] = (struct iovec){scratch, o - end};
            if (o == end)
                iov[n - 1].iov_len += len; /* the previous row, adjacent here too */
            else
                iov[n++] = (struct iovec){dst + k * len, len};
            end = o + len;
        }
        rc = commit_array_preadv(fd, iov, n, off);
    }
    free(iov);
    free(scratch);
    return rc;
}

int commit_array_open(const struct sluice_container *c, const char *key, const char *path, int cloexec)
{
    struct sluice_array a;
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    int same;
    long r = rank_of(key, path);
    if (r < 0 || c->fd < 0 || this_job(c, key, &a, grid, &same) != 0 || same)
        return 1;
    if ((uint64_t)r >= a.nprocs)
        return -ENOENT;
    struct sluice_array old;
    sluice_array_parse(c->meta.array_record, &old, NULL, 0);
    struct sluice_array_block b;
    sluice_array_block(&a, grid, (uint32_t)r, &b);
    uint64_t size = sluice_array_member_bytes(&a, &b);
    int rc = 0, fd = memfd_create("sluice-member", cloexec ? MFD_CLOEXEC : 0);
    if (fd < 0)
        return -errno;
    unsigned char *map = NULL;
    if (SLUICE_REAL(ftruncate)(fd, (off_t)size) != 0)
        rc = -errno;
    else if (size &&
             (map = SLUICE_REAL(mmap)(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        rc = -errno;
    /* Chunk checksums (format 1.3): only the chunks read are verified, and they are the answer. */
    if (rc == 0 && size)
        rc = commit_array_read_chunks(c, &old, &b, map);
    /* Else every old member that holds part of the block, whole, then the block row by row.
     * Rank 0's header (the headers are declared identical, or rank 0's is the one that counts). */
    if (rc == 1) {
        rc = verify_sources(c, &old, &b);
        if (rc == 0 && a.header)
            rc = pread_all(c->fd, map, a.header, a.header_offset);
        if (rc == 0 && b.nrows)
            rc = read_rows(c->fd, map + a.header, &a, &b);
    }
    if (map && map != MAP_FAILED)
        munmap(map, size);
    if (rc) {
        SLUICE_REAL(close)(fd);
        return rc;
    }
    return fd;
}
