/* SPDX-License-Identifier: MIT */
/* File-system calls of the commit engine. They go to the real libc (SLUICE_REAL), never through
 * sluice's own wrappers, and each metadata operation and write is recorded in the trace
 * (COMMIT_FS_META, COMMIT_FS_WRITE) so that a commit's cost on the file system can be read back. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/container/container.h"
#include "common/real.h"
#include "config/config.h"
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void commit_trace_meta(const char *op, const char *path)
{
    if (sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_COMMIT_FS_META, sluice_trace_string(op), sluice_trace_string(path), 0);
}

void commit_trace_write(uint64_t offset, uint64_t bytes)
{
    if (!sluice_trace_active())
        return;
    uint64_t unit = sluice_config.STRIPING_UNIT ? sluice_config.STRIPING_UNIT : (1u << 20);
    int full = bytes && offset % unit == 0 && bytes % unit == 0;
    sluice_trace_instant(SLUICE_EV_COMMIT_FS_WRITE, offset, bytes, (uint64_t)full);
}

int commit_fs_open(const char *path, int flags, mode_t mode)
{
    int fd = SLUICE_REAL(open)(path, flags | O_CLOEXEC, mode);
    commit_trace_meta((flags & O_CREAT) ? "create" : "open", path);
    return fd < 0 ? -errno : fd;
}

int commit_fs_close(int fd)
{
    return SLUICE_REAL(close)(fd) == 0 ? 0 : -errno;
}

int commit_fs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = SLUICE_REAL(pwrite)(fd, p, n, (off_t)off);
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

/* Is [p, p + n) all zeros? */
static int all_zero(const unsigned char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

long commit_fs_pwrite_sparse(int fd, const void *buf, size_t n, uint64_t off)
{
    enum { BLK = 4096 };
    const unsigned char *p = buf;
    size_t i = 0, written = 0;
    while (i < n) {
        /* Blocks of the file that are all zeros stay holes: the new file reads zeros there. */
        size_t b = (size_t)(BLK - (off + i) % BLK);
        if (b > n - i)
            b = n - i;
        if (b == BLK && all_zero(p + i, b)) {
            i += b;
            continue;
        }
        size_t j = i + b;
        while (j < n && !(n - j >= BLK && all_zero(p + j, BLK)))
            j += n - j < BLK ? n - j : BLK;
        int rc = commit_fs_pwrite_full(fd, p + i, j - i, off + i);
        if (rc)
            return rc;
        written += j - i;
        i = j;
    }
    return (long)written;
}

int commit_fs_fsync(int fd, const char *path)
{
    commit_trace_meta("fsync", path);
    return SLUICE_REAL(fsync)(fd) == 0 ? 0 : -errno;
}

int commit_fs_fdatasync(int fd, const char *path)
{
    commit_trace_meta("fdatasync", path);
    return SLUICE_REAL(fdatasync)(fd) == 0 ? 0 : -errno;
}

int commit_fs_rename(const char *from, const char *to)
{
    commit_trace_meta("rename", to);
    return SLUICE_REAL(rename)(from, to) == 0 ? 0 : -errno;
}

int commit_fs_unlink(const char *path)
{
    commit_trace_meta("unlink", path);
    return SLUICE_REAL(unlink)(path) == 0 ? 0 : -errno;
}

/* The rename of a new version is durable only once its folder is: fsync the directory.
 * Some file systems refuse fsync on a directory (EINVAL): nothing more can be done there. */
int commit_fs_fsync_dir(const char *dir)
{
    int fd = SLUICE_REAL(open)(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    commit_trace_meta("fsync", dir);
    int rc = SLUICE_REAL(fsync)(fd) == 0 ? 0 : -errno;
    SLUICE_REAL(close)(fd);
    return rc == -EINVAL ? 0 : rc;
}
