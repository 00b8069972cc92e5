/* SPDX-License-Identifier: MIT */
/* Contract between checkpoint capture (interception, staging, local file semantics) and the
 * commit engine (turning closed staged members into committed container files).
 *
 * Capture owns: the interception, the staging files while they are open, the program's fds.
 * Commit owns: when and how a set is written, over MPI, into its container (container.h),
 * durability, atomic replacement of versions, exit-time flush and recovery, and the two facts
 * both sides read: which paths are members (pattern.h) and the stage folder's layout (stage.h).
 * Capture sits above commit: it calls the functions below; commit reaches capture only through
 * the hooks capture registers (sluice_commit_set_client), never by including it.
 *
 * A "set key" is the absolute member path with the rank number replaced by "%r", e.g.
 * "/scratch/run/chk_10/rank_%r.bin"; every member of a set shares it. */
#ifndef SLUICE_CKPT_COMMIT_COMMIT_H
#define SLUICE_CKPT_COMMIT_COMMIT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_staged_member {
    char set_key[PATH_MAX];    /* see above */
    char path[PATH_MAX];       /* absolute member path as the program named it */
    int member_rank;           /* the rank number in the name (not necessarily the writer's) */
    int writer_rank;           /* launcher rank of the process that wrote it */
    char stage_path[PATH_MAX]; /* staging file that holds exactly the member's bytes */
    uint64_t size;
    unsigned mode; /* permissions the program's file would have had (the staging file is 0600);
                    * 0: unknown. The container takes the most restrictive of its members'. */
};

/* Capture -> commit. ----------------------------------------------------------------------- */

/* The last descriptor/stream of a captured file was closed: its staged bytes are final for this
 * version. Ownership of the staging file passes to the commit engine (capture must not modify
 * or delete it afterwards; a later rewrite of the same path stages into a new file). Returns at
 * once; the commit happens in the background. */
void sluice_commit_member_closed(const struct sluice_staged_member *m);

/* A captured file of set set_key was opened for writing (a new staged version). The set's
 * home gathers the fsyncs of the ranks holding open members into one version. Returns at once;
 * a no-op until the engine runs over MPI. */
void sluice_commit_member_opened(const char *set_key);

/* fsync()/fdatasync() on a captured file: returns 0 once the member's current staged bytes are
 * durable in a committed container, or -errno (e.g. -ENOSPC) if committing failed. The caller
 * passes the member as staged so far (it may still be open). */
int sluice_commit_member_sync(const struct sluice_staged_member *m);

/* The program unlinked a member: a not-yet-committed version never reaches the file system;
 * a committed one is removed from the namespace (the container drops it at its next version,
 * or is removed when it holds no members). Returns 0 or -errno (-ENOENT if unknown). */
int sluice_commit_member_unlinked(const char *path);

/* chmod of a member that is not open for writing: a closed version not yet committed takes
 * the mode (and commits with it); a committed one's permissions are its container's, so the
 * container takes it. Returns 0 or -errno (-ENOENT if no version exists). */
int sluice_commit_member_chmod(const char *path, unsigned mode);

/* Commit everything staged by this process, collectively where MPI is available. Called at
 * MPI_Finalize (finalize hook) or process exit. Returns 0 or -errno; on failure the staged
 * data is kept for `sluice-ckpt recover`. */
int sluice_commit_flush_all(void);
/* 1 once the exit flush failed (its line printed): the exit status must not be 0. */
int sluice_commit_exit_failed(void);

/* 1 if this process was started by the launcher itself (hydra: its parent is the proxy at the
 * other end of the inherited PMI socket), 0 for its descendants or when it cannot tell. Such a
 * process takes part in the exit flush even if it wrote nothing: writers of other ranks of a
 * non-MPI program wait in MPI_Init for it. */
int sluice_commit_launcher_child(void);

/* What the engine needs of capture, registered by capture's constructor. Each hook may be
 * called from any thread and must return at once when capture is off. */
struct sluice_commit_client {
    /* Flushes stdio and reports every member still open as closed (the exit and finalize
     * flushes call it first: the process's descriptors die with it). Idempotent. */
    void (*close_all)(void);
    /* Calls sluice_commit_member_opened() for every member held open for writing (the engine
     * calls it when it starts, for what was opened before). */
    void (*announce_open)(void);
};
/* Registers the client (its hooks stay valid for the life of the process). Until then, and
 * in programs without capture (unit tests of the engine), the engine calls no hook. */
void sluice_commit_set_client(const struct sluice_commit_client *client);

/* Commit -> capture: reading committed members. ------------------------------------------ */

/* Opens the latest readable version of member `path` for reading and returns a descriptor
 * positioned at 0 whose contents are exactly the member's bytes (e.g. a memfd or a stage copy
 * filled from the container, or a staged file closed by another local process). Waits for a
 * commit of that member's set that is in flight (bounded). Returns -ENOENT if no version
 * exists, -EIO if the container is corrupt (after printing one line naming container and
 * member). */
int sluice_commit_open_member(const char *path, int open_flags);

/* Size of the latest readable version, for stat(); 0 on success, -ENOENT if none. mode (may be
 * NULL) gets the permissions the program gave a version that is closed but not yet committed,
 * or 0 for a committed one (whose permissions are its container's). */
int sluice_commit_stat_member(const char *path, uint64_t *size, int64_t *mtime_ns, unsigned *mode);

/* Calls fn (until it returns non-zero, which is returned) with the path of each closed member
 * below folder dir (len bytes, no trailing '/') that another running process of this node has
 * staged and not yet committed (another rank, a shell whose child lists the folder): the
 * members a read or stat finds through the stage folder, for listings. */
int sluice_commit_staged_below(const char *dir, size_t len, int (*fn)(void *arg, const char *path),
                               void *arg);

#ifdef __cplusplus
}
#endif
#endif
