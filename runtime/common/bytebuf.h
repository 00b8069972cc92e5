/* SPDX-License-Identifier: MIT */
/* Binary records in memory: a builder appends native-endian fields to a caller's fixed buffer or
 * to one that grows (realloc, up to a bound); a reader takes them back in order. A field that does
 * not fit (or is not there) marks either bad, and every later call does nothing (a reader yields
 * zeros), so an encoder or decoder checks once, at the end. */
#ifndef SLUICE_COMMON_BYTEBUF_H
#define SLUICE_COMMON_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_bytebuf {
    unsigned char *p;
    size_t len, cap;
    size_t grow_max; /* 0: p is the caller's, cap bytes; else p grows by realloc up to this */
    int bad;
};

void sluice_bytebuf_put(struct sluice_bytebuf *b, const void *v, size_t n);
void sluice_bytebuf_u32(struct sluice_bytebuf *b, uint32_t v);
void sluice_bytebuf_u64(struct sluice_bytebuf *b, uint64_t v);
/* A string as its u32 length then its bytes (no terminator). */
void sluice_bytebuf_str(struct sluice_bytebuf *b, const char *s);

struct sluice_bytereader {
    const unsigned char *p;
    size_t len, pos;
    int bad;
};

void sluice_bytereader_get(struct sluice_bytereader *r, void *v, size_t n);
uint32_t sluice_bytereader_u32(struct sluice_bytereader *r);
uint64_t sluice_bytereader_u64(struct sluice_bytereader *r);

#ifdef __cplusplus
}
#endif
#endif
