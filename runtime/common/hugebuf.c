/* SPDX-License-Identifier: MIT */
/* Huge-page-backed buffers (hugebuf.h). */
#include "common/hugebuf.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t n)
{
    return (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

void *sluice_hugebuf_alloc(size_t n)
{
    if (n == 0 || n > SIZE_MAX - 2 * HUGE_PAGE)
        return NULL;
    size_t len = round_up(n);
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

void sluice_hugebuf_free(void *p, size_t n)
{
    if (p)
        munmap(p, round_up(n));
}
