/* SPDX-License-Identifier: MIT */
/* See private_dir.h. */
#include "common/private_dir.h"

#include "common/fd_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int make_parents(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (syscall(SYS_mkdirat, AT_FDCWD, buf, 0700) != 0 && errno != EEXIST)
                return -errno;
            *p = c;
            if (c == '\0')
                return 0;
        }
    }
}

int sluice_private_dir(const char *path, int create, char *why, size_t whylen)
{
    int saved = errno;
    if (why && whylen)
        why[0] = '\0';
    if (create) {
        int rc = make_parents(path);
        if (rc != 0) {
            if (why)
                snprintf(why, whylen, "cannot create %s: %s", path, strerror(-rc));
            errno = saved;
            return rc;
        }
    }
    struct stat st;
    int fd = sluice_fd_guard_openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        /* O_NOFOLLOW refuses a link with ELOOP, or ENOTDIR with O_DIRECTORY: say which. */
        if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            if (why)
                snprintf(why, whylen, "%s is a symbolic link; sluice uses only a real folder there", path);
            errno = saved;
            return -EACCES;
        }
        if (why)
            snprintf(why, whylen, "%s: %s", path, strerror(e));
        errno = saved;
        return -e;
    }
    int rc = syscall(SYS_fstat, fd, &st) == 0 ? 0 : -errno;
    syscall(SYS_close, fd);
    unsigned uid = (unsigned)geteuid();
    if (rc != 0) {
        if (why)
            snprintf(why, whylen, "%s: %s", path, strerror(-rc));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = -ENOTDIR;
        if (why)
            snprintf(why, whylen, "%s is not a folder", path);
    } else if ((unsigned)st.st_uid != uid) {
        rc = -EACCES;
        if (why)
            snprintf(why, whylen,
                     "%s belongs to uid %u, not to you (uid %u); remove it or choose another folder", path,
                     (unsigned)st.st_uid, uid);
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        rc = -EACCES;
        if (why)
            snprintf(why, whylen, "%s is writable by other users (mode %04o); make it private (chmod 700)",
                     path, (unsigned)(st.st_mode & 07777));
    }
    errno = saved;
    return rc;
}

unsigned long long sluice_random_u64(void)
{
    unsigned long long r = 0;
    if (syscall(SYS_getrandom, &r, sizeof r, GRND_NONBLOCK) == (long)sizeof r)
        return r;
    /* No entropy yet (early boot): still unique per call and process, if guessable. */
    static unsigned long long n;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 30) ^
        ((unsigned long long)getpid() << 40) ^
        __atomic_add_fetch(&n, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
    return r;
}

unsigned sluice_process_umask(void)
{
    char buf[2048];
    int fd = sluice_fd_guard_openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 022;
    long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 022;
    buf[n] = '\0';
    const char *u = strstr(buf, "\nUmask:");
    return u ? (unsigned)strtoul(u + 7, NULL, 8) & 0777 : 022;
}
