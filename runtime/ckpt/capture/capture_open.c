/* SPDX-License-Identifier: MIT */
/* Opening captured paths: for writing, a new staging file (seeded with the latest bytes unless
 * truncated); for reading, the program's own staged bytes, else the committed version, else the
 * real file. fopen and freopen route their names through the same path. */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "common/full_io.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Flags that only matter when a name is created; the staging file is created by capture. */
#define CREATE_FLAGS (O_CREAT | O_EXCL | O_TRUNC)

int capture_open_latest(const char *abs, int flags)
{
    /* A version this process closed is served by the commit engine too: it owns the staging
     * file from the close on and reads it under its own lock, so a read never races with
     * the commit that retires it. */
    int rflags = flags & ~CREATE_FLAGS;
    int fd = sluice_commit_open_member(abs, rflags);
    if (fd != -ENOENT)
        return fd;
    fd = SLUICE_REAL(open)(abs, rflags);
    return fd >= 0 ? fd : -errno;
}

bool capture_member_exists(const char *abs)
{
    struct stat st;
    return capture_member_stat(abs, &st) == 0;
}

/* May a new member be created in the directory of `abs`? The errno the program would get. */
static int check_parent(const char *abs)
{
    char dir[PATH_MAX];
    size_t len = (size_t)(strrchr(abs, '/') - abs);
    if (len == 0)
        len = 1;
    memcpy(dir, abs, len);
    dir[len] = '\0';
    struct stat st;
    if (SLUICE_REAL(stat)(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT && sluice_pattern_match_dir(&capture_patterns, dir, NULL))
            return capture_vdir_exists(dir) ? 0 : -ENOENT;
        return -e;
    }
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (SLUICE_REAL(faccessat)(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return -errno;
    return 0;
}

/* Copies src into dst from offset 0 and returns the copy's size and CRC32C. */
static int copy_fd(int src, int dst, uint64_t *size, uint32_t *crc)
{
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK);
    if (buf == NULL)
        return -ENOMEM;
    off_t off = 0;
    uint32_t c = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = sluice_pread_retry(src, buf, CHUNK, (uint64_t)off);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        c = sluice_crc32c_update(c, buf, (size_t)n);
        if ((rc = sluice_full_pwrite(dst, buf, (size_t)n, (uint64_t)off)) != 0)
            break;
        off += n;
    }
    free(buf);
    *size = (uint64_t)off;
    *crc = c;
    return rc;
}

int capture_fd_crc(int fd, uint64_t *size, uint32_t *crc)
{
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK);
    if (buf == NULL)
        return -ENOMEM;
    uint64_t off = 0;
    uint32_t c = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = sluice_pread_retry(fd, buf, CHUNK, off);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        c = sluice_crc32c_update(c, buf, (size_t)n);
        off += (uint64_t)n;
    }
    free(buf);
    *size = off;
    *crc = c;
    return rc;
}

static int open_staged_again(struct sluice_capture_member *m, int flags)
{
    int fd = SLUICE_REAL(open)(m->stage_path, flags & ~(O_CREAT | O_EXCL));
    if (fd < 0)
        return -errno;
    if (fd >= sluice_capture_fdtab_size) {
        SLUICE_REAL(close)(fd);
        return -EMFILE;
    }
    capture_fd_attach(fd, m);
    return fd;
}

/* Opens the latest version for reading and, when the commit engine serves it, registers the
 * descriptor as a read view carrying the identity stat() gave (st) for the name. */
static int open_view(const char *abs, int flags, const struct stat *st)
{
    int fd = capture_open_latest(abs, flags);
    if (fd < 0 || fd >= sluice_capture_fdtab_size)
        return fd;
    struct stat got;
    if (SLUICE_REAL(fstat)(fd, &got) != 0 || (got.st_dev == st->st_dev && got.st_ino == st->st_ino))
        return fd; /* the real file itself: nothing to reconcile */
    struct sluice_capture_member *v = calloc(1, sizeof *v);
    if (v == NULL)
        return fd;
    v->view = true;
    v->view_st = *st;
    snprintf(v->path, sizeof v->path, "%s", abs);
    pthread_mutex_lock(&capture_lock);
    capture_fd_attach(fd, v);
    pthread_mutex_unlock(&capture_lock);
    return fd;
}

/* Opens member n with open(2) flags; returns a descriptor or -errno. Guard held. */
static int open_member(const struct capture_name *n, int flags, mode_t mode)
{
    int acc = flags & O_ACCMODE;
    bool writes = acc != O_RDONLY;
    for (;;) {
        pthread_mutex_lock(&capture_lock);
        struct sluice_capture_member *m = capture_find_open(n->abs);
        if (m != NULL) {
            int fd =
                (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) ? -EEXIST : open_staged_again(m, flags);
            pthread_mutex_unlock(&capture_lock);
            return fd;
        }
        pthread_mutex_unlock(&capture_lock);

        struct stat old;
        bool exists = capture_member_stat(n->abs, &old) == 0;
        if (!writes && (exists || !(flags & O_CREAT)))
            return exists ? open_view(n->abs, flags, &old) : capture_open_latest(n->abs, flags);
        if (exists && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
            return -EEXIST;
        if (!exists && !(flags & O_CREAT))
            return -ENOENT;
        if (!exists) {
            int rc = check_parent(n->abs);
            if (rc != 0)
                return rc;
        }
        int src = -1;
        if (exists && !(flags & O_TRUNC)) {
            src = capture_open_latest(n->abs, O_RDONLY | O_CLOEXEC);
            if (src < 0)
                return src;
        }
        struct sluice_capture_member *nm = calloc(1, sizeof *nm);
        if (nm == NULL) {
            if (src >= 0)
                SLUICE_REAL(close)(src);
            return -ENOMEM;
        }
        if (capture_writer_rank < 0)
            capture_writer_rank = sluice_launch_rank();
        snprintf(nm->path, sizeof nm->path, "%s", n->abs);
        snprintf(nm->set_key, sizeof nm->set_key, "%s", n->key);
        nm->member_rank = n->rank;
        /* The permissions the program asked for (or the old file's), as the kernel would give
         * them; the umask as it is now, since the program may have changed it. */
        nm->mode = exists ? (old.st_mode & 07777) : (mode & 07777 & ~(mode_t)sluice_process_umask());
        struct sluice_staged_member sm;
        capture_fill_staged(nm, &sm); /* stage_path still empty: size 0 */
        int sfd = sluice_stage_create(&sm, nm->stage_path, nm->meta_path);
        if (sfd < 0) {
            /* The program sees the errno (as for a full disk); the user learns why, once. */
            static atomic_bool told;
            if (!atomic_exchange(&told, true)) {
                char dflt[64];
                sluice_stage_default_dir(dflt, sizeof dflt);
                const char *cfg = sluice_config.STAGE_DIR;
                sluice_log_error("cannot stage checkpoint member %s in the stage folder %s "
                                 "(SLUICE_STAGE_DIR): %s",
                                 n->abs, cfg && cfg[0] ? cfg : dflt, strerror(-sfd));
            }
            if (src >= 0)
                SLUICE_REAL(close)(src);
            free(nm);
            return sfd;
        }
        int rc = 0;
        if (src >= 0) {
            rc = copy_fd(src, sfd, &nm->seed_size, &nm->seed_crc);
            nm->seeded = rc == 0;
            SLUICE_REAL(close)(src);
        }
        SLUICE_REAL(close)(sfd);
        int fd = rc != 0 ? rc : SLUICE_REAL(open)(nm->stage_path, flags & ~CREATE_FLAGS);
        if (fd < 0 || fd >= sluice_capture_fdtab_size) {
            rc = fd < 0 ? (rc != 0 ? rc : -errno) : -EMFILE;
            if (fd >= 0)
                SLUICE_REAL(close)(fd);
            sluice_stage_remove(nm->stage_path, nm->meta_path);
            free(nm);
            return rc;
        }
        pthread_mutex_lock(&capture_lock);
        if (capture_find_open(n->abs) != NULL) {
            /* Another thread staged the same path meanwhile: use its member, drop ours. */
            pthread_mutex_unlock(&capture_lock);
            SLUICE_REAL(close)(fd);
            sluice_stage_remove(nm->stage_path, nm->meta_path);
            free(nm);
            continue;
        }
        HASH_ADD_STR(capture_open, path, nm);
        capture_fd_attach(fd, nm);
        pthread_mutex_unlock(&capture_lock);
        sluice_commit_member_opened(n->key); /* an fsync of the set gathers this rank too */
        return fd;
    }
}

/* An O_PATH or O_DIRECTORY open of a member name: the answers a real file would give (cp and
 * mv probe their target with O_PATH|O_DIRECTORY and take ENOENT for "no such file, create it
 * with O_EXCL"). A real file of that name, or none at all, is the kernel's to answer. Guard
 * held. */
static int open_probe(const struct capture_name *n, int flags)
{
    struct stat st;
    if (SLUICE_REAL(lstat)(n->abs, &st) == 0 || capture_member_stat(n->abs, &st) != 0)
        return SLUICE_CAPTURE_PASS;
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = capture_find_open(n->abs);
    int fd = m != NULL ? open_staged_again(m, flags) : SLUICE_CAPTURE_PASS;
    pthread_mutex_unlock(&capture_lock);
    /* Not open here: a read view stands in for the path descriptor (fstat agrees with stat). */
    return m != NULL ? fd : open_view(n->abs, O_RDONLY | (flags & O_CLOEXEC), &st);
}

int sluice_capture_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    struct capture_name n;
    if (!capture_classify(dirfd, path, &n, true))
        return SLUICE_CAPTURE_PASS;
    if (n.vdir)
        return capture_open_vdir(&n, flags); /* a descriptor of a virtual folder */
    sluice_capture_guard_enter();
    int fd = (flags & (O_PATH | O_DIRECTORY)) ? open_probe(&n, flags) : open_member(&n, flags, mode);
    if (fd == SLUICE_CAPTURE_PASS) {
        sluice_capture_guard_leave();
        return fd;
    }
    if (sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_CKPT_OPEN, sluice_trace_string(n.abs), (uint64_t)flags, (uint64_t)fd);
    sluice_capture_guard_leave();
    if (fd < 0) {
        errno = -fd;
        return -1;
    }
    return fd;
}

/* fopen mode -> open flags, and the mode string fdopen/freopen accept (without 'x').
 * Returns false for a mode fopen would reject (the real call then reports EINVAL). */
static bool parse_fopen_mode(const char *mode, int *flags, char *plain, size_t cap)
{
    int f;
    switch (mode[0]) {
    case 'r':
        f = O_RDONLY;
        break;
    case 'w':
        f = O_WRONLY | O_CREAT | O_TRUNC;
        break;
    case 'a':
        f = O_WRONLY | O_CREAT | O_APPEND;
        break;
    default:
        return false;
    }
    size_t o = 0;
    for (const char *c = mode; *c && o + 1 < cap; c++) {
        if (*c == '+')
            f = (f & ~O_ACCMODE) | O_RDWR;
        else if (*c == 'x')
            f |= O_EXCL;
        else if (*c == 'e')
            f |= O_CLOEXEC;
        if (*c != 'x')
            plain[o++] = *c;
        if (*c == ',')
            break; /* ",ccs=..." */
    }
    plain[o] = '\0';
    *flags = f;
    return true;
}

/* Remembers the stream made over a member's descriptor (for the exit flush's errors). */
static void set_stream(int fd, FILE *fp)
{
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
    if (m != NULL && !m->view)
        m->stream = fp;
    pthread_mutex_unlock(&capture_lock);
}

FILE *sluice_capture_fopen(const char *path, const char *mode, bool *handled)
{
    struct capture_name n;
    int flags;
    char plain[32];
    *handled = false;
    if (mode == NULL || !capture_classify(AT_FDCWD, path, &n, false) || !n.member ||
        !parse_fopen_mode(mode, &flags, plain, sizeof plain))
        return NULL;
    *handled = true;
    sluice_capture_guard_enter();
    int fd = open_member(&n, flags, 0666);
    FILE *fp = NULL;
    int e = fd < 0 ? -fd : 0;
    if (fd >= 0) {
        fp = SLUICE_REAL(fdopen)(fd, plain);
        if (fp != NULL)
            set_stream(fd, fp);
        if (fp == NULL) {
            e = errno;
            sluice_capture_guard_leave();
            if (sluice_capture_close(fd) == SLUICE_CAPTURE_PASS)
                SLUICE_REAL(close)(fd);
            sluice_capture_guard_enter();
        }
    }
    sluice_capture_guard_leave();
    if (fp == NULL)
        errno = e;
    return fp;
}

FILE *sluice_capture_freopen(const char *path, const char *mode, FILE *stream, bool *handled)
{
    int oldfd = stream ? fileno(stream) : -1;
    bool old_tracked = sluice_capture_fd_tracked(oldfd);
    struct capture_name n;
    int flags;
    char plain[32];
    bool new_member = path != NULL && mode != NULL && capture_classify(AT_FDCWD, path, &n, false) &&
                      n.member && parse_fopen_mode(mode, &flags, plain, sizeof plain);
    *handled = new_member || old_tracked;
    if (!*handled)
        return NULL;
    if (path == NULL) {
        /* Same file, new mode: glibc reopens it on another descriptor and closes the old one
         * internally. The member stays open; move the descriptor's entry over. */
        FILE *fp = SLUICE_REAL(freopen)(NULL, mode, stream);
        int e = errno;
        int nfd = fp ? fileno(fp) : -1;
        struct sluice_capture_member *last = NULL;
        pthread_mutex_lock(&capture_lock);
        struct sluice_capture_member *m =
            atomic_load_explicit(&sluice_capture_fdtab[oldfd], memory_order_acquire);
        if (m != NULL && nfd != oldfd) {
            if (nfd >= 0 && nfd < sluice_capture_fdtab_size)
                capture_fd_attach(nfd, m);
            last = capture_fd_detach(oldfd);
        }
        pthread_mutex_unlock(&capture_lock);
        if (last != NULL)
            capture_member_release(last);
        errno = e;
        return fp;
    }
    sluice_capture_guard_enter();
    int fd = -1;
    if (new_member) {
        fd = open_member(&n, flags, 0666);
        if (fd < 0) {
            sluice_capture_guard_leave();
            errno = -fd;
            return NULL; /* like freopen, the stream is left unusable only on success paths */
        }
    }
    struct sluice_capture_member *last = NULL;
    if (old_tracked) {
        pthread_mutex_lock(&capture_lock);
        last = capture_fd_detach(oldfd);
        pthread_mutex_unlock(&capture_lock);
    }
    FILE *fp;
    if (new_member) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        fp = SLUICE_REAL(freopen)(proc, plain, stream);
    } else {
        fp = SLUICE_REAL(freopen)(path, mode, stream);
    }
    int e = errno;
    if (fp != NULL && fd >= 0) {
        int nfd = fileno(fp);
        pthread_mutex_lock(&capture_lock);
        struct sluice_capture_member *m =
            atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
        if (m != NULL && nfd >= 0 && nfd < sluice_capture_fdtab_size) {
            capture_fd_attach(nfd, m);
            m->stream = fp;
        }
        pthread_mutex_unlock(&capture_lock);
    }
    if (fd >= 0) {
        sluice_capture_guard_leave();
        if (sluice_capture_close(fd) == SLUICE_CAPTURE_PASS)
            SLUICE_REAL(close)(fd);
        sluice_capture_guard_enter();
    }
    if (last != NULL)
        capture_member_release(last);
    sluice_capture_guard_leave();
    errno = e;
    return fp;
}
