/* SPDX-License-Identifier: MIT */
/* What the finishing step of a scavenge (scavenge_finish.c) shares with its rebuild of lost
 * parts from partner copies (scavenge_rebuild.c) and XOR parity (scavenge_xor.c): the parts
 * found, the versions merged over them, and the lines saying what was rebuilt from where. Tool
 * code, no MPI. */
#ifndef SLUICE_CKPT_REDUNDANCY_SCAVENGE_INTERNAL_H
#define SLUICE_CKPT_REDUNDANCY_SCAVENGE_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCAVENGE_MAX_PARTS 256
#define SCAVENGE_MAX_VERSIONS 64

/* The part folders of a scavenge; `nodes` of them are nodes' parts, the one after them (if any)
 * holds what the finish rebuilt from partner copies. */
struct scavenge_parts {
    char dir[SCAVENGE_MAX_PARTS][PATH_MAX];
    char name[SCAVENGE_MAX_PARTS][NAME_MAX + 1];
    int n, nodes;
};

/* One version above the container's over all parts, and which ranks' records some part holds. */
struct scavenge_version {
    uint64_t version;
    int nprocs;
    unsigned char *have; /* nprocs flags */
};

/* What was rebuilt of one lost node's part from one source (the versions, one line each). */
struct scavenge_lost {
    char host[17];
    char from[512]; /* "the partner copies in the part of n2-0", ... */
    char ranks[160], versions[160];
    int64_t bytes;
};
#define SCAVENGE_MAX_LOST 64

/* Adds version v's ranks (text) of lost node host, rebuilt from `from`, to l[0..*nl). */
void scavenge_lost_add(struct scavenge_lost *l, int *nl, const char *host, const char *from,
                       const char *ranks, uint64_t v, int64_t bytes);
/* "0,1,5": ranks r[0..n) as text. */
void scavenge_ranks_text(const int *r, int n, char *out, size_t cap);

/* For each version of mv[0..n) that lacks records of some ranks: the partner copies the parts
 * hold of it (each checked by every checksum, sluice_red_copy_restore), then the XOR parity of
 * the lost node's set (scavenge_xor_restore), restore the missing ranks' records and staging
 * files into one folder `rebuilt` (made here, under the scavenge's root). One line per lost
 * part rebuilt (the versions, ranks, bytes and the parts that held the copies or parity) and
 * one per copy or parity refused. Returns how many ranks' records were restored (0: nothing,
 * and no folder), or -errno where the folder cannot be made. */
int scavenge_rebuild(const char *key, const struct scavenge_parts *p, const struct scavenge_version *mv,
                     int n, const char *rebuilt, FILE *report);

/* The ranks of version m that neither a part (m->have) nor an earlier restore (got) holds,
 * rebuilt from the XOR parity that the surviving members of their node's set copied into their
 * parts: one lost member per set, every parity block's and every chunk's checksum checked, a
 * parity that fails one named and never used. Sets got[] for each rank restored; returns how
 * many. */
int scavenge_xor_restore(const char *key, const struct scavenge_parts *p, const struct scavenge_version *m,
                         unsigned char *got, const char *rebuilt, struct scavenge_lost *l, int *nl,
                         FILE *report);

#endif
