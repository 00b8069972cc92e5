/* SPDX-License-Identifier: MIT */
/* Checkpoint capture, the interception side: the engine behind shim/posix.c, shim/stdio.c,
 * shim/names.c and shim/dirs.c.
 *
 * A captured file (a path matching SLUICE_CAPTURE, see ckpt/commit/pattern.h) is backed by a
 * real staging file (ckpt/commit/stage.h); the program's descriptors point at it, so every data
 * call is the kernel's and is not wrapped. Capture intercepts only the calls that name a path, create or drop
 * descriptors (open family, dup family, close, fclose, freopen), fsync, and the namespace
 * calls (stat, access, unlink, rename, mkdir, directory listings).
 *
 * Every entry point here returns SLUICE_CAPTURE_PASS when the call is not capture's business;
 * the wrapper then calls the real function with its original arguments, untouched. Otherwise
 * the return value is the call's result and errno is set as the real call would set it. */
#ifndef SLUICE_CKPT_CAPTURE_CAPTURE_H
#define SLUICE_CKPT_CAPTURE_CAPTURE_H

#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_CAPTURE_PASS (-1000) /* not a captured path or descriptor: call the real one */

/* True once SLUICE_CAPTURE is set and compiled (constructor at SLUICE_PRIO_CKPT). */
extern bool sluice_capture_enabled;
/* Per-thread re-entrancy depth: calls made by sluice itself (capture's own file work, the
 * commit engine, stdio inside the library) pass through untouched while it is non-zero. */
extern __thread int sluice_capture_guard __attribute__((tls_model("initial-exec")));
/* fd -> captured member; NULL when not captured. Lock-free lookups (atomic loads). */
extern struct sluice_capture_member *_Atomic *sluice_capture_fdtab;
extern int sluice_capture_fdtab_size;

/* The fast test every wrapper makes first. */
static inline bool sluice_capture_on(void)
{
    return __builtin_expect(sluice_capture_enabled, 0) && sluice_capture_guard == 0;
}
static inline bool sluice_capture_fd_tracked(int fd)
{
    return fd >= 0 && fd < sluice_capture_fdtab_size &&
           atomic_load_explicit(&sluice_capture_fdtab[fd], memory_order_acquire) != NULL;
}

/* Guard helpers for sluice's own I/O (also used by the commit engine when it touches files
 * through wrapped calls). */
static inline void sluice_capture_guard_enter(void)
{
    sluice_capture_guard++;
}
static inline void sluice_capture_guard_leave(void)
{
    sluice_capture_guard--;
}

/* ---- descriptors (capture_open.c, capture_fd.c) ----------------------------------------- */

/* open/openat/creat and their 64 and fortify forms. dirfd is AT_FDCWD for the non-at forms. */
int sluice_capture_openat(int dirfd, const char *path, int flags, mode_t mode);
/* fopen/fopen64; freopen/freopen64 (path may be NULL: then PASS unless the stream is captured). */
FILE *sluice_capture_fopen(const char *path, const char *mode, bool *handled);
FILE *sluice_capture_freopen(const char *path, const char *mode, FILE *stream, bool *handled);
int sluice_capture_fclose(FILE *stream); /* PASS if the stream's fd is not captured */
int sluice_capture_close(int fd);        /* PASS if fd is not captured */
/* After the real dup/dup2/dup3/fcntl(F_DUPFD*) returned newfd for oldfd (newfd's previous
 * open file, if captured, was implicitly closed by dup2/dup3). */
void sluice_capture_dup_done(int oldfd, int newfd, bool replaced);
int sluice_capture_fsync(int fd); /* PASS if fd is not captured */
/* A write-family call on captured fd failed with err (its errno), or wrote less than asked
 * (err 0). Where staging ran out of room (ENOSPC, EDQUOT, EFBIG, EIO, or a short write on a
 * full stage folder), the member's version is marked failed: at its last close it is dropped
 * with one line, never committed (its previous version stands), and fsync fails. Keeps errno. */
void sluice_capture_write_failed(int fd, int err);
/* After a successful fstat of a tracked fd: a read view of a committed member reports the
 * device and inode that stat() of its name reports. */
void sluice_capture_fix_fstat(int fd, struct stat *st);

/* ---- names (capture_names.c) ------------------------------------------------------------- */

/* stat family: fills a struct stat (statx callers convert). flags: AT_SYMLINK_NOFOLLOW,
 * AT_EMPTY_PATH as for fstatat. */
int sluice_capture_stat(int dirfd, const char *path, struct stat *st, int flags);
int sluice_capture_access(int dirfd, const char *path, int mode, int flags);
int sluice_capture_unlink(int dirfd, const char *path, int flags); /* unlinkat flags */
int sluice_capture_rename(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                          unsigned int flags);
int sluice_capture_mkdir(int dirfd, const char *path, mode_t mode);
int sluice_capture_truncate(const char *path, off_t length); /* truncate(2) by name */
/* chmod/fchmodat of a member name, fchmod of a captured descriptor: the member's permissions
 * change (its staging file stays 0600). */
int sluice_capture_chmod(int dirfd, const char *path, mode_t mode, int flags);
int sluice_capture_fchmod(int fd, mode_t mode); /* PASS if fd is not captured */
/* realpath of an existing member or virtual folder: its lexical absolute name (malloc'ed when
 * resolved is NULL). Sets *handled false when the name is none of capture's business. */
char *sluice_capture_realpath(const char *path, char *resolved, bool *handled);
int sluice_capture_rmdir(const char *path);
/* chdir/fchdir succeeded: refresh the cached working directory. */
void sluice_capture_cwd_changed(void);

/* ---- directory listings (capture_dirs.c) ------------------------------------------------- */

/* opendir/fdopendir of a folder that may hold captured names (or a virtual per-rank folder).
 * Returns PASS-equivalent NULL with *handled false when the folder is none of capture's
 * business. The DIR* returned is real (over the real folder, or an empty one for a virtual
 * folder); readdir merges the virtual entries in. */
DIR *sluice_capture_opendir(const char *path, bool *handled);
/* fdopendir: the same listing for a descriptor of such a folder (or of a virtual folder). */
DIR *sluice_capture_fdopendir(int fd, bool *handled);
/* readdir/readdir64: NULL with *handled false when d carries no virtual entries. */
struct dirent *sluice_capture_readdir(DIR *d, bool *handled);
int sluice_capture_closedir(DIR *d);   /* PASS if d carries no virtual entries */
void sluice_capture_rewinddir(DIR *d); /* resets the virtual entries too */
/* true if opendir of this path would be handled (scandir/glob decide whether to take over). */
bool sluice_capture_dir_is_mine(const char *path);

/* Tells the commit engine (sluice_commit_member_opened) about every member this process
 * holds open for writing; the engine calls it (a hook registered with sluice_commit_set_client)
 * when it starts, for what was opened before. */
void sluice_capture_announce_open(void);

/* ---- virtual folders as the kernel sees them (capture_standin.c) -------------------------- */

struct statfs;
struct statvfs;
/* Some pattern has per-rank folders (set once at start). */
extern bool sluice_capture_vdirs;
const char *sluice_capture_kpath_slow(int dirfd, const char *path, char *buf);
/* The name to give the kernel for (dirfd, path) in a call that capture passed on: path itself,
 * unless the walk goes through a virtual folder (the working directory, dirfd, or a component
 * followed by more, as in "rank3/.."); then its absolute, lexically resolved form in buf
 * (PATH_MAX bytes), which the kernel resolves without dirfd. */
static inline const char *sluice_capture_kpath(int dirfd, const char *path, char *buf)
{
    return sluice_capture_vdirs && sluice_capture_on() ? sluice_capture_kpath_slow(dirfd, path, buf) : path;
}
/* chown/lchown/fchownat and the utimensat family of a virtual folder: its mode, owner and times
 * are its marker's (capture_vdirs.c). PASS for any other name. */
int sluice_capture_vdir_chown(int dirfd, const char *path, uid_t uid, gid_t gid);
int sluice_capture_vdir_utimens(int dirfd, const char *path, const struct timespec ts[2]);
/* chdir to an existing virtual folder: its stand-in becomes the working directory. */
int sluice_capture_chdir(const char *path);
/* statfs/statvfs of a virtual folder: the file system of the real folder above it. */
int sluice_capture_statfs(const char *path, struct statfs *sf);
int sluice_capture_statvfs(const char *path, struct statvfs *sv);
/* readlink of a member or virtual folder: EINVAL (not a link), ENOENT if it does not exist. */
ssize_t sluice_capture_readlink(int dirfd, const char *path);
/* fstat of a folder: a descriptor of a virtual folder (its stand-in) reports what stat of the
 * folder's name reports. */
void sluice_capture_fix_dir_fstat(int fd, struct stat *st);
/* getcwd when the working directory is a virtual folder (else *handled false). */
char *sluice_capture_getcwd(char *buf, size_t size, bool *handled);

/* ---- exit ---------------------------------------------------------------------------------- */

/* Flushes stdio and reports every member still open as closed (the process is ending: its
 * descriptors die with it). Runs from capture's destructor before the commit engine's exit
 * flush; the commit engine calls it (a registered hook) first thing in its own exit/finalize
 * path too (it is idempotent and cheap when nothing is open). */
void sluice_capture_close_all(void);

/* _exit/_Exit called by the program itself (dash ends every shell that way, after its
 * redirections staged members): report what is open and commit what this process staged,
 * since neither destructors nor atexit handlers will run. Does nothing in a vfork child
 * (it shares the parent's memory and must only exec or _exit), in a process that never
 * staged anything, or from inside sluice.
 * Returns the status to exit with: `status`, or 1 instead of 0 when the commit failed. */
int sluice_capture_before_exit(int status);

#ifdef __cplusplus
}
#endif
#endif
