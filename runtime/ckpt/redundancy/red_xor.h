/* SPDX-License-Identifier: MIT */
/* XOR parity over sets of nodes (docs/REDUNDANCY.md, "XOR parity"; format in docs/FORMAT.md,
 * "XOR parity files"), as SCR's redset does it: the nodes of a job form sets of S consecutive
 * nodes; each member's part (its stream, red_stream.h, L bytes) is cut into S-1 chunks of
 * C = ceil(L / (S-1)) bytes; member i's chunk k goes to member j = (i + 1 + k) mod S, and member
 * j stores the XOR of the S-1 chunks it is given (each at offset 0, zero-padded), so a node keeps
 * max C bytes of parity: 1/(S-1) of the largest part. A lost member x is rebuilt chunk by chunk:
 * its chunk for member j is j's parity XOR the chunks the other survivors gave j.
 * A node stores its parity as "rx-<key hash>-<version>.xor" in its stage folder: the parity
 * bytes, then a trailer naming the set (each member's host, part length and ranks) with a
 * crc32c per SLUICE_RED_CHUNK block of parity. Pure code (util). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_XOR_H
#define SLUICE_CKPT_REDUNDANCY_RED_XOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_RED_XOR_PREFIX "rx-"
#define SLUICE_RED_XOR_SUFFIX ".xor"
#define SLUICE_RED_XOR_MAX_SET 1024

/* The set of node `node` of nnodes for set size S (S >= 2, nnodes >= 2): sets of S consecutive
 * nodes; a last set of one node joins the one before it. Its first node and size in *first,
 * *size; returns the node's position in it. */
int sluice_red_xor_set(int nnodes, int S, int node, int *first, int *size);

/* The chunk length of a part of len bytes in a set of S. */
uint64_t sluice_red_xor_chunk(uint64_t len, int S);

/* Where bytes of member i's part at offset off go: *pos, the member whose parity takes them,
 * *at, the offset in its parity. Returns how many of the next bytes go there (to the end of
 * the chunk), 0 at the part's end. */
uint64_t sluice_red_xor_route(uint64_t len, int S, int i, uint64_t off, int *pos, uint64_t *at);

/* XORs len bytes of p into fd at offset off (bytes past the end count as zeros). 0 or -errno. */
int sluice_red_xor_into(int fd, uint64_t off, const void *p, size_t len);

struct sluice_red_xor_member {
    char host[17];
    uint64_t len; /* of its part's stream */
    int nranks;
    int *ranks; /* malloc'ed */
};

struct sluice_red_xor_meta {
    uint64_t version;
    int nprocs;
    char key[PATH_MAX];
    int S, pos;       /* the set's size, the position of the node that holds the parity */
    uint64_t plen;    /* parity bytes */
    uint64_t nblocks; /* ceil(plen / SLUICE_RED_CHUNK) */
    uint32_t *crc;    /* per block (malloc'ed; filled by seal and meta_read) */
    struct sluice_red_xor_member m[SLUICE_RED_XOR_MAX_SET];
};

void sluice_red_xor_meta_free(struct sluice_red_xor_meta *x);

int sluice_red_xor_path(const char *dir, const char *key, uint64_t v, char *out, size_t cap);

/* Appends the trailer to a parity file whose first x->plen bytes are the parity (fd open for
 * reading and writing): the block checksums (read back in blocks: bounded memory; x->crc is
 * set) and the rest of x. 0 or -errno. */
int sluice_red_xor_seal(int fd, struct sluice_red_xor_meta *x);

/* The same for a parity received through an accumulator (red_xor_accum.h): its blocks still
 * held are written first, and only the blocks whose checksum it does not know are read back. */
struct sluice_red_xor_accum;
int sluice_red_xor_seal_accum(int fd, struct sluice_red_xor_meta *x, struct sluice_red_xor_accum *a);

/* Reads and checks a parity file's trailer. 0, -errno or -EBADMSG. */
int sluice_red_xor_meta_read(const char *file, struct sluice_red_xor_meta *x);

/* Reads block `block` of the parity (SLUICE_RED_CHUNK bytes, the last one shorter) into buf,
 * its length in *len, and checks its crc32c. 0, -errno or -EBADMSG (err says which block of
 * which file). */
int sluice_red_xor_read_block(int fd, const struct sluice_red_xor_meta *x, const char *file, uint64_t block,
                              unsigned char *buf, uint32_t *len, char *err, size_t cap);

/* Receives bytes of a rebuilt part: XOR them in at off. */
typedef void (*sluice_red_xor_emit)(void *ctx, uint64_t off, const unsigned char *p, size_t len);

/* A survivor's share of the rebuild of member x of its set: from its parity file `file` in dir
 * (the set's layout comes from it) and its own part regenerated from dir's records and staging
 * files (red_stream.h), emits every byte that lost member x's part must be XORed with, at its
 * offset in x's part. The XOR of every survivor's emits is x's part (its first len bytes; a
 * partner-copy stream whose checksums sluice_red_copy_restore checks). Reads one piece at a
 * time. 0, or -errno / -EBADMSG with text saying what (a parity block whose crc32c does not
 * match, a part that changed since it was encoded). */
int sluice_red_xor_contribute(const char *dir, const char *file, int x, sluice_red_xor_emit emit, void *ctx,
                              char *text, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
