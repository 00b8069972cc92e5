/* SPDX-License-Identifier: MIT */
/* File-system calls of the commit engine. They go to the real libc (SLUICE_REAL), never through
 * sluice's own wrappers, and each metadata operation and write is recorded in the trace
 * (COMMIT_FS_META, COMMIT_FS_WRITE) so that a commit's cost on the file system can be read back. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/container/container.h"
#include "common/full_io.h"
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

/* The version a file-system call works for, as the trace names it: the string id of that
 * version's temporary file (unique per version), or 0 for a call that serves no one version
 * (reading a staging file). `sluice-trace io` attributes each call by it (docs/TRACE.md). */
static uint64_t version_tag(const char *version_file)
{
    return version_file ? sluice_trace_string(version_file) : 0;
}

void commit_trace_meta_at(uint64_t t_ns, const char *op, const char *path, const char *version_file)
{
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_COMMIT_FS_META, 0, t_ns, 0, sluice_trace_string(op),
                            sluice_trace_string(path), version_tag(version_file));
}

void commit_trace_meta(const char *op, const char *path, const char *version_file)
{
    commit_trace_meta_at(sluice_now_ns(), op, path, version_file);
}

void commit_trace_write_full(const char *version_file, uint64_t offset, uint64_t bytes, int full)
{
    if (!sluice_trace_active())
        return;
    sluice_trace_instant(SLUICE_EV_COMMIT_FS_FOR, version_tag(version_file), 0, 0);
    sluice_trace_instant(SLUICE_EV_COMMIT_FS_WRITE, offset, bytes, (uint64_t) !!full);
}

void commit_trace_write(const char *version_file, uint64_t offset, uint64_t bytes)
{
    if (!sluice_trace_active())
        return;
    uint64_t unit = sluice_config.STRIPING_UNIT ? sluice_config.STRIPING_UNIT : (1u << 20);
    commit_trace_write_full(version_file, offset, bytes, bytes && offset % unit == 0 && bytes % unit == 0);
}

/* A temporary container file is the version it holds; any other path serves no one version. */
static const char *own_version(const char *path)
{
    return sluice_container_is_temp_name(path) ? path : NULL;
}

int commit_fs_open(const char *path, int flags, mode_t mode)
{
    int fd = SLUICE_REAL(open)(path, flags | O_CLOEXEC, mode);
    commit_trace_meta((flags & O_CREAT) ? "create" : "open", path, own_version(path));
    return fd < 0 ? -errno : fd;
}

int commit_fs_close(int fd)
{
    return SLUICE_REAL(close)(fd) == 0 ? 0 : -errno;
}

int commit_fs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
    return sluice_full_pwrite(fd, buf, n, off);
}

int commit_fs_fsync(int fd, const char *path)
{
    commit_trace_meta("fsync", path, own_version(path));
    return SLUICE_REAL(fsync)(fd) == 0 ? 0 : -errno;
}

int commit_fs_fdatasync(int fd, const char *path)
{
    commit_trace_meta("fdatasync", path, own_version(path));
    return SLUICE_REAL(fdatasync)(fd) == 0 ? 0 : -errno;
}

int commit_fs_rename(const char *from, const char *to)
{
    commit_trace_meta("rename", to, own_version(from));
    return SLUICE_REAL(rename)(from, to) == 0 ? 0 : -errno;
}

int commit_fs_unlink(const char *path)
{
    commit_trace_meta("unlink", path, own_version(path));
    return SLUICE_REAL(unlink)(path) == 0 ? 0 : -errno;
}

/* The rename of a new version is durable only once its folder is: fsync the directory.
 * Some file systems refuse fsync on a directory (EINVAL): nothing more can be done there. */
int commit_fs_fsync_dir(const char *dir, const char *version_file)
{
    int fd = SLUICE_REAL(open)(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    commit_trace_meta("fsync", dir, version_file);
    int rc = SLUICE_REAL(fsync)(fd) == 0 ? 0 : -errno;
    SLUICE_REAL(close)(fd);
    return rc == -EINVAL ? 0 : rc;
}
