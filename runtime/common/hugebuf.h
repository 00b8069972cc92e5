/* SPDX-License-Identifier: MIT */
/* Buffers of several MiB that are filled once, right away, by a copy (a two-phase aggregator's
 * round buffers, which MPI receives into). Fresh anonymous memory costs a page fault per 4 KiB
 * at its first touch, inside that copy (1-4 us each on a host: 8,192 faults for two 16 MiB
 * rounds, the first two rounds of a shuffle twice as slow as the next); these are mapped on a
 * 2 MiB boundary and marked for transparent huge pages (MADV_HUGEPAGE), one fault per 2 MiB
 * where the kernel allows it (THP "always" or "madvise"), ordinary pages elsewhere, and their
 * pages are put in place in one call (MADV_POPULATE_WRITE, Linux 5.14; faults as before on older
 * kernels). Also a home's index of a version (commit_version.c: 1.6 MB for a 16 MiB array of
 * 8 ranks, 11.7 ms on a virtual machine of fresh 4 KiB pages).
 * Freed buffers are kept for the next version's (at most 6 mappings, 64 MiB, for the process's
 * life) with MADV_FREE, so the kernel can still take their pages back under memory pressure;
 * contents of a buffer handed out are undefined. Any thread; never blocks (a try-lock: a thread
 * that finds the cache in use maps or unmaps directly, so a fork taken meanwhile is harmless).
 * Pure code (util). */
#ifndef SLUICE_COMMON_HUGEBUF_H
#define SLUICE_COMMON_HUGEBUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n bytes (n > 0), or NULL where memory ran out. Free with sluice_hugebuf_free(p, n). */
void *sluice_hugebuf_alloc(size_t n);
void sluice_hugebuf_free(void *p, size_t n);

/* Puts in place the pages of [p, p + n) that lie wholly inside it, for writing, in one call
 * (MADV_POPULATE_WRITE): 0, or -1 where the kernel cannot (older than Linux 5.14). */
int sluice_pages_populate(void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
