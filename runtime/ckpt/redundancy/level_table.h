/* SPDX-License-Identifier: MIT */
/* The node-local versions of a multi-node job, agreed over all nodes (docs/REDUNDANCY.md,
 * "Across nodes"): each node's stage folder holds the records of the ranks that ran there, so
 * a version is complete only over the union of every node's records. Each process encodes what
 * its stage folder records (of every set) as one summary, the summaries are exchanged
 * (level_agree.c: one MPI_Allgatherv when sluice's communicator is made) and merged into a table
 * that answers, per set, the newest version complete over all nodes, the newest version any
 * node records, and which host holds a member of a version. Pure code (util): the engine and
 * the unit tests use it. */
#ifndef SLUICE_CKPT_REDUNDANCY_LEVEL_TABLE_H
#define SLUICE_CKPT_REDUNDANCY_LEVEL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_level_table;

/* The summary of every record in dir whose staging files are all whole (present, of their
 * recorded size), tagged with `host` (common/host_id.h): malloc'ed into *out (NULL and 0 when
 * dir records nothing). 0 or -ENOMEM. */
int sluice_level_table_encode(const char *dir, const char *host, unsigned char **out, size_t *len);
/* Merges n summaries laid end to end in buf (lens[i] bytes each). A malformed summary is
 * skipped whole. NULL when out of memory. */
struct sluice_level_table *sluice_level_table_merge(const unsigned char *buf, const size_t *lens, int n);
void sluice_level_table_free(struct sluice_level_table *t);

/* The newest version of key any node records, 0 if none. */
uint64_t sluice_level_table_max(const struct sluice_level_table *t, const char *key);
/* The newest version of key above `above` with a record of every rank of its writing job over
 * all nodes, 0 if none. */
uint64_t sluice_level_table_complete(const struct sluice_level_table *t, const char *key, uint64_t above);
/* How many ranks' records of version v of key the nodes hold (*nprocs: its writing job's
 * size; -1 when records of two job sizes share the number). */
int sluice_level_table_records(const struct sluice_level_table *t, const char *key, uint64_t v, int *nprocs);
/* The newest version in (lo, hi] whose records name member path, with the host that holds it
 * (SLUICE_HOST_ID_LEN + 1 bytes), 0 if none. */
uint64_t sluice_level_table_holder(const struct sluice_level_table *t, const char *key, const char *path,
                                   uint64_t lo, uint64_t hi, char *host);
/* The i-th record's set (i < size), for listing the sets the table knows. */
size_t sluice_level_table_size(const struct sluice_level_table *t);
const char *sluice_level_table_key_at(const struct sluice_level_table *t, size_t i);

#ifdef __cplusplus
}
#endif
#endif
