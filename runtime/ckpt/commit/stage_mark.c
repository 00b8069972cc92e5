/* SPDX-License-Identifier: MIT */
/* The exec mark of the stage folder (stage.h): m-<host>-<pid>-exec exists while this process may
 * have staged members that no commit has taken yet. Made before the process's first staging file,
 * removed at its exit; exec keeps the pid and skips the exit, so the next image finds it. An image
 * that finds none looks for nothing inherited: most processes of a job step stage nothing, and the
 * look (every descriptor's link in /proc/self/fd, every name of the stage folder) cost them more
 * than the rest of capture's start. A mark left by a killed process costs the next process of
 * that pid one such look, and `sluice-ckpt recover` removes it. Atomics only, no lock: a fork
 * child (another pid) makes its own mark, and two threads that make it at once make one file. */
#include "ckpt/commit/stage.h"

#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The pid whose mark this image knows to exist (made or found), 0 if none: only that process
 * removes it, so a fork child never removes its parent's. */
static atomic_long marked_pid;

static int mark_path(const char *dir, char *path)
{
    char prefix[SLUICE_STAGE_PREFIX_MAX];
    sluice_stage_prefix(prefix, (long)getpid());
    return snprintf(path, PATH_MAX, "%s/%s%s", dir, prefix, SLUICE_STAGE_EXEC_MARK) < PATH_MAX
               ? 0
               : -ENAMETOOLONG;
}

int sluice_stage_mark_exec(void)
{
    long pid = (long)getpid();
    if (atomic_load_explicit(&marked_pid, memory_order_acquire) == pid)
        return 0;
    const char *dir = sluice_stage_dir();
    char path[PATH_MAX];
    if (dir == NULL)
        return -errno;
    int rc = mark_path(dir, path);
    if (rc != 0)
        return rc;
    /* Not O_EXCL: the mark the previous image of this pid left (or a killed process's) will do. */
    int fd = SLUICE_REAL(open)(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    SLUICE_REAL(close)(fd);
    atomic_store_explicit(&marked_pid, pid, memory_order_release);
    return 0;
}

bool sluice_stage_exec_marked(void)
{
    static atomic_long looked_pid;
    static atomic_bool found;
    long pid = (long)getpid();
    if (atomic_load_explicit(&looked_pid, memory_order_acquire) == pid)
        return atomic_load_explicit(&found, memory_order_relaxed);
    /* The folder is not made for this: where it does not exist, no image of this pid staged. */
    const char *dir = sluice_stage_dir_name();
    char path[PATH_MAX];
    struct stat st;
    bool there = true; /* in doubt, look */
    if (dir != NULL && mark_path(dir, path) == 0 &&
        syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
        (errno == ENOENT || errno == ENOTDIR))
        there = false;
    if (there && dir != NULL)
        atomic_store_explicit(&marked_pid, pid, memory_order_release); /* this image's to remove now */
    atomic_store_explicit(&found, there, memory_order_relaxed);
    atomic_store_explicit(&looked_pid, pid, memory_order_release);
    return there;
}

void sluice_stage_unmark_exec(void)
{
    long pid = (long)getpid();
    const char *dir = sluice_stage_dir_name();
    char path[PATH_MAX];
    if (atomic_load_explicit(&marked_pid, memory_order_acquire) != pid || dir == NULL ||
        mark_path(dir, path) != 0)
        return;
    SLUICE_REAL(unlink)(path);
    atomic_store_explicit(&marked_pid, 0, memory_order_release);
}
