/* SPDX-License-Identifier: MIT */
/* What the finishing step of a scavenge (scavenge_finish.c) shares with its rebuild of lost
 * parts from partner copies (scavenge_rebuild.c): the parts found and the versions merged over
 * them. Tool code, no MPI. */
#ifndef SLUICE_CKPT_REDUNDANCY_SCAVENGE_INTERNAL_H
#define SLUICE_CKPT_REDUNDANCY_SCAVENGE_INTERNAL_H

#include <limits.h>
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

/* For each version of mv[0..n) that lacks records of some ranks: the partner copies the parts
 * hold of it (each checked by every checksum, sluice_red_copy_restore) restore the missing
 * ranks' records and staging files into one folder `rebuilt` (made here, under the scavenge's
 * root). One line per lost part rebuilt (the versions, ranks, bytes and the part that held the
 * copies) and one per copy refused. Returns how many ranks' records were restored (0: nothing,
 * and no folder), or -errno where the folder cannot be made. */
int scavenge_rebuild(const char *key, const struct scavenge_parts *p, const struct scavenge_version *mv,
                     int n, const char *rebuilt, FILE *report);

#endif
