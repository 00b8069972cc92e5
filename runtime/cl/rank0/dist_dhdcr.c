/* SPDX-License-Identifier: MIT */
/* Device-Host-Device Copy Removal (libWater's DHDCR, docs/DAG.md section 2): rank 0 remembers
 * which host ranges hold a copy of which buffer range of which rank, as its reads from serving
 * ranks bring them. A later host write of such a range (or of part of it) to a buffer on another
 * serving rank then moves rank to rank, from the buffer the bytes came from, if:
 * - the buffer range was not written since the read (by any command, on any rank: every write
 *   access goes through dist_dhdcr_forget_range);
 * - the host bytes did not change: while the read is pending the program may not touch them
 *   (OpenCL); once it completed, they are compared with the copy taken when it landed (reads up
 *   to SNAP_MAX bytes; larger completed reads are not used).
 * The table is small (ENTRIES, oldest replaced first); it has its own lock because reads
 * complete on the scheduler thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_internal.h"
#include "config/config.h"

#define ENTRIES 256
#define SNAP_MAX ((size_t)4 << 20)

struct hostcopy {
    uint64_t read_id; /* 0: a free slot */
    const unsigned char *host;
    size_t size;
    struct dist_mem *root; /* the buffer (root of sub-buffers), not retained: forgotten at its removal */
    size_t off;
    int rank;
    int landed;          /* the read completed: snap holds what it brought */
    unsigned char *snap; /* NULL while pending, or for a read too large to keep */
    uint64_t age;
};

static struct hostcopy table[ENTRIES];
static uint64_t clock_age;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void drop(struct hostcopy *h)
{
    free(h->snap);
    memset(h, 0, sizeof *h);
}

int dist_dhdcr_on(void)
{
    return sluice_config.DHDCR && dist_size() > 2;
}

void dist_dhdcr_note_read(uint64_t id, const void *host, size_t size, struct dist_mem *m, size_t off,
                          int rank)
{
    for (; m->parent != NULL; m = m->parent)
        off += m->origin;
    const unsigned char *p = host;
    pthread_mutex_lock(&lock);
    struct hostcopy *slot = NULL;
    for (int i = 0; i < ENTRIES; i++) {
        struct hostcopy *h = &table[i];
        if (h->read_id != 0 && h->host < p + size && p < h->host + h->size)
            drop(h); /* those host bytes will be this read's */
    }
    for (int i = 0; i < ENTRIES && (slot == NULL || slot->read_id != 0); i++)
        if (slot == NULL || table[i].read_id == 0 || table[i].age < slot->age)
            slot = &table[i]; /* a free slot, else the oldest */
    drop(slot);
    *slot = (struct hostcopy){id, p, size, m, off, rank, 0, NULL, ++clock_age};
    pthread_mutex_unlock(&lock);
}

void dist_dhdcr_read_done(uint64_t id, int ok)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ENTRIES; i++) {
        struct hostcopy *h = &table[i];
        if (h->read_id != id)
            continue;
        if (!ok) {
            drop(h);
        } else if (!h->landed) {
            h->landed = 1;
            if (h->size <= SNAP_MAX && (h->snap = malloc(h->size)) != NULL)
                memcpy(h->snap, h->host, h->size);
        }
    }
    pthread_mutex_unlock(&lock);
}

void dist_dhdcr_forget_range(const struct dist_mem *root, size_t off, size_t size)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ENTRIES; i++) {
        struct hostcopy *h = &table[i];
        if (h->read_id != 0 && h->root == root &&
            (size == 0 || (h->off < off + size && off < h->off + h->size)))
            drop(h);
    }
    pthread_mutex_unlock(&lock);
}

int dist_dhdcr_source(const void *host, size_t size, int dst_rank, struct dist_dhdcr_src *out)
{
    const unsigned char *p = host;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ENTRIES && !found; i++) {
        struct hostcopy *h = &table[i];
        if (h->read_id == 0 || p < h->host || p + size > h->host + h->size || h->rank == dst_rank ||
            h->rank == 0 || dst_rank == 0)
            continue;
        size_t d = (size_t)(p - h->host);
        if (h->landed && (h->snap == NULL || memcmp(h->snap + d, p, size) != 0))
            continue; /* changed since it landed, or too large to tell */
        *out = (struct dist_dhdcr_src){h->root, h->off + d, h->rank, h->read_id};
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

size_t dist_dhdcr_slices(const void *host, size_t size, struct dist_dhdcr_slice *out, size_t max)
{
    const unsigned char *p = host;
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ENTRIES && n < max; i++) {
        const struct hostcopy *h = &table[i];
        if (h->read_id == 0 || h->host >= p + size || p >= h->host + h->size)
            continue;
        int same = h->landed && h->snap != NULL && memcmp(h->snap, h->host, h->size) == 0;
        out[n++] = (struct dist_dhdcr_slice){h->host, h->size, h->root->ctx, h->rank, h->root->rid[h->rank],
                                             h->off,  same};
    }
    pthread_mutex_unlock(&lock);
    return n;
}
