/* SPDX-License-Identifier: MIT */
/* A node's part of a node-local version as one logical stream (docs/FORMAT.md, "Redundancy
 * copies"): the header, then per rank of the node its level record and the staging files it
 * names, each cut in chunks with their crc32c (red_copy.h). The partner encoder sends it, the
 * XOR encoder folds it into the parity of its set (red_xor.h), and the XOR rebuild regenerates
 * a survivor's stream byte for byte from its stage folder. Read in pieces of at most
 * SLUICE_RED_STREAM_BUF bytes: memory stays bounded whatever the part's size. Pure code (util). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_STREAM_H
#define SLUICE_CKPT_REDUNDANCY_RED_STREAM_H

#include "ckpt/redundancy/red_copy.h"

#include <limits.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A piece is at most this long (a chunk and its head, or a header of up to 4096 ranks). */
#define SLUICE_RED_STREAM_BUF (SLUICE_RED_CHUNK + 32768u)
/* What the encoders send at once: consecutive pieces packed up to 4 chunks (about 1 MiB; with
 * 256 KiB messages, and a header or an entry's head as a message of its own, the round trips of
 * the progress threads bounded a stream's rate). */
#define SLUICE_RED_FILL_BUF (4u * SLUICE_RED_STREAM_BUF)

struct sluice_red_sfile;

struct sluice_red_stream {
    char dir[PATH_MAX];
    struct sluice_red_header *h; /* owned */
    struct sluice_red_sfile *f;
    int nf, fi, phase; /* phase: 0 header, 1 entry head, 2 chunks, 3 end, 4 done */
    int fd;
    uint64_t foff;
    uint64_t length; /* of the whole stream, known before it is read */
    uint64_t hl;     /* of its header */
    uint64_t skip;   /* bytes of the next piece before the offset sought (seek) */
};

/* Lists the part that h names (version, nprocs, host, key and ranks filled in) from dir: each
 * rank's record and the staging files it names. Takes h (freed by close, also on failure).
 * 0, or -ENOENT where a record is missing or unreadable, -ENOMEM. */
int sluice_red_stream_open(struct sluice_red_stream *s, const char *dir, struct sluice_red_header *h);
/* The next piece into buf (cap >= SLUICE_RED_STREAM_BUF): its length, 0 at the end, -errno
 * where a staging file is gone or shorter than its record says (-ENODATA). */
long sluice_red_stream_next(struct sluice_red_stream *s, unsigned char *buf, size_t cap);
/* Consecutive pieces into buf while at least SLUICE_RED_STREAM_BUF of cap is left: their
 * length, 0 at the end, -errno as next (what was filled before an error is dropped). */
long sluice_red_stream_fill(struct sluice_red_stream *s, unsigned char *buf, size_t cap);
void sluice_red_stream_close(struct sluice_red_stream *s);

/* A second reader of the same listing (no file is read again): dst gets its own copy of the
 * header and file list, at the stream's start. 0 or -ENOMEM. */
int sluice_red_stream_clone(struct sluice_red_stream *dst, const struct sluice_red_stream *src);
/* Positions a reader at its start so that the next bytes it gives are those at stream offset
 * off (at most length): the pieces before it are skipped by their lengths, without reading
 * them, and only the piece that holds off is read (its chunk's checksum needs all of it). The
 * XOR encoder reads a part at S-1 places at once. 0 or -errno (a staging file gone). */
int sluice_red_stream_seek(struct sluice_red_stream *s, uint64_t off);

#ifdef __cplusplus
}
#endif
#endif
