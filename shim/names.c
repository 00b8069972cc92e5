/* SPDX-License-Identifier: MIT */
/* Namespace entry points for checkpoint capture: the stat family (names_stat.def) and statx,
 * access, chmod, unlink/remove, rename, mkdir/rmdir of virtual per-rank folders, and chdir (the
 * capture engine caches the working directory to resolve relative names without a syscall). */
#include "ckpt/capture/capture.h"
#include "common/export.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 layouts differ");

/* Fortify entry points, declared by <unistd.h> only under _FORTIFY_SOURCE. */
char *__getcwd_chk(char *buf, size_t size, size_t buflen);
ssize_t __readlink_chk(const char *path, char *buf, size_t size, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t size, size_t buflen);

static int stat_or_pass(int dirfd, const char *path, struct stat *st, int flags)
{
    return sluice_capture_on() ? sluice_capture_stat(dirfd, path, st, flags) : SLUICE_CAPTURE_PASS;
}

/* fstat on a descriptor: the kernel's answer, except that a read view of a committed member
 * reports the device and inode that stat() of its name reports (cp compares the two). */
static void fix_fstat(int fd, struct stat *st)
{
    if (sluice_capture_enabled && sluice_capture_fd_tracked(fd))
        sluice_capture_fix_fstat(fd, st);
    else if (sluice_capture_vdirs && S_ISDIR(st->st_mode) && sluice_capture_on())
        sluice_capture_fix_dir_fstat(fd, st);
}
static int real_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    char kb[PATH_MAX];
    return SLUICE_REAL(fstatat)(dirfd, sluice_capture_kpath(dirfd, path, kb), st, flags);
}

#define SHAPE_PATH(name, type, nofollow)                                                                     \
    SLUICE_EXPORT int name(const char *path, struct type *st)                                                \
    {                                                                                                        \
        int r = stat_or_pass(AT_FDCWD, path, (struct stat *)st, nofollow);                                   \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS ? r                                                                  \
                                        : SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), st);   \
    }
#define SHAPE_AT(name, type, nofollow)                                                                       \
    SLUICE_EXPORT int name(int dirfd, const char *path, struct type *st, int flags)                          \
    {                                                                                                        \
        int r = stat_or_pass(dirfd, path, (struct stat *)st, flags);                                         \
        if (r != SLUICE_CAPTURE_PASS)                                                                        \
            return r;                                                                                        \
        char kb[PATH_MAX];                                                                                   \
        r = SLUICE_REAL(name)(dirfd, sluice_capture_kpath(dirfd, path, kb), st, flags);                      \
        if (r == 0 && (flags & AT_EMPTY_PATH) && path[0] == '\0')                                            \
            fix_fstat(dirfd, (struct stat *)st);                                                             \
        return r;                                                                                            \
    }
/* The glibc < 2.33 names are compat-only symbols in today's libc (dlsym cannot find them), so
 * their pass-through goes to fstatat, which fills the same structure. */
#define SHAPE_XPATH(name, type, nofollow)                                                                    \
    SLUICE_EXPORT int name(int ver, const char *path, struct type *st)                                       \
    {                                                                                                        \
        (void)ver;                                                                                           \
        int r = stat_or_pass(AT_FDCWD, path, (struct stat *)st, nofollow);                                   \
        return r != SLUICE_CAPTURE_PASS ? r : real_fstatat(AT_FDCWD, path, (struct stat *)st, nofollow);     \
    }
#define SHAPE_XAT(name, type, nofollow)                                                                      \
    SLUICE_EXPORT int name(int ver, int dirfd, const char *path, struct type *st, int flags)                 \
    {                                                                                                        \
        (void)ver;                                                                                           \
        int r = stat_or_pass(dirfd, path, (struct stat *)st, flags);                                         \
        return r != SLUICE_CAPTURE_PASS ? r : real_fstatat(dirfd, path, (struct stat *)st, flags);           \
    }

#define SLUICE_STAT_FN(name, shape, type, nofollow) SHAPE_##shape(name, type, nofollow)
#include "names_stat.def"
#undef SLUICE_STAT_FN

#define FSTAT_WRAPPER(name, type)                                                                            \
    SLUICE_EXPORT int name(int fd, struct type *st)                                                          \
    {                                                                                                        \
        int r = SLUICE_REAL(name)(fd, st);                                                                   \
        if (r == 0)                                                                                          \
            fix_fstat(fd, (struct stat *)st);                                                                \
        return r;                                                                                            \
    }
FSTAT_WRAPPER(fstat, stat)
FSTAT_WRAPPER(fstat64, stat64)
#define FXSTAT_WRAPPER(name, type)                                                                           \
    SLUICE_EXPORT int name(int ver, int fd, struct type *st)                                                 \
    {                                                                                                        \
        (void)ver;                                                                                           \
        int r = SLUICE_REAL(fstat)(fd, (struct stat *)st);                                                   \
        if (r == 0)                                                                                          \
            fix_fstat(fd, (struct stat *)st);                                                                \
        return r;                                                                                            \
    }
FXSTAT_WRAPPER(__fxstat, stat)
FXSTAT_WRAPPER(__fxstat64, stat64)

static void stat_to_statx(const struct stat *st, unsigned int mask, struct statx *sx)
{
    memset(sx, 0, sizeof *sx);
    sx->stx_mask = STATX_BASIC_STATS & (mask | STATX_BASIC_STATS);
    sx->stx_blksize = (uint32_t)st->st_blksize;
    sx->stx_nlink = (uint32_t)st->st_nlink;
    sx->stx_uid = st->st_uid;
    sx->stx_gid = st->st_gid;
    sx->stx_mode = (uint16_t)st->st_mode;
    sx->stx_ino = st->st_ino;
    sx->stx_size = (uint64_t)st->st_size;
    sx->stx_blocks = (uint64_t)st->st_blocks;
    sx->stx_atime.tv_sec = st->st_atim.tv_sec;
    sx->stx_atime.tv_nsec = (uint32_t)st->st_atim.tv_nsec;
    sx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
    sx->stx_mtime.tv_nsec = (uint32_t)st->st_mtim.tv_nsec;
    sx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
    sx->stx_ctime.tv_nsec = (uint32_t)st->st_ctim.tv_nsec;
    sx->stx_dev_major = major(st->st_dev);
    sx->stx_dev_minor = minor(st->st_dev);
}

SLUICE_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *sx)
{
    const char *volatile p = path; /* declared nonnull, yet callers pass NULL with AT_EMPTY_PATH */
    if (sluice_capture_on() && p != NULL && !(p[0] == '\0' && (flags & AT_EMPTY_PATH))) {
        struct stat st;
        int r = sluice_capture_stat(dirfd, path, &st, flags);
        if (r != SLUICE_CAPTURE_PASS) {
            if (r == 0)
                stat_to_statx(&st, mask, sx);
            return r;
        }
    }
    char kb[PATH_MAX];
    int r =
        SLUICE_REAL(statx)(dirfd, p != NULL ? sluice_capture_kpath(dirfd, path, kb) : path, flags, mask, sx);
    if (r == 0 && sluice_capture_enabled && (p == NULL || p[0] == '\0') && (flags & AT_EMPTY_PATH) &&
        (sluice_capture_fd_tracked(dirfd) || (sluice_capture_vdirs && S_ISDIR(sx->stx_mode)))) {
        /* A read view of a member or a descriptor of a virtual folder, as fstat reports it. */
        struct stat st;
        if (SLUICE_REAL(fstat)(dirfd, &st) == 0) {
            ino_t ino = st.st_ino;
            fix_fstat(dirfd, &st);
            if (st.st_ino != ino)
                stat_to_statx(&st, mask, sx);
        }
    }
    return r;
}

/* ---- access ---------------------------------------------------------------------------- */

static int access_or_pass(int dirfd, const char *path, int mode, int flags)
{
    return sluice_capture_on() ? sluice_capture_access(dirfd, path, mode, flags) : SLUICE_CAPTURE_PASS;
}

SLUICE_EXPORT int access(const char *path, int mode)
{
    int r = access_or_pass(AT_FDCWD, path, mode, 0);
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(access)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);
}
SLUICE_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    int r = access_or_pass(dirfd, path, mode, flags);
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(faccessat)(dirfd, sluice_capture_kpath(dirfd, path, kb), mode, flags);
}
SLUICE_EXPORT int euidaccess(const char *path, int mode)
{
    int r = access_or_pass(AT_FDCWD, path, mode, AT_EACCESS);
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r
                                    : SLUICE_REAL(euidaccess)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);
}
SLUICE_EXPORT int eaccess(const char *path, int mode)
{
    int r = access_or_pass(AT_FDCWD, path, mode, AT_EACCESS);
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r
                                    : SLUICE_REAL(eaccess)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);
}

/* ---- chmod: a member's permissions are capture's (its staging file stays 0600) ----------- */

SLUICE_EXPORT int chmod(const char *path, mode_t mode)
{
    int r = sluice_capture_on() ? sluice_capture_chmod(AT_FDCWD, path, mode, 0) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(chmod)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);
}
SLUICE_EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
    int r = sluice_capture_on() ? sluice_capture_chmod(dirfd, path, mode, flags) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(fchmodat)(dirfd, sluice_capture_kpath(dirfd, path, kb), mode, flags);
}
SLUICE_EXPORT int fchmod(int fd, mode_t mode)
{
    int r = sluice_capture_on() ? sluice_capture_fchmod(fd, mode) : SLUICE_CAPTURE_PASS;
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(fchmod)(fd, mode);
}

/* ---- extended attributes: members have none (ls -l asks for ACLs and SELinux labels) ---- */

/* 1: the name is a captured member or virtual folder that exists; 0: it does not (errno
 * set); SLUICE_CAPTURE_PASS: not captured. */
static int captured_exists(const char *path)
{
    if (!sluice_capture_on())
        return SLUICE_CAPTURE_PASS;
    int r = sluice_capture_access(AT_FDCWD, path, F_OK, 0);
    return r == SLUICE_CAPTURE_PASS ? r : (r == 0);
}

#define GETXATTR_WRAPPER(name)                                                                               \
    SLUICE_EXPORT ssize_t name(const char *path, const char *attr, void *value, size_t size)                 \
    {                                                                                                        \
        int c = captured_exists(path);                                                                       \
        if (c != SLUICE_CAPTURE_PASS) {                                                                      \
            if (c)                                                                                           \
                errno = ENODATA;                                                                             \
            return -1;                                                                                       \
        }                                                                                                    \
        char kb[PATH_MAX];                                                                                   \
        return SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), attr, value, size);               \
    }
#define LISTXATTR_WRAPPER(name)                                                                              \
    SLUICE_EXPORT ssize_t name(const char *path, char *list, size_t size)                                    \
    {                                                                                                        \
        int c = captured_exists(path);                                                                       \
        if (c != SLUICE_CAPTURE_PASS)                                                                        \
            return c ? 0 : -1;                                                                               \
        char kb[PATH_MAX];                                                                                   \
        return SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), list, size);                      \
    }
GETXATTR_WRAPPER(getxattr)
GETXATTR_WRAPPER(lgetxattr)
LISTXATTR_WRAPPER(listxattr)
LISTXATTR_WRAPPER(llistxattr)

/* ---- unlink, remove, rename ------------------------------------------------------------ */

SLUICE_EXPORT int unlink(const char *path)
{
    int r = sluice_capture_on() ? sluice_capture_unlink(AT_FDCWD, path, 0) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(unlink)(sluice_capture_kpath(AT_FDCWD, path, kb));
}
SLUICE_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    int r = sluice_capture_on() ? sluice_capture_unlink(dirfd, path, flags) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(unlinkat)(dirfd, sluice_capture_kpath(dirfd, path, kb), flags);
}
/* glibc's remove() calls its internal unlink/rmdir, so it is wrapped on its own. */
SLUICE_EXPORT int remove(const char *path)
{
    if (sluice_capture_on()) {
        int r = sluice_capture_unlink(AT_FDCWD, path, 0);
        if (r == SLUICE_CAPTURE_PASS)
            r = sluice_capture_rmdir(path);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(remove)(sluice_capture_kpath(AT_FDCWD, path, kb));
}

SLUICE_EXPORT int rename(const char *from, const char *to)
{
    int r =
        sluice_capture_on() ? sluice_capture_rename(AT_FDCWD, from, AT_FDCWD, to, 0) : SLUICE_CAPTURE_PASS;
    char ka[PATH_MAX], kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r
                                    : SLUICE_REAL(rename)(sluice_capture_kpath(AT_FDCWD, from, ka),
                                                          sluice_capture_kpath(AT_FDCWD, to, kb));
}
SLUICE_EXPORT int renameat(int fromdir, const char *from, int todir, const char *to)
{
    int r = sluice_capture_on() ? sluice_capture_rename(fromdir, from, todir, to, 0) : SLUICE_CAPTURE_PASS;
    char ka[PATH_MAX], kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r
                                    : SLUICE_REAL(renameat)(fromdir, sluice_capture_kpath(fromdir, from, ka),
                                                            todir, sluice_capture_kpath(todir, to, kb));
}
SLUICE_EXPORT int renameat2(int fromdir, const char *from, int todir, const char *to, unsigned int flags)
{
    int r =
        sluice_capture_on() ? sluice_capture_rename(fromdir, from, todir, to, flags) : SLUICE_CAPTURE_PASS;
    char ka[PATH_MAX], kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(renameat2)(fromdir, sluice_capture_kpath(fromdir, from, ka), todir,
                                        sluice_capture_kpath(todir, to, kb), flags);
}

#define TRUNCATE_WRAPPER(name)                                                                               \
    SLUICE_EXPORT int name(const char *path, off_t length)                                                   \
    {                                                                                                        \
        int r = sluice_capture_on() ? sluice_capture_truncate(path, length) : SLUICE_CAPTURE_PASS;           \
        char kb[PATH_MAX];                                                                                   \
        return r != SLUICE_CAPTURE_PASS                                                                      \
                   ? r                                                                                       \
                   : SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), length);                    \
    }
TRUNCATE_WRAPPER(truncate)
TRUNCATE_WRAPPER(truncate64)

/* realpath resolves through glibc-internal calls: a member that exists only in sluice would
 * be ENOENT there. Its name is already absolute and normalized by capture. */
SLUICE_EXPORT char *realpath(const char *path, char *resolved)
{
    if (sluice_capture_on()) {
        bool handled;
        char *r = sluice_capture_realpath(path, resolved, &handled);
        if (handled)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(realpath)(sluice_capture_kpath(AT_FDCWD, path, kb), resolved);
}
SLUICE_EXPORT char *canonicalize_file_name(const char *path)
{
    if (sluice_capture_on()) {
        bool handled;
        char *r = sluice_capture_realpath(path, NULL, &handled);
        if (handled)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(canonicalize_file_name)(sluice_capture_kpath(AT_FDCWD, path, kb));
}

/* ---- folders and the working directory ---------------------------------------------------- */

SLUICE_EXPORT int mkdir(const char *path, mode_t mode)
{
    int r = sluice_capture_on() ? sluice_capture_mkdir(AT_FDCWD, path, mode) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(mkdir)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);
}
SLUICE_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    int r = sluice_capture_on() ? sluice_capture_mkdir(dirfd, path, mode) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(mkdirat)(dirfd, sluice_capture_kpath(dirfd, path, kb), mode);
}
SLUICE_EXPORT int rmdir(const char *path)
{
    int r = sluice_capture_on() ? sluice_capture_rmdir(path) : SLUICE_CAPTURE_PASS;
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS ? r : SLUICE_REAL(rmdir)(sluice_capture_kpath(AT_FDCWD, path, kb));
}

SLUICE_EXPORT int chdir(const char *path)
{
    if (sluice_capture_on() && sluice_capture_vdirs) {
        int v = sluice_capture_chdir(path);
        if (v != SLUICE_CAPTURE_PASS)
            return v;
    }
    char kb[PATH_MAX];
    int r = SLUICE_REAL(chdir)(sluice_capture_kpath(AT_FDCWD, path, kb));
    if (r == 0 && sluice_capture_enabled)
        sluice_capture_cwd_changed();
    return r;
}
SLUICE_EXPORT int fchdir(int fd)
{
    int r = SLUICE_REAL(fchdir)(fd);
    if (r == 0 && sluice_capture_enabled)
        sluice_capture_cwd_changed();
    return r;
}

/* getcwd in a virtual folder: its name, not its stand-in's. */
static char *getcwd_impl(char *buf, size_t size)
{
    if (sluice_capture_enabled && sluice_capture_vdirs) {
        bool handled;
        char *r = sluice_capture_getcwd(buf, size, &handled);
        if (handled)
            return r;
    }
    return SLUICE_REAL(getcwd)(buf, size);
}
SLUICE_EXPORT char *getcwd(char *buf, size_t size)
{
    return getcwd_impl(buf, size);
}
SLUICE_EXPORT char *__getcwd_chk(char *buf, size_t size, size_t buflen)
{
    if (size > buflen) /* glibc's own check reports the overflow and aborts */
        return SLUICE_REAL(__getcwd_chk)(buf, size, buflen);
    return getcwd_impl(buf, size);
}
SLUICE_EXPORT char *get_current_dir_name(void)
{
    if (sluice_capture_enabled && sluice_capture_vdirs) {
        bool handled;
        char *r = sluice_capture_getcwd(NULL, 0, &handled);
        if (handled)
            return r;
    }
    return SLUICE_REAL(get_current_dir_name)();
}

/* ---- statfs, statvfs: a virtual folder is on its real parent's file system ----------------- */

#define STATFS_WRAPPER(name, type, fn)                                                                       \
    SLUICE_EXPORT int name(const char *path, struct type *sf)                                                \
    {                                                                                                        \
        if (sluice_capture_on() && sluice_capture_vdirs) {                                                   \
            int r = fn(path, (void *)sf);                                                                    \
            if (r != SLUICE_CAPTURE_PASS)                                                                    \
                return r;                                                                                    \
        }                                                                                                    \
        char kb[PATH_MAX];                                                                                   \
        return SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), sf);                              \
    }
_Static_assert(sizeof(struct statfs) == sizeof(struct statfs64), "statfs and statfs64 layouts differ");
_Static_assert(sizeof(struct statvfs) == sizeof(struct statvfs64), "statvfs and statvfs64 layouts differ");
STATFS_WRAPPER(statfs, statfs, sluice_capture_statfs)
STATFS_WRAPPER(statfs64, statfs64, sluice_capture_statfs)
STATFS_WRAPPER(statvfs, statvfs, sluice_capture_statvfs)
STATFS_WRAPPER(statvfs64, statvfs64, sluice_capture_statvfs)

/* ---- readlink: a member or virtual folder is no link ----------------------------------------- */

static ssize_t readlink_impl(int dirfd, const char *path, char *buf, size_t size)
{
    if (sluice_capture_on()) {
        ssize_t r = sluice_capture_readlink(dirfd, path);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(readlinkat)(dirfd, sluice_capture_kpath(dirfd, path, kb), buf, size);
}
SLUICE_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
    return readlink_impl(AT_FDCWD, path, buf, size);
}
SLUICE_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
    return readlink_impl(dirfd, path, buf, size);
}
SLUICE_EXPORT ssize_t __readlink_chk(const char *path, char *buf, size_t size, size_t buflen)
{
    if (size > buflen)
        return SLUICE_REAL(__readlink_chk)(path, buf, size, buflen);
    return readlink_impl(AT_FDCWD, path, buf, size);
}
SLUICE_EXPORT ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t size, size_t buflen)
{
    if (size > buflen)
        return SLUICE_REAL(__readlinkat_chk)(dirfd, path, buf, size, buflen);
    return readlink_impl(dirfd, path, buf, size);
}

/* ---- owner and times of a virtual folder (its marker's); names through one ---------------- */

static int chown_impl(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
    if (sluice_capture_on() && sluice_capture_vdirs) {
        int r = sluice_capture_vdir_chown(dirfd, path, uid, gid);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(fchownat)(dirfd, sluice_capture_kpath(dirfd, path, kb), uid, gid, flags);
}
SLUICE_EXPORT int chown(const char *path, uid_t uid, gid_t gid)
{
    return chown_impl(AT_FDCWD, path, uid, gid, 0);
}
SLUICE_EXPORT int lchown(const char *path, uid_t uid, gid_t gid)
{
    return chown_impl(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW);
}
SLUICE_EXPORT int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
    return chown_impl(dirfd, path, uid, gid, flags);
}

static int utimens_impl(int dirfd, const char *path, const struct timespec ts[2], int flags)
{
    if (sluice_capture_on() && sluice_capture_vdirs && path != NULL) {
        int r = sluice_capture_vdir_utimens(dirfd, path, ts);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(utimensat)(dirfd, path ? sluice_capture_kpath(dirfd, path, kb) : path, ts, flags);
}
/* NULL times: now; otherwise microseconds to nanoseconds (what glibc's own forms do). */
static const struct timespec *from_timeval(const struct timeval tv[2], struct timespec ts[2])
{
    if (tv == NULL)
        return NULL;
    for (int i = 0; i < 2; i++) {
        ts[i].tv_sec = tv[i].tv_sec;
        ts[i].tv_nsec = tv[i].tv_usec * 1000;
    }
    return ts;
}
SLUICE_EXPORT int utimensat(int dirfd, const char *path, const struct timespec ts[2], int flags)
{
    return utimens_impl(dirfd, path, ts, flags);
}
SLUICE_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
    struct timespec ts[2];
    return utimens_impl(AT_FDCWD, path, from_timeval(tv, ts), 0);
}
SLUICE_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
    struct timespec ts[2];
    return utimens_impl(AT_FDCWD, path, from_timeval(tv, ts), AT_SYMLINK_NOFOLLOW);
}
SLUICE_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
    struct timespec ts[2];
    return utimens_impl(dirfd, path, from_timeval(tv, ts), 0);
}
SLUICE_EXPORT int utime(const char *path, const struct utimbuf *times)
{
    struct timespec ts[2];
    if (times != NULL) {
        ts[0] = (struct timespec){.tv_sec = times->actime};
        ts[1] = (struct timespec){.tv_sec = times->modtime};
    }
    return utimens_impl(AT_FDCWD, path, times ? ts : NULL, 0);
}
