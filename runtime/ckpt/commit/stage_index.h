/* SPDX-License-Identifier: MIT */
/* The stage folder's index by member path (stage_index.c): a symbolic link per path,
 *
 *   p-<16 hex digits: FNV-1a of the member's absolute path>  ->  m-<pid>-<seq>
 *
 * naming the newest closed staged member of that path on this node (the sidecar beside it says
 * which path it holds: a hash collision is told apart there). A process looking for a closed
 * copy of a path staged by another process of its node reads one link and one sidecar, instead
 * of every sidecar of the node (O(ranks per node) opens per rank, O(N^2) per node).
 *
 * Set when a sidecar says "closed" (sluice_stage_write_meta), removed with the member when it
 * still names it. Two processes of one node closing and committing the same path at the same
 * moment can lose the link of the newer one; a reader then finds no staged copy here and asks
 * the set's home, as for a copy staged on another node. A link whose member is gone (its
 * process died) names nothing and is ignored; `sluice-ckpt recover` removes it. */
#ifndef SLUICE_CKPT_COMMIT_STAGE_INDEX_H
#define SLUICE_CKPT_COMMIT_STAGE_INDEX_H

#include <stddef.h>

#define SLUICE_STAGE_INDEX_PREFIX "p-"

/* Points path's link at the member whose sidecar is meta_path (in the stage folder). */
void sluice_stage_index_set(const char *path, const char *meta_path);
/* Removes path's link if it names the member of meta_path. */
void sluice_stage_index_drop(const char *path, const char *meta_path);
/* The sidecar of the member path's link names, in meta (PATH_MAX): 1, or 0 when none. */
int sluice_stage_index_get(const char *path, char *meta, size_t cap);

#endif
