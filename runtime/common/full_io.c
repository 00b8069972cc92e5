/* SPDX-License-Identifier: MIT */
/* See full_io.h. */
#include "common/full_io.h"

#include <errno.h>
#include <unistd.h>

#include "common/real.h"

static ssize_t real_pread(int fd, void *buf, size_t n, off_t off)
{
    return SLUICE_REAL(pread)(fd, buf, n, off);
}

static ssize_t real_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return SLUICE_REAL(pwrite)(fd, buf, n, off);
}

ssize_t sluice_pread_retry(int fd, void *buf, size_t n, uint64_t off)
{
    for (;;) {
        ssize_t r = SLUICE_REAL(pread)(fd, buf, n, (off_t)off);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return -errno;
    }
}

int sluice_full_pread_via(sluice_pread_fn fn, int fd, void *buf, size_t n, uint64_t off)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = fn(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO; /* the file shrank under us: treat as truncation */
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int sluice_full_pwrite_via(sluice_pwrite_fn fn, int fd, const void *buf, size_t n, uint64_t off)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = fn(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int sluice_full_pread(int fd, void *buf, size_t n, uint64_t off)
{
    return sluice_full_pread_via(real_pread, fd, buf, n, off);
}

int sluice_full_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
    return sluice_full_pwrite_via(real_pwrite, fd, buf, n, off);
}

int sluice_full_write(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = SLUICE_REAL(write)(fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}
