/* SPDX-License-Identifier: MIT */
/* The coherence directory of distributed OpenCL buffers: home-based MESI per chunk, after the
 * CEA software-DSM (many readers, one writer). Pure code: rank 0's scheduler asks it, before
 * dispatching a command, which chunks the command's rank lacks and where to fetch them from,
 * and tells it what the command writes. Protocol and decisions: docs/DAG.md.
 *
 * A buffer is split into chunks of a fixed size (default 1 MiB), so that sub-buffers and
 * partial writes move only what they touch. Per chunk the directory keeps the set of ranks
 * holding a valid copy, and whether one holds it Modified. "Rank 0" is also the host: host
 * reads (clEnqueueReadBuffer) are reads at rank 0, host writes are writes at rank 0.
 *
 * Sub-buffers are not separate buffers here: the runtime passes the parent's id and the
 * sub-buffer's origin added to the offset.
 *
 * The directory updates its state when it plans: the runtime must perform the planned
 * transfers before the command runs (they are ordered in the DAG ahead of it). Not
 * thread-safe: one scheduler thread owns it. */
#ifndef SLUICE_CL_RANK0_COHERENCE_H
#define SLUICE_CL_RANK0_COHERENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_COH_DEFAULT_CHUNK ((uint64_t)1 << 20)
#define SLUICE_COH_HOST_RANK 0
#define SLUICE_COH_MAX_RANKS (1 << 20)

/* The MESI state of one rank's copy of one chunk. */
typedef enum {
    SLUICE_COH_INVALID,   /* no valid copy */
    SLUICE_COH_SHARED,    /* a valid copy, other ranks hold one too */
    SLUICE_COH_EXCLUSIVE, /* the only valid copy, not written since it was fetched or created */
    SLUICE_COH_MODIFIED,  /* the only valid copy, written here */
} sluice_coh_state;

/* Initial content of a new buffer, from its memory flags. */
typedef enum {
    SLUICE_COH_INIT_NONE, /* no host data: uninitialized, nothing to move before the first write */
    SLUICE_COH_INIT_HOST, /* CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR: rank 0 holds it (Exclusive) */
} sluice_coh_init;

/* The initial content implied by cl_mem_flags. */
sluice_coh_init sluice_coh_init_from_flags(uint64_t cl_mem_flags);

/* Flags of sluice_coh_write. */
enum {
    /* The command overwrites every byte of the range (clEnqueueWriteBuffer, fill, copy
     * destination, map with CL_MAP_WRITE_INVALIDATE_REGION): chunks entirely inside the range
     * need no fetch. Without it (a kernel may write only some bytes) every chunk the writer
     * lacks is fetched first. Chunks the range covers only partly are always fetched. */
    SLUICE_COH_WRITE_ALL = 1u << 0,
};

/* One planned chunk movement (consecutive chunks between the same ranks are merged). */
struct sluice_coh_transfer {
    uint64_t buffer;
    uint64_t offset; /* bytes from the buffer's start, a multiple of the chunk size */
    uint64_t size;   /* whole chunks, the last one clipped to the buffer's size */
    int src;
    int dst;
};

/* A transfer plan: a growable list the directory appends to. Zero-initialize, then free. */
struct sluice_coh_plan {
    struct sluice_coh_transfer *v;
    size_t n, cap;
};
void sluice_coh_plan_free(struct sluice_coh_plan *plan);

/* Counters for the trace and for tests. */
struct sluice_coh_stats {
    uint64_t chunk_hits;      /* chunk already valid where it was needed */
    uint64_t chunk_misses;    /* chunk fetched */
    uint64_t invalidations;   /* copies invalidated by writes */
    uint64_t bytes_planned;   /* bytes in planned transfers */
    uint64_t bytes_from_host; /* of which from rank 0 */
};

struct sluice_coh_dir;

/* A directory for `nranks` ranks (1..SLUICE_COH_MAX_RANKS) and chunks of `chunk_size` bytes
 * (0: SLUICE_COH_DEFAULT_CHUNK). NULL on bad arguments or out of memory. */
struct sluice_coh_dir *sluice_coh_create(int nranks, uint64_t chunk_size);
void sluice_coh_destroy(struct sluice_coh_dir *dir);

/* Errors are negative errno values: -EINVAL (bad rank or size), -ENOENT (unknown buffer),
 * -EEXIST (buffer id already known), -ERANGE (range past the buffer's end), -ENOMEM. */
int sluice_coh_add_buffer(struct sluice_coh_dir *dir, uint64_t buffer, uint64_t size, sluice_coh_init init);
int sluice_coh_remove_buffer(struct sluice_coh_dir *dir, uint64_t buffer);

/* Before a command on `rank` reads [offset, offset+size) of `buffer`: appends to `plan` a
 * transfer for every chunk the rank lacks, from a valid holder (a rank other than 0 unless 0
 * holds the only copy; among several, the one that has sent the fewest bytes so far, then the
 * lowest rank), and makes the rank a sharer. A Modified holder is downgraded to Shared.
 * Uninitialized chunks move nothing. */
int sluice_coh_read(struct sluice_coh_dir *dir, uint64_t buffer, uint64_t offset, uint64_t size, int rank,
                    struct sluice_coh_plan *plan);

/* Before a command on `rank` writes [offset, offset+size): appends the fetches the write
 * needs (see SLUICE_COH_WRITE_ALL), then makes `rank` the only valid holder (Modified) of every
 * chunk in the range and invalidates the other copies. */
int sluice_coh_write(struct sluice_coh_dir *dir, uint64_t buffer, uint64_t offset, uint64_t size, int rank,
                     unsigned flags, struct sluice_coh_plan *plan);

/* On -ENOMEM from read or write, the plan holds the transfers of the chunks handled before the
 * failure and those chunks' states are updated; the rest are untouched and the invariants hold. */

/* Host side: clEnqueueReadBuffer / map for reading, clEnqueueWriteBuffer / unmap after writing. */
static inline int sluice_coh_host_read(struct sluice_coh_dir *dir, uint64_t buffer, uint64_t offset,
                                       uint64_t size, struct sluice_coh_plan *plan)
{
    return sluice_coh_read(dir, buffer, offset, size, SLUICE_COH_HOST_RANK, plan);
}
static inline int sluice_coh_host_write(struct sluice_coh_dir *dir, uint64_t buffer, uint64_t offset,
                                        uint64_t size, unsigned flags, struct sluice_coh_plan *plan)
{
    return sluice_coh_write(dir, buffer, offset, size, SLUICE_COH_HOST_RANK, flags, plan);
}

/* State of `rank`'s copy of chunk `chunk` (SLUICE_COH_INVALID for unknown buffers). */
sluice_coh_state sluice_coh_state_of(const struct sluice_coh_dir *dir, uint64_t buffer, uint64_t chunk,
                                     int rank);
/* Whether the chunk has been written or initialized from the host at least once. */
int sluice_coh_initialized(const struct sluice_coh_dir *dir, uint64_t buffer, uint64_t chunk);
/* The rank that would hold this chunk's directory entry if the directory were spread over the
 * ranks (a hash of buffer and chunk). sluice keeps the whole directory on rank 0, the only
 * rank that schedules; the home is reported in the trace. */
int sluice_coh_home(const struct sluice_coh_dir *dir, uint64_t buffer, uint64_t chunk);
uint64_t sluice_coh_chunk_size(const struct sluice_coh_dir *dir);
void sluice_coh_get_stats(const struct sluice_coh_dir *dir, struct sluice_coh_stats *out);

/* Checks the directory's invariants (an owner is the only holder; initialized chunks have at
 * least one holder; uninitialized ones none; no holder beyond nranks). 0 if they hold,
 * otherwise -1 with the first violation described in err. */
int sluice_coh_check(const struct sluice_coh_dir *dir, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
