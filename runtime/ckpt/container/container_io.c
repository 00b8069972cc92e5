/* SPDX-License-Identifier: MIT */
/* The I/O table the container code uses for every system call (container.h explains why it
 * is replaceable), plus small helpers shared by the reader and the writer: exact-length
 * pread/pwrite and the one-line error messages. */
#include "ckpt/container/container_internal.h"
#include "common/full_io.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* The defaults reach libc through SLUICE_REAL: inside libsluice.so the plain names are
 * sluice's own wrappers (a container is never captured, and the wrappers cost and re-enter). */
static int real_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return SLUICE_REAL(open)(path, flags, mode);
}
static int real_close(int fd)
{
    return SLUICE_REAL(close)(fd);
}
static ssize_t real_pread(int fd, void *buf, size_t n, off_t off)
{
    return SLUICE_REAL(pread)(fd, buf, n, off);
}
static ssize_t real_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return SLUICE_REAL(pwrite)(fd, buf, n, off);
}
static int real_fstat(int fd, struct stat *st)
{
    return SLUICE_REAL(fstat)(fd, st);
}
static off_t real_lseek(int fd, off_t off, int whence)
{
    return SLUICE_REAL(lseek)(fd, off, whence);
}
static int real_ftruncate(int fd, off_t len)
{
    return SLUICE_REAL(ftruncate)(fd, len);
}
static DIR *real_opendir(const char *path)
{
    return SLUICE_REAL(opendir)(path);
}
static struct dirent *real_readdir(DIR *d)
{
    return SLUICE_REAL(readdir)(d);
}
static int real_closedir(DIR *d)
{
    return SLUICE_REAL(closedir)(d);
}

struct sluice_container_io sluice_container_io_ = {
    .open = real_open,
    .close = real_close,
    .pread = real_pread,
    .pwrite = real_pwrite,
    .fstat = real_fstat,
    .lseek = real_lseek,
    .ftruncate = real_ftruncate,
    .opendir = real_opendir,
    .readdir = real_readdir,
    .closedir = real_closedir,
};

void sluice_container_set_io(const struct sluice_container_io *io)
{
#define TAKE(f)                                                                                              \
    if (io->f)                                                                                               \
        sluice_container_io_.f = io->f;
    TAKE(open)
    TAKE(close)
    TAKE(pread)
    TAKE(pwrite)
    TAKE(fstat)
    TAKE(lseek)
    TAKE(ftruncate)
    TAKE(opendir)
    TAKE(readdir)
    TAKE(closedir)
#undef TAKE
}

int sluice_container_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int sluice_container_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    return sluice_full_pread_via(CIO->pread, fd, buf, n, off);
}

int sluice_container_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
    return sluice_full_pwrite_via(CIO->pwrite, fd, buf, n, off);
}

/* A member path: absolute, no NUL inside, not too long. */
int sluice_container_path_ok(const char *s, size_t len)
{
    return len > 1 && len <= SLUICE_CONTAINER_KEY_MAX && s[0] == '/' && memchr(s, 0, len) == NULL;
}

/* A set key: a member path with at least one "%r". */
int sluice_container_key_ok(const char *s, size_t len)
{
    if (!sluice_container_path_ok(s, len))
        return 0;
    for (size_t i = 0; i + 1 < len; i++)
        if (s[i] == '%' && s[i + 1] == 'r')
            return 1;
    return 0;
}
