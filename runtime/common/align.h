/* SPDX-License-Identifier: MIT */
/* Rounding up to an alignment: on-disk records padded to 8 bytes, data to the file system's
 * block, wire payloads to 8 bytes. One definition for every format. */
#ifndef SLUICE_COMMON_ALIGN_H
#define SLUICE_COMMON_ALIGN_H

#include <stdint.h>

/* v rounded up to a multiple of a, a power of two (no overflow check: callers bound v). */
static inline uint64_t sluice_align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static inline uint64_t sluice_pad8(uint64_t n)
{
    return sluice_align_up(n, 8);
}

#endif
