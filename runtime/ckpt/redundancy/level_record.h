/* SPDX-License-Identifier: MIT */
/* Versions of a checkpoint set kept in node-local storage (docs/REDUNDANCY.md): each rank that
 * holds members of a version that was not drained to the file system writes one small record
 * in its stage folder naming them. A restart reads a version from these records when it is
 * newer than the container's and complete (a record of every rank of the writing job); the
 * file format is in docs/FORMAT.md ("Node-local version records"). Pure code (util): the
 * engine, sluice-ckpt and the unit tests use it. */
#ifndef SLUICE_CKPT_REDUNDANCY_LEVEL_RECORD_H
#define SLUICE_CKPT_REDUNDANCY_LEVEL_RECORD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_LEVEL_MAGIC "sluice-level 1"
#define SLUICE_LEVEL_PREFIX "lv-"
#define SLUICE_LEVEL_SUFFIX ".rec"

/* The levels of a version, lowest first. */
enum sluice_level { SLUICE_LEVEL_STAGED = 1, SLUICE_LEVEL_PROTECTED = 2, SLUICE_LEVEL_DURABLE = 3 };
const char *sluice_level_name(int level);

struct sluice_level_member {
    int member_rank;
    unsigned mode; /* 0: unknown */
    uint64_t size;
    int64_t mtime_ns;
    char data[NAME_MAX + 1]; /* the staging file's name in the stage folder */
    char path[PATH_MAX];
};

struct sluice_level_record {
    char set_key[PATH_MAX];
    uint64_t version;
    int nprocs, rank; /* the writing job's size and this record's rank */
    long pid;
    int level;
    uint32_t n;
    struct sluice_level_member *m; /* n entries, malloc'ed */
};

/* FNV-1a of a set key: the hash in the names of records, copies and marks. */
uint64_t sluice_level_key_hash(const char *key);
/* "<dir>/lv-<16 hex: FNV-1a of the key>-<version, 20 digits>-<rank>.rec". 0 or -ENAMETOOLONG. */
int sluice_level_record_path(const char *dir, const char *key, uint64_t version, int rank, char *out,
                             size_t cap);
/* Writes r under a temporary name and renames it into place (never half a record). 0 or -errno. */
int sluice_level_record_write(const char *dir, const struct sluice_level_record *r);
/* Reads and checks one record file (only this user's, never through a link). 0 or -errno. */
int sluice_level_record_read(const char *file, struct sluice_level_record *r);
void sluice_level_record_free(struct sluice_level_record *r);

/* What the stage folder holds of one version of a set. */
struct sluice_level_version {
    uint64_t version;
    int nprocs, nrecords; /* records of distinct ranks found; complete when equal */
    int level;            /* the lowest level among its records */
};
/* The versions of key in dir, newest first, at most cap (fills out). Returns how many. */
int sluice_level_versions(const char *dir, const char *key, struct sluice_level_version *out, int cap);
/* The newest version of key recorded in dir (complete or not), 0 if none. */
uint64_t sluice_level_max_version(const char *dir, const char *key);

/* Where a member's newest bytes lie in the newest complete version of key above `above`. */
struct sluice_level_hit {
    uint64_t version, size;
    int64_t mtime_ns;
    unsigned mode;
    int member_rank;
    char data[PATH_MAX];
};
/* 1 (hit filled) when the newest complete node-local version of key newer than `above`
 * holds path (in its own records or, for a member it did not rewrite, in an older kept
 * version's), with its staging file present and of its size; 0 otherwise. */
int sluice_level_find(const char *dir, const char *key, const char *path, uint64_t above,
                      struct sluice_level_hit *hit);
/* The same within versions (above, newest], whatever this folder's records say of their
 * completeness (the caller knows newest is complete over all nodes: level_table.h). */
int sluice_level_find_upto(const char *dir, const char *key, const char *path, uint64_t above,
                           uint64_t newest, struct sluice_level_hit *hit);
/* The newest version of key above `above` that this folder holds a record of every rank of,
 * 0 if none. */
uint64_t sluice_level_complete(const char *dir, const char *key, uint64_t above);
/* Removes the records of key with version <= upto: rank's own (rank >= 0, written by own_pid)
 * and, with dead_too, those of processes that no longer run, with the staging files and
 * sidecars these name. Returns how many records went. */
int sluice_level_remove(const char *dir, const char *key, uint64_t upto, int rank, long own_pid,
                        int dead_too);

#ifdef __cplusplus
}
#endif
#endif
