/* SPDX-License-Identifier: MIT */
/* The home's records of a checkpoint set and of a version in flight, shared by commit_home.c
 * (the sets, their notices and waiters, when a version starts and how it ends) and
 * commit_version.c (one version from its plan to durable). Progress thread only. */
#ifndef SLUICE_CKPT_COMMIT_COMMIT_HOME_INTERNAL_H
#define SLUICE_CKPT_COMMIT_COMMIT_HOME_INTERNAL_H

#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/folder_lock.h"
#include "ckpt/container/container.h"

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <uthash.h>

struct sluice_array;

struct waiter {
    int rank;
    uint64_t req;
    struct waiter *next;
};

/* A member gathered for a commit: new (src >= 0: staged on rank src) or carried over from the
 * previous version (src < 0, old_index into it). */
struct gm {
    uint64_t seq;
    char *path;
    int src, member_rank, writer_rank;
    uint64_t size, offset;
    int64_t mtime_ns;
    uint32_t crc;
    unsigned mode; /* the program's permissions for it (new members; 0: unknown) */
    int keep;
    long old_index;
    struct commit_run *runs; /* its data runs as its writer stored them (NULL: one, dense) */
    uint32_t nruns;
    uint32_t *chunk_crc; /* its chunk checksums (array sets, shuffled: COMMIT_ARRAY_CHUNK), or NULL */
    uint32_t chunk_size, nchunks;
    char *stage; /* new members: the staging file's name in its stage folder */
    int writer;  /* new members: the rank that copies it (direct path), -1 shuffled */
};

struct hset;

struct hcommit {
    uint32_t id;
    struct hset *set;
    int awaiting_members, awaiting_written;
    struct gm *mem;
    size_t nmem, cap;
    int *ranks; /* ranks asked for their members */
    int nranks;
    char **drops; /* paths unlinked by the program: not carried over */
    size_t ndrops;
    char **paths; /* paths announced closed that this commit collects (answers MSG_QUERY) */
    size_t npaths;
    uint64_t *upto; /* per rank: the last notice this commit collects */
    char container[PATH_MAX], tmp[PATH_MAX], dir[PATH_MAX];
    struct sluice_container *old;
    int fd;
    struct sluice_folder_lock lock; /* the folder's lock held for this commit (fd -1: none) */
    uint64_t lock_ns;               /* when it was taken (trace clock) */
    uint64_t version, index_offset, t0;
    int64_t created_ns;
    uint32_t header_flags; /* the flags of the header written at offset 0 */
    uint32_t block;
    struct sluice_array *array;       /* the set is one global array (commit_array.c), else NULL */
    struct commit_index_ahead *ahead; /* its tail encoded while the data moves (commit_index.c) */
    int err;
    struct waiter *waiters;
    struct hcommit *next;
};

struct hset {
    char *key;
    char *dir;              /* its container's folder, NULL when the key names none */
    unsigned char *pending; /* one byte per rank: closed a member since the last collection */
    int npending;
    unsigned char *opened; /* one byte per rank: holds a member open for writing (MSG_OPENED) */
    int nopened;
    int blocks;   /* a global array (SLUICE_LAYOUT): the members each version needs, else 0
                     (commit_array_blocks) */
    char **paths; /* paths announced closed since the last collection */
    size_t npaths;
    uint64_t *upto; /* per rank: number of its last CLOSED notice the next collection takes */
    /* Once every rank has closed a member (the step is complete) the collection is fixed:
     * notices that arrive before it starts (a fast rank already closed the next step) wait
     * for the next one, so that a version never mixes two steps. */
    int latched;
    unsigned char *later; /* per rank: a notice arrived while latched */
    uint64_t *later_upto;
    char **later_paths;
    size_t nlater_paths;
    uint64_t first_pending_ns;
    int force;
    int gather;        /* forced by an fsync: wait for the ranks holding open members */
    uint64_t force_ns; /* when the first waiter forced it */
    struct hcommit *inflight;
    struct waiter *next_waiters;
    char **drops;
    size_t ndrops;
    uint64_t last_version;
    unsigned char *sealed; /* per rank: holds members of node-local versions not yet drained */
    int nsealed;
    UT_hash_handle hh;
};

/* commit_home.c */
uint64_t commit_home_now_ns(void);
int64_t commit_home_wall_ns(void);
/* Ends version c with err (0: durable or nothing to do): tells its ranks and waiters, keeps
 * unapplied unlinks for the next version, frees c and starts the set's next version if due. */
void commit_home_complete(struct hcommit *c, int err);

/* commit_version.c */
/* Plans version c from the gathered members and starts its writers (two-phase or direct); it
 * ends in commit_version_finish once they answer, or in commit_home_complete on an error. */
void commit_version_plan(struct hcommit *c);
/* A new, zeroed member record of c (its old_index -1), or NULL when out of memory. */
struct gm *commit_version_add_member(struct hcommit *c);
/* Every writer answered: index, footer, durability, atomic replacement. */
void commit_version_finish(struct hcommit *c);

/* commit_index.c: the version's tail (index, copy, footers) */
struct sluice_container_meta;
/* Starts encoding c's tail on the index lane while the data moves (array sets, whose index
 * lists a row per extent; a no-op for others). meta: the description as planned. */
void commit_index_ahead(struct hcommit *c, const struct sluice_container_meta *meta);
/* c's tail for meta once every writer answered, in *tail (sluice_hugebuf_free(*tail, *size)):
 * the one encoded ahead with the checksums filled in, else encoded now. 0 or -errno. */
int commit_index_tail(struct hcommit *c, const struct sluice_container_meta *meta, void **tail, size_t *size);
/* Drops c's tail encoded ahead, if any (after the index lane is done with it). */
void commit_index_forget(struct hcommit *c);

/* redundancy/level_home.c: versions kept node-local (docs/REDUNDANCY.md) */
/* The version number to seal the set's complete collection as (kept node-local, not drained),
 * or 0 when it must be drained to the file system now. */
uint64_t commit_level_may_seal(const struct hset *s, int final);
/* Tells c's ranks to keep their collected members as node-local version `version`. */
void commit_level_seal(struct hcommit *c, uint64_t version);
/* The newest version of key this node's stage folder records (0 if none). */
uint64_t commit_level_kept_max(const char *key);

#endif
