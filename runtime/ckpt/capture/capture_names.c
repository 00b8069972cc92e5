/* SPDX-License-Identifier: MIT */
/* The namespace of captured files: stat, access, unlink, rename, answered as if every member
 * were a real file (mkdir/rmdir of virtual per-rank folders: capture_vdirs.c). */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "common/full_io.h"
#include "common/hash.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A stable inode number for a virtual name (FNV-1a), never 0. */
static ino_t name_ino(const char *s)
{
    return (ino_t)(sluice_fnv1a_str(s) | 1);
}

void capture_parent_of(const char *abs, char *out)
{
    size_t len = (size_t)(strrchr(abs, '/') - abs);
    if (len == 0)
        len = 1;
    memcpy(out, abs, len);
    out[len] = '\0';
}

int capture_member_stat(const char *abs, struct stat *st)
{
    char stage[PATH_MAX];
    bool have = false;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = capture_find_open(abs);
    mode_t mode = 0;
    if (m != NULL) {
        memcpy(stage, m->stage_path, sizeof stage);
        mode = m->mode;
        have = true;
    }
    pthread_mutex_unlock(&capture_lock);
    /* Versions closed here belong to the commit engine, which answers for them below. */
    if (have && SLUICE_REAL(stat)(stage, st) == 0) {
        st->st_mode = (st->st_mode & S_IFMT) | mode; /* the program's, not the 0600 staging file's */
        return 0;
    }
    uint64_t size;
    int64_t mtime_ns;
    unsigned staged_mode = 0;
    if (sluice_commit_stat_member(abs, &size, &mtime_ns, &staged_mode) == 0) {
        /* Ownership and permissions of the container, size and time of the member. */
        char cont[PATH_MAX], base[PATH_MAX];
        struct stat b;
        bool ok = false;
        char key[PATH_MAX];
        int rank;
        if (sluice_pattern_match(&capture_patterns, abs, &rank, key, sizeof key) &&
            sluice_container_name(key, cont, sizeof cont) == 0 && SLUICE_REAL(stat)(cont, &b) == 0)
            ok = true;
        if (!ok) {
            char parent[PATH_MAX];
            capture_parent_of(abs, parent);
            capture_vdir_root(parent, base);
            if (SLUICE_REAL(stat)(base, &b) != 0)
                memset(&b, 0, sizeof b);
            b.st_mode = S_IFREG | (0666 & ~capture_file_umask());
        }
        memset(st, 0, sizeof *st);
        st->st_dev = b.st_dev;
        st->st_ino = name_ino(abs);
        /* A closed version not yet committed has the mode the program gave it, as its own file
         * would; a committed one the container's (the most restrictive of its members'). */
        st->st_mode = S_IFREG | (staged_mode ? (mode_t)staged_mode : (b.st_mode & 07777));
        st->st_nlink = 1;
        st->st_uid = b.st_uid;
        st->st_gid = b.st_gid;
        st->st_size = (off_t)size;
        st->st_blksize = b.st_blksize ? b.st_blksize : 4096;
        /* Whole file system blocks, as its own file would take (ls -s, du, ls -l's total). */
        uint64_t bs = (uint64_t)st->st_blksize;
        st->st_blocks = (blkcnt_t)((size + bs - 1) / bs * (bs / 512));
        st->st_mtim.tv_sec = (time_t)(mtime_ns / 1000000000);
        st->st_mtim.tv_nsec = (long)(mtime_ns % 1000000000);
        st->st_ctim = st->st_mtim;
        st->st_atim = st->st_mtim;
        return 0;
    }
    if (SLUICE_REAL(stat)(abs, st) == 0)
        return 0;
    return -errno;
}

void capture_vdir_stat(const char *abs, struct stat *st)
{
    char root[PATH_MAX];
    struct stat m;
    capture_vdir_root(abs, root);
    if (SLUICE_REAL(stat)(root, st) != 0)
        memset(st, 0, sizeof *st);
    st->st_ino = name_ino(abs);
    st->st_nlink = 2;
    st->st_size = 4096;
    st->st_blocks = 8;
    st->st_mode = S_IFDIR | (0777 & ~capture_file_umask());
    if (capture_vdir_marker_stat(abs, &m) == 0) { /* mode, owner and times of its mkdir */
        st->st_mode = S_IFDIR | (m.st_mode & 07777);
        st->st_uid = m.st_uid;
        st->st_gid = m.st_gid;
        st->st_mtim = m.st_mtim;
        st->st_ctim = m.st_ctim;
        st->st_atim = m.st_atim;
    }
}

int sluice_capture_stat(int dirfd, const char *path, struct stat *st, int flags)
{
    struct capture_name n;
    (void)flags;
    if (!capture_classify(dirfd, path, &n, true))
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    int rc;
    if (n.member) {
        rc = capture_member_stat(n.abs, st);
    } else if (SLUICE_REAL(stat)(n.abs, st) == 0) {
        rc = 0; /* a real per-rank directory */
    } else if (capture_vdir_exists(n.abs)) {
        capture_vdir_stat(n.abs, st);
        rc = 0;
    } else {
        rc = -ENOENT;
    }
    sluice_capture_guard_leave();
    return capture_result(rc);
}

int sluice_capture_access(int dirfd, const char *path, int mode, int flags)
{
    struct capture_name n;
    (void)mode, (void)flags;
    if (!capture_classify(dirfd, path, &n, true))
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    bool exists = n.member ? capture_member_exists(n.abs) : capture_vdir_exists(n.abs);
    sluice_capture_guard_leave();
    if (!exists) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

/* Removes member `abs` from every place it lives. 0 or -ENOENT. Guard held. */
static int unlink_member(const char *abs)
{
    bool had = false;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = capture_find_open(abs);
    if (m != NULL) {
        m->unlinked = true; /* discarded at its last close */
        HASH_DEL(capture_open, m);
        had = true;
    }
    /* A version closed here exists only if the commit engine still has it (below): another
     * process may have unlinked it since. */
    capture_forget_closed(abs);
    pthread_mutex_unlock(&capture_lock);
    /* A per-rank folder outlives its last member, as a real one would (until rmdir). */
    char parent[PATH_MAX];
    capture_parent_of(abs, parent);
    if (sluice_pattern_match_dir(&capture_patterns, parent, NULL))
        capture_vdir_keep(parent);
    int rc = sluice_commit_member_unlinked(abs);
    if (rc == 0)
        had = true;
    if (SLUICE_REAL(unlink)(abs) == 0)
        had = true; /* a real file of that name (written without sluice) goes too */
    sluice_trace_instant(SLUICE_EV_CKPT_UNLINK, sluice_trace_active() ? sluice_trace_string(abs) : 0, 0, 0);
    return had ? 0 : -ENOENT;
}

int sluice_capture_unlink(int dirfd, const char *path, int flags)
{
    struct capture_name n;
    if (!capture_classify(dirfd, path, &n, true))
        return SLUICE_CAPTURE_PASS;
    if (flags & AT_REMOVEDIR)
        return n.vdir ? sluice_capture_rmdir(n.abs) : SLUICE_CAPTURE_PASS;
    if (!n.member)
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    int rc = unlink_member(n.abs);
    sluice_capture_guard_leave();
    return capture_result(rc);
}

/* Copies every byte readable from src (from offset 0) to the current position of fd, in 1 MiB
 * pieces through the real write (a short write goes on). Returns 0 or -errno. */
static int copy_all(int src, int fd)
{
    char *buf = malloc(1 << 20);
    int rc = buf ? 0 : -ENOMEM;
    for (off_t off = 0; rc == 0;) {
        ssize_t n = sluice_pread_retry(src, buf, 1 << 20, (uint64_t)off);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        rc = sluice_full_write(fd, buf, (size_t)n);
        off += n;
    }
    free(buf);
    return rc;
}

/* Writes the bytes readable from src to the real file `dst` atomically (temporary + rename). */
static int materialize(int src, const char *dst)
{
    char tmp[PATH_MAX + 32];
    /* Random, not the pid: nodes sharing the destination's folder have the same pids. */
    snprintf(tmp, sizeof tmp, "%s.sluice-mat.%016llx", dst, sluice_random_u64());
    int fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666 & ~capture_file_umask());
    if (fd < 0)
        return -errno;
    int rc = copy_all(src, fd);
    if (SLUICE_REAL(close)(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && SLUICE_REAL(rename)(tmp, dst) != 0)
        rc = -errno;
    if (rc != 0)
        SLUICE_REAL(unlink)(tmp);
    return rc;
}

/* Stages a new member `to` holding the bytes readable from src, and closes it (so it is
 * committed like any other member). Guard held. */
static int stage_copy(int src, const char *to)
{
    sluice_capture_guard_leave();
    int fd = sluice_capture_openat(AT_FDCWD, to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int e = errno;
    sluice_capture_guard_enter();
    if (fd < 0)
        return -e;
    int rc = copy_all(src, fd);
    if (sluice_capture_close(fd) == SLUICE_CAPTURE_PASS)
        SLUICE_REAL(close)(fd);
    return rc;
}

/* Both names captured and the source open here: the open member simply changes its name. */
static bool rename_open_member(const struct capture_name *from, const struct capture_name *to)
{
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = capture_find_open(from->abs);
    if (m == NULL) {
        pthread_mutex_unlock(&capture_lock);
        return false;
    }
    struct sluice_capture_member *victim = capture_find_open(to->abs);
    if (victim != NULL && victim != m) {
        victim->unlinked = true;
        HASH_DEL(capture_open, victim);
    }
    HASH_DEL(capture_open, m);
    snprintf(m->path, sizeof m->path, "%s", to->abs);
    snprintf(m->set_key, sizeof m->set_key, "%s", to->key);
    m->member_rank = to->rank;
    HASH_ADD_STR(capture_open, path, m);
    capture_forget_closed(from->abs);
    struct sluice_stage_meta sm;
    memset(&sm, 0, sizeof sm);
    capture_fill_staged(m, &sm.m);
    sm.m.size = 0;
    sm.pid = (long)getpid();
    char meta[PATH_MAX];
    memcpy(meta, m->meta_path, sizeof meta);
    pthread_mutex_unlock(&capture_lock);
    sluice_stage_write_meta(meta, &sm);       /* so that recover files it under the new name */
    sluice_commit_member_unlinked(from->abs); /* an older committed version of the old name */
    return true;
}

int sluice_capture_rename(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                          unsigned int flags)
{
    struct capture_name from, to;
    bool f = capture_classify(olddirfd, oldpath, &from, true);
    bool t = capture_classify(newdirfd, newpath, &to, true);
    if ((!f || !from.member) && (!t || !to.member)) {
        if ((f && from.vdir) || (t && to.vdir)) {
            errno = EXDEV; /* per-rank folders are virtual: callers like mv fall back to copying */
            return -1;
        }
        return SLUICE_CAPTURE_PASS;
    }
    bool fm = f && from.member, tm = t && to.member;
    /* The plain side of an import or a materialization still needs its absolute name. */
    if ((!f && capture_resolve(olddirfd, oldpath, from.abs, sizeof from.abs) != 0) ||
        (!t && capture_resolve(newdirfd, newpath, to.abs, sizeof to.abs) != 0)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (flags & ~(unsigned)RENAME_NOREPLACE) {
        errno = EINVAL;
        return -1;
    }
    sluice_capture_guard_enter();
    int rc = 0;
    if (fm && tm && strcmp(from.abs, to.abs) == 0)
        goto out; /* rename to itself: nothing happens */
    if ((flags & RENAME_NOREPLACE) &&
        (tm ? capture_member_exists(to.abs) : SLUICE_REAL(access)(to.abs, F_OK) == 0)) {
        rc = -EEXIST;
        goto out;
    }
    if (fm && tm && rename_open_member(&from, &to))
        goto out;
    int src;
    if (fm) {
        /* Flush what is open so the copy is current, then read the latest version. */
        pthread_mutex_lock(&capture_lock);
        struct sluice_capture_member *m = capture_find_open(from.abs);
        char stage[PATH_MAX];
        if (m != NULL)
            memcpy(stage, m->stage_path, sizeof stage);
        pthread_mutex_unlock(&capture_lock);
        src = m != NULL ? SLUICE_REAL(open)(stage, O_RDONLY | O_CLOEXEC)
                        : capture_open_latest(from.abs, O_RDONLY | O_CLOEXEC);
        if (m != NULL && src < 0)
            src = -errno;
    } else {
        src = SLUICE_REAL(open)(from.abs, O_RDONLY | O_CLOEXEC);
        if (src < 0)
            src = -errno;
        struct stat st;
        if (src >= 0 && (SLUICE_REAL(fstat)(src, &st) != 0 || !S_ISREG(st.st_mode))) {
            SLUICE_REAL(close)(src);
            src = -EXDEV; /* a directory or device never becomes a member */
        }
    }
    if (src < 0) {
        rc = src;
        goto out;
    }
    rc = tm ? stage_copy(src, to.abs) : materialize(src, to.abs);
    SLUICE_REAL(close)(src);
    if (rc == 0)
        rc = fm ? unlink_member(from.abs) : (SLUICE_REAL(unlink)(from.abs) == 0 ? 0 : -errno);
out:
    if (sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_CKPT_RENAME, sluice_trace_string(fm ? from.abs : oldpath),
                             sluice_trace_string(tm ? to.abs : newpath), 0);
    sluice_capture_guard_leave();
    return capture_result(rc);
}

/* A member's new permissions: an open one keeps them for its close (and its sidecar for
 * recover), a closed or committed one is the commit engine's. Guard held. */
static int chmod_member(const char *abs, mode_t mode)
{
    struct sluice_stage_meta sm;
    char meta[PATH_MAX];
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = capture_find_open(abs);
    if (m != NULL) {
        m->mode = mode;
        memset(&sm, 0, sizeof sm);
        capture_fill_staged(m, &sm.m);
        sm.m.size = 0;
        sm.pid = (long)getpid();
        memcpy(meta, m->meta_path, sizeof meta);
    }
    pthread_mutex_unlock(&capture_lock);
    if (m != NULL)
        return sluice_stage_write_meta(meta, &sm);
    return sluice_commit_member_chmod(abs, (unsigned)mode);
}

int sluice_capture_chmod(int dirfd, const char *path, mode_t mode, int flags)
{
    struct capture_name n;
    struct stat st;
    (void)flags;
    if (!capture_classify(dirfd, path, &n, true) || SLUICE_REAL(lstat)(n.abs, &st) == 0)
        return SLUICE_CAPTURE_PASS; /* not captured, or a real file or folder of that name */
    if (n.vdir)
        return capture_vdir_set_attr(n.abs, CAPTURE_VDIR_CHMOD, mode & 07777, 0, NULL);
    sluice_capture_guard_enter();
    int rc = chmod_member(n.abs, mode & 07777);
    sluice_capture_guard_leave();
    return capture_result(rc);
}

int sluice_capture_fchmod(int fd, mode_t mode)
{
    if (!sluice_capture_fd_tracked(fd))
        return SLUICE_CAPTURE_PASS;
    char path[PATH_MAX];
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
    if (m != NULL)
        memcpy(path, m->path, sizeof path);
    pthread_mutex_unlock(&capture_lock);
    if (m == NULL)
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    int rc = chmod_member(path, mode & 07777);
    sluice_capture_guard_leave();
    return capture_result(rc);
}

/* truncate(2) by name: the same as open for writing, ftruncate, close (a new version). */
int sluice_capture_truncate(const char *path, off_t length)
{
    struct capture_name n;
    if (!capture_classify(AT_FDCWD, path, &n, false) || !n.member)
        return SLUICE_CAPTURE_PASS;
    int fd = sluice_capture_openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc = ftruncate(fd, length);
    int e = errno;
    if (sluice_capture_close(fd) == SLUICE_CAPTURE_PASS)
        SLUICE_REAL(close)(fd);
    errno = e;
    return rc;
}

char *sluice_capture_realpath(const char *path, char *resolved, bool *handled)
{
    struct capture_name n;
    *handled = false;
    if (path == NULL || !capture_classify(AT_FDCWD, path, &n, true))
        return NULL;
    sluice_capture_guard_enter();
    bool exists = n.member ? capture_member_exists(n.abs) : capture_vdir_exists(n.abs);
    sluice_capture_guard_leave();
    struct stat st;
    if (!exists || SLUICE_REAL(stat)(n.abs, &st) == 0)
        return NULL; /* missing, or real: glibc's answer is the right one */
    *handled = true;
    if (resolved == NULL)
        return strdup(n.abs);
    snprintf(resolved, PATH_MAX, "%s", n.abs);
    return resolved;
}
