/* SPDX-License-Identifier: MIT */
/* Recovery of checkpoint data that a crashed job left staged: the engine behind
 * `sluice-ckpt recover`. Single-process, no MPI: it reads the stage folder (stage.h layout),
 * finds every member whose ownership had passed to the commit engine (closed, not yet
 * committed), and commits each set as a new container version (container.h), keeping the
 * members of the previous committed version that were not staged again. A member whose
 * writer died before closing it may be torn (half of a rewrite): it is kept aside, named in
 * the report and committed only with SLUICE_RECOVER_TAKE_OPEN. */
#ifndef SLUICE_CKPT_COMMIT_RECOVER_H
#define SLUICE_CKPT_COMMIT_RECOVER_H

#include <stdio.h>
#include <sys/types.h>

#include "ckpt/commit/folder_lock.h"
#include "ckpt/container/container.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Also commit members that were still open when their writer died, as they are. */
#define SLUICE_RECOVER_TAKE_OPEN 0x1u
/* Also take what writers of other hosts staged (a stage folder shared by nodes): whether such
 * a writer still runs cannot be probed from here, so the caller vouches that it does not. */
#define SLUICE_RECOVER_OTHER_HOSTS 0x2u

/* Commits what is staged under `stage_dir`. With npaths > 0 only the sets whose container
 * path, set key or a member path is listed in `paths` (or lies under a listed folder) are
 * committed; with npaths == 0, all of them. One line per set recovered (container, version,
 * members, bytes), per member kept aside and per problem goes to `report` (may be NULL).
 * Staged files of a set are removed only after its new container is durable; the staging
 * files of members kept aside stay where they are.
 * Returns 0 if everything selected was committed (or there was nothing to do), 1 if some set
 * could not be committed (its staged data is kept), 2 on bad arguments (e.g. missing stage
 * folder). */
int sluice_ckpt_recover(const char *stage_dir, char *const *paths, int npaths, unsigned flags, FILE *report);

/* The two steps every tool commit takes, shared with `sluice-ckpt scavenge`
 * (redundancy/scavenge.h). Takes the lock of folder dir, waiting while a live commit holds it
 * (bounded by folder_lock.h's stale rule; one line on report after 3 s). 0 or -errno (then the
 * caller commits without the lock, as where a lock file cannot be made). */
int sluice_recover_wait_lock(const char *dir, struct sluice_folder_lock *l, FILE *report);
/* Writes a version of `container` (in folder dir) from src under a temporary name, fsyncs it,
 * renames it into place and fsyncs the folder; the temporary file goes on failure, err says
 * why. 0 or -errno. */
int sluice_recover_write_version(const char *container, const char *dir, mode_t mode,
                                 const struct sluice_container_meta *meta,
                                 const struct sluice_container_source *src, size_t nsrc, char *err,
                                 size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
