/* SPDX-License-Identifier: MIT */
/* A node's XOR parity of a version accumulated in memory, block by block (docs/REDUNDANCY.md,
 * "XOR parity"). The S-1 chunks a parity takes arrive as pieces in any interleaving; each
 * SLUICE_RED_CHUNK block of the parity is XORed together in a buffer and written once, with its
 * crc32c, when every byte the set's members owe it has come (known once every member's part
 * length is). Before, each piece was read back from the parity file, XORed and written again, and
 * the sealed parity read once more for its checksums: per byte received, three copies and an
 * XOR; now one XOR, and a write and a checksum per byte of parity (1/(S-1) of those received).
 * At most SLUICE_RED_XOR_ACCUM_BLOCKS blocks are held at once (bounded memory): a block begun
 * past that is XORed in the file as before, and its checksum read back at the seal.
 * One thread at a time (the I/O thread while pieces are queued, the seal once none is).
 * Pure code (util); file calls go to the real libc. */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_XOR_ACCUM_H
#define SLUICE_CKPT_REDUNDANCY_RED_XOR_ACCUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 32 blocks of 256 KiB: 8 MiB per parity being received. The S-1 senders move through their
 * chunks from offset 0 at about one pace (each at most 4 pieces of about 1 MiB ahead of what was
 * XORed), so a block is complete a few pieces after it begins unless a member is slow to start. */
#define SLUICE_RED_XOR_ACCUM_BLOCKS 32

struct sluice_red_xor_accum;

/* For the parity at set position pos of a set of S, stored in fd (open for reading and
 * writing, empty). NULL where memory ran out. */
struct sluice_red_xor_accum *sluice_red_xor_accum_new(int fd, int S, int pos);
void sluice_red_xor_accum_free(struct sluice_red_xor_accum *a);

/* Member p (p != pos) has a part of len bytes: what it owes this parity is known. Blocks that
 * this completes are written. 0 or -errno. */
int sluice_red_xor_accum_member(struct sluice_red_xor_accum *a, int p, uint64_t len);

/* XORs len bytes of data, at offset off of the parity, in. 0 or -errno. */
int sluice_red_xor_accum_add(struct sluice_red_xor_accum *a, uint64_t off, const void *data, size_t len);

/* At the seal, the parity plen bytes long (nblocks = ceil(plen / SLUICE_RED_CHUNK)): writes the
 * blocks still held (a byte no member gave is a zero), and puts the checksum of every block
 * whose bytes it knows into crc[b], setting known[b]; the others' must be read back from the
 * file. 0 or -errno. */
int sluice_red_xor_accum_flush(struct sluice_red_xor_accum *a, uint64_t plen, uint32_t *crc,
                               unsigned char *known, uint64_t nblocks);

/* Blocks XORed in the file rather than in memory so far (begun past the bound). */
uint64_t sluice_red_xor_accum_in_file(const struct sluice_red_xor_accum *a);

#ifdef __cplusplus
}
#endif

#endif
