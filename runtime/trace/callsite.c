/* SPDX-License-Identifier: MIT */
/* Call sites (SLUICE_BACKTRACE=N): the N innermost application frames of an event, captured
 * with libunwind's unw_backtrace (per-thread caches, no locks) and interned by the hash of
 * the address array, so an event stores a 32-bit id and the file stores each stack once.
 *
 * sluice's own frames are skipped: when sluice is a shared object (the preload case) every
 * leading frame inside it goes; when the trace core is linked into an executable (tests,
 * benchmarks) exactly the two recording frames go.
 *
 * The table is lock-free open addressing: a slot goes EMPTY -> BUSY (claimed by CAS, frames
 * written) -> READY (published). Only addresses are kept: symbolization happens offline
 * with the module map written beside them. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "common/align.h"
#include "common/real.h"
#include "trace/state.h"

/* libunwind is loaded only when call sites are asked for: as a link dependency it (and liblzma)
 * would be mapped into every preloaded process. The names come from libunwind.h's own macros, so
 * they follow its per-architecture symbol naming. SLUICE_LIBUNWIND is the soname (CMake). */
#define CS_STR(x) #x
#define CS_XSTR(x) CS_STR(x)
static int (*unwind_backtrace)(void **, int);

static int load_libunwind(void)
{
    void *h = dlopen(SLUICE_LIBUNWIND, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return -1;
    unwind_backtrace = (int (*)(void **, int))sluice_real_dlsym(h, CS_XSTR(unw_backtrace));
    int (*set_policy)(unw_addr_space_t, unw_caching_policy_t) =
        (int (*)(unw_addr_space_t, unw_caching_policy_t))sluice_real_dlsym(h,
                                                                           CS_XSTR(unw_set_caching_policy));
    unw_addr_space_t *local = (unw_addr_space_t *)sluice_real_dlsym(h, CS_XSTR(unw_local_addr_space));
    if (unwind_backtrace == NULL)
        return -1;
    if (set_policy != NULL && local != NULL)
        set_policy(*local, UNW_CACHE_PER_THREAD);
    return 0;
}

#define MAX_DEPTH 32
#define SKIP_MAX 12 /* sluice frames above the application's, at most */
#define EMPTY 0u
#define BUSY 1u
#define READY 2u

struct slot {
    _Atomic uint32_t state;
    uint32_t depth;
    uint64_t hash;
    uint64_t frames[];
};

static struct {
    unsigned depth;
    uint32_t cap; /* power of two */
    size_t stride;
    unsigned char *slots;
    size_t map_bytes;
    uintptr_t own_lo, own_hi;
    int fixed_skip; /* frames to skip when sluice is not a shared object */
    _Atomic uint64_t dropped;
} cs;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) {
            bool main_program = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
            if (main_program) {
                cs.fixed_skip = 2;
            } else {
                cs.own_lo = lo;
                cs.own_hi = hi;
            }
            return 1;
        }
    }
    return 0;
}

int sluice_trace_callsites_start(unsigned depth, uint64_t limit)
{
    sluice_trace_callsites_release();
    if (depth == 0)
        return 0;
    if (depth > MAX_DEPTH)
        depth = MAX_DEPTH;
    cs.depth = depth;
    cs.stride = sizeof(struct slot) + sizeof(uint64_t) * depth;
    cs.stride = sluice_pad8(cs.stride);
    /* The table is part of the trace budget: at most an eighth of it, 64..16384 sites. */
    cs.cap = 16384;
    while (cs.cap > 64 && (uint64_t)cs.cap * cs.stride > limit / 8)
        cs.cap /= 2;
    cs.map_bytes = cs.cap * cs.stride;
    void *p = mmap(NULL, cs.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        cs.depth = 0;
        return -1;
    }
    cs.slots = p;
    cs.own_lo = cs.own_hi = 0;
    cs.fixed_skip = 0;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&sluice_trace_record);
    if (load_libunwind() != 0) {
        munmap(cs.slots, cs.map_bytes);
        cs.slots = NULL;
        cs.depth = 0;
        return -1;
    }
    return 0;
}

void sluice_trace_callsites_release(void)
{
    if (cs.slots)
        munmap(cs.slots, cs.map_bytes);
    cs.slots = NULL;
    cs.depth = 0;
    cs.cap = 0;
    atomic_store(&cs.dropped, 0);
}

static struct slot *slot_at(uint32_t i)
{
    return (struct slot *)(cs.slots + (size_t)i * cs.stride);
}

static uint32_t intern(const uint64_t *frames, uint32_t depth)
{
    uint64_t h = sluice_fnv1a(SLUICE_FNV_INIT, frames, sizeof(uint64_t) * depth);
    uint32_t mask = cs.cap - 1;
    uint32_t i = (uint32_t)(h ^ (h >> 29)) & mask;
    for (uint32_t probes = 0; probes < cs.cap; probes++, i = (i + 1) & mask) {
        struct slot *s = slot_at(i);
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == EMPTY) {
            uint32_t expect = EMPTY;
            if (atomic_compare_exchange_strong(&s->state, &expect, BUSY)) {
                s->hash = h;
                s->depth = depth;
                memcpy(s->frames, frames, sizeof(uint64_t) * depth);
                atomic_store_explicit(&s->state, READY, memory_order_release);
                return i + 1;
            }
            st = expect;
        }
        /* A slot being filled by another thread (or left BUSY by a thread that lost its
         * parent at fork) is skipped: at worst one stack gets two ids. */
        if (st == READY && s->hash == h && s->depth == depth &&
            memcmp(s->frames, frames, sizeof(uint64_t) * depth) == 0)
            return i + 1;
    }
    atomic_fetch_add(&cs.dropped, 1);
    return 0;
}

/* How many sluice frames precede the application's: learned, so that a capture unwinds only
 * a few frames more than it keeps (unwinding costs per frame). */
static _Atomic int learned_skip = 4;

__attribute__((noinline)) uint32_t sluice_trace_callsite_capture(void)
{
    if (cs.depth == 0 || cs.slots == NULL)
        return 0;
    void *ips[MAX_DEPTH + SKIP_MAX];
    int first = 0, n = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        int skip = cs.fixed_skip ? cs.fixed_skip : atomic_load_explicit(&learned_skip, memory_order_relaxed);
        int want = (int)cs.depth + skip;
        n = unwind_backtrace(ips, want);
        first = 0;
        if (cs.fixed_skip) {
            first = cs.fixed_skip;
            break;
        }
        while (first < n && (uintptr_t)ips[first] >= cs.own_lo && (uintptr_t)ips[first] < cs.own_hi)
            first++;
        if (n < want || n - first >= (int)cs.depth || skip >= SKIP_MAX)
            break; /* the stack ended, or we have all the frames we keep */
        int more = first + 2 > SKIP_MAX ? SKIP_MAX : first + 2;
        atomic_store_explicit(&learned_skip, more, memory_order_relaxed);
    }
    if (first >= n)
        return 0;
    uint32_t depth = (uint32_t)(n - first);
    if (depth > cs.depth)
        depth = cs.depth;
    uint64_t frames[MAX_DEPTH];
    for (uint32_t k = 0; k < depth; k++)
        frames[k] = (uint64_t)(uintptr_t)ips[first + (int)k];
    return intern(frames, depth);
}

uint32_t sluice_trace_callsites_slots(void)
{
    return cs.slots ? cs.cap : 0;
}

uint32_t sluice_trace_callsites_get(uint32_t i, const uint64_t **frames)
{
    if (!cs.slots || i >= cs.cap)
        return 0;
    struct slot *s = slot_at(i);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != READY)
        return 0;
    *frames = s->frames;
    return s->depth;
}

uint64_t sluice_trace_callsites_dropped(void)
{
    return atomic_load(&cs.dropped);
}
