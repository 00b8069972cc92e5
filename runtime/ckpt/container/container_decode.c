/* SPDX-License-Identifier: MIT */
/* The validating decoder: header, footer and index of a container, from a file or from an
 * image in memory, into a struct sluice_container. Every length and offset read from the file
 * is checked against the bytes that really exist before it is used (hostile input must never
 * crash or over-read: tests/unit/test_container_hostile.cpp corrupts and truncates at every
 * offset). Order of checks: header (is it a container at all), footer (is it complete: the
 * footer must be the last 64 bytes and agree with the file size), index checksum, index
 * structure. Member data is not read here. A format 1.1 container whose footer or index fails
 * its checksum (bit rot, a flipped byte) is read through the copy of its index instead. */
#include "ckpt/container/container_internal.h"

#include "ckpt/container/container_array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FAIL(...) sluice_container_fail(-EIO, err, errlen, __VA_ARGS__)

struct source {
    int fd;                     /* >= 0: pread from it */
    const unsigned char *image; /* else: the bytes */
    uint64_t size;
};

/* Bounds were checked by the caller: off + n <= size. */
static int fetch(const struct source *s, uint64_t off, size_t n, void *buf)
{
    if (s->image) {
        memcpy(buf, s->image + off, n);
        return 0;
    }
    return sluice_container_pread_full(s->fd, buf, n, off);
}

struct decoded_header {
    uint16_t major, minor;
    uint32_t header_size, flags, block_size, crc, pid, nprocs;
    uint64_t version;
    int64_t created_ns;
    char host[SLUICE_CONTAINER_HOST_MAX + 1], software[SLUICE_CONTAINER_SOFTWARE_MAX];
    uint16_t key_len;
    char key[SLUICE_CONTAINER_KEY_MAX + 1];
    char array[SLUICE_CONTAINER_ARRAY_MAX];
};

/* The record's headers and array lie in the data region, headers before the array. */
static int array_fits(const char *record, uint64_t data_start, uint64_t index_offset)
{
    struct sluice_array a;
    if (!record[0])
        return 1;
    if (sluice_array_parse(record, &a, NULL, 0) != 0)
        return 0;
    uint64_t bytes = sluice_array_bytes(&a), heads = a.header * (uint64_t)a.nprocs;
    return a.header_offset >= data_start && a.header <= UINT64_MAX / a.nprocs &&
           a.array_offset >= a.header_offset && heads <= a.array_offset - a.header_offset &&
           a.array_offset <= index_offset && bytes <= index_offset - a.array_offset;
}

/* Format 1.2: the array layout record after the key (empty in older files, whose reserved
 * bytes are zero). It must parse as a record: container_array.c. */
static int decode_array_record(const char *name, const unsigned char *h, struct decoded_header *d, char *err,
                               size_t errlen)
{
    uint16_t alen = get16(h + HDR_OFF_ARRAY_LEN);
    size_t at = SLUICE_CONTAINER_HEADER_FIXED + sluice_pad8(d->key_len);
    d->array[0] = 0;
    if (alen == 0)
        return 0;
    if (alen >= SLUICE_CONTAINER_ARRAY_MAX || at + alen > d->header_size)
        return FAIL("%s: corrupt header (array layout record of %u bytes)", name, alen);
    memcpy(d->array, h + at, alen);
    d->array[alen] = 0;
    struct sluice_array a;
    char why[256];
    if (memchr(d->array, 0, alen) || sluice_array_parse(d->array, &a, why, sizeof why) != 0 || a.nprocs == 0)
        return FAIL("%s: corrupt header (array layout record: %s)", name,
                    memchr(d->array, 0, alen) ? "holds a NUL"
                    : a.nprocs                ? why
                                              : "no nprocs");
    return 0;
}

static int decode_header(const char *name, const struct source *s, struct decoded_header *d, char *err,
                         size_t errlen)
{
    unsigned char h[SLUICE_CONTAINER_HEADER_FIXED + SLUICE_CONTAINER_KEY_MAX + 8];
    if (s->size < 8)
        return FAIL("%s: not a sluice container (%llu bytes, too short for a header)", name,
                    (unsigned long long)s->size);
    int rc = fetch(s, 0, 8, h);
    if (rc < 0)
        return sluice_container_fail(rc, err, errlen, "%s: read failed: %s", name, strerror(-rc));
    if (memcmp(h, HDR_MAGIC, 8) != 0)
        return FAIL("%s: not a sluice container (bad magic)", name);
    if (s->size < SLUICE_CONTAINER_HEADER_FIXED + SLUICE_CONTAINER_FOOTER_SIZE)
        return FAIL("%s: truncated: %llu bytes, smaller than header and footer", name,
                    (unsigned long long)s->size);
    rc = fetch(s, 0, SLUICE_CONTAINER_HEADER_FIXED, h);
    if (rc < 0)
        return sluice_container_fail(rc, err, errlen, "%s: read failed: %s", name, strerror(-rc));
    d->major = get16(h + HDR_OFF_MAJOR);
    d->minor = get16(h + HDR_OFF_MINOR);
    if (d->major != SLUICE_CONTAINER_FORMAT_MAJOR)
        return FAIL("%s: format version %u.%u is not supported (this reader knows %u.x)", name, d->major,
                    d->minor, SLUICE_CONTAINER_FORMAT_MAJOR);
    d->header_size = get32(h + HDR_OFF_SIZE);
    d->key_len = get16(h + HDR_OFF_KEY_LEN);
    if (d->key_len == 0 || d->key_len > SLUICE_CONTAINER_KEY_MAX ||
        d->header_size < SLUICE_CONTAINER_HEADER_FIXED + d->key_len ||
        d->header_size > SLUICE_CONTAINER_HEADER_FIXED + sluice_pad8(SLUICE_CONTAINER_KEY_MAX) ||
        (d->header_size & 7))
        return FAIL("%s: corrupt header (header size %u, set key length %u)", name, d->header_size,
                    d->key_len);
    if (d->header_size > s->size - SLUICE_CONTAINER_FOOTER_SIZE)
        return FAIL("%s: truncated: header of %u bytes does not fit before a footer", name, d->header_size);
    rc = fetch(s, SLUICE_CONTAINER_HEADER_FIXED, d->header_size - SLUICE_CONTAINER_HEADER_FIXED,
               h + SLUICE_CONTAINER_HEADER_FIXED);
    if (rc < 0)
        return sluice_container_fail(rc, err, errlen, "%s: read failed: %s", name, strerror(-rc));
    d->crc = get32(h + HDR_OFF_CRC);
    if (sluice_container_header_crc_(h, d->header_size) != d->crc)
        return FAIL("%s: corrupt header (checksum mismatch)", name);
    /* From here on the header is what the writer wrote: remaining checks catch writers bugs
     * and future formats rather than bit rot. */
    d->flags = get32(h + HDR_OFF_FLAGS);
    if (d->flags & 0xffff0000u & ~SLUICE_CONTAINER_F_KNOWN)
        return FAIL("%s: uses features this reader does not know (flags 0x%x)", name, d->flags);
    d->block_size = get32(h + HDR_OFF_BLOCK);
    if (!is_pow2(d->block_size) || d->block_size < SLUICE_CONTAINER_BLOCK_MIN ||
        d->block_size > SLUICE_CONTAINER_BLOCK_MAX)
        return FAIL("%s: corrupt header (block size %u)", name, d->block_size);
    if (get16(h + HDR_OFF_CSUM_ALGO) != HDR_CSUM_CRC32C)
        return FAIL("%s: unknown checksum algorithm %u", name, get16(h + HDR_OFF_CSUM_ALGO));
    memcpy(d->key, h + SLUICE_CONTAINER_HEADER_FIXED, d->key_len);
    d->key[d->key_len] = 0;
    if (!sluice_container_key_ok(d->key, d->key_len))
        return FAIL("%s: corrupt header (set key is not an absolute path with %%r)", name);
    rc = decode_array_record(name, h, d, err, errlen);
    if (rc < 0)
        return rc;
    d->version = get64(h + HDR_OFF_VERSION);
    d->created_ns = (int64_t)get64(h + HDR_OFF_CREATED);
    d->nprocs = get32(h + HDR_OFF_NPROCS);
    d->pid = get32(h + HDR_OFF_PID);
    memcpy(d->host, h + HDR_OFF_HOST, SLUICE_CONTAINER_HOST_MAX);
    d->host[SLUICE_CONTAINER_HOST_MAX] = 0;
    memcpy(d->software, h + HDR_OFF_SOFTWARE, sizeof d->software);
    d->software[sizeof d->software - 1] = 0;
    return 0;
}

struct decoded_footer {
    uint32_t count, index_crc;
    uint64_t index_offset, index_length;
};

/* *damaged is set when the footer fails its magic or checksum: then the index copy may help. */
static int decode_footer(const char *name, const struct source *s, const struct decoded_header *h,
                         struct decoded_footer *d, int *damaged, char *err, size_t errlen)
{
    unsigned char f[SLUICE_CONTAINER_FOOTER_SIZE];
    uint64_t at = s->size - SLUICE_CONTAINER_FOOTER_SIZE;
    int rc = fetch(s, at, sizeof f, f);
    if (rc < 0)
        return sluice_container_fail(rc, err, errlen, "%s: read failed: %s", name, strerror(-rc));
    *damaged = 1;
    if (memcmp(f, FTR_MAGIC, 8) != 0)
        return FAIL("%s: truncated or incomplete: no footer in the last %u bytes (file is %llu "
                    "bytes)",
                    name, SLUICE_CONTAINER_FOOTER_SIZE, (unsigned long long)s->size);
    if (sluice_crc32c_update(0, f, FTR_OFF_CRC) != get32(f + FTR_OFF_CRC))
        return FAIL("%s: corrupt footer (checksum mismatch)", name);
    *damaged = 0;
    uint64_t recorded = get64(f + FTR_OFF_FILE_SIZE);
    if (recorded != s->size)
        return FAIL("%s: truncated or damaged: footer says %llu bytes, file has %llu", name,
                    (unsigned long long)recorded, (unsigned long long)s->size);
    if (get16(f + FTR_OFF_MAJOR) != h->major)
        return FAIL("%s: footer and header disagree on the format version", name);
    if (get64(f + FTR_OFF_VERSION) != h->version || get32(f + FTR_OFF_HEADER_CRC) != h->crc)
        return FAIL("%s: footer does not belong to this header (mixed versions?)", name);
    d->count = get32(f + FTR_OFF_COUNT);
    d->index_offset = get64(f + FTR_OFF_INDEX_OFF);
    d->index_length = get64(f + FTR_OFF_INDEX_LEN);
    d->index_crc = get32(f + FTR_OFF_INDEX_CRC);
    if (d->index_offset < h->header_size || (d->index_offset & 7) || d->index_length < IDX_HEAD ||
        d->index_length > INDEX_MAX || d->index_offset > at || d->index_length != at - d->index_offset)
        return FAIL("%s: corrupt footer (index at %llu, %llu bytes)", name,
                    (unsigned long long)d->index_offset, (unsigned long long)d->index_length);
    return 0;
}

/* Reads the index the footer describes and checks its checksum (*damaged set if it fails). */
static int load_index(const char *name, const struct source *s, const struct decoded_footer *f,
                      unsigned char **out, int *damaged, char *err, size_t errlen)
{
    unsigned char *idx = malloc(f->index_length);
    if (!idx)
        return sluice_container_fail(-ENOMEM, err, errlen, "%s: no memory for a %llu-byte index", name,
                                     (unsigned long long)f->index_length);
    int rc = fetch(s, f->index_offset, f->index_length, idx);
    if (rc < 0) {
        free(idx);
        return sluice_container_fail(rc, err, errlen, "%s: read failed: %s", name, strerror(-rc));
    }
    if (sluice_crc32c_update(0, idx, f->index_length) != f->index_crc) {
        free(idx);
        *damaged = 1;
        return FAIL("%s: corrupt index (checksum mismatch)", name);
    }
    *out = idx;
    return 0;
}

/* The index copy's footer at `at`, if it is one that belongs to this file and header: the
 * copy lies just before it and the index proper, of the same length, just after it. */
static int try_copy_at(const struct source *s, const struct decoded_header *h, uint64_t at,
                       struct decoded_footer *d, unsigned char **out)
{
    unsigned char f[SLUICE_CONTAINER_FOOTER_SIZE];
    if (at > s->size - 2 * SLUICE_CONTAINER_FOOTER_SIZE || fetch(s, at, sizeof f, f) != 0 ||
        memcmp(f, FTC_MAGIC, 8) != 0 || sluice_crc32c_update(0, f, FTR_OFF_CRC) != get32(f + FTR_OFF_CRC))
        return -1;
    uint64_t io = get64(f + FTR_OFF_INDEX_OFF), il = get64(f + FTR_OFF_INDEX_LEN);
    if (get64(f + FTR_OFF_FILE_SIZE) != s->size || get16(f + FTR_OFF_MAJOR) != h->major ||
        get64(f + FTR_OFF_VERSION) != h->version || get32(f + FTR_OFF_HEADER_CRC) != h->crc ||
        il < IDX_HEAD || il > INDEX_MAX || (io & 7) || io < h->header_size || io > at || at - io != il ||
        s->size - at - 2 * SLUICE_CONTAINER_FOOTER_SIZE != il)
        return -1;
    struct decoded_footer c = {.count = get32(f + FTR_OFF_COUNT),
                               .index_crc = get32(f + FTR_OFF_INDEX_CRC),
                               .index_offset = io,
                               .index_length = il};
    int damaged = 0;
    if (load_index("", s, &c, out, &damaged, NULL, 0) != 0)
        return -1;
    *d = c;
    return 0;
}

/* Finds the index copy of a format 1.1 container whose footer or index is damaged: right
 * before the index proper when the footer is intact, else by a backward scan of the tail
 * (8-byte steps, at most the largest index). 0 with the copy's footer and index, or -1. */
static int load_copy(const struct source *s, const struct decoded_header *h, const struct decoded_footer *f,
                     struct decoded_footer *d, unsigned char **out)
{
    if (f)
        return f->index_offset >= SLUICE_CONTAINER_FOOTER_SIZE
                   ? try_copy_at(s, h, f->index_offset - SLUICE_CONTAINER_FOOTER_SIZE, d, out)
                   : -1;
    if (s->size < h->header_size + IDX_HEAD + 2 * SLUICE_CONTAINER_FOOTER_SIZE)
        return -1;
    uint64_t hi = (s->size - 2 * SLUICE_CONTAINER_FOOTER_SIZE) & ~(uint64_t)7;
    uint64_t lo = hi > INDEX_MAX ? hi - INDEX_MAX : 0;
    if (lo < h->header_size)
        lo = (h->header_size + 7) & ~(uint64_t)7;
    if (hi < lo)
        return -1;
    enum { WINDOW = 64 * 1024 };
    unsigned char *w = malloc(WINDOW);
    if (!w)
        return -1;
    int rc = -1;
    for (uint64_t top = hi; rc != 0;) { /* candidates top, top - 8, ... down to bottom */
        uint64_t bottom = top - lo >= WINDOW ? top - WINDOW + 8 : lo;
        if (fetch(s, bottom, (size_t)(top + 8 - bottom), w) != 0)
            break;
        for (uint64_t at = top + 8; rc != 0 && at > bottom;) {
            at -= 8;
            if (memcmp(w + (at - bottom), FTC_MAGIC, 8) == 0)
                rc = try_copy_at(s, h, at, d, out);
        }
        if (bottom == lo)
            break;
        top = bottom - 8;
    }
    free(w);
    return rc;
}

/* Walks the index records. Pass 1 (c == NULL) validates and counts; pass 2 fills c. */
/* A record's chunk checksums (format 1.3): rest bytes after its path, when they begin with
 * CHK_MAGIC, must be exactly the chunks of a size-byte member. 0 (*n, *size_out; *n = 0 when
 * the bytes are reserved ones) or -1 when they are inconsistent. */
static int record_chunks(const unsigned char *k, uint64_t rest, uint64_t size, uint32_t *chunk_size,
                         uint32_t *n)
{
    *n = 0;
    if (rest < CHK_HEAD || get32(k) != CHK_MAGIC)
        return 0;
    *chunk_size = get32(k + 4);
    *n = get32(k + 8);
    return chunks_ok(size, *chunk_size, *n) && chunks_bytes(*n) <= rest ? 0 : -1;
}

static int walk_index(const char *name, const unsigned char *idx, uint64_t len, uint32_t count,
                      uint64_t data_start, uint64_t index_offset, uint64_t *n_ext, uint64_t *path_bytes,
                      uint64_t *n_chunk, struct sluice_container *c, struct sluice_extent *ext,
                      uint32_t *chunk, char *str, char *err, size_t errlen)
{
    uint64_t at = IDX_HEAD;
    *n_ext = 0;
    *path_bytes = 0;
    *n_chunk = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (len - at < REC_FIXED)
            return FAIL("%s: corrupt index (record %u of %u runs past its end)", name, i, count);
        const unsigned char *r = idx + at;
        uint32_t rs = get32(r);
        uint32_t ne = get32(r + 32);
        uint16_t plen = get16(r + 36);
        uint64_t need = REC_FIXED + (uint64_t)ne * EXT_SIZE + sluice_pad8(plen);
        if ((rs & 7) || rs < need || rs > len - at)
            return FAIL("%s: corrupt index (record %u: length %u, %u extents, path %u bytes)", name, i, rs,
                        ne, plen);
        const char *path = (const char *)r + REC_FIXED + (size_t)ne * EXT_SIZE;
        if (!sluice_container_path_ok(path, plen))
            return FAIL("%s: corrupt index (record %u: bad member path)", name, i);
        uint64_t size = get64(r + 16);
        if (size > (uint64_t)INT64_MAX)
            return FAIL("%s: corrupt index (member %.*s claims %llu bytes, more than any file can hold)",
                        name, (int)plen, path, (unsigned long long)size);
        uint64_t next = 0;
        const unsigned char *x = r + REC_FIXED;
        for (uint32_t e = 0; e < ne; e++, x += EXT_SIZE) {
            uint64_t lo = get64(x), fo = get64(x + 8), ln = get64(x + 16);
            if (ln == 0 || lo < next || lo > size || ln > size - lo || fo < data_start || fo > index_offset ||
                ln > index_offset - fo)
                return FAIL("%s: corrupt index (member %.*s: extent %u [%llu+%llu at %llu] "
                            "outside the member or the data region)",
                            name, (int)plen, path, e, (unsigned long long)lo, (unsigned long long)ln,
                            (unsigned long long)fo);
            next = lo + ln;
            if (c) {
                ext[e] = (struct sluice_extent){.logical = lo, .file_offset = fo, .length = ln};
            }
        }
        uint32_t csize = 0, nc = 0;
        if (record_chunks((const unsigned char *)path + sluice_pad8(plen), rs - need, size, &csize, &nc))
            return FAIL("%s: corrupt index (member %.*s: chunk checksums do not fit the member)", name,
                        (int)plen, path);
        if (c) {
            struct sluice_member *m = &c->members[i];
            for (uint32_t j = 0; j < nc; j++)
                chunk[j] = get32((const unsigned char *)path + sluice_pad8(plen) + CHK_HEAD + 4 * (size_t)j);
            m->chunk_size = nc ? csize : 0;
            m->n_chunks = nc;
            m->chunk_crc = nc ? chunk : NULL;
            chunk += nc;
            memcpy(str, path, plen);
            str[plen] = 0;
            m->path = str;
            m->member_rank = (int32_t)get32(r + 4);
            m->writer_rank = (int32_t)get32(r + 8);
            m->crc32c = get32(r + 12);
            m->size = size;
            m->mtime_ns = (int64_t)get64(r + 24);
            m->n_extents = ne;
            m->extents = ext;
            ext += ne;
            str += plen + 1;
        }
        *n_ext += ne;
        *n_chunk += nc;
        *path_bytes += (uint64_t)plen + 1;
        at += rs;
    }
    if (at != len)
        return FAIL("%s: corrupt index (%llu bytes after %u records)", name, (unsigned long long)(len - at),
                    count);
    return 0;
}

static int decode(const char *name, const struct source *s, struct sluice_container **out, char *err,
                  size_t errlen)
{
    struct decoded_header h = {0};
    struct decoded_footer f = {0};
    int rc = decode_header(name, s, &h, err, errlen);
    if (rc < 0)
        return rc;
    int damaged = 0, from_copy = 0;
    unsigned char *idx = NULL;
    rc = decode_footer(name, s, &h, &f, &damaged, err, errlen);
    int footer_ok = rc == 0;
    if (rc == 0)
        rc = load_index(name, s, &f, &idx, &damaged, err, errlen);
    char damage[256] = "";
    if (rc == -EIO && damaged && h.minor >= 1) {
        snprintf(damage, sizeof damage, "%s", err ? err : "damaged index or footer");
        struct decoded_footer copy;
        if (load_copy(s, &h, footer_ok ? &f : NULL, &copy, &idx) == 0) {
            from_copy = 1;
            f = copy;
        }
    }
    if (!from_copy && rc < 0)
        return rc;
    if (memcmp(idx, IDX_MAGIC, 8) != 0 || get32(idx + 8) != f.count) {
        free(idx);
        return FAIL("%s: corrupt index (bad magic or member count)", name);
    }
    /* A record is at least REC_FIXED bytes: bounds the count before anything is allocated. */
    if (f.count > (f.index_length - IDX_HEAD) / REC_FIXED) {
        free(idx);
        return FAIL("%s: corrupt index (%u members cannot fit in %llu bytes)", name, f.count,
                    (unsigned long long)f.index_length);
    }
    uint64_t data_start = sluice_align_up(h.header_size, h.block_size);
    uint64_t n_ext, path_bytes, n_chunk;
    rc = walk_index(name, idx, f.index_length, f.count, data_start, f.index_offset, &n_ext, &path_bytes,
                    &n_chunk, NULL, NULL, NULL, NULL, err, errlen);
    if (rc < 0) {
        free(idx);
        return rc;
    }

    /* One allocation: the struct, members, extents, then strings (paths, key, name). */
    size_t name_len = strlen(name);
    size_t off_members = sluice_pad8(sizeof(struct sluice_container));
    size_t off_ext = off_members + (size_t)f.count * sizeof(struct sluice_member);
    size_t off_chunk = off_ext + (size_t)n_ext * sizeof(struct sluice_extent);
    size_t off_str = off_chunk + (size_t)n_chunk * sizeof(uint32_t);
    size_t total = off_str + (size_t)path_bytes + h.key_len + 1 + name_len + 1;
    unsigned char *block = calloc(1, total);
    if (!block) {
        free(idx);
        return sluice_container_fail(-ENOMEM, err, errlen, "%s: no memory", name);
    }
    struct sluice_container *c = (struct sluice_container *)block;
    c->members = (struct sluice_member *)(block + off_members);
    char *str = (char *)block + off_str;
    walk_index(name, idx, f.index_length, f.count, data_start, f.index_offset, &n_ext, &path_bytes, &n_chunk,
               c, (struct sluice_extent *)(block + off_ext), (uint32_t *)(block + off_chunk), str, err,
               errlen);
    free(idx);
    str += path_bytes;
    memcpy(str, h.key, h.key_len + 1);
    c->meta.set_key = str;
    str += h.key_len + 1;
    memcpy(str, name, name_len + 1);
    c->path = str;

    c->fd = s->fd;
    c->image = s->image;
    c->format_major = h.major;
    c->format_minor = h.minor;
    c->meta.flags = h.flags;
    c->meta.block_size = h.block_size;
    c->meta.version = h.version;
    c->meta.created_ns = h.created_ns;
    c->meta.writer_nprocs = h.nprocs;
    c->meta.writer_pid = h.pid;
    memcpy(c->meta.writer_host, h.host, sizeof h.host);
    memcpy(c->meta.writer_software, h.software, sizeof h.software);
    memcpy(c->meta.array_record, h.array, sizeof h.array);
    if (!array_fits(h.array, data_start, f.index_offset)) {
        free(block);
        return FAIL("%s: corrupt header (array layout record places data outside the data region)", name);
    }
    c->file_size = s->size;
    c->header_size = h.header_size;
    c->data_start = data_start;
    c->index_offset = f.index_offset;
    c->index_length = f.index_length;
    c->index_crc32c = f.index_crc;
    c->n_members = f.count;
    c->index_from_copy = from_copy;
    if (from_copy)
        snprintf(c->damage, sizeof c->damage, "%s", damage);
    *out = c;
    return 0;
}

int sluice_container_parse(const void *image, size_t len, const char *name, struct sluice_container **out,
                           char *err, size_t errlen)
{
    struct source s = {.fd = -1, .image = image, .size = len};
    return decode(name, &s, out, err, errlen);
}

int sluice_container_open(const char *path, struct sluice_container **out, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO or device planted under a container's name must not block the open;
     * the type is checked right after (reads of a regular file ignore the flag). */
    int fd = CIO->open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        return sluice_container_fail(-e, err, errlen, "%s: %s", path, strerror(e));
    }
    struct stat st;
    if (CIO->fstat(fd, &st) != 0) {
        int e = errno;
        CIO->close(fd);
        return sluice_container_fail(-e, err, errlen, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        CIO->close(fd);
        return sluice_container_fail(-EIO, err, errlen,
                                     "%s: not a sluice container (not a "
                                     "regular file)",
                                     path);
    }
    struct source s = {.fd = fd, .image = NULL, .size = (uint64_t)st.st_size};
    int rc = decode(path, &s, out, err, errlen);
    if (rc < 0)
        CIO->close(fd);
    return rc;
}

void sluice_container_close(struct sluice_container *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        CIO->close(c->fd);
    free(c);
}
