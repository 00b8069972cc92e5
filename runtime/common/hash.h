/* SPDX-License-Identifier: MIT */
/* FNV-1a, 64 bit: cheap, streaming, async-signal-safe. The one hash of names and bytes that
 * must come out the same on every rank and in every run (a set's home rank, container folder
 * names, trace checksums, stable inode numbers of virtual names). */
#ifndef SLUICE_COMMON_HASH_H
#define SLUICE_COMMON_HASH_H

#include <stdint.h>

#define SLUICE_FNV_INIT 0xcbf29ce484222325ull
#define SLUICE_FNV_PRIME 0x100000001b3ull

static inline uint64_t sluice_fnv1a(uint64_t h, const void *p, uint64_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    for (uint64_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= SLUICE_FNV_PRIME;
    }
    return h;
}

/* Of a NUL-terminated string, from SLUICE_FNV_INIT. */
static inline uint64_t sluice_fnv1a_str(const char *s)
{
    uint64_t h = SLUICE_FNV_INIT;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= SLUICE_FNV_PRIME;
    }
    return h;
}

#endif
