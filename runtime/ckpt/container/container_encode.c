/* SPDX-License-Identifier: MIT */
/* Writer-side primitives: the header, the simple block-aligned layout, and the index+footer
 * tail. Pure functions over caller buffers; the encoder validates everything it writes with
 * the same rules the decoder applies, so sluice can never write a container it would reject. */
#include "ckpt/container/container_internal.h"

#include <errno.h>

size_t sluice_container_header_size(const char *set_key)
{
    return SLUICE_CONTAINER_HEADER_FIXED + sluice_pad8(strlen(set_key));
}

uint64_t sluice_container_data_start(const char *set_key, uint32_t block_size)
{
    return sluice_align_up(sluice_container_header_size(set_key), block_size);
}

static int block_ok(uint32_t b)
{
    return is_pow2(b) && b >= SLUICE_CONTAINER_BLOCK_MIN && b <= SLUICE_CONTAINER_BLOCK_MAX;
}

/* CRC of a header: the fixed part before the CRC field, then the key and its padding. */
static uint32_t header_crc(const unsigned char *h, size_t header_size)
{
    uint32_t crc = sluice_crc32c_update(0, h, HDR_OFF_CRC);
    return sluice_crc32c_update(crc, h + SLUICE_CONTAINER_HEADER_FIXED,
                                header_size - SLUICE_CONTAINER_HEADER_FIXED);
}

uint32_t sluice_container_header_crc_(const unsigned char *h, size_t header_size)
{
    return header_crc(h, header_size);
}

long sluice_container_encode_header(const struct sluice_container_meta *meta, void *buf, size_t buflen)
{
    if (!meta->set_key || !block_ok(meta->block_size))
        return -EINVAL;
    size_t klen = strlen(meta->set_key);
    if (!sluice_container_key_ok(meta->set_key, klen) || (meta->flags & ~SLUICE_CONTAINER_F_KNOWN))
        return -EINVAL;
    size_t hs = sluice_container_header_size(meta->set_key);
    size_t alen = strnlen(meta->array_record, SLUICE_CONTAINER_ARRAY_MAX);
    if (alen == SLUICE_CONTAINER_ARRAY_MAX ||
        hs + sluice_pad8(alen) > SLUICE_CONTAINER_HEADER_FIXED + sluice_pad8(SLUICE_CONTAINER_KEY_MAX))
        return -EINVAL; /* the record follows the key inside the header's bound */
    size_t key_end = hs;
    hs += sluice_pad8(alen);
    if (buflen < hs)
        return -ENOSPC;
    unsigned char *h = buf;
    memset(h, 0, hs);
    memcpy(h, HDR_MAGIC, 8);
    put16(h + HDR_OFF_MAJOR, SLUICE_CONTAINER_FORMAT_MAJOR);
    put16(h + HDR_OFF_MINOR, alen ? SLUICE_CONTAINER_FORMAT_MINOR_ARRAY : SLUICE_CONTAINER_FORMAT_MINOR);
    put32(h + HDR_OFF_SIZE, (uint32_t)hs);
    put32(h + HDR_OFF_FLAGS, meta->flags);
    put32(h + HDR_OFF_BLOCK, meta->block_size);
    put64(h + HDR_OFF_VERSION, meta->version);
    put64(h + HDR_OFF_CREATED, (uint64_t)meta->created_ns);
    put32(h + HDR_OFF_NPROCS, meta->writer_nprocs);
    put32(h + HDR_OFF_PID, meta->writer_pid);
    /* Text fields are NUL-padded. A host name may fill its field (Linux allows 64 bytes); the
     * software's last byte stays NUL. */
    memcpy(h + HDR_OFF_HOST, meta->writer_host, strnlen(meta->writer_host, SLUICE_CONTAINER_HOST_MAX));
    memcpy(h + HDR_OFF_SOFTWARE, meta->writer_software,
           strnlen(meta->writer_software, SLUICE_CONTAINER_SOFTWARE_MAX - 1));
    put16(h + HDR_OFF_CSUM_ALGO, HDR_CSUM_CRC32C);
    put16(h + HDR_OFF_KEY_LEN, (uint16_t)klen);
    memcpy(h + SLUICE_CONTAINER_HEADER_FIXED, meta->set_key, klen);
    put16(h + HDR_OFF_ARRAY_LEN, (uint16_t)alen);
    memcpy(h + key_end, meta->array_record, alen);
    put32(h + HDR_OFF_CRC, header_crc(h, hs));
    return (long)hs;
}

#define PLACE_LIMIT (UINT64_C(1) << 63) /* an off_t holds every offset handed out */

/* v rounded up to the power of two a, or PLACE_LIMIT when that reaches the limit. */
static uint64_t place_align(uint64_t v, uint64_t a)
{
    uint64_t r = (v + a - 1) & ~(a - 1);
    return r < v || r >= PLACE_LIMIT ? PLACE_LIMIT : r;
}

int sluice_container_place(const uint64_t *bytes, size_t n, uint64_t block_size, uint64_t data_start,
                           uint64_t *offsets, uint64_t *data_end)
{
    if (block_size == 0 || (block_size & (block_size - 1)) || (n && (!bytes || !offsets)) || !data_end)
        return -EINVAL;
    uint64_t pos = place_align(data_start, block_size);
    if (pos == PLACE_LIMIT)
        return -EOVERFLOW;
    uint64_t end = pos;
    for (size_t i = 0; i < n; i++) {
        offsets[i] = pos;
        if (bytes[i] == 0)
            continue;
        if (bytes[i] >= PLACE_LIMIT - pos)
            return -EOVERFLOW;
        end = pos + bytes[i];
        pos = place_align(end, block_size);
        if (pos == PLACE_LIMIT)
            return -EOVERFLOW;
    }
    *data_end = end;
    return 0;
}

int sluice_container_layout(const uint64_t *sizes, uint32_t n, uint32_t block_size, uint64_t data_start,
                            uint64_t *offsets, uint64_t *data_end)
{
    if (!block_ok(block_size))
        return -EINVAL;
    uint64_t end;
    int rc = sluice_container_place(sizes, n, block_size, data_start, offsets, &end);
    if (rc == 0)
        *data_end = sluice_pad8(end);
    return rc;
}

static size_t record_size(const struct sluice_member *m)
{
    return REC_FIXED + (size_t)m->n_extents * EXT_SIZE + sluice_pad8(strlen(m->path)) +
           (size_t)chunks_bytes(m->n_chunks);
}

static size_t index_size(const struct sluice_member *members, uint32_t n)
{
    size_t s = IDX_HEAD;
    for (uint32_t i = 0; i < n; i++)
        s += record_size(&members[i]);
    return s;
}

/* Format 1.1: the index and its footer twice (copy first, docs/FORMAT.md "Index copy"). */
size_t sluice_container_tail_size(const struct sluice_member *members, uint32_t n)
{
    return 2 * (index_size(members, n) + SLUICE_CONTAINER_FOOTER_SIZE);
}

/* A footer (magic FTR_MAGIC, or FTC_MAGIC for the copy's) describing the index at `at`. */
static void encode_footer(unsigned char *f, const char *magic, uint16_t minor, uint32_t n, uint64_t at,
                          uint64_t len, uint64_t file_size, uint64_t version, uint32_t index_crc,
                          uint32_t header_crc)
{
    memcpy(f, magic, 8);
    put16(f + FTR_OFF_MAJOR, SLUICE_CONTAINER_FORMAT_MAJOR);
    put16(f + FTR_OFF_MINOR, minor);
    put32(f + FTR_OFF_COUNT, n);
    put64(f + FTR_OFF_INDEX_OFF, at);
    put64(f + FTR_OFF_INDEX_LEN, len);
    put64(f + FTR_OFF_FILE_SIZE, file_size);
    put64(f + FTR_OFF_VERSION, version);
    put32(f + FTR_OFF_INDEX_CRC, index_crc);
    put32(f + FTR_OFF_HEADER_CRC, header_crc);
    put32(f + FTR_OFF_CRC, sluice_crc32c_update(0, f, FTR_OFF_CRC));
}

/* The rules every member must satisfy (also applied by the decoder, container_decode.c). */
static int member_ok(const struct sluice_member *m, uint64_t data_start, uint64_t index_offset)
{
    if (!m->path || !sluice_container_path_ok(m->path, strlen(m->path)))
        return 0;
    if (m->n_extents && !m->extents)
        return 0;
    if (m->n_chunks && (!m->chunk_crc || !chunks_ok(m->size, m->chunk_size, m->n_chunks)))
        return 0;
    uint64_t next = 0;
    for (uint32_t e = 0; e < m->n_extents; e++) {
        const struct sluice_extent *x = &m->extents[e];
        if (x->length == 0 || x->logical < next || x->logical > m->size || x->length > m->size - x->logical)
            return 0;
        if (x->file_offset < data_start || x->file_offset > index_offset ||
            x->length > index_offset - x->file_offset)
            return 0;
        next = x->logical + x->length;
    }
    return 1;
}

/* The index of index_len bytes at p done: the footer of this copy, the primary index and the
 * footer proper, the last bytes of the file (an old reader sees a 1.0 tail). */
static long seal_tail(const struct sluice_container_meta *meta, unsigned char *p, size_t index_len,
                      uint32_t n, uint16_t minor, uint64_t index_offset, size_t ts)
{
    unsigned char hdr[SLUICE_CONTAINER_HEADER_FIXED + SLUICE_CONTAINER_KEY_MAX + 8];
    long hs = sluice_container_encode_header(meta, hdr, sizeof hdr);
    if (hs < 0)
        return hs;
    uint32_t icrc = sluice_crc32c_update(0, p, index_len), hcrc = get32(hdr + HDR_OFF_CRC);
    size_t half = index_len + SLUICE_CONTAINER_FOOTER_SIZE;
    uint64_t file_size = index_offset + ts;
    encode_footer(p + index_len, FTC_MAGIC, minor, n, index_offset, index_len, file_size, meta->version, icrc,
                  hcrc);
    memcpy(p + half, p, index_len);
    encode_footer(p + half + index_len, FTR_MAGIC, minor, n, index_offset + half, index_len, file_size,
                  meta->version, icrc, hcrc);
    return (long)ts;
}

long sluice_container_encode_tail(const struct sluice_container_meta *meta,
                                  const struct sluice_member *members, uint32_t n, uint64_t index_offset,
                                  void *buf, size_t buflen)
{
    if (!meta->set_key || !block_ok(meta->block_size) || (index_offset & 7))
        return -EINVAL;
    size_t klen = strlen(meta->set_key);
    if (!sluice_container_key_ok(meta->set_key, klen))
        return -EINVAL;
    uint64_t data_start = sluice_container_data_start(meta->set_key, meta->block_size);
    if (index_offset < sluice_container_header_size(meta->set_key))
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (!member_ok(&members[i], data_start, index_offset))
            return -EINVAL;
    size_t ts = sluice_container_tail_size(members, n);
    if (buflen < ts)
        return -ENOSPC;
    if (index_size(members, n) > INDEX_MAX)
        return -EINVAL;

    unsigned char *p = buf;
    memset(p, 0, ts);
    memcpy(p, IDX_MAGIC, 8);
    put32(p + 8, n);
    size_t at = IDX_HEAD;
    uint16_t minor = SLUICE_CONTAINER_FORMAT_MINOR; /* the footer's: 3 when the index has chunks */
    for (uint32_t i = 0; i < n; i++) {
        const struct sluice_member *m = &members[i];
        if (m->n_chunks)
            minor = SLUICE_CONTAINER_FORMAT_MINOR_CHUNKS;
        unsigned char *r = p + at;
        size_t rs = record_size(m), plen = strlen(m->path);
        put32(r + 0, (uint32_t)rs);
        put32(r + 4, (uint32_t)m->member_rank);
        put32(r + 8, (uint32_t)m->writer_rank);
        put32(r + 12, m->crc32c);
        put64(r + 16, m->size);
        put64(r + 24, (uint64_t)m->mtime_ns);
        put32(r + 32, m->n_extents);
        put16(r + 36, (uint16_t)plen);
        unsigned char *x = r + REC_FIXED;
        for (uint32_t e = 0; e < m->n_extents; e++, x += EXT_SIZE) {
            put64(x + 0, m->extents[e].logical);
            put64(x + 8, m->extents[e].file_offset);
            put64(x + 16, m->extents[e].length);
        }
        memcpy(x, m->path, plen);
        if (m->n_chunks) {
            unsigned char *k = x + sluice_pad8(plen);
            put32(k + 0, CHK_MAGIC);
            put32(k + 4, m->chunk_size);
            put32(k + 8, m->n_chunks);
            for (uint32_t j = 0; j < m->n_chunks; j++)
                put32(k + CHK_HEAD + 4 * (size_t)j, m->chunk_crc[j]);
        }
        at += rs;
    }
    return seal_tail(meta, p, at, n, minor, index_offset, ts);
}

long sluice_container_patch_tail(const struct sluice_container_meta *meta,
                                 const struct sluice_member *members, uint32_t n, uint64_t index_offset,
                                 void *buf, size_t buflen)
{
    size_t ts = sluice_container_tail_size(members, n);
    unsigned char *p = buf;
    if (!meta->set_key || buflen != ts || memcmp(p, IDX_MAGIC, 8) != 0 || get32(p + 8) != n)
        return -EINVAL;
    size_t at = IDX_HEAD;
    uint16_t minor = SLUICE_CONTAINER_FORMAT_MINOR;
    for (uint32_t i = 0; i < n; i++) {
        const struct sluice_member *m = &members[i];
        unsigned char *r = p + at;
        size_t rs = record_size(m), plen = m->path ? strlen(m->path) : 0;
        /* The shape the tail was encoded for; its extents were checked then. */
        if (!m->path || get32(r + 0) != rs || get32(r + 4) != (uint32_t)m->member_rank ||
            get64(r + 16) != m->size || get32(r + 32) != m->n_extents || get16(r + 36) != plen ||
            memcmp(r + REC_FIXED + (size_t)m->n_extents * EXT_SIZE, m->path, plen) != 0)
            return -EINVAL;
        if (m->n_chunks && (!m->chunk_crc || !chunks_ok(m->size, m->chunk_size, m->n_chunks)))
            return -EINVAL;
        put32(r + 12, m->crc32c);
        if (m->n_chunks) {
            unsigned char *k = r + REC_FIXED + (size_t)m->n_extents * EXT_SIZE + sluice_pad8(plen);
            if (get32(k) != CHK_MAGIC || get32(k + 4) != m->chunk_size || get32(k + 8) != m->n_chunks)
                return -EINVAL;
            for (uint32_t j = 0; j < m->n_chunks; j++)
                put32(k + CHK_HEAD + 4 * (size_t)j, m->chunk_crc[j]);
            minor = SLUICE_CONTAINER_FORMAT_MINOR_CHUNKS;
        }
        at += rs;
    }
    return seal_tail(meta, p, at, n, minor, index_offset, ts);
}
