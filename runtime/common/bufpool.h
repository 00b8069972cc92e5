/* SPDX-License-Identifier: MIT */
/* Large buffers kept for reuse. malloc maps a large block afresh (above its mmap threshold, or
 * after trimming a thread's heap), and each 4 KiB of it costs a page fault at its first touch
 * (1-2 us on a host, 11-14 us on a virtual machine). The redundancy streams move each version's
 * part through buffers of 0.25-2 MiB (messages received and sent, XOR parity blocks): without
 * reuse, about one fault per 4 KiB moved (perf record -e page-faults, XOR parity on 4 testbed
 * nodes). At most 24 MiB in 44 buffers (the limits below) are kept, for the life of the
 * process, once used. Any thread; never blocks: a thread that finds the pool in use
 * by another allocates or frees directly (so a fork taken while another thread held it is
 * harmless). Pure code (util). */
#ifndef SLUICE_COMMON_BUFPOOL_H
#define SLUICE_COMMON_BUFPOOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_BUFPOOL_MIN ((size_t)128 << 10) /* smaller buffers: plain malloc */
#define SLUICE_BUFPOOL_MAX ((size_t)4 << 20)   /* larger ones are not kept */
/* Buffers below 512 KiB (an XOR encoder holds up to 32 parity blocks of 256 KiB), and from 512
 * KiB (a redundancy stream's pieces: 4 sent and as many received, about 1.2 MiB each). */
#define SLUICE_BUFPOOL_SMALL_SLOTS 32
#define SLUICE_BUFPOOL_SMALL_KEEP ((size_t)8 << 20)
#define SLUICE_BUFPOOL_LARGE_SLOTS 12
#define SLUICE_BUFPOOL_LARGE_KEEP ((size_t)16 << 20)

/* A buffer of at least n bytes (its usable size in *cap), kept one or new; NULL where memory
 * ran out. Free it with sluice_bufpool_put(p, *cap) (or free()). */
void *sluice_bufpool_get(size_t n, size_t *cap);

/* Gives back p (from sluice_bufpool_get or malloc, at least cap bytes): kept where there is
 * room and cap is within [SLUICE_BUFPOOL_MIN, SLUICE_BUFPOOL_MAX], else freed. NULL is ignored. */
void sluice_bufpool_put(void *p, size_t cap);

/* Fills the pool with up to count buffers of n bytes whose pages are already mapped (kept ones
 * count), within its limits: a stream's first pieces then fault no more than its later ones.
 * Takes the time of the faults now (tens of ms per 10 MiB on a virtual machine, one madvise
 * call where the kernel has MADV_POPULATE_WRITE, Linux 5.14): for a thread that waits for
 * nothing else. */
void sluice_bufpool_warm(size_t n, int count);

#ifdef __cplusplus
}
#endif

#endif
