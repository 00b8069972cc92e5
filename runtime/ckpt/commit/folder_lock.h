/* SPDX-License-Identifier: MIT */
/* The lock on a container folder (docs/COMMIT.md, "Jobs of one process"; docs/CLUSTER.md):
 * whoever reads a set's previous version and renames its next one holds it, so that two
 * committers of one set (two jobs, a job and `sluice-ckpt recover`, a forked child) never lose
 * each other's members. The folder may be on a parallel file system seen by several nodes,
 * whose flock need not be coherent across them (NFS without a lock manager, FUSE file systems,
 * Lustre's localflock): the lock is a file, DIR/.sluice.lock, which appears whole, its owner
 * line (host id, pid and the process's start in clock ticks since boot) already in it: the line
 * is written to DIR/.sluice.lock.<host>-<pid>-<tid> and that file linked to the lock's name,
 * which, like O_CREAT|O_EXCL, fails where the name exists, on such file systems too (without
 * hard links the lock is created with O_EXCL and written after).
 *
 * Stale-owner rule: a lock of this host whose process is gone is stale at once; any lock not
 * touched for SLUICE_FOLDER_LOCK_STALE_S seconds (its mtime against this host's clock) is
 * stale, whoever owns it: a holder touches it every SLUICE_FOLDER_LOCK_TOUCH_S seconds while
 * it commits. A stale lock is removed by one breaker at a time, under DIR/.sluice.lock.break,
 * after judging it again there (folder_lock.c, break_stale). Used by the engine (SLUICE_REAL) and
 * the tool. */
#ifndef SLUICE_CKPT_COMMIT_FOLDER_LOCK_H
#define SLUICE_CKPT_COMMIT_FOLDER_LOCK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SLUICE_FOLDER_LOCK_NAME ".sluice.lock"
#define SLUICE_FOLDER_LOCK_STALE_S 30
#define SLUICE_FOLDER_LOCK_TOUCH_S 2
#define SLUICE_FOLDER_LOCK_BREAK_STALE_S 10 /* a breaker's turn (folder_lock.c, break_stale) */

struct sluice_folder_lock {
    int fd; /* -1: not held */
    dev_t dev;
    ino_t ino;
    int64_t touched_ns; /* CLOCK_MONOTONIC */
    char path[PATH_MAX];
};

/* Takes DIR's lock without waiting. 0: taken; -EWOULDBLOCK: a live owner holds it (owner, if
 * not NULL, gets "host <id> pid <pid>"); another -errno: no lock file can be made there (the
 * caller commits without, as where flock was refused). */
int sluice_folder_lock_try(const char *dir, struct sluice_folder_lock *l, char *owner, size_t ownerlen);
/* Marks the lock alive (at most every SLUICE_FOLDER_LOCK_TOUCH_S seconds; cheap otherwise). */
void sluice_folder_lock_touch(struct sluice_folder_lock *l);
/* Releases it: removes the file if it still is this holder's, closes. */
void sluice_folder_lock_release(struct sluice_folder_lock *l);
/* A forked child's copy: forgets it (the parent still holds the lock). */
void sluice_folder_lock_forget(struct sluice_folder_lock *l);
/* 1 if base (a file name) is the lock or one of its helper files (the owner's file it is linked
 * from, the breaker's): sluice's own, hidden from listings made through sluice. */
int sluice_folder_lock_is_name(const char *base);

#endif
