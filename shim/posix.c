/* SPDX-License-Identifier: MIT */
/* POSIX descriptor entry points for checkpoint capture: the open family (posix_open.def), the
 * dup family (posix_dup.def), fcntl's F_DUPFD, close, fsync/fdatasync. Each wrapper decides
 * "captured or not" with one load and hands captured calls to runtime/ckpt/capture*.c; data
 * calls (read, lseek, mmap, ftruncate...) are not wrapped: captured descriptors are real
 * descriptors on staging files. The write family (posix_write.def) runs the real call first
 * and only looks at a failed or short result (a full stage folder). */
#include "ckpt/capture/capture.h"
#include "common/exit_hooks.h"
#include "common/export.h"
#include "common/real.h"
#include "mpi/roles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* Fortify entry points are declared by <fcntl.h> only under _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* open(2) reads a mode argument only for O_CREAT and O_TMPFILE. */
#define NEEDS_MODE(flags) (((flags)&O_CREAT) != 0 || ((flags)&O_TMPFILE) == O_TMPFILE)

static inline mode_t take_mode(int flags, va_list ap)
{
    return NEEDS_MODE(flags) ? (mode_t)va_arg(ap, int) : 0;
}

static inline int capture_or_pass(int dirfd, const char *path, int flags, mode_t mode)
{
    return sluice_capture_on() ? sluice_capture_openat(dirfd, path, flags, mode) : SLUICE_CAPTURE_PASS;
}

#define SHAPE_PLAIN(name)                                                                                    \
    SLUICE_EXPORT int name(const char *path, int flags, ...)                                                 \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        mode_t mode = take_mode(flags, ap);                                                                  \
        va_end(ap);                                                                                          \
        int r = capture_or_pass(AT_FDCWD, path, flags, mode);                                                \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS                                                                      \
                   ? r                                                                                       \
                   : SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), flags, mode);               \
    }
#define SHAPE_AT(name)                                                                                       \
    SLUICE_EXPORT int name(int dirfd, const char *path, int flags, ...)                                      \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        mode_t mode = take_mode(flags, ap);                                                                  \
        va_end(ap);                                                                                          \
        int r = capture_or_pass(dirfd, path, flags, mode);                                                   \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS                                                                      \
                   ? r                                                                                       \
                   : SLUICE_REAL(name)(dirfd, sluice_capture_kpath(dirfd, path, kb), flags, mode);           \
    }
#define SHAPE_FORTIFY(name)                                                                                  \
    SLUICE_EXPORT int name(const char *path, int flags)                                                      \
    {                                                                                                        \
        int r = capture_or_pass(AT_FDCWD, path, flags, 0);                                                   \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS                                                                      \
                   ? r                                                                                       \
                   : SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), flags);                     \
    }
#define SHAPE_FORTIFY_AT(name)                                                                               \
    SLUICE_EXPORT int name(int dirfd, const char *path, int flags)                                           \
    {                                                                                                        \
        int r = capture_or_pass(dirfd, path, flags, 0);                                                      \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS                                                                      \
                   ? r                                                                                       \
                   : SLUICE_REAL(name)(dirfd, sluice_capture_kpath(dirfd, path, kb), flags);                 \
    }
#define SHAPE_CREAT(name)                                                                                    \
    SLUICE_EXPORT int name(const char *path, mode_t mode)                                                    \
    {                                                                                                        \
        int r = capture_or_pass(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);                         \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS ? r                                                                  \
                                        : SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), mode); \
    }

#define SLUICE_OPEN_FN(name, shape) SHAPE_##shape(name)
#include "posix_open.def"
#undef SLUICE_OPEN_FN

/* dup family: the real call first (it decides the new number), then the bookkeeping. */
#define SLUICE_DUP_FN(name, params, args, oldfd, newfd)                                                      \
    SLUICE_EXPORT int name params                                                                            \
    {                                                                                                        \
        bool replaces = sluice_capture_enabled && (newfd) >= 0 && (newfd) != (oldfd) &&                      \
                        sluice_capture_fd_tracked(newfd);                                                    \
        int r = SLUICE_REAL(name) args;                                                                      \
        if (r >= 0 && sluice_capture_enabled && (replaces || sluice_capture_fd_tracked(oldfd)))              \
            sluice_capture_dup_done((oldfd), r, replaces);                                                   \
        return r;                                                                                            \
    }
#include "posix_dup.def"
#undef SLUICE_DUP_FN

static inline bool fell_short(ssize_t r, size_t want)
{
    return r < 0 || (size_t)r < want;
}

static size_t iov_bytes(const struct iovec *v, int c)
{
    size_t n = 0;
    for (int i = 0; i < c; i++)
        n += v[i].iov_len;
    return n;
}

#define SLUICE_WRITE_FN(ret, name, params, args, fd, want)                                                   \
    SLUICE_EXPORT ret name params                                                                            \
    {                                                                                                        \
        ret r = SLUICE_REAL(name) args;                                                                      \
        if (__builtin_expect(sluice_capture_enabled, 0) && sluice_capture_fd_tracked(fd) &&                  \
            fell_short(r, (want)))                                                                           \
            sluice_capture_write_failed((fd), r < 0 ? errno : 0);                                            \
        return r;                                                                                            \
    }
#include "posix_write.def"
#undef SLUICE_WRITE_FN

/* fcntl's third argument is an int or a pointer depending on cmd; like glibc, pass it on as a
 * pointer-sized value. Only F_DUPFD and F_DUPFD_CLOEXEC concern capture. */
#define FCNTL_WRAPPER(name)                                                                                  \
    SLUICE_EXPORT int name(int fd, int cmd, ...)                                                             \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, cmd);                                                                                   \
        void *arg = va_arg(ap, void *);                                                                      \
        va_end(ap);                                                                                          \
        int r = SLUICE_REAL(name)(fd, cmd, arg);                                                             \
        if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && sluice_capture_enabled &&                \
            sluice_capture_fd_tracked(fd))                                                                   \
            sluice_capture_dup_done(fd, r, false);                                                           \
        return r;                                                                                            \
    }
FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

SLUICE_EXPORT int close(int fd)
{
    if (sluice_capture_enabled) {
        int r = sluice_capture_close(fd);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    return SLUICE_REAL(close)(fd);
}

/* fsync on a captured member returns once it is durable in a committed container. */
#define SYNC_WRAPPER(name)                                                                                   \
    SLUICE_EXPORT int name(int fd)                                                                           \
    {                                                                                                        \
        if (sluice_capture_on()) {                                                                           \
            int r = sluice_capture_fsync(fd);                                                                \
            if (r != SLUICE_CAPTURE_PASS)                                                                    \
                return r;                                                                                    \
        }                                                                                                    \
        return SLUICE_REAL(name)(fd);                                                                        \
    }
SYNC_WRAPPER(fsync)
SYNC_WRAPPER(fdatasync)

/* _exit and _Exit skip destructors: the parts' exit hooks run first (common/exit_hooks.h:
 * capture commits what this process staged, rank 0 of distributed OpenCL ends its servers). */
#define EXIT_WRAPPER(name)                                                                                   \
    SLUICE_EXPORT void name(int status)                                                                      \
    {                                                                                                        \
        status = sluice_exit_hooks_run(status);                                                              \
        SLUICE_REAL(name)(status);                                                                           \
        for (;;)                                                                                             \
            ; /* the real one does not return */                                                             \
    }
EXIT_WRAPPER(_exit)
EXIT_WRAPPER(_Exit)

/* close_range and closefrom, which a program calls before it execs a child (Python's subprocess
 * closes everything above 2), keep the launcher's connection of a sluice job open
 * (sluice_launcher_fd, runtime/mpi/roles.h): without it the child cannot use the rank's MPI.
 * Between fork and exec: raw system calls only, no lock. */
static int close_range_raw(unsigned first, unsigned last, int flags)
{
    return first > last ? 0 : (int)syscall(SYS_close_range, first, last, flags);
}

static int close_range_keeping(unsigned int first, unsigned int last, int flags)
{
    int keep = sluice_launcher_fd;
    if (keep < 0 || (unsigned)keep < first || (unsigned)keep > last)
        return close_range_raw(first, last, flags);
    int r = (unsigned)keep > first ? close_range_raw(first, (unsigned)keep - 1, flags) : 0;
    if (r == 0 && (unsigned)keep < last)
        r = close_range_raw((unsigned)keep + 1, last, flags);
    return r;
}

SLUICE_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    return close_range_keeping(first, last, flags);
}

SLUICE_EXPORT void closefrom(int lowfd)
{
    close_range_keeping(lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
}
