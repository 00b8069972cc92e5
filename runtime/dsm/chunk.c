/* SPDX-License-Identifier: MIT */
/* Local chunks and chains. A chunk may sit in several chains (instances); every live instance
 * holds the same bytes whenever the chunk is valid, so a chain allocated later is filled from
 * an existing instance and a write released through one chain is copied to the others.
 * Chains own page-aligned memory, so that a READ scope can make it read-only (the guard
 * below turns a write there into a message naming the chunk). LRU eviction frees the memory
 * of the least recently used chains outside scopes once more than SLUICE_DSM_CACHE_CHUNKS
 * chunks have local data; home copies are separate (home.c) and never evicted. */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/signal_chain.h"
#include "dsm/dsm.h"
#include "trace/trace.h"

struct dsm_chunk *dsm_chunk_find(unsigned long addr)
{
    struct dsm_chunk *c = NULL;
    HASH_FIND(hh, D.chunks, &addr, sizeof addr, c);
    return c;
}

struct dsm_chunk *dsm_chunk_get(unsigned long addr, size_t size, int proto, int *err)
{
    struct dsm_chunk *c = dsm_chunk_find(addr);
    if (c) {
        if (c->size != size) {
            *err = dsm_fail(SLUICE_DSM_ESIZE, "chunk @%lu is %zu bytes here, not %zu", addr, c->size, size);
            return NULL;
        }
        return c;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        *err = dsm_fail(SLUICE_DSM_ENOMEM, "out of memory for chunk @%lu", addr);
        return NULL;
    }
    c->addr = addr;
    c->size = size;
    c->proto = proto;
    HASH_ADD(hh, D.chunks, addr, sizeof c->addr, c);
    return c;
}

bool dsm_chunk_has_data(const struct dsm_chunk *c)
{
    for (size_t i = 0; i < c->ninst; i++)
        if (c->inst[i].chain->buf)
            return true;
    return false;
}

void dsm_chunk_fill(struct dsm_chunk *c, const void *data, size_t len)
{
    if (len > c->size)
        len = c->size;
    for (size_t i = 0; i < c->ninst; i++)
        if (c->inst[i].chain->buf)
            memcpy(dsm_chain_wbuf(c->inst[i].chain) + c->inst[i].offset, data, len);
}

void dsm_chunk_copy_from(struct dsm_chunk *c, const void *src)
{
    for (size_t i = 0; i < c->ninst; i++) {
        struct sluice_dsm_chain *ch = c->inst[i].chain;
        if (ch->buf && ch->buf + c->inst[i].offset != src)
            memcpy(dsm_chain_wbuf(ch) + c->inst[i].offset, src, c->size);
    }
}

/* A live instance of c other than in ch, or NULL. */
static const unsigned char *other_instance(const struct dsm_chunk *c, const struct sluice_dsm_chain *ch)
{
    for (size_t i = 0; i < c->ninst; i++)
        if (c->inst[i].chain != ch && c->inst[i].chain->buf)
            return c->inst[i].chain->buf + c->inst[i].offset;
    return NULL;
}

static void lru_unlink(struct sluice_dsm_chain *ch)
{
    if (ch->lru_prev)
        ch->lru_prev->lru_next = ch->lru_next;
    else if (D.lru_head == ch)
        D.lru_head = ch->lru_next;
    if (ch->lru_next)
        ch->lru_next->lru_prev = ch->lru_prev;
    else if (D.lru_tail == ch)
        D.lru_tail = ch->lru_prev;
    ch->lru_prev = ch->lru_next = NULL;
}

void dsm_chain_touch(struct sluice_dsm_chain *ch)
{
    lru_unlink(ch);
    ch->lru_prev = D.lru_tail;
    if (D.lru_tail)
        D.lru_tail->lru_next = ch;
    D.lru_tail = ch;
    if (!D.lru_head)
        D.lru_head = ch;
}

static bool same_chain(const struct sluice_dsm_chain *ch, const unsigned long *addrs, const size_t *sizes,
                       size_t n)
{
    if (ch->n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (ch->chunks[i]->addr != addrs[i] || ch->chunks[i]->size != sizes[i])
            return false;
    return true;
}

static int by_value(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* A chunk twice in one chain would be acquired twice by one scope: refused. */
static int check_distinct(const unsigned long *addrs, size_t n)
{
    unsigned long *v = malloc(n * sizeof *v);
    if (!v)
        return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory for a chain of %zu chunks", n);
    memcpy(v, addrs, n * sizeof *v);
    qsort(v, n, sizeof *v, by_value);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (v[i] == v[i - 1])
            rc = dsm_fail(SLUICE_DSM_EINVAL, "chunk @%lu twice in one chain", v[i]);
    free(v);
    return rc;
}

struct sluice_dsm_chain *dsm_chain_make(const unsigned long *addrs, const size_t *sizes, size_t n, int proto,
                                        int *err)
{
    for (struct sluice_dsm_chain *ch = D.all; ch; ch = ch->all_next)
        if (same_chain(ch, addrs, sizes, n))
            return ch;
    *err = check_distinct(addrs, n);
    if (*err)
        return NULL;
    struct sluice_dsm_chain *ch = calloc(1, sizeof *ch);
    struct dsm_chunk **chunks = calloc(n, sizeof *chunks);
    size_t *offsets = calloc(n, sizeof *offsets);
    if (!ch || !chunks || !offsets) {
        free(ch);
        free(chunks);
        free(offsets);
        *err = dsm_fail(SLUICE_DSM_ENOMEM, "out of memory for a chain of %zu chunks", n);
        return NULL;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        chunks[i] = dsm_chunk_get(addrs[i], sizes[i], proto, err);
        if (!chunks[i]) {
            free(ch);
            free(chunks);
            free(offsets);
            return NULL;
        }
        offsets[i] = off;
        off += sizes[i];
    }
    ch->base = addrs[0];
    ch->n = n;
    ch->chunks = chunks;
    ch->offsets = offsets;
    ch->bytes = off;
    ch->proto = proto;
    for (size_t i = 0; i < n; i++) {
        struct dsm_chunk *c = chunks[i];
        struct dsm_instance *ni = realloc(c->inst, (c->ninst + 1) * sizeof *ni);
        if (!ni) {
            *err = dsm_fail(SLUICE_DSM_ENOMEM, "out of memory for chunk @%lu", c->addr);
            return NULL; /* the chunks stay; the chain is lost (nothing references it yet) */
        }
        c->inst = ni;
        c->inst[c->ninst++] = (struct dsm_instance){ch, offsets[i]};
    }
    ch->all_next = D.all;
    D.all = ch;
    sluice_trace_instant(SLUICE_EV_DSM_ALLOC, ch->base, ch->n, ch->bytes);
    return ch;
}

/* Chain memory: a memfd mapped twice, the view the program gets (buf, read-only while guarded)
 * and the runtime's own (wbuf, always writable), so that a fill from a message or from another
 * chain writes guarded pages without an mprotect (two system calls and a TLB shootdown per read
 * miss). Where memfd_create is refused, one private mapping and mprotect around fills. Freed
 * chains keep their memory in a small pool for the next chain of the same length: a chain
 * freed and made again (a program's temporary, the benchmark's read miss) costs no mmap, page
 * faults or munmap shootdown. */
#define POOL_SLOTS 8
#define POOL_MAX_BYTES (16u << 20)
static struct pooled { /* oldest first */
    unsigned char *buf, *wbuf;
    size_t len;
    bool ro;
} pool[POOL_SLOTS];
static size_t npool, pool_bytes;
/* Double-mapped chains (two mappings each, never merged by the kernel): past MAX_SHARED, chains
 * get one private mapping, so that a program with very many chains stays far from
 * vm.max_map_count (65530 by default). */
#define MAX_SHARED 4096
static size_t nshared;

static void unmap_views(unsigned char *buf, unsigned char *wbuf, size_t len)
{
    munmap(buf, len);
    if (wbuf != buf) {
        munmap(wbuf, len);
        nshared--;
    }
}

static int map_views(size_t len, unsigned char **buf, unsigned char **wbuf)
{
    long fd = nshared < MAX_SHARED ? syscall(SYS_memfd_create, "sluice-dsm", MFD_CLOEXEC) : -1;
    if (fd >= 0) {
        void *u = MAP_FAILED, *w = MAP_FAILED;
        if (syscall(SYS_ftruncate, fd, (long)len) == 0) {
            u = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
            w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        }
        syscall(SYS_close, fd);
        if (u != MAP_FAILED && w != MAP_FAILED) {
            *buf = u;
            *wbuf = w;
            nshared++;
            return 0;
        }
        if (u != MAP_FAILED)
            munmap(u, len);
        if (w != MAP_FAILED)
            munmap(w, len);
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    *buf = *wbuf = p;
    return 0;
}

void dsm_chunk_pool_drain(void)
{
    while (npool > 0) {
        struct pooled *q = &pool[--npool];
        unmap_views(q->buf, q->wbuf, q->len);
    }
    pool_bytes = 0;
}

int dsm_chain_ensure_memory(struct sluice_dsm_chain *ch)
{
    if (ch->buf)
        return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (ch->bytes + page - 1) / page * page;
    if (len == 0)
        len = page;
    size_t k = npool;
    while (k > 0 && pool[k - 1].len != len)
        k--; /* the most recently freed first */
    if (k > 0) {
        struct pooled *q = &pool[k - 1];
        ch->buf = q->buf;
        ch->wbuf = q->wbuf;
        ch->ro = q->ro;
        pool_bytes -= len;
        memmove(q, q + 1, (size_t)(pool + --npool - q) * sizeof *q);
    } else if (map_views(len, &ch->buf, &ch->wbuf) != 0) {
        return dsm_fail(SLUICE_DSM_ENOMEM, "cannot map %zu bytes for chain @%lu", len, ch->base);
    }
    ch->mapped_len = len;
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = ch->chunks[i];
        const unsigned char *src = c->state != ST_I ? other_instance(c, ch) : NULL;
        if (src)
            memcpy(dsm_chain_wbuf(ch) + ch->offsets[i], src, c->size);
        else if (c->state != ST_I)
            c->state = ST_I; /* no live copy left to fill it from: fetch again */
    }
    D.footprint += ch->n;
    return 0;
}

/* Frees the chain's memory (into the pool when to_pool); chunks left with no live instance
 * become invalid (their home keeps the data; a stale sharer or owner entry there is answered
 * by the next M_INV/M_RECALL). */
static void release_memory(struct sluice_dsm_chain *ch, bool to_pool)
{
    if (!ch->buf)
        return;
    dsm_guard_forget(ch);
    if (ch->mapped_len) {
        if (to_pool && npool == POOL_SLOTS) { /* full: the oldest goes */
            pool_bytes -= pool[0].len;
            unmap_views(pool[0].buf, pool[0].wbuf, pool[0].len);
            memmove(pool, pool + 1, --npool * sizeof *pool);
        }
        if (to_pool && pool_bytes + ch->mapped_len <= POOL_MAX_BYTES) {
            pool[npool++] = (struct pooled){ch->buf, ch->wbuf, ch->mapped_len, ch->ro};
            pool_bytes += ch->mapped_len;
        } else {
            unmap_views(ch->buf, ch->wbuf, ch->mapped_len);
        }
    }
    ch->buf = ch->wbuf = NULL;
    ch->ro = false;
    ch->mapped_len = 0;
    D.footprint -= ch->n;
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = ch->chunks[i];
        if (!dsm_chunk_has_data(c) && c->state != ST_M)
            c->state = ST_I;
    }
}

void dsm_evict_excess(void)
{
    if (D.cache_limit == 0)
        return;
    struct sluice_dsm_chain *ch = D.lru_head;
    while (ch && D.footprint > D.cache_limit) {
        struct sluice_dsm_chain *next = ch->lru_next;
        if (ch->buf && ch->scope == MODE_NONE && !ch->user_mapped) {
            sluice_trace_instant(SLUICE_EV_DSM_EVICT, ch->base, ch->n, D.footprint - ch->n);
            release_memory(ch, false); /* eviction is for memory: none kept */
            lru_unlink(ch);
        }
        ch = next;
    }
}

void dsm_chain_map(struct sluice_dsm_chain *ch, void *ptr)
{
    if (ch->user_mapped) {
        ch->buf = ch->wbuf = NULL;
        D.footprint -= ch->n;
    }
    release_memory(ch, true);
    lru_unlink(ch);
    ch->buf = ch->wbuf = ptr;
    ch->user_mapped = true;
    D.footprint += ch->n;
    /* The caller's bytes are not the chunk's: fill them from another live copy, or fetch. */
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = ch->chunks[i];
        const unsigned char *src = c->state != ST_I ? other_instance(c, ch) : NULL;
        if (src)
            memcpy(ch->buf + ch->offsets[i], src, c->size);
        else
            c->state = c->state == ST_M ? ST_M : ST_I;
    }
}

void dsm_chain_destroy(struct sluice_dsm_chain *ch)
{
    sluice_trace_instant(SLUICE_EV_DSM_FREE, ch->base, ch->n, ch->bytes);
    if (ch->user_mapped) {
        ch->buf = ch->wbuf = NULL;
        D.footprint -= ch->n;
    }
    release_memory(ch, true);
    lru_unlink(ch);
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = ch->chunks[i];
        for (size_t j = 0; j < c->ninst; j++)
            if (c->inst[j].chain == ch) {
                c->inst[j] = c->inst[--c->ninst];
                break;
            }
        if (!dsm_chunk_has_data(c))
            c->state = ST_I;
    }
    for (struct sluice_dsm_chain **pp = &D.all; *pp; pp = &(*pp)->all_next)
        if (*pp == ch) {
            *pp = ch->all_next;
            break;
        }
    free(ch->chunks);
    free(ch->offsets);
    free(ch);
}

/* ---- the READ-scope guard ------------------------------------------------------------------ */

/* A chain's pages become read-only at its first READ scope and stay so until something must
 * write them: a WRITE or READWRITE scope, a fill from a message, a write released through
 * another chain of the same chunk. A read hit therefore makes no system call; switching a
 * range to read-only every scope cost a TLB shootdown on every core running one of the
 * process's threads (most of an 8 us hit with the progress thread on another core). Outside a
 * scope the pointer must not be used anyway (docs/DSM.md), so a write there faults too. */
#define GUARD_SLOTS 256
static struct {
    _Atomic uintptr_t start, end;
    unsigned long addr;
    _Atomic int in_read;            /* the chain is in a READ scope (else outside any scope) */
    struct sluice_dsm_chain *chain; /* under D.lock */
} guard[GUARD_SLOTS];
static struct sluice_signal_chain guard_chain;
static atomic_int guard_installed;

static size_t fmt_ulong(char *p, unsigned long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

static void guard_handler(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t a = (uintptr_t)info->si_addr;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t s = atomic_load(&guard[i].start);
        if (s && a >= s && a < atomic_load(&guard[i].end)) {
            char msg[160];
            static const char head[] = "sluice: error: write to DSM chain @";
            static const char in_read[] =
                " inside a READ scope (use sluice_dsm_write or sluice_dsm_readwrite)\n";
            static const char outside[] =
                " outside a scope (the pointer is valid until RELEASE; open sluice_dsm_write first)\n";
            const char *tail = atomic_load(&guard[i].in_read) ? in_read : outside;
            size_t tlen = tail == in_read ? sizeof in_read - 1 : sizeof outside - 1;
            size_t n = sizeof head - 1;
            memcpy(msg, head, n);
            n += fmt_ulong(msg + n, guard[i].addr);
            memcpy(msg + n, tail, tlen);
            n += tlen;
            syscall(SYS_write, 2, msg, n);
            break;
        }
    }
    if (!sluice_signal_chain_call_previous(&guard_chain, sig, info, uctx)) {
        struct sigaction dfl; /* returning re-runs the faulting write, which now kills */
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sluice_real_sigaction(sig, &dfl, NULL);
    }
}

void dsm_guard_install(void)
{
    if (atomic_exchange(&guard_installed, 1))
        return;
    static const int sigs[] = {SIGSEGV, SIGBUS};
    sluice_signal_chain_install(&guard_chain, sigs, 2, guard_handler);
}

static void slot_clear(int i)
{
    atomic_store(&guard[i].start, 0);
    guard[i].chain->guard_slot = 0;
    guard[i].chain = NULL;
}

static void make_writable(struct sluice_dsm_chain *ch)
{
    if (ch->ro)
        mprotect(ch->buf, ch->mapped_len, PROT_READ | PROT_WRITE);
    ch->ro = false;
}

/* A free slot, or one taken from a read-only chain outside its scope (made writable); -1
 * when every slot guards a chain in a READ scope. */
static int slot_take(void)
{
    for (int i = 0; i < GUARD_SLOTS; i++)
        if (!guard[i].chain)
            return i;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        struct sluice_dsm_chain *o = guard[i].chain;
        if (o->scope == MODE_NONE) {
            make_writable(o);
            slot_clear(i);
            return i;
        }
    }
    return -1;
}

void dsm_guard_read(struct sluice_dsm_chain *ch, bool in_scope)
{
    if (!ch->buf || !ch->mapped_len)
        return; /* MAP'ed memory is the caller's: never protected */
    if (ch->guard_slot) {
        atomic_store(&guard[ch->guard_slot - 1].in_read, in_scope);
        return; /* read-only already: nothing to do, the common case of a read hit */
    }
    if (!in_scope)
        return;
    int i = slot_take();
    if (i < 0) {
        make_writable(ch); /* all slots used by READ scopes: this one runs unguarded */
        return;
    }
    guard[i].addr = ch->base;
    guard[i].chain = ch;
    atomic_store(&guard[i].in_read, 1);
    atomic_store(&guard[i].end, (uintptr_t)ch->buf + ch->mapped_len);
    if (!ch->ro)
        mprotect(ch->buf, ch->mapped_len, PROT_READ); /* memory from the pool may be already */
    ch->ro = true;
    atomic_store(&guard[i].start, (uintptr_t)ch->buf);
    ch->guard_slot = i + 1;
}

void dsm_guard_writable(struct sluice_dsm_chain *ch)
{
    make_writable(ch);
    if (ch->guard_slot)
        slot_clear(ch->guard_slot - 1);
}

void dsm_guard_forget(struct sluice_dsm_chain *ch)
{
    if (ch->guard_slot)
        slot_clear(ch->guard_slot - 1);
}

unsigned char *dsm_chain_wbuf(struct sluice_dsm_chain *ch)
{
    if (ch->wbuf != ch->buf)
        return ch->wbuf;
    dsm_guard_writable(ch); /* one mapping (no memfd): unprotect it */
    return ch->buf;
}
