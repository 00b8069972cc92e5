/* SPDX-License-Identifier: MIT */
/* Sets laid out as one global array (SLUICE_LAYOUT): the home's plan (commit_array.c) and a
 * restart's read of a block of another decomposition (commit_array_read.c). docs/LAYOUT.md. */
#ifndef SLUICE_CKPT_COMMIT_COMMIT_ARRAY_H
#define SLUICE_CKPT_COMMIT_COMMIT_ARRAY_H

#include "ckpt/commit/commit_home_internal.h"
#include "ckpt/container/container_array.h"

/* Compiles SLUICE_LAYOUT once at start (bad entries: one line each, ignored). */
void commit_array_enable(const char *cwd);
/* 1 and *out when the set key has a layout, else 0. */
int commit_array_spec_for_key(const char *key, struct sluice_array *out);
/* Home: the members a version of the set needs to fit its layout: its explicit grid's ranks,
 * or with grid=auto the job's until a version showed how many ranks write it (up to the job's
 * size); 0 for a set without a layout. */
int commit_array_blocks(const char *key);

/* Home: when the kept members fit the set's layout, sets c->array, the members' offsets and
 * c->index_offset and returns 1; 0 for plain members (one line when a layout did not fit);
 * -ENOMEM. */
int commit_array_plan(struct hcommit *c, size_t nkeep);
/* The extents of member g (count only when ext is NULL). */
uint32_t commit_array_member_extents(const struct hcommit *c, const struct gm *g, struct sluice_extent *ext);
/* The layout record for the header ("" for plain members). */
void commit_array_record(const struct hcommit *c, char *out, size_t cap);

/* Restart: path's content when the container c holds an array: rank r of this job's size gets
 * rank 0's header and its block of this job's decomposition. An fd (memfd at offset 0), -ENOENT
 * (no such rank in this job), 1 when the member as stored is the answer (same decomposition),
 * or -errno. */
int commit_array_open(const struct sluice_container *c, const char *key, const char *path, int cloexec);
/* The size such a read gives: 0 and *size, 1 when the stored member's size is right, -ENOENT. */
int commit_array_size(const struct sluice_container *c, const char *key, const char *path, uint64_t *size);

/* commit_array_chunks.c: rank 0's header and block b (of another decomposition than the
 * writer's, old) into dst (header + rows), verifying only the chunks of the old members it
 * reads. 0, 1 when a member it needs has no chunk checksums (nothing is verified then: the
 * caller verifies whole members), or -errno (-EIO with one line on a checksum mismatch). */
int commit_array_read_chunks(const struct sluice_container *c, const struct sluice_array *old,
                             const struct sluice_array_block *b, unsigned char *dst);
/* preadv of iov[0..n) at off until every byte is in (short reads resume). 0 or -errno. */
struct iovec;
int commit_array_preadv(int fd, struct iovec *iov, int n, uint64_t off);

#endif
