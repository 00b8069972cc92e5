/* SPDX-License-Identifier: MIT */
/* The checkpoint container: one file per checkpoint set (docs/FORMAT.md is the normative
 * description of the bytes). This header is the contract between the container code (pure:
 * no MPI, no interposition; linked into libsluice.so, libsluice_util.a, sluice-ckpt and the
 * unit tests) and its users: the commit engine (writes header, member data, index+footer),
 * capture (restart reads, directory listings) and the sluice-ckpt tool.
 *
 * File layout (all integers little endian, offsets absolute from byte 0):
 *
 *   [header: fixed 160 bytes + set key]  [pad to block_size]
 *   [member data: extents, each starting at a multiple of block_size, anywhere before the index]
 *   [index: one record per member (path, ranks, size, checksum, extents)]
 *   [footer: fixed 64 bytes, the last bytes of the file; locates and checksums the index]
 *
 * Member data placement is NOT implied by the index order: every member lists its extents
 * (logical offset in the member, file offset, length). A member may have zero extents (empty or
 * all holes), one (the usual case) or many (holes, or a member split across the stripe-aligned
 * file domains of several two-phase aggregators). Bytes of a member that no extent covers read
 * as zeros (holes).
 *
 * Every function that can fail returns 0 or a positive count on success and -errno on failure,
 * and, where it takes (char *err, size_t errlen), writes one line (no newline) that names the
 * container and, for member errors, the member: e.g.
 *   "/run/chk_10/rank_@r.bin.sluice: member /run/chk_10/rank_3.bin (rank 3): checksum mismatch"
 * Corrupt or truncated input gives -EIO. Nothing here prints anything. */
#ifndef SLUICE_CKPT_CONTAINER_CONTAINER_H
#define SLUICE_CKPT_CONTAINER_CONTAINER_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/host_name.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- format constants ---------------------------------------------------------------------- */

#define SLUICE_CONTAINER_FORMAT_MAJOR 1        /* a reader rejects another major */
#define SLUICE_CONTAINER_FORMAT_MINOR 1        /* a reader accepts any minor of its major; 1: index copy */
#define SLUICE_CONTAINER_FORMAT_MINOR_ARRAY 2  /* written when the header holds an array layout record */
#define SLUICE_CONTAINER_ARRAY_MAX 512         /* bytes of an array layout record, its NUL included */
#define SLUICE_CONTAINER_FORMAT_MINOR_CHUNKS 3 /* member records may carry chunk checksums */
#define SLUICE_CONTAINER_CHUNK_MIN 512u        /* chunk sizes: powers of two in [MIN, MAX] */
#define SLUICE_CONTAINER_CHUNK_MAX (1u << 30)
#define SLUICE_CONTAINER_SUFFIX ".sluice"
/* Marker of a virtual per-rank folder, ".<rel>.sluice-dir" beside the containers
 * (runtime/ckpt/capture/capture_vdirs.c); reserved like container names. */
#define SLUICE_VDIR_MARKER_SUFFIX ".sluice-dir"
#define SLUICE_CONTAINER_HEADER_FIXED 160u /* header bytes before the set key */
#define SLUICE_CONTAINER_FOOTER_SIZE 64u
#define SLUICE_CONTAINER_BLOCK_MIN 512u
#define SLUICE_CONTAINER_BLOCK_MAX (64u << 20)
#define SLUICE_CONTAINER_HOST_MAX SLUICE_HOST_NAME_MAX /* writer host name field, NUL-padded: may fill it */
#define SLUICE_CONTAINER_SOFTWARE_MAX 32               /* writer software field, NUL-padded */
#define SLUICE_CONTAINER_KEY_MAX 4095                  /* longest set key / member path, bytes */

/* Header flags. Bits 0-15 are "compatible" (a reader that does not know one ignores it);
 * bits 16-31 are "incompatible" (a reader that does not know one refuses the file). */
#define SLUICE_CONTAINER_F_PARTIAL                                                                           \
    0x1u /* set committed without all of its members (e.g. recover,                                          \
            or a member committed alone because its set could                                                \
            not complete) */
#define SLUICE_CONTAINER_F_KNOWN 0x1u

/* ---- checksums: CRC32C (Castagnoli), incremental ------------------------------------------- */

/* crc32c(a||b) == sluice_crc32c_update(sluice_crc32c_update(0, a), b). Start from 0.
 * Uses the SSE4.2 instruction when the CPU has it, slicing-by-8 otherwise; same results. */
uint32_t sluice_crc32c_update(uint32_t crc, const void *buf, size_t len);
/* Extends `crc` by `n` zero bytes (holes), without a buffer of n zeros. */
uint32_t sluice_crc32c_zeros(uint32_t crc, uint64_t n);
/* crc32c(A||B) from crc32c(A), crc32c(B) and |B|: for a member whose pieces were checksummed
 * by different ranks (two-phase domains), joined in O(log len_b). */
uint32_t sluice_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);
/* The software path alone (for tests and benchmarks comparing the two). */
uint32_t sluice_crc32c_update_sw(uint32_t crc, const void *buf, size_t len);
/* 1 if sluice_crc32c_update uses the hardware instruction. */
int sluice_crc32c_hw_available(void);

/* ---- the decoded form (what writers fill in and readers get back) ---------------------------- */

struct sluice_extent {
    uint64_t logical;     /* offset within the member */
    uint64_t file_offset; /* offset within the container file */
    uint64_t length;      /* bytes; > 0 */
};

struct sluice_member {
    const char *path;    /* absolute path as the program named it, NUL-terminated */
    int32_t member_rank; /* the rank number in the name */
    int32_t writer_rank; /* launcher rank that wrote it (-1 if unknown) */
    uint64_t size;       /* logical size in bytes */
    int64_t mtime_ns;    /* modification time the program would have seen (ns since epoch) */
    uint32_t crc32c;     /* CRC32C of the logical bytes [0, size), holes as zeros */
    uint32_t n_extents;
    const struct sluice_extent *extents; /* sorted by logical, non-overlapping, inside size */
    /* Format 1.3 (optional, 0 for none): CRC32C of each chunk_size bytes of the logical bytes,
     * chunk j being [j * chunk_size, min((j + 1) * chunk_size, size)), holes as zeros; so that
     * a reader of part of a member verifies only the chunks it reads (docs/FORMAT.md). */
    uint32_t chunk_size;
    uint32_t n_chunks; /* ceil(size / chunk_size) */
    const uint32_t *chunk_crc;
};

struct sluice_container_meta {
    const char *set_key;    /* e.g. "/run/chk_10/rank_%r.bin"; at most SLUICE_CONTAINER_KEY_MAX */
    uint32_t flags;         /* SLUICE_CONTAINER_F_* */
    uint32_t block_size;    /* power of two in [BLOCK_MIN, BLOCK_MAX] */
    uint64_t version;       /* version of the set, 1 for the first commit, +1 each commit */
    int64_t created_ns;     /* creation time, ns since the epoch */
    uint32_t writer_nprocs; /* size of the job that wrote it */
    uint32_t writer_pid;    /* pid of the process that wrote the index */
    char writer_host[SLUICE_CONTAINER_HOST_MAX + 1];     /* NUL-terminated (SLUICE_HOST_NAME_MAX) */
    char writer_software[SLUICE_CONTAINER_SOFTWARE_MAX]; /* e.g. "sluice 0.1.0" */
    /* Format 1.2: the set is one global array (container_array.h, docs/LAYOUT.md); its layout
     * record, "" for a set of plain members. */
    char array_record[SLUICE_CONTAINER_ARRAY_MAX];
};

/* ---- writer side ------------------------------------------------------------------------- */

/* Bytes of the encoded header for this set key (fixed part + key, rounded up to 8). */
size_t sluice_container_header_size(const char *set_key);
/* First byte where member data may start: header size rounded up to block_size. */
uint64_t sluice_container_data_start(const char *set_key, uint32_t block_size);

/* Encodes the header into buf. Returns the number of bytes written (header_size) or -EINVAL
 * (bad block size, key too long or not containing "%r") / -ENOSPC (buf too small). */
long sluice_container_encode_header(const struct sluice_container_meta *meta, void *buf, size_t buflen);

/* The block-aligned layout, the one placement rule of every writer (sluice_container_layout,
 * the commit planner's sluice_plan_direct, sluice_container_write): from data_start rounded up
 * to block_size, member i (in the order given) that takes bytes[i] > 0 bytes of the file starts
 * at the first block boundary at or after the end of the member placed before it; a member of
 * 0 bytes gets the current position and takes no space. offsets[i] receives member i's first
 * byte, *data_end one past the last byte placed (the rounded data start if none). block_size
 * is a power of two >= 1; every offset, and each member's end rounded up to block_size, stays
 * below 2^63 (an off_t). 0, -EINVAL (block size) or -EOVERFLOW. */
int sluice_container_place(const uint64_t *bytes, size_t n, uint64_t block_size, uint64_t data_start,
                           uint64_t *offsets, uint64_t *data_end);

/* The simple layout: members one after another in the given order, each starting at a
 * multiple of block_size, from data_start (sluice_container_place). offsets[i] receives member
 * i's file offset (a zero-size member gets the current position and needs no extent);
 * *data_end receives the end of the last member's data, rounded up to 8 (where the index
 * goes). 0, -EINVAL (block size outside the format's range) or -EOVERFLOW.
 * The two-phase planner may instead choose its own extents (stripe-aligned domains): the
 * format only requires extents to lie in [data_start, index_offset). */
int sluice_container_layout(const uint64_t *sizes, uint32_t n, uint32_t block_size, uint64_t data_start,
                            uint64_t *offsets, uint64_t *data_end);

/* Bytes of index + footer for these members. */
size_t sluice_container_tail_size(const struct sluice_member *members, uint32_t n);

/* Encodes the index followed by the footer into buf, for writing at file offset index_offset
 * (>= the end of all member data, a multiple of 8). The resulting file size is
 * index_offset + tail_size. Validates what it encodes (extents sorted, inside the member and
 * inside [data_start, index_offset), paths absolute and short enough) so that a writer can
 * never produce a file its reader rejects. Returns tail_size or -EINVAL / -ENOSPC. */
long sluice_container_encode_tail(const struct sluice_container_meta *meta,
                                  const struct sluice_member *members, uint32_t n, uint64_t index_offset,
                                  void *buf, size_t buflen);

/* Rewrites, in a tail that sluice_container_encode_tail encoded for members of the same shape
 * (count, order, paths, sizes, extents and chunk counts), what is known only once the members'
 * bytes are written: each member's CRC32C and chunk checksums, then the index checksum, the
 * copy and both footers (the header's checksum from meta, whose flags may have changed). So a
 * home can encode the bulk of an index (a row per extent for a global array) while the data
 * moves. buflen: the tail's size. Returns it, or -EINVAL where the shape differs (encode it
 * afresh then). */
long sluice_container_patch_tail(const struct sluice_container_meta *meta,
                                 const struct sluice_member *members, uint32_t n, uint64_t index_offset,
                                 void *buf, size_t buflen);

/* A member's source for sluice_container_write(): either a descriptor (read with pread from
 * offset 0; holes found with SEEK_DATA/SEEK_HOLE are kept as holes) or a buffer. */
struct sluice_container_source {
    const char *path;
    int32_t member_rank;
    int32_t writer_rank;
    int64_t mtime_ns;
    int fd; /* >= 0: read from it; -1: use buf */
    const void *buf;
    uint64_t size; /* bytes of the member (for fd sources: its size) */
};

/* Writes a complete container to `fd` (an empty file, e.g. the temporary name) from whole
 * sources, checksumming while copying. Does not fsync or rename: the caller owns durability
 * and the atomic replacement. Used by recovery, by single-process commits and by tests.
 * Returns 0 or -errno with a message in err. */
int sluice_container_write(int fd, const struct sluice_container_meta *meta,
                           const struct sluice_container_source *src, uint32_t n, char *err, size_t errlen);

/* ---- reader side ------------------------------------------------------------------------- */

/* An opened, validated container. Everything it points to is owned by it. */
struct sluice_container {
    char *path; /* as given to open */
    int fd;     /* read-only, O_CLOEXEC; -1 for in-memory parses */
    uint16_t format_major, format_minor;
    struct sluice_container_meta meta; /* meta.set_key points into the container */
    uint64_t file_size;
    uint64_t header_size; /* encoded header bytes */
    uint64_t data_start;  /* header rounded up to block size */
    uint64_t index_offset, index_length;
    uint32_t index_crc32c;
    uint32_t n_members;
    struct sluice_member *members; /* in index order */
    const unsigned char *image;    /* in-memory parses: the bytes (not owned) */
    int index_from_copy;           /* the index or footer proper was damaged: read from its copy */
    char damage[256];              /* then: what was wrong with it (one line) */
};

/* Opens and validates header, footer and index (not member data). Returns 0 and *out, or
 * -errno: -ENOENT/-EACCES/... from open, -EIO with a message for anything corrupt: not a
 * container, truncated (footer missing or misplaced), index checksum mismatch, lengths or
 * offsets outside the file. Never trusts a length it read. */
int sluice_container_open(const char *path, struct sluice_container **out, char *err, size_t errlen);
/* Same on an image in memory (the unit tests' hostile-input path; member reads are served
 * from the image). `name` is used in messages. The image must outlive the container. */
int sluice_container_parse(const void *image, size_t len, const char *name, struct sluice_container **out,
                           char *err, size_t errlen);
void sluice_container_close(struct sluice_container *c);

/* Index of the member with this exact path, or -1. */
long sluice_container_find(const struct sluice_container *c, const char *path);
/* Index of the member with this rank, or -1 (the first one if several). */
long sluice_container_find_rank(const struct sluice_container *c, int32_t member_rank);

/* Reads `len` bytes at logical offset `off` of member i (holes as zeros, short at the end of
 * the member) without checksum verification: random access for readers that verified the
 * member once. Returns bytes read or -errno. */
long sluice_container_pread(const struct sluice_container *c, uint32_t i, void *buf, size_t len,
                            uint64_t off);

/* Streams member i's whole logical content in order to `sink` (holes are passed as
 * buf == NULL with their length), verifying its checksum; a mismatch returns -EIO with the
 * message naming container and member, after the bytes were passed (callers that must not
 * expose unverified bytes write to a private place first). A sink returns 0 or -errno. */
typedef int (*sluice_container_sink)(void *ctx, uint64_t logical, const void *buf, size_t len);
int sluice_container_read_member(const struct sluice_container *c, uint32_t i, sluice_container_sink sink,
                                 void *ctx, char *err, size_t errlen);
/* Copies member i into dst_fd at offsets 0..size (holes left as holes, file truncated/extended
 * to exactly size), verifying the checksum. 0, or -EIO (corrupt) / -errno of the write. */
int sluice_container_copy_member(const struct sluice_container *c, uint32_t i, int dst_fd, char *err,
                                 size_t errlen);
/* Verifies member i's checksum. 0 or -EIO with the message. */
int sluice_container_verify_member(const struct sluice_container *c, uint32_t i, char *err, size_t errlen);

/* ---- names ---------------------------------------------------------------------------------
 * A set key S is split at the last '/' before its first "%r": S = D "/" R. The container is
 * D "/" enc(R) ".sluice", where enc() writes "%r" as "@r", '/' as "@_", '@' as "@@" and every
 * other byte unchanged (so enc is reversible and two sets never share a name):
 *   /run/ckpt.%r                 -> /run/ckpt.@r.sluice
 *   /d/restart_10_%r.dat         -> /d/restart_10_@r.dat.sluice
 *   /run/chk_10/rank_%r.bin      -> /run/chk_10/rank_@r.bin.sluice
 *   /run/rank%r/ckpt.dat         -> /run/rank@r@_ckpt.dat.sluice   (per-rank dirs are virtual)
 * An encoded name longer than NAME_MAX keeps its first 200 bytes, then "@h" and 16 hex digits
 * of a 64-bit hash of S (the header holds the full key, so a reader can check it). The choice
 * is lexical only: it never looks at the file system, so every rank and every later job
 * computes the same name. */

/* Container path for set key S. 0, or -EINVAL (not absolute, no "%r") / -ENAMETOOLONG. */
int sluice_container_name(const char *set_key, char *out, size_t outlen);
/* Directory part D of the set key (where the container lives). Same errors. */
int sluice_container_dir(const char *set_key, char *out, size_t outlen);
/* Temporary name a new version is written under before rename(2): same directory, hidden,
 * ".<name>.tmp.<token>" (token: e.g. the writer's pid, or a per-job number). */
int sluice_container_temp_name(const char *container_path, unsigned long token, char *out, size_t outlen);
/* Hidden name a damaged version is kept under, beside its container: ".<name>.damaged-<tag>"
 * (tag: "v<version>" from sluice-ckpt salvage, "t<ns>" when the version cannot be read). */
int sluice_container_damaged_name(const char *container_path, const char *tag, char *out, size_t outlen);
/* 1 if the final component of `path` is a container name ("*.sluice", not a temp name). */
int sluice_container_is_name(const char *path);
/* 1 if the final component is a temporary container name (".*.sluice.tmp.<digits>"). */
int sluice_container_is_temp_name(const char *path);
/* 1 if `path` is either, or a per-rank folder marker (".*.sluice-dir"): capture must never
 * capture such a path, whatever the patterns say. */
int sluice_container_is_reserved(const char *path);

/* ---- directories ----------------------------------------------------------------------------- */

/* Calls fn once per container name in `dir` (not temp names, sorted by name). c is the opened
 * container, or NULL with rc (-errno) and msg describing why it could not be opened. The
 * container is closed after fn returns. fn returns 0 to continue, anything else stops the scan
 * and is returned. Returns 0, fn's value, or -errno if dir cannot be read. */
typedef int (*sluice_container_visit)(void *ctx, const char *container_path, const struct sluice_container *c,
                                      int rc, const char *msg);
int sluice_container_scan_dir(const char *dir, sluice_container_visit fn, void *ctx);

/* ---- I/O used by the container code ---------------------------------------------------------
 * Defaults to libc through SLUICE_REAL (inside libsluice.so the plain names are sluice's own
 * wrappers). Replaceable so that tests can inject failures; any NULL field keeps the default. */
struct sluice_container_io {
    int (*open)(const char *path, int flags, ...);
    int (*close)(int fd);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    int (*fstat)(int fd, struct stat *st);
    off_t (*lseek)(int fd, off_t off, int whence);
    int (*ftruncate)(int fd, off_t len);
    DIR *(*opendir)(const char *path);
    struct dirent *(*readdir)(DIR *d);
    int (*closedir)(DIR *d);
};
void sluice_container_set_io(const struct sluice_container_io *io);

#ifdef __cplusplus
}
#endif
#endif
