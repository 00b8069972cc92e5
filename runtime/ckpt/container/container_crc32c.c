/* SPDX-License-Identifier: MIT */
/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of container members,
 * index and header. Two paths with identical results: the SSE4.2 crc32 instruction when the
 * CPU has it (checked once), and portable slicing-by-8 (eight 256-entry tables, eight bytes per
 * step). The hardware path runs three independent streams so that the instruction's 3-cycle
 * latency is hidden, and joins them with a table-driven shift of the CRC register (a CRC is
 * linear: crc(A||B) = shift(crc(A), |B|) ^ crc0(B)). Zero runs (holes) are appended in O(log n) by
 * multiplying the CRC register by x^(8n) mod P, so a sparse member of any size checksums in the time of its
 * data. */
#include "ckpt/container/container.h"

#include <pthread.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static uint32_t x2n[64]; /* x^(2^k) mod P, reflected */
static int hw;
/* Register shift by LONG and SHORT bytes: r * x^(8n) mod P, one table per byte of r. */
#define LONG 8192
#define SHORT 256
static uint32_t shift_long[4][256], shift_short[4][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* a * b mod P in the reflected representation (bit 31 is x^0). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
    }
    return p;
}

static void init_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int t = 1; t < 8; t++)
            table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xff];
    x2n[0] = 1u << 30; /* x^1 */
    for (int k = 1; k < 64; k++)
        x2n[k] = multmodp(x2n[k - 1], x2n[k - 1]);
    uint32_t klong = 1u << 31, kshort = 1u << 31;
    for (int k = 0; k < 61; k++) {
        if ((uint64_t)LONG & ((uint64_t)1 << k))
            klong = multmodp(x2n[k + 3], klong);
        if ((uint64_t)SHORT & ((uint64_t)1 << k))
            kshort = multmodp(x2n[k + 3], kshort);
    }
    for (int b = 0; b < 4; b++)
        for (uint32_t n = 0; n < 256; n++) {
            shift_long[b][n] = multmodp(klong, n << (8 * b));
            shift_short[b][n] = multmodp(kshort, n << (8 * b));
        }
#if defined(__x86_64__)
    /* cpuid directly: __builtin_cpu_supports would link libgcc's CPU model, whose constructor
     * then runs in every preloaded process. */
    unsigned a, b, c, d;
    hw = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
#endif
}

static uint32_t sw_update(uint32_t crc, const unsigned char *p, size_t len)
{
    uint32_t c = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint32_t lo =
            c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
            table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
            table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return ~c;
}

static inline uint32_t shift(const uint32_t t[4][256], uint32_t r)
{
    return t[0][r & 0xff] ^ t[1][(r >> 8) & 0xff] ^ t[2][(r >> 16) & 0xff] ^ t[3][r >> 24];
}

#if defined(__x86_64__)
/* Three interleaved streams of `n` bytes each starting at p; returns the joined register. */
__attribute__((target("sse4.2"))) static inline uint64_t hw_three(uint64_t c0, const unsigned char *p,
                                                                  size_t n, const uint32_t t[4][256])
{
    uint64_t c1 = 0, c2 = 0;
    for (const unsigned char *end = p + n; p < end; p += 8) {
        uint64_t a, b, d;
        memcpy(&a, p, 8);
        memcpy(&b, p + n, 8);
        memcpy(&d, p + 2 * n, 8);
        c0 = __builtin_ia32_crc32di(c0, a);
        c1 = __builtin_ia32_crc32di(c1, b);
        c2 = __builtin_ia32_crc32di(c2, d);
    }
    c0 = shift(t, (uint32_t)c0) ^ (uint32_t)c1;
    return shift(t, (uint32_t)c0) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t hw_update(uint32_t crc, const unsigned char *p, size_t len)
{
    uint64_t c = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    while (len >= 3 * LONG) {
        c = hw_three(c, p, LONG, shift_long);
        p += 3 * LONG;
        len -= 3 * LONG;
    }
    while (len >= 3 * SHORT) {
        c = hw_three(c, p, SHORT, shift_short);
        p += 3 * SHORT;
        len -= 3 * SHORT;
    }
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

uint32_t sluice_crc32c_update_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&once, init_tables);
    return sw_update(crc, buf, len);
}

uint32_t sluice_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&once, init_tables);
#if defined(__x86_64__)
    if (hw)
        return hw_update(crc, buf, len);
#endif
    return sw_update(crc, buf, len);
}

int sluice_crc32c_hw_available(void)
{
    pthread_once(&once, init_tables);
    return hw;
}

/* x^(8n) mod P. 8n may overflow 64 bits for absurd n: use the bits of n, shifted by 3. */
static uint32_t x8n(uint64_t n)
{
    uint32_t xp = 1u << 31; /* x^0 */
    for (int k = 0; k < 61; k++)
        if (n & ((uint64_t)1 << k))
            xp = multmodp(x2n[k + 3], xp);
    return xp;
}

uint32_t sluice_crc32c_zeros(uint32_t crc, uint64_t n)
{
    pthread_once(&once, init_tables);
    if (n == 0)
        return crc;
    /* Feeding zero bytes multiplies the register by x^8 per byte: register * x^(8n) mod P. */
    return ~multmodp(x8n(n), ~crc);
}

uint32_t sluice_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    pthread_once(&once, init_tables);
    /* The pre/post inversions of A's and B's CRCs cancel out in the XOR (CRC is affine). */
    return multmodp(x8n(len_b), crc_a) ^ crc_b;
}
