/* SPDX-License-Identifier: MIT */
/* Writes into a new version's file that leave 4 KiB-aligned blocks of zeros as holes (they read
 * as zeros), so that a sparse member stays sparse through the two-phase writer. The bytes come
 * as an iovec list: an aggregator's round is its round buffer (the other ranks' pieces) and the
 * staging mappings of its own pieces, written together by pwritev without a copy. */
#include "ckpt/commit/commit_internal.h"

#include "common/full_io.h"
#include "common/real.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* A position in an iovec list: entry i, byte at of it. */
struct iov_pos {
    int i;
    size_t at;
};

static int all_zero(const unsigned char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static void iov_skip(const struct iovec *v, int nv, struct iov_pos *p, size_t n)
{
    while (p->i < nv && (n > 0 || p->at == v[p->i].iov_len)) {
        size_t left = v[p->i].iov_len - p->at;
        if (n < left) {
            p->at += n;
            return;
        }
        n -= left;
        p->i++;
        p->at = 0;
    }
}

static int iov_all_zero(const struct iovec *v, int nv, struct iov_pos p, size_t n)
{
    for (; n > 0 && p.i < nv; p.i++, p.at = 0) {
        size_t take = v[p.i].iov_len - p.at < n ? v[p.i].iov_len - p.at : n;
        if (!all_zero((const unsigned char *)v[p.i].iov_base + p.at, take))
            return 0;
        n -= take;
    }
    return 1;
}

/* The n bytes from p as iovecs into out (at most nv of them); their count. */
static int iov_slice(const struct iovec *v, int nv, struct iov_pos p, size_t n, struct iovec *out)
{
    int k = 0;
    for (; n > 0 && p.i < nv; p.i++, p.at = 0) {
        size_t take = v[p.i].iov_len - p.at < n ? v[p.i].iov_len - p.at : n;
        if (take)
            out[k++] = (struct iovec){(unsigned char *)v[p.i].iov_base + p.at, take};
        n -= take;
    }
    return k;
}

/* pwritev of everything in v (modified: advanced past what was written), short writes and
 * EINTR retried, IOV_MAX entries per call. 0 or -errno. */
static int full_pwritev(int fd, struct iovec *v, int nv, uint64_t off)
{
    if (nv == 1)
        return sluice_full_pwrite(fd, v[0].iov_base, v[0].iov_len, off);
    while (nv > 0) {
        ssize_t r = SLUICE_REAL(pwritev)(fd, v, nv > IOV_MAX ? IOV_MAX : nv, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        off += (uint64_t)r;
        size_t done = (size_t)r;
        while (nv > 0 && done >= v->iov_len) {
            done -= v->iov_len;
            v++;
            nv--;
        }
        if (nv > 0) {
            v->iov_base = (unsigned char *)v->iov_base + done;
            v->iov_len -= done;
        }
    }
    return 0;
}

long commit_fs_pwritev_sparse(int fd, const struct iovec *v, int nv, uint64_t off, const char *version_file,
                              uint64_t unit)
{
    enum { BLK = 4096 };
    size_t n = 0;
    for (int k = 0; k < nv; k++)
        n += v[k].iov_len;
    struct iovec *part = malloc((size_t)(nv > 0 ? nv : 1) * sizeof(*part));
    if (!part)
        return -ENOMEM;
    struct iov_pos pos = {0, 0};
    iov_skip(v, nv, &pos, 0);
    size_t i = 0, written = 0;
    long rc = 0;
    while (i < n) {
        /* Blocks of the file that are all zeros stay holes: the new file reads zeros there. */
        size_t b = (size_t)(BLK - (off + i) % BLK);
        if (b > n - i)
            b = n - i;
        if (b == BLK && iov_all_zero(v, nv, pos, b)) {
            iov_skip(v, nv, &pos, b);
            i += b;
            continue;
        }
        struct iov_pos start = pos;
        size_t j = i + b;
        iov_skip(v, nv, &pos, b);
        while (j < n && !(n - j >= BLK && iov_all_zero(v, nv, pos, BLK))) {
            size_t step = n - j < BLK ? n - j : BLK;
            j += step;
            iov_skip(v, nv, &pos, step);
        }
        int k = iov_slice(v, nv, start, j - i, part);
        rc = full_pwritev(fd, part, k, off + i);
        if (rc)
            break;
        /* One record per call, as the file system sees them (a sparse request is several). */
        commit_trace_write_full(version_file, off + i, j - i,
                                unit && (off + i) % unit == 0 && (j - i) % unit == 0);
        written += j - i;
        i = j;
    }
    free(part);
    return rc ? rc : (long)written;
}

long commit_fs_pwrite_sparse(int fd, const void *buf, size_t n, uint64_t off, const char *version_file,
                             uint64_t unit)
{
    struct iovec one = {(void *)buf, n};
    return commit_fs_pwritev_sparse(fd, &one, 1, off, version_file, unit);
}
