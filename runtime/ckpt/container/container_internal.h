/* SPDX-License-Identifier: MIT */
/* Private helpers shared by the container_*.c files: fixed-width little-endian field access,
 * the I/O table, and error-message formatting. Not part of the contract (container.h is). */
#ifndef SLUICE_CKPT_CONTAINER_CONTAINER_INTERNAL_H
#define SLUICE_CKPT_CONTAINER_CONTAINER_INTERNAL_H

#include "ckpt/container/container.h"
#include "common/align.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* On-disk field offsets (docs/FORMAT.md). Written once here, used by encoder and decoder. */
#define HDR_MAGIC "SLUICECK"
#define HDR_OFF_MAJOR 8
#define HDR_OFF_MINOR 10
#define HDR_OFF_SIZE 12
#define HDR_OFF_FLAGS 16
#define HDR_OFF_BLOCK 20
#define HDR_OFF_VERSION 24
#define HDR_OFF_CREATED 32
#define HDR_OFF_NPROCS 40
#define HDR_OFF_PID 44
#define HDR_OFF_HOST 48
#define HDR_OFF_SOFTWARE 112
#define HDR_OFF_CSUM_ALGO 144
#define HDR_OFF_KEY_LEN 146
#define HDR_OFF_ARRAY_LEN 148 /* u16: bytes of the array layout record after the key (1.2) */
#define HDR_OFF_CRC 156
#define HDR_CSUM_CRC32C 1

#define IDX_MAGIC "SLUICEIX"
#define IDX_HEAD 16  /* magic, member count, reserved */
#define REC_FIXED 40 /* member record before its extents */
#define EXT_SIZE 24
#define CHK_MAGIC 0x4b4e4843u /* "CHNK": a member record's chunk checksums follow its path (1.3) */
#define CHK_HEAD 16           /* magic, chunk_size, n_chunks, reserved */

#define FTR_MAGIC "SLUICEFT"
#define FTC_MAGIC "SLUICEFC" /* footer of the index copy (format 1.1) */
#define FTR_OFF_MAJOR 8
#define FTR_OFF_MINOR 10
#define FTR_OFF_COUNT 12
#define FTR_OFF_INDEX_OFF 16
#define FTR_OFF_INDEX_LEN 24
#define FTR_OFF_FILE_SIZE 32
#define FTR_OFF_VERSION 40
#define FTR_OFF_INDEX_CRC 48
#define FTR_OFF_HEADER_CRC 52
#define FTR_OFF_CRC 60

/* Largest index a reader will load: far beyond any real set, small enough to allocate. */
#define INDEX_MAX ((uint64_t)1 << 30)

static inline void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline int is_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Chunk checksums of a member (format 1.3): a chunk size the format allows and the count it
 * gives for size bytes; and the bytes they take after the record's path (0 for none). */
static inline int chunks_ok(uint64_t size, uint64_t chunk_size, uint64_t n_chunks)
{
    return is_pow2(chunk_size) && chunk_size >= SLUICE_CONTAINER_CHUNK_MIN &&
           chunk_size <= SLUICE_CONTAINER_CHUNK_MAX && n_chunks == (size + chunk_size - 1) / chunk_size;
}

static inline uint64_t chunks_bytes(uint64_t n_chunks)
{
    return n_chunks ? CHK_HEAD + sluice_pad8(4 * n_chunks) : 0;
}

/* The I/O table in effect (never NULL fields). */
extern struct sluice_container_io sluice_container_io_;
#define CIO (&sluice_container_io_)

/* Formats a message into err (if err != NULL) and returns rc, for "return fail(...)". */
int sluice_container_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* pread/pwrite of exactly n bytes through the I/O table; 0 or -errno (-EIO on early EOF). */
int sluice_container_pread_full(int fd, void *buf, size_t n, uint64_t off);
int sluice_container_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

/* CRC of an encoded header of header_size bytes (skips its own CRC field). */
uint32_t sluice_container_header_crc_(const unsigned char *h, size_t header_size);

/* Key and path validity shared by encoder and decoder. */
int sluice_container_key_ok(const char *s, size_t len);
int sluice_container_path_ok(const char *s, size_t len);

#endif
