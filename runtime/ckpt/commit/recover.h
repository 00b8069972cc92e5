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

#ifdef __cplusplus
}
#endif
#endif
