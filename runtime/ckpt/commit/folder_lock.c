/* SPDX-License-Identifier: MIT */
/* A container folder's lock as an O_EXCL lock file with a stale-owner rule (folder_lock.h). */
#include "ckpt/commit/folder_lock.h"

#include "common/host_id.h"
#include "common/pid_alive.h"
#include "common/proc_stat.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Start of process `pid` in clock ticks since boot (/proc/<pid>/stat, field 22), or -1. */
static long long process_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = SLUICE_REAL(open)(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t len = SLUICE_REAL(read)(fd, buf, sizeof buf - 1);
    SLUICE_REAL(close)(fd);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    const char *start = sluice_proc_stat_field(buf, 22);
    return start ? strtoll(start, NULL, 10) : -1;
}

/* The lock appears whole: its owner line goes to a file of this thread's first, which is then
 * linked to the lock's name (link fails with EEXIST where a lock exists, as O_EXCL does, NFS
 * included). A lock created empty and written after, by a process killed in between, would be
 * judged stale only by its age, SLUICE_FOLDER_LOCK_STALE_S later. A file system without links
 * gets the lock created in place. */
/* The lock written in place: O_EXCL, then the owner line. */
static int create_in_place(struct sluice_folder_lock *l, const char *line, int n, struct stat *st)
{
    int fd = SLUICE_REAL(open)(l->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (SLUICE_REAL(write)(fd, line, (size_t)n) != n || SLUICE_REAL(fstat)(fd, st) != 0) {
        int err = errno ? -errno : -EIO;
        SLUICE_REAL(unlink)(l->path);
        SLUICE_REAL(close)(fd);
        return err;
    }
    return fd;
}

/* The lock appears whole: its owner line goes to a file of this thread's first, which is then
 * linked to the lock's name (link fails with EEXIST where a lock exists, as O_EXCL does, NFS
 * included). A lock created empty and written after, by a process killed in between, would be
 * judged stale only by its age, SLUICE_FOLDER_LOCK_STALE_S later. A file system without hard
 * links gets the lock written in place. */
static int create(struct sluice_folder_lock *l)
{
    char host[SLUICE_HOST_ID_LEN + 1], line[128], own[sizeof l->path + 64];
    sluice_host_id(host);
    int n = snprintf(line, sizeof line, "%s %ld %lld\n", host, (long)getpid(), process_start((long)getpid()));
    struct stat st;
    int fd = -1;
    if ((size_t)snprintf(own, sizeof own, "%s.%s-%ld-%ld", l->path, host, (long)getpid(), (long)gettid()) <
        sizeof own) {
        SLUICE_REAL(unlink)(own); /* this thread's own, from an attempt cut short */
        fd = SLUICE_REAL(open)(own, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd >= 0) {
        int rc = -1;
        if (SLUICE_REAL(write)(fd, line, (size_t)n) == n && SLUICE_REAL(fstat)(fd, &st) == 0)
            rc = SLUICE_REAL(link)(own, l->path) == 0 ? 0 : -errno;
        SLUICE_REAL(unlink)(own);
        if (rc != 0)
            SLUICE_REAL(close)(fd);
        if (rc == -EEXIST)
            return rc;
        if (rc != 0)
            fd = -1; /* no links here (or no room for the line): in place */
    }
    if (fd < 0 && (fd = create_in_place(l, line, n, &st)) < 0)
        return fd;
    l->fd = fd;
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    l->touched_ns = clock_ns(CLOCK_MONOTONIC);
    return 0;
}

/* Reads the lock at l->path: 1 stale (its inode in *ino), 0 live (owner filled), -ENOENT gone. */
static int judge(const struct sluice_folder_lock *l, ino_t *ino, char *owner, size_t ownerlen)
{
    int fd = SLUICE_REAL(open)(l->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ENOENT : 0; /* unreadable: taken as live */
    char buf[128] = "", host[SLUICE_HOST_ID_LEN + 1] = "";
    struct stat st;
    ssize_t n = SLUICE_REAL(fstat)(fd, &st) == 0 ? SLUICE_REAL(read)(fd, buf, sizeof buf - 1) : -1;
    SLUICE_REAL(close)(fd);
    if (n < 0)
        return 0;
    buf[n] = '\0';
    long pid = 0;
    long long start = -1;
    int fields = sscanf(buf, "%16s %ld %lld", host, &pid, &start);
    if (owner && ownerlen)
        snprintf(owner, ownerlen, "host %s pid %ld", fields >= 1 ? host : "?", pid);
    *ino = st.st_ino;
    int64_t age_ns =
        clock_ns(CLOCK_REALTIME) - ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
    if (age_ns > (int64_t)SLUICE_FOLDER_LOCK_STALE_S * 1000000000)
        return 1; /* nobody touched it for that long: its owner is gone, wherever it ran */
    if (fields == 3 && sluice_host_id_is_mine(host) && pid > 0 &&
        (process_start(pid) != start || !sluice_pid_running(pid, 0)))
        return 1; /* this host's owner is gone (a zombie too), or its pid is another process's now */
    return 0;
}

/* Removes the stale lock whose inode is `ino`, if it is still the one at l->path. Breakers take
 * turns under a second O_EXCL file (LOCK.break), and judge again under it: the lock they judged
 * may be gone and another live owner's in its place. Before, a breaker renamed whatever lock was
 * there aside and linked it back if it was not the stale one; a fourth process could take the
 * empty name in between, and the live owner's lock was lost: two holders, and one member of a
 * set lost (12 processes committing one set under load, integration.commit_concurrent). Only
 * the owner (dead here) and a breaker remove a lock, so under the break file the stale lock stays
 * until this breaker removes it. A break file left by a breaker that died is removed once it is
 * SLUICE_FOLDER_LOCK_BREAK_STALE_S old (breaking takes microseconds). */
static void break_stale(const struct sluice_folder_lock *l, ino_t ino)
{
    char brk[sizeof l->path + 8];
    snprintf(brk, sizeof brk, "%s.break", l->path);
    int fd = SLUICE_REAL(open)(brk, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        struct stat st;
        if (errno == EEXIST && SLUICE_REAL(stat)(brk, &st) == 0 &&
            clock_ns(CLOCK_REALTIME) - ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec) >
                (int64_t)SLUICE_FOLDER_LOCK_BREAK_STALE_S * 1000000000)
            SLUICE_REAL(unlink)(brk);
        return; /* another breaker is at it: the caller tries again */
    }
    SLUICE_REAL(close)(fd);
    ino_t now = 0;
    if (judge(l, &now, NULL, 0) == 1 && now == ino)
        SLUICE_REAL(unlink)(l->path);
    SLUICE_REAL(unlink)(brk);
}

int sluice_folder_lock_try(const char *dir, struct sluice_folder_lock *l, char *owner, size_t ownerlen)
{
    l->fd = -1;
    if ((size_t)snprintf(l->path, sizeof l->path, "%s/%s", dir, SLUICE_FOLDER_LOCK_NAME) >= sizeof l->path)
        return -ENAMETOOLONG;
    for (int attempt = 0; attempt < 3; attempt++) {
        int rc = create(l);
        if (rc != -EEXIST)
            return rc;
        ino_t ino = 0;
        int stale = judge(l, &ino, owner, ownerlen);
        if (stale == 0)
            return -EWOULDBLOCK;
        if (stale == 1)
            break_stale(l, ino);
    }
    return -EWOULDBLOCK;
}

void sluice_folder_lock_touch(struct sluice_folder_lock *l)
{
    if (l->fd < 0)
        return;
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    if (now - l->touched_ns < (int64_t)SLUICE_FOLDER_LOCK_TOUCH_S * 1000000000)
        return;
    l->touched_ns = now;
    SLUICE_REAL(futimens)(l->fd, NULL);
}

void sluice_folder_lock_release(struct sluice_folder_lock *l)
{
    if (l->fd < 0)
        return;
    struct stat st;
    if (SLUICE_REAL(stat)(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino)
        SLUICE_REAL(unlink)(l->path);
    SLUICE_REAL(close)(l->fd);
    l->fd = -1;
}

void sluice_folder_lock_forget(struct sluice_folder_lock *l)
{
    if (l->fd >= 0)
        SLUICE_REAL(close)(l->fd);
    l->fd = -1;
}

int sluice_folder_lock_is_name(const char *base)
{
    size_t n = strlen(SLUICE_FOLDER_LOCK_NAME);
    return strncmp(base, SLUICE_FOLDER_LOCK_NAME, n) == 0 && (base[n] == '\0' || base[n] == '.');
}
