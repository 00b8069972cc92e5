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

/* How a whole transfer moves: one of these calls per step. */
struct mover {
    sluice_pread_fn rd;  /* a read */
    sluice_pwrite_fn wr; /* else a write at an offset */
};

static ssize_t step(const struct mover *m, int fd, unsigned char *p, size_t n, uint64_t off)
{
    if (m->rd != NULL)
        return m->rd(fd, p, n, (off_t)off);
    if (m->wr != NULL)
        return m->wr(fd, p, n, (off_t)off);
    return SLUICE_REAL(write)(fd, p, n);
}

/* The one loop: retries EINTR and short transfers; a step that moves nothing is -EIO (a read:
 * the file shrank under us, treated as truncation; a write: no progress, not a spin). */
static int full_transfer(const struct mover *m, int fd, unsigned char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t r = step(m, fd, p, n, off);
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

int sluice_full_pread_via(sluice_pread_fn fn, int fd, void *buf, size_t n, uint64_t off)
{
    const struct mover m = {fn, NULL};
    return full_transfer(&m, fd, buf, n, off);
}

/* A write's buffer is only read: the loop's pointer is not const so that one loop serves both. */
int sluice_full_pwrite_via(sluice_pwrite_fn fn, int fd, const void *buf, size_t n, uint64_t off)
{
    const struct mover m = {NULL, fn};
    return full_transfer(&m, fd, (unsigned char *)(uintptr_t)buf, n, off);
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
    const struct mover m = {NULL, NULL};
    return full_transfer(&m, fd, (unsigned char *)(uintptr_t)buf, n, 0);
}
