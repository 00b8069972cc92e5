/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the container decoder and member readers on arbitrary bytes. Whatever the
 * input, parsing either fails with a message or yields members whose every read stays inside
 * the image (AddressSanitizer) and ends (a claimed size never makes a reader loop for long). */
#include "ckpt/container/container_internal.h"

#include "ckpt/container/container_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int sink(void *ctx, uint64_t logical, const void *buf, size_t len)
{
    uint32_t *acc = ctx;
    if (buf && len)
        *acc ^= ((const unsigned char *)buf)[len - 1];
    (void)logical;
    return 0;
}

/* A member's chunk checksums (format 1.3) as the decoder promises them, one per chunk of the
 * member; its first chunks checked against their bytes, as an array restart does. */
static void exercise_chunks(const struct sluice_container *c, uint32_t i)
{
    const struct sluice_member *m = &c->members[i];
    if (!m->n_chunks)
        return;
    uint64_t cs = m->chunk_size;
    if (!m->chunk_crc || cs < SLUICE_CONTAINER_CHUNK_MIN || (cs & (cs - 1)) ||
        (m->n_chunks - 1) * cs >= m->size || m->size - (m->n_chunks - 1) * cs > cs)
        __builtin_trap();
    static unsigned char buf[64 << 10];
    uint32_t mismatches = 0;
    for (uint64_t k = 0; k < m->n_chunks && k < 4; k++) {
        uint64_t len = m->size - k * cs < cs ? m->size - k * cs : cs;
        if (len <= sizeof buf && sluice_container_pread(c, i, buf, len, k * cs) == (long)len)
            mismatches += sluice_crc32c_update(0, buf, len) != m->chunk_crc[k];
    }
    (void)mismatches;
}

static void exercise(const struct sluice_container *c)
{
    char err[1024];
    unsigned char buf[512];
    uint32_t acc = 0;
    for (uint32_t i = 0; i < c->n_members && i < 64; i++) {
        const struct sluice_member *m = &c->members[i];
        (void)sluice_container_verify_member(c, i, err, sizeof err);
        (void)sluice_container_read_member(c, i, sink, &acc, err, sizeof err);
        (void)sluice_container_pread(c, i, buf, sizeof buf, 0);
        if (m->size > 8)
            (void)sluice_container_pread(c, i, buf, sizeof buf, m->size - 8);
        (void)sluice_container_find(c, m->path);
        (void)sluice_container_find_rank(c, m->member_rank);
        exercise_chunks(c, i);
    }
}

/* Checksums stop a mutator at the first check. When the header's last reserved byte is 0 (as in
 * the seeds), the header, index and footer checksums are recomputed after mutation, so that
 * the structural checks behind them get fuzzed too; other inputs go in as they are. */
static void fix_checksums(unsigned char *b, size_t n)
{
    if (n < SLUICE_CONTAINER_HEADER_FIXED + SLUICE_CONTAINER_FOOTER_SIZE || b[155] != 0)
        return;
    uint32_t hs = get32(b + 12);
    if (hs < SLUICE_CONTAINER_HEADER_FIXED || hs > n - SLUICE_CONTAINER_FOOTER_SIZE)
        return;
    uint32_t hcrc = sluice_container_header_crc_(b, hs);
    put32(b + HDR_OFF_CRC, hcrc);
    unsigned char *f = b + n - SLUICE_CONTAINER_FOOTER_SIZE;
    uint64_t io = get64(f + FTR_OFF_INDEX_OFF), il = get64(f + FTR_OFF_INDEX_LEN);
    if (io <= n && il <= n - io)
        put32(f + FTR_OFF_INDEX_CRC, sluice_crc32c_update(0, b + io, il));
    put32(f + FTR_OFF_HEADER_CRC, hcrc);
    put32(f + FTR_OFF_CRC, sluice_crc32c_update(0, f, FTR_OFF_CRC));
}

/* The SLUICE_LAYOUT parser (also the container's array layout record) on the input as text:
 * whatever parses must print, give a grid and blocks whose runs stay inside the array. */
static void exercise_layout(const uint8_t *data, size_t size)
{
    char spec[SLUICE_ARRAY_RECORD_MAX + 1], out[SLUICE_ARRAY_RECORD_MAX], err[256];
    size_t n = size < SLUICE_ARRAY_RECORD_MAX ? size : SLUICE_ARRAY_RECORD_MAX;
    memcpy(spec, data, n);
    spec[n] = 0;
    struct sluice_array a;
    if (sluice_array_parse(spec, &a, err, sizeof err) != 0)
        return;
    (void)sluice_array_format(&a, out, sizeof out);
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    uint32_t ranks = a.nprocs ? a.nprocs % 4096 + 1 : 7;
    if (sluice_array_grid(&a, ranks, grid, err, sizeof err) != 0)
        return;
    uint64_t total = sluice_array_bytes(&a);
    for (uint32_t r = 0; r < ranks && r < 64; r++) {
        struct sluice_array_block b;
        sluice_array_block(&a, grid, r, &b);
        for (uint64_t k = 0; k < b.nrows && k < 64; k++)
            if (sluice_array_row_offset(&a, &b, k) + b.row_len > total)
                __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exercise_layout(data, size);
    char err[1024];
    struct sluice_container *c = NULL;
    /* The decoder may keep pointers into the image: give it a private copy of exact size so
     * that ASan catches any read past the end. */
    unsigned char *img = malloc(size ? size : 1);
    if (!img)
        return 0;
    memcpy(img, data, size);
    fix_checksums(img, size);
    if (sluice_container_parse(img, size, "fuzz.sluice", &c, err, sizeof err) == 0) {
        exercise(c);
        sluice_container_close(c);
    }
    free(img);
    return 0;
}
