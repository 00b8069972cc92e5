/* SPDX-License-Identifier: MIT */
/* Huge-page-backed buffers (hugebuf.h). */
#include "common/hugebuf.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_PAGE ((size_t)2 << 20)

/* Mappings kept for reuse, at most this many and this many bytes (hugebuf.h). */
#define KEEP_SLOTS 6
#define KEEP_BYTES ((size_t)64 << 20)

static struct {
    void *p[KEEP_SLOTS];
    size_t len[KEEP_SLOTS];
    int n;
    size_t kept;
} cache;
static char busy; /* a try-lock: whoever finds it taken maps or unmaps directly */

static int take(void)
{
    return !__atomic_test_and_set(&busy, __ATOMIC_ACQUIRE);
}

static void give(void)
{
    __atomic_clear(&busy, __ATOMIC_RELEASE);
}

int sluice_pages_populate(void *p, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(page - 1);
    return hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}

static size_t round_up(size_t n)
{
    return (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

/* A kept mapping of len bytes (the smallest that holds len without doubling it, its excess
 * unmapped), or NULL. */
static void *from_cache(size_t len)
{
    if (!take())
        return NULL;
    int best = -1;
    for (int i = 0; i < cache.n; i++)
        if (cache.len[i] >= len && cache.len[i] <= 2 * len && (best < 0 || cache.len[i] < cache.len[best]))
            best = i;
    char *p = NULL;
    size_t have = 0;
    if (best >= 0) {
        p = cache.p[best];
        have = cache.len[best];
        cache.kept -= have;
        cache.n--;
        cache.p[best] = cache.p[cache.n];
        cache.len[best] = cache.len[cache.n];
    }
    give();
    if (p && have > len)
        munmap(p + len, have - len);
    return p;
}

static void *map_aligned(size_t len)
{
    /* Map a huge page more than needed, then give back what lies before the first boundary
     * and after the buffer. */
    char *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    size_t tail = (size_t)(raw + len + HUGE_PAGE - (p + len));
    if (tail)
        munmap(p + len, tail);
    (void)madvise(p, len, MADV_HUGEPAGE); /* a hint: ordinary pages where THP is off */
    return p;
}

void *sluice_hugebuf_alloc(size_t n)
{
    if (n == 0 || n > SIZE_MAX - 2 * HUGE_PAGE)
        return NULL;
    size_t len = round_up(n);
    void *p = from_cache(len);
    if (!p)
        p = map_aligned(len);
    /* Every page in one call rather than a fault per page at first touch; older kernels
     * refuse it (EINVAL) and fault as before. A kept mapping's pages the kernel took back
     * (MADV_FREE below) come back here too. */
    if (p)
        (void)sluice_pages_populate(p, len);
    return p;
}

void sluice_hugebuf_free(void *p, size_t n)
{
    if (!p)
        return;
    size_t len = round_up(n);
    if (take()) {
        int keep = cache.n < KEEP_SLOTS && cache.kept + len <= KEEP_BYTES;
        if (keep) {
            /* Kept, but the kernel may take its pages back under memory pressure. */
            (void)madvise(p, len, MADV_FREE);
            cache.p[cache.n] = p;
            cache.len[cache.n++] = len;
            cache.kept += len;
        }
        give();
        if (keep)
            return;
    }
    munmap(p, len);
}
