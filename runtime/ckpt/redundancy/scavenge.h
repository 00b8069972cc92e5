/* SPDX-License-Identifier: MIT */
/* `sluice-ckpt scavenge` (docs/REDUNDANCY.md, "Scavenge"): after a job, the newest node-local
 * version of a set that was never drained is copied to the file system as a container version,
 * the one a drain would have written. Node-local versions are spread over the nodes' stage
 * folders, and a tool run after the job has no communicator, so it runs in two steps that meet
 * in a folder beside the container (SLUICE_SCAVENGE_DIR_SUFFIX), on the file system every node
 * sees:
 *   node step (each node): the records of the versions newer than the container's that this
 *     node's stage folder holds, and the staging files they name, whole ones only, copied into
 *     one part folder of its own (written under a temporary name and renamed: a part is whole
 *     or absent);
 *   finish (once, anywhere): under the container folder's lock, the newest version with a
 *     record of every rank of its writing job over all parts becomes the container's next
 *     version, with each member's newest bytes up to it (older node-local versions' bytes for
 *     members it did not rewrite, the container's for the rest); never over a container
 *     version that is as new or newer. Tool code (with recover.c), no MPI. */
#ifndef SLUICE_CKPT_REDUNDANCY_SCAVENGE_H
#define SLUICE_CKPT_REDUNDANCY_SCAVENGE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_SCAVENGE_DIR_SUFFIX ".scavenge"
#define SLUICE_SCAVENGE_PART_SUFFIX ".part"

/* The meeting folder of key's scavenge: "<container folder>/.<container name>.scavenge".
 * 0 or -ENAMETOOLONG / -EINVAL. */
int sluice_scavenge_root(const char *key, char *out, size_t cap);
/* The node step for key: this node's part "<root>/<name>.part", name unique per process of the
 * scavenge (host and launcher rank). One line per problem on report. 0, or -errno. */
int sluice_scavenge_node(const char *stage_dir, const char *key, const char *name, FILE *report);
/* How many parts the root of key holds. */
int sluice_scavenge_parts(const char *key);
/* Removes folder dir and the plain files in it (a part holds nothing else). */
void sluice_scavenge_remove_folder(const char *dir);
/* The finishing step for key; one line on report for what it did or why not. 0: scavenged, or
 * nothing newer than the container to scavenge; 1: a version newer than the container's exists
 * but none is complete over the parts (named), or writing failed. The parts are removed once
 * the container holds everything they hold. */
int sluice_scavenge_finish(const char *key, FILE *report);

#ifdef __cplusplus
}
#endif
#endif
