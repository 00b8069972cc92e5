/* SPDX-License-Identifier: MIT */
/* The redundancy copy of one node's part of a node-local version (docs/REDUNDANCY.md,
 * "Redundancy"; format in docs/FORMAT.md, "Redundancy copies"): a stream of the node's level
 * records and the staging files they name, grouped per rank (a record, then its files), each
 * file cut in chunks of at most SLUICE_RED_CHUNK bytes that carry their own crc32c. A partner
 * node stores the stream as one file "rc-<key hash>-<version>-<source host>.red" in its stage
 * folder; "rp-<key hash>-<version>.rec" beside it says the version is protected (every node
 * of the job stored its partner's copy).
 *
 * Rebuild entry point (also for a tool such as a scavenger, which runs without MPI):
 * sluice_red_copy_restore() checks every checksum of a copy and writes the records and
 * staging files of the chosen ranks into a stage folder, records last, nothing on failure.
 * Pure code (util): the engine, sluice-ckpt and the unit tests use it. */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_COPY_H
#define SLUICE_CKPT_REDUNDANCY_RED_COPY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_RED_CHUNK (256u << 10)
#define SLUICE_RED_MAX_RANKS 4096 /* ranks of one node's part named in a header */
#define SLUICE_RED_COPY_PREFIX "rc-"
#define SLUICE_RED_COPY_SUFFIX ".red"
#define SLUICE_RED_MARK_PREFIX "rp-"
#define SLUICE_RED_MARK_SUFFIX ".rec"

struct sluice_red_header {
    uint64_t version;
    int nprocs;         /* the writing job's size */
    char host[17];      /* the node whose part this is (common/host_id.h) */
    char key[PATH_MAX]; /* the set */
    int nranks;         /* ranks of that node, ascending */
    int ranks[SLUICE_RED_MAX_RANKS];
};

/* The lengths of the pieces below, by which a stream's length is known before it is read and a
 * reader seeks in it without reading (red_stream.c): an entry (tag, name, size, crc), a chunk's
 * head (length, crc) and the end (tag, count, crc). */
#define SLUICE_RED_ENTRY_LEN(name_len) (20u + (uint64_t)(name_len))
#define SLUICE_RED_CHUNK_HEAD 8u
#define SLUICE_RED_END_LEN 12u

/* Stream pieces, written into out (cap bytes); each returns its length or 0 if cap is short. */
size_t sluice_red_put_header(unsigned char *out, size_t cap, const struct sluice_red_header *h);
/* An entry: a record file (is_record 1) or a staging file, then ceil(size / SLUICE_RED_CHUNK)
 * chunks. */
size_t sluice_red_put_entry(unsigned char *out, size_t cap, const char *name, uint64_t size, int is_record);
/* A chunk of len <= SLUICE_RED_CHUNK bytes: its head is written to out (cap >=
 * SLUICE_RED_CHUNK_HEAD + len); the data is copied after it, unless it is there already
 * (data == out + SLUICE_RED_CHUNK_HEAD). */
size_t sluice_red_put_chunk(unsigned char *out, size_t cap, const void *data, uint32_t len);
size_t sluice_red_put_end(unsigned char *out, size_t cap, uint32_t nentries);

/* The file names: copy of host's part of version v of key; the protection mark of v. */
int sluice_red_copy_path(const char *dir, const char *key, uint64_t v, const char *host, char *out,
                         size_t cap);
int sluice_red_mark_path(const char *dir, const char *key, uint64_t v, char *out, size_t cap);
/* Creates path's temporary name (PATH.tmp.PID, in tmp: what a file being written keeps until it
 * is whole and renamed to path), empty, read-write; the descriptor in *fd (-1 on failure).
 * 0 or an errno. */
int sluice_red_tmp_open(const char *path, char *tmp, size_t cap, int *fd);

/* Reads and checks a copy's header. 0, -errno, or -EBADMSG. */
int sluice_red_copy_header(const char *file, struct sluice_red_header *h);
/* Checks every checksum of the copy and writes the records and staging files of the ranks
 * listed (all when n is 0) into dir: staging files first, each record after its files, under
 * temporary names renamed into place. On any failure nothing stays and err says what (e.g.
 * "crc32c mismatch in chunk 3 of file X"). Returns the bytes restored, or -errno /
 * -EBADMSG. */
int64_t sluice_red_copy_restore(const char *copy, const char *dir, const int *ranks, int n, char *err,
                                size_t cap);
/* Writes the protection mark (atomic rename). 0 or -errno. */
int sluice_red_mark_write(const char *dir, const char *key, uint64_t v, const char *scheme, int nodes);
/* 1 when the mark of version v of key is in dir. */
int sluice_red_marked(const char *dir, const char *key, uint64_t v);
/* Removes the copies and marks of key with version <= upto from dir. Returns how many. */
int sluice_red_remove(const char *dir, const char *key, uint64_t upto);

#ifdef __cplusplus
}
#endif
#endif
