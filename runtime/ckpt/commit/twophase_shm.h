/* SPDX-License-Identifier: MIT */
/* Shared rounds: the two round buffers of a two-phase aggregator as one file in the node's stage
 * folder, mapped by the aggregator and by the writers of its node (docs/TWOPHASE.md, "Shared
 * rounds"). A writer of the same node copies its pieces of a round straight to their places in
 * the buffer and sends an empty message, instead of a message MPI copies twice (into shared
 * memory at the sender, out of it at the aggregator, which then did all of a node's copying
 * alone). Writers on other nodes send their messages into the same buffer as before.
 *
 * When the aggregator has posted a round's receives (its slot is free), it sends each writer of
 * its node that has pieces in the round a GO: the round, where the slot lies in the file, the
 * file's size and path ("" where no file could be made: then the writer sends its message as
 * before). The writer waits for the GO of each of its batches to that aggregator, in order. */
#ifndef SLUICE_CKPT_COMMIT_TWOPHASE_SHM_H
#define SLUICE_CKPT_COMMIT_TWOPHASE_SHM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct commit_tp_shm {
    int fd;              /* the aggregator's, open while it reserves space (owner) */
    int owner;           /* 1: made here by commit_tp_shm_create (fd is open) */
    char path[PATH_MAX]; /* "" when none */
    unsigned char *map;  /* NULL when none */
    size_t len;
};

/* Aggregator: a file of len bytes in the stage folder (m-<host>-<pid>-tp<tag>.round), mapped
 * read-write and shared, the space of its first `reserve` bytes taken (fallocate: a full
 * /dev/shm fails here, never as a SIGBUS in a writer). 0, or -errno with nothing left behind.
 * A slot is only announced once reserved: commit_tp_shm_reserve takes the rest (the first
 * round's receives need not wait for the second slot's pages). */
int commit_tp_shm_create(struct commit_tp_shm *s, int tag, size_t len, size_t reserve);
int commit_tp_shm_reserve(struct commit_tp_shm *s, size_t off, size_t n);
/* Aggregator, at the job's end (every writer of its node has mapped it by then): unmapped and
 * unlinked. */
void commit_tp_shm_remove(struct commit_tp_shm *s);

/* Writer: maps an aggregator's file (len bytes). 0 or -errno. */
int commit_tp_shm_open(struct commit_tp_shm *s, const char *path, size_t len);
void commit_tp_shm_close(struct commit_tp_shm *s);

/* The GO message, on the commit's byte encoding (commit_internal.h). */
enum { COMMIT_TP_GO_MAX = PATH_MAX + 32 }; /* the most its bytes take */
struct commit_tp_go {
    uint32_t round;
    uint64_t off; /* the round's slot in the file */
    uint64_t len; /* the file's size */
    char path[PATH_MAX];
};
struct cmsg;
/* Encodes into msg (cmsg_free it once sent). */
void commit_tp_go_encode(const struct commit_tp_go *g, struct cmsg *msg);
/* 0, or -EPROTO for a malformed one. */
int commit_tp_go_decode(unsigned char *buf, int n, struct commit_tp_go *g);

#endif
