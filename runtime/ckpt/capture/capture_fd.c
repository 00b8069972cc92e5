/* SPDX-License-Identifier: MIT */
/* Descriptors of captured files: close, fclose, the dup family, fsync, and the hand-over of a
 * member to the commit engine when its last descriptor goes away. */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/stage.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

void capture_fill_staged(const struct sluice_capture_member *m, struct sluice_staged_member *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->set_key, m->set_key, sizeof out->set_key);
    memcpy(out->path, m->path, sizeof out->path);
    memcpy(out->stage_path, m->stage_path, sizeof out->stage_path);
    out->member_rank = m->member_rank;
    out->writer_rank = capture_writer_rank;
    out->mode = (unsigned)m->mode;
    struct stat st;
    if (SLUICE_REAL(stat)(m->stage_path, &st) == 0)
        out->size = (uint64_t)st.st_size;
}

static uint64_t closed_since_flush;

void capture_account_closed(uint64_t bytes)
{
    bool flush = false;
    pthread_mutex_lock(&capture_lock);
    closed_since_flush += bytes;
    if (closed_since_flush > sluice_config.STAGE_LIMIT) {
        closed_since_flush = 0;
        flush = true;
    }
    pthread_mutex_unlock(&capture_lock);
    if (flush) {
        /* Past the budget: commit now rather than let the stage folder grow. */
        int rc = sluice_commit_flush_all();
        if (rc != 0)
            sluice_log_warn("checkpoint stage over SLUICE_STAGE_LIMIT and early commit failed: %s",
                            strerror(-rc));
    }
}

/* Listings and per-rank folders know the names closed here. */
static void remember_closed(const char *path)
{
    pthread_mutex_lock(&capture_lock);
    struct capture_closed *c = capture_find_closed(path);
    size_t len = strlen(path);
    if (c == NULL && (c = calloc(1, sizeof *c + len + 1)) != NULL) {
        memcpy(c->path, path, len + 1);
        HASH_ADD_KEYPTR(hh, capture_closed, c->path, len, c);
    }
    if (c != NULL)
        c->seq = ++capture_closed_seq;
    pthread_mutex_unlock(&capture_lock);
}

/* Are the staged bytes still exactly those the member was seeded with? */
static bool member_unchanged(const struct sluice_capture_member *m)
{
    struct stat st;
    if (SLUICE_REAL(stat)(m->stage_path, &st) != 0 || (uint64_t)st.st_size != m->seed_size)
        return false;
    int fd = SLUICE_REAL(open)(m->stage_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    uint64_t size;
    uint32_t crc;
    int rc = capture_fd_crc(fd, &size, &crc);
    SLUICE_REAL(close)(fd);
    return rc == 0 && size == m->seed_size && crc == m->seed_crc;
}

/* Did this result mean that the staging file lacks bytes the program gave it? A short write
 * alone does not (a signal may cut it short): only on a staging file system without room. */
static int staging_loss(int fd, int err)
{
    if (err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO)
        return err;
    struct statfs fs;
    if (err == 0 && SLUICE_REAL(fstatfs)(fd, &fs) == 0 && fs.f_bavail == 0)
        return ENOSPC;
    return 0;
}

int capture_stream_loss(int fd)
{
    int loss = staging_loss(fd, 0);
    return loss ? loss : EIO;
}

void sluice_capture_write_failed(int fd, int err)
{
    int e = errno;
    int loss = staging_loss(fd, err);
    if (loss != 0) {
        pthread_mutex_lock(&capture_lock);
        struct sluice_capture_member *m =
            atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
        if (m != NULL && !m->view && m->stage_err == 0)
            m->stage_err = loss;
        pthread_mutex_unlock(&capture_lock);
    }
    errno = e;
}

/* A version whose staging failed is dropped at its last close, with one line: committing it
 * would put a torn member over the complete previous one (the program saw the error). */
static void drop_failed(struct sluice_capture_member *m)
{
    const char *dir = sluice_stage_dir();
    sluice_log_error("checkpoint member %s not committed: staging it in %s (SLUICE_STAGE_DIR) failed: %s; "
                     "its previous version, if any, stands",
                     m->path, dir ? dir : "the stage folder", strerror(m->stage_err));
    sluice_trace_instant(SLUICE_EV_CKPT_CLOSE, 0, 0, (uint64_t)m->stage_err);
    sluice_stage_remove(m->stage_path, m->meta_path);
}

void capture_member_release(struct sluice_capture_member *m)
{
    if (m->view) { /* nothing staged behind a read view */
        free(m);
        return;
    }
    sluice_capture_guard_enter();
    if (m->unlinked) {
        /* The name was removed while open: this version never reaches the file system. */
        sluice_stage_remove(m->stage_path, m->meta_path);
        free(m);
        sluice_capture_guard_leave();
        return;
    }
    if (m->stage_err != 0) {
        drop_failed(m);
        free(m);
        sluice_capture_guard_leave();
        return;
    }
    if (m->seeded && member_unchanged(m)) {
        /* Closed with the bytes it was opened with: the version it was seeded from stands. */
        sluice_stage_remove(m->stage_path, m->meta_path);
        remember_closed(m->path);
        free(m);
        sluice_capture_guard_leave();
        return;
    }
    struct sluice_stage_meta sm;
    memset(&sm, 0, sizeof sm);
    capture_fill_staged(m, &sm.m);
    sm.closed = 1;
    sm.pid = (long)getpid();
    int rc = sluice_stage_write_meta(m->meta_path, &sm);
    if (rc != 0) /* the data is still staged and described as open: recover will find it */
        sluice_log_warn("%s: cannot mark staged member closed: %s", m->path, strerror(-rc));
    sluice_trace_instant(SLUICE_EV_CKPT_CLOSE, 0, sm.m.size, 0);
    /* The engine first: a listing that finds the name here asks the engine whether it exists. */
    sluice_commit_member_closed(&sm.m);
    remember_closed(m->path);
    free(m);
    capture_account_closed(sm.m.size);
    sluice_capture_guard_leave();
}

int sluice_capture_close(int fd)
{
    if (!sluice_capture_fd_tracked(fd))
        return SLUICE_CAPTURE_PASS;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *last = capture_fd_detach(fd);
    pthread_mutex_unlock(&capture_lock);
    int rc = SLUICE_REAL(close)(fd);
    int e = errno;
    /* A file system that writes back at close (NFS) reports lost bytes here. */
    if (rc != 0 && last != NULL && !last->view && last->stage_err == 0 && e != EINTR && e != EBADF)
        last->stage_err = e;
    if (last != NULL)
        capture_member_release(last);
    errno = e;
    return rc;
}

int sluice_capture_fclose(FILE *stream)
{
    int fd = stream ? fileno(stream) : -1;
    if (!sluice_capture_fd_tracked(fd))
        return SLUICE_CAPTURE_PASS;
    /* A write that failed earlier set the stream's error flag; the flush at fclose may fail
     * too (its buffer never reached the staging file). Either way the version is torn. */
    int torn = ferror(stream) ? capture_stream_loss(fd) : 0;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
    if (m != NULL && m->stream == stream)
        m->stream = NULL;
    struct sluice_capture_member *last = capture_fd_detach(fd);
    pthread_mutex_unlock(&capture_lock);
    int rc = SLUICE_REAL(fclose)(stream); /* flushes into the staging file, then closes fd */
    int e = errno;
    if (last != NULL && !last->view && last->stage_err == 0 && (torn || rc != 0))
        last->stage_err = rc != 0 && e != EBADF ? e : torn;
    if (last != NULL)
        capture_member_release(last);
    errno = e;
    return rc;
}

void sluice_capture_dup_done(int oldfd, int newfd, bool replaced)
{
    if (newfd < 0 || newfd >= sluice_capture_fdtab_size || newfd == oldfd)
        return;
    struct sluice_capture_member *last = NULL;
    pthread_mutex_lock(&capture_lock);
    if (replaced)
        last = capture_fd_detach(newfd); /* dup2/dup3 closed newfd's old file */
    struct sluice_capture_member *m = NULL;
    if (oldfd >= 0 && oldfd < sluice_capture_fdtab_size)
        m = atomic_load_explicit(&sluice_capture_fdtab[oldfd], memory_order_acquire);
    if (m != NULL)
        capture_fd_attach(newfd, m);
    pthread_mutex_unlock(&capture_lock);
    if (last != NULL)
        capture_member_release(last);
}

int sluice_capture_fsync(int fd)
{
    if (!sluice_capture_fd_tracked(fd))
        return SLUICE_CAPTURE_PASS;
    struct sluice_staged_member sm;
    bool found = false;
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
    int failed = 0;
    if (m != NULL && !m->view) {
        capture_fill_staged(m, &sm);
        failed = m->stage_err;
        found = true;
    }
    pthread_mutex_unlock(&capture_lock);
    if (!found)
        return SLUICE_CAPTURE_PASS;
    if (failed != 0) { /* what was written is not all there: never durable */
        errno = failed;
        return -1;
    }
    sluice_capture_guard_enter();
    uint64_t t0 = sluice_trace_active() ? sluice_now_ns() : 0;
    int rc = sluice_commit_member_sync(&sm);
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_CKPT_FSYNC, rc ? SLUICE_EVF_ERROR : 0, t0, sluice_now_ns() - t0,
                            (uint64_t)fd, 0, (uint64_t)-rc);
    sluice_capture_guard_leave();
    return capture_result(rc);
}

void sluice_capture_fix_fstat(int fd, struct stat *st)
{
    pthread_mutex_lock(&capture_lock);
    struct sluice_capture_member *m = atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire);
    if (m != NULL && m->view) {
        const struct stat *v = &m->view_st;
        st->st_dev = v->st_dev;
        st->st_ino = v->st_ino;
        st->st_mode = (st->st_mode & S_IFMT) | (v->st_mode & 07777);
        st->st_nlink = v->st_nlink;
        st->st_uid = v->st_uid;
        st->st_gid = v->st_gid;
        st->st_blksize = v->st_blksize;
        st->st_blocks = v->st_blocks;
        st->st_atim = v->st_atim;
        st->st_mtim = v->st_mtim;
        st->st_ctim = v->st_ctim;
    }
    pthread_mutex_unlock(&capture_lock);
}
