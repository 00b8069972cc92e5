/* SPDX-License-Identifier: MIT */
/* Large buffers kept for reuse (bufpool.h). */
#include "common/bufpool.h"

#include "common/hugebuf.h"

#include <stdlib.h>
#include <unistd.h>

/* Two classes, so that many blocks of one size (XOR parity blocks, 256 KiB) do not crowd out
 * buffers of another (pieces of about 1.2 MiB): [MIN, SPLIT) and [SPLIT, MAX]. */
#define SPLIT ((size_t)512 << 10)

static const struct {
    int slots;
    size_t keep;
} limit[2] = {{SLUICE_BUFPOOL_SMALL_SLOTS, SLUICE_BUFPOOL_SMALL_KEEP},
              {SLUICE_BUFPOOL_LARGE_SLOTS, SLUICE_BUFPOOL_LARGE_KEEP}};

static struct {
    void *p[SLUICE_BUFPOOL_SMALL_SLOTS > SLUICE_BUFPOOL_LARGE_SLOTS ? SLUICE_BUFPOOL_SMALL_SLOTS
                                                                    : SLUICE_BUFPOOL_LARGE_SLOTS];
    size_t cap[SLUICE_BUFPOOL_SMALL_SLOTS > SLUICE_BUFPOOL_LARGE_SLOTS ? SLUICE_BUFPOOL_SMALL_SLOTS
                                                                       : SLUICE_BUFPOOL_LARGE_SLOTS];
    int n;
    size_t kept;
} pool[2];
static char busy; /* a try-lock: whoever finds it taken goes to malloc or free */

static int take(void)
{
    return !__atomic_test_and_set(&busy, __ATOMIC_ACQUIRE);
}

static void give(void)
{
    __atomic_clear(&busy, __ATOMIC_RELEASE);
}

static int class_of(size_t n)
{
    return n < SLUICE_BUFPOOL_MIN || n > SLUICE_BUFPOOL_MAX ? -1 : n >= SPLIT;
}

void *sluice_bufpool_get(size_t n, size_t *cap)
{
    int c = class_of(n);
    if (c >= 0 && take()) {
        /* The smallest kept buffer that holds n, unless it wastes more than n. */
        int best = -1;
        for (int i = 0; i < pool[c].n; i++)
            if (pool[c].cap[i] >= n && pool[c].cap[i] <= 2 * n &&
                (best < 0 || pool[c].cap[i] < pool[c].cap[best]))
                best = i;
        void *p = NULL;
        if (best >= 0) {
            p = pool[c].p[best];
            *cap = pool[c].cap[best];
            pool[c].kept -= *cap;
            pool[c].n--;
            pool[c].p[best] = pool[c].p[pool[c].n];
            pool[c].cap[best] = pool[c].cap[pool[c].n];
        }
        give();
        if (p)
            return p;
    }
    void *p = malloc(n ? n : 1);
    *cap = p ? n : 0;
    return p;
}

void sluice_bufpool_put(void *p, size_t cap)
{
    if (!p)
        return;
    int c = class_of(cap);
    if (c >= 0 && take()) {
        int keep = pool[c].n < limit[c].slots && pool[c].kept + cap <= limit[c].keep;
        if (keep) {
            pool[c].p[pool[c].n] = p;
            pool[c].cap[pool[c].n++] = cap;
            pool[c].kept += cap;
        }
        give();
        if (keep)
            return;
    }
    free(p);
}

/* Maps every page of [p, p + n) for writing: one call where the kernel can, else a write to
 * each page (the bytes are the caller's to overwrite). */
static void populate(unsigned char *p, size_t n)
{
    if (sluice_pages_populate(p, n) == 0)
        return;
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    for (size_t i = 0; i < n; i += page)
        ((volatile unsigned char *)p)[i] = 0;
    if (n)
        ((volatile unsigned char *)p)[n - 1] = 0;
}

void sluice_bufpool_warm(size_t n, int count)
{
    int c = class_of(n);
    if (c < 0 || count <= 0)
        return;
    if (count > limit[c].slots)
        count = limit[c].slots;
    void *got[SLUICE_BUFPOOL_SMALL_SLOTS > SLUICE_BUFPOOL_LARGE_SLOTS ? SLUICE_BUFPOOL_SMALL_SLOTS
                                                                      : SLUICE_BUFPOOL_LARGE_SLOTS];
    size_t cap[sizeof got / sizeof got[0]];
    int k = 0;
    while (k < count && (got[k] = sluice_bufpool_get(n, &cap[k])) != NULL) {
        populate(got[k], cap[k]);
        k++;
    }
    while (k > 0) {
        k--;
        sluice_bufpool_put(got[k], cap[k]);
    }
}
