/* SPDX-License-Identifier: MIT */
/* String interning for the trace: a path or function name is stored once and events carry
 * its id. Insertions take a mutex (rare: a string is new once); readers (the file writer,
 * possibly in a signal handler, and the debug stream) never lock: an entry is complete
 * before the count that makes it visible is published.
 *
 * Memory: one reserved mapping (MAP_NORESERVE, touched as it fills) holding at most
 * MAX_STRINGS entries and ARENA_BYTES of text; past that, strings get id 0 and are counted. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "trace/state.h"

#define MAX_STRINGS (1u << 18)
#define INDEX_SLOTS (MAX_STRINGS * 2) /* open addressing, load factor <= 0.5 */
#define ARENA_BYTES (16u << 20)

struct entry {
    uint32_t off, len;
};

static struct {
    void *map;
    size_t map_bytes;
    struct entry *entries;
    uint32_t *index; /* id or 0 */
    char *arena;
    uint32_t arena_used;
    _Atomic uint32_t count;
    _Atomic uint64_t dropped;
    pthread_mutex_t lock;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

int sluice_trace_strings_start(void)
{
    if (st.map)
        return 0;
    size_t bytes = sizeof(struct entry) * MAX_STRINGS + sizeof(uint32_t) * INDEX_SLOTS + ARENA_BYTES;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    st.map = p;
    st.map_bytes = bytes;
    st.entries = p;
    st.index = (uint32_t *)(st.entries + MAX_STRINGS);
    st.arena = (char *)(st.index + INDEX_SLOTS);
    st.arena_used = 0;
    atomic_store(&st.count, 0);
    atomic_store(&st.dropped, 0);
    return 0;
}

void sluice_trace_strings_release(void)
{
    if (st.map)
        munmap(st.map, st.map_bytes);
    st.map = NULL;
    atomic_store(&st.count, 0);
    atomic_store(&st.dropped, 0);
}

static uint32_t hash32(const char *s, size_t n)
{
    uint64_t h = sluice_fnv1a(SLUICE_FNV_INIT, s, n);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t sluice_trace_string(const char *s)
{
    if (!sluice_trace_enabled || s == NULL || st.map == NULL)
        return 0;
    size_t n = strlen(s);
    if (n > ARENA_BYTES / 4) { /* a "string" this long is a bug or garbage: do not keep it */
        atomic_fetch_add(&st.dropped, 1);
        return 0;
    }
    uint32_t slot = hash32(s, n) & (INDEX_SLOTS - 1);
    uint32_t id = 0;
    pthread_mutex_lock(&st.lock);
    for (;;) {
        uint32_t cand = st.index[slot];
        if (cand == 0)
            break;
        struct entry *e = &st.entries[cand - 1];
        if (e->len == n && memcmp(st.arena + e->off, s, n) == 0) {
            id = cand;
            break;
        }
        slot = (slot + 1) & (INDEX_SLOTS - 1);
    }
    if (id == 0) {
        uint32_t count = atomic_load_explicit(&st.count, memory_order_relaxed);
        if (count < MAX_STRINGS && st.arena_used + n + 1 <= ARENA_BYTES) {
            memcpy(st.arena + st.arena_used, s, n + 1);
            st.entries[count].off = st.arena_used;
            st.entries[count].len = (uint32_t)n;
            st.arena_used += (uint32_t)n + 1;
            id = count + 1;
            st.index[slot] = id;
            atomic_store_explicit(&st.count, count + 1, memory_order_release);
        } else {
            atomic_fetch_add(&st.dropped, 1);
        }
    }
    pthread_mutex_unlock(&st.lock);
    return id;
}

uint32_t sluice_trace_strings_count(void)
{
    return st.map ? atomic_load_explicit(&st.count, memory_order_acquire) : 0;
}

const char *sluice_trace_strings_get(uint32_t id, uint32_t *len)
{
    if (id == 0 || id > sluice_trace_strings_count())
        return NULL;
    const struct entry *e = &st.entries[id - 1];
    if (len)
        *len = e->len;
    return st.arena + e->off;
}

uint64_t sluice_trace_strings_dropped(void)
{
    return atomic_load(&st.dropped);
}

/* fork: no other thread may hold the lock while the child is created. */
void sluice_trace_strings_fork_prepare(void)
{
    pthread_mutex_lock(&st.lock);
}
void sluice_trace_strings_fork_parent(void)
{
    pthread_mutex_unlock(&st.lock);
}
void sluice_trace_strings_fork_child(void)
{
    pthread_mutex_unlock(&st.lock);
}
