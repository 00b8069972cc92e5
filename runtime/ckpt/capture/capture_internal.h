/* SPDX-License-Identifier: MIT */
/* State shared by the capture engine's files (capture*.c); not a contract for other parts.
 *
 * Invariants:
 *  - An open member is one captured path that this process has staged and that still has at
 *    least one program descriptor (open, dup'ed, or under a FILE*). All descriptors that refer
 *    to it, whatever open file description they belong to, point at the same member in the fd
 *    table; the member is closed (handed to the commit engine) when `fds` drops to 0.
 *  - Open members are keyed by absolute path in `capture_open`; an unlinked member leaves the
 *    table at once (its name is gone) but lives until its last descriptor closes.
 *  - `capture_closed` remembers the paths of versions this process closed, for listings and
 *    per-rank folder existence; their bytes and sizes are read through the commit engine,
 *    which owns the staging file from the close on. Another process may unlink or rename
 *    them: an entry counts only while the commit engine still has the member
 *    (capture_closed_below), as stat does.
 *  - Everything here is protected by capture_lock, except fd table lookups (atomic loads) and
 *    the cwd digit flag. The lock is never held across a call into the commit engine. */
#ifndef SLUICE_CKPT_CAPTURE_CAPTURE_INTERNAL_H
#define SLUICE_CKPT_CAPTURE_CAPTURE_INTERNAL_H

#include "ckpt/capture/capture.h"
#include "ckpt/commit/commit.h"
#include "ckpt/commit/pattern.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <uthash.h>

struct sluice_capture_member {
    char path[PATH_MAX];
    char set_key[PATH_MAX];
    int member_rank;
    mode_t mode; /* the permissions the program's file would have (its staging file is 0600) */
    char stage_path[PATH_MAX];
    char meta_path[PATH_MAX];
    int fds;       /* program descriptors referring to it */
    bool unlinked; /* the name was removed while open: discard at last close */
    /* A read view: a descriptor served by the commit engine (a committed or closed version).
     * Not in `capture_open`; only carries what stat() reported for the name at the open, so
     * that fstat() on the descriptor agrees with it (cp checks the identity, tar the mode). */
    bool view;
    struct stat view_st;
    /* Seeded with an existing version's bytes (opened for writing without O_TRUNC): if it is
     * closed with exactly those bytes, no new version is made (a restart that opens its
     * checkpoint read-write without writing must not rewrite it). */
    bool seeded;
    uint64_t seed_size;
    uint32_t seed_crc;
    /* Staging this version failed (-errno's value, e.g. ENOSPC): never committed. */
    int stage_err;
    /* The stream fopen/freopen made over it, if any: its error flag after the exit flush says
     * whether buffered bytes reached the staging file. */
    FILE *stream;
    UT_hash_handle hh;
};

struct capture_closed {
    UT_hash_handle hh;
    uint64_t seq; /* capture_closed_seq at its last close: a stale entry is dropped only if unchanged */
    char path[];  /* sized to the path: one entry per name ever closed here */
};

struct capture_vdir {
    char path[PATH_MAX];
    UT_hash_handle hh;
};

extern pthread_mutex_t capture_lock;
extern struct sluice_capture_member *capture_open;
extern struct capture_closed *capture_closed;
extern uint64_t capture_closed_seq;
extern struct capture_vdir *capture_vdirs;
extern struct sluice_pattern_set capture_patterns;
extern int capture_writer_rank;
/* The umask for names capture makes (staging temporaries, virtual folders), read at first need. */
mode_t capture_file_umask(void);

/* A path as the program named it, classified. */
struct capture_name {
    char abs[PATH_MAX]; /* absolute, normalized */
    char key[PATH_MAX];
    int rank;
    bool member; /* matches a pattern: a captured member */
    bool vdir;   /* a per-rank directory of a pattern (virtual unless it really exists) */
};

/* Resolves and classifies `path` relative to dirfd. Returns false when the path is certainly
 * none of capture's business (the fast filter rejected it, or it is a container name).
 * want_dir: the call may concern a virtual per-rank folder (stat, mkdir, ...); open does not,
 * and skips that check. */
bool capture_classify(int dirfd, const char *path, struct capture_name *n, bool want_dir);
/* Absolute, normalized form of path relative to dirfd (AT_FDCWD: the cached cwd). 0 or -1. */
int capture_resolve(int dirfd, const char *path, char *abs, size_t cap);

/* Member lookups (lock held). */
struct sluice_capture_member *capture_find_open(const char *abs);
struct capture_closed *capture_find_closed(const char *abs);
void capture_forget_closed(const char *abs); /* lock held */
/* Calls fn(arg, path) for every version this process closed below folder `dir` (its first len
 * bytes; 0 for "/") that still exists as stat sees it (not unlinked or renamed away since, by
 * any process); stale entries are forgotten. Stops at the first fn that returns non-zero. Lock
 * not held. */
void capture_closed_below(const char *dir, size_t len, int (*fn)(void *arg, const char *path), void *arg);

/* Opens the latest readable version of a member that this process does not hold open: the
 * commit engine's (own closed, staged elsewhere on the node, or committed), else the real
 * file. fd or -errno. */
int capture_open_latest(const char *abs, int flags);
/* Does a version of the member exist anywhere (open here, closed here, committed, real)? */
bool capture_member_exists(const char *abs);
/* Size and mtime of the latest version; 0 or -errno (lock not held). */
int capture_member_stat(const char *abs, struct stat *st);

/* Virtual per-rank folders (capture_vdirs.c). Exists: real, marked (mkdir'ed by any process,
 * not yet rmdir'ed), or holding members. */
bool capture_vdir_exists(const char *abs);
/* stat of an existing virtual folder: a folder on its real parent's device, with the mode,
 * owner and times of its mkdir (its marker) and a stable inode number. */
void capture_vdir_stat(const char *abs, struct stat *st);
/* The nearest real ancestor of a virtual folder (where its sets' containers and its marker
 * live); out has PATH_MAX bytes. */
void capture_vdir_root(const char *abs, char *out);
/* Marks `abs` as existing (after its last member went) unless it is real or marked. */
void capture_vdir_keep(const char *abs);
/* chmod, chown and utimensat of an existing virtual folder act on its marker (made if missing),
 * whose mode, owner and times stat reports. 0, or -1 with errno. */
enum capture_vdir_attr { CAPTURE_VDIR_CHMOD, CAPTURE_VDIR_CHOWN, CAPTURE_VDIR_UTIMENS };
int capture_vdir_set_attr(const char *abs, enum capture_vdir_attr what, unsigned a, unsigned b,
                          const struct timespec *ts);
/* lstat of the folder's marker: 0, or -1 if unmarked. */
int capture_vdir_marker_stat(const char *abs, struct stat *st);
/* Is this directory entry a marker? Its folder's path relative to the marker's folder. */
bool capture_vdir_is_marker(const char *name);
int capture_vdir_marker_decode(const char *name, char *rel, size_t cap);
/* Stand-ins (capture_standin.c): the real, empty folder the kernel sees for virtual folder v.
 * The working directory is a virtual folder (a stand-in). */
extern atomic_bool capture_cwd_virtual;
/* v's stand-in, made if missing, in out (PATH_MAX). 0 or -errno. */
int capture_standin_of(const char *v, char *out);
/* The virtual folder a real path (a stand-in, from getcwd or /proc/self/fd) stands for. */
bool capture_standin_decode(const char *real, char *v, size_t cap);
void capture_standin_drop(const char *v); /* after rmdir of v; best effort */
/* open of an existing virtual folder: a descriptor of its stand-in (fd, or -1 and errno), or
 * SLUICE_CAPTURE_PASS when it does not exist or is real. */
int capture_open_vdir(const struct capture_name *n, int flags);
/* Calls fn(arg, path) for every committed member below folder `dir` (its first len bytes; 0
 * for "/") in the containers of folder `root`, leaving out members that the index still lists
 * but that were unlinked since (the commit engine says). Stops at the first fn that returns
 * non-zero. (capture_dirs.c) */
void capture_scan_committed_below(const char *root, const char *dir, size_t len,
                                  int (*fn)(void *arg, const char *path), void *arg);
/* The folder part of an absolute path ("/" for "/x"); out has PATH_MAX bytes. */
void capture_parent_of(const char *abs, char *out);

/* Fills a sluice_staged_member from an open member (size from the staging file). */
void capture_fill_staged(const struct sluice_capture_member *m, struct sluice_staged_member *out);
/* The member's last descriptor is gone: hand it to the commit engine (or discard it if
 * unlinked) and free it. Lock NOT held. */
void capture_member_release(struct sluice_capture_member *m);
/* Detaches fd from the fd table (lock held). Returns the member if fd was its last. */
struct sluice_capture_member *capture_fd_detach(int fd);
/* Registers fd for member m (lock held). */
void capture_fd_attach(int fd, struct sluice_capture_member *m);

/* Why a captured stream's error flag is set (its fd still open): ENOSPC on a full stage
 * folder, else EIO. */
int capture_stream_loss(int fd);

/* CRC32C and size of fd's bytes from offset 0 (pread, so the position is kept). 0 or -errno. */
int capture_fd_crc(int fd, uint64_t *size, uint32_t *crc);

/* Bytes closed since the last early commit; past SLUICE_STAGE_LIMIT the commit is asked to
 * flush. */
void capture_account_closed(uint64_t bytes);

/* A wrapper's answer from rc (0 or -errno): 0, or -1 with errno set, as libc answers. */
static inline int capture_result(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return 0;
}

#endif
