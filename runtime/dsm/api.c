/* SPDX-License-Identifier: MIT */
/* The public DSM functions (sluice_dsm.h): argument checks, the lock, scopes over chains, and
 * the life cycle (a private communicator duplicated from sluice's, a progress poller, and a
 * two-phase finalization so that no rank leaves while another may still ask it something). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/export.h"
#include "common/log.h"
#include "config/config.h"
#include "dsm/dsm.h"
#include "mpi/roles.h"
#include "progress/progress.h"
#include "trace/trace.h"

/* Adaptive: a thread that finds the lock held (by the poller, for one poll) spins briefly
 * instead of sleeping in the kernel and waiting for a futex wake-up. */
struct dsm_global D = {.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, .comm = MPI_COMM_NULL, .poller = -1};

static _Thread_local int last_error;

static const char *error_name(int code);

int dsm_fail(int code, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    last_error = code;
    sluice_log_error("dsm: %s (%s)", line, error_name(code));
    return code;
}

SLUICE_EXPORT int sluice_dsm_last_error(void)
{
    return last_error;
}

static const char *error_name(int code)
{
    switch (code) {
    case SLUICE_DSM_OK:
        return "success";
    case SLUICE_DSM_EINVAL:
        return "invalid argument";
    case SLUICE_DSM_ENOINIT:
        return "DSM not initialized";
    case SLUICE_DSM_ESCOPE:
        return "scope misuse";
    case SLUICE_DSM_EBUSY:
        return "chunk already in a scope";
    case SLUICE_DSM_ETIMEDOUT:
        return "timed out";
    case SLUICE_DSM_ESIZE:
        return "size mismatch";
    case SLUICE_DSM_ENOENT:
        return "not found";
    case SLUICE_DSM_ENOMEM:
        return "out of memory";
    case SLUICE_DSM_EMPI:
        return "MPI error";
    }
    return "unknown error";
}

SLUICE_EXPORT const char *sluice_dsm_strerror(int code)
{
    return error_name(code);
}

/* ---- life cycle ---------------------------------------------------------------------------- */

/* "all", a count N (ranks 0..N-1), or a comma list of ranks. */
static int parse_servers(const char *s)
{
    free(D.servers);
    D.servers = calloc((size_t)D.size, sizeof *D.servers);
    D.nservers = 0;
    if (!D.servers)
        return dsm_fail(SLUICE_DSM_ENOMEM, "out of memory for the server list");
    if (!s || !*s || strcmp(s, "all") == 0) {
        for (int r = 0; r < D.size; r++)
            D.servers[D.nservers++] = r;
        return 0;
    }
    if (!strchr(s, ',')) {
        char *end;
        long n = strtol(s, &end, 10);
        if (*end == 0 && n >= 1) {
            for (int r = 0; r < D.size && r < n; r++)
                D.servers[D.nservers++] = r;
            return 0;
        }
    }
    const char *p = s;
    while (*p) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= D.size || (*end && *end != ','))
            return dsm_fail(
                SLUICE_DSM_EINVAL,
                "SLUICE_DSM_SERVERS='%s': expected all, a count, or ranks below %d separated by commas", s,
                D.size);
        if (D.nservers < D.size)
            D.servers[D.nservers++] = (int)r;
        p = *end ? end + 1 : end;
    }
    return D.nservers ? 0 : dsm_fail(SLUICE_DSM_EINVAL, "SLUICE_DSM_SERVERS='%s' names no rank", s);
}

static void finalize_locked(void);

static void finalize_hook(void)
{
    pthread_mutex_lock(&D.lock);
    if (D.up)
        finalize_locked();
    pthread_mutex_unlock(&D.lock);
}

SLUICE_EXPORT int sluice_dsm_init(void)
{
    static bool hooked;
    pthread_mutex_lock(&D.lock);
    if (D.up) {
        pthread_mutex_unlock(&D.lock);
        return 0;
    }
    MPI_Comm world = sluice_comm();
    if (world == MPI_COMM_NULL) {
        pthread_mutex_unlock(&D.lock);
        return dsm_fail(SLUICE_DSM_ENOINIT, "MPI is not usable in this process (initialized below "
                                            "MPI_THREAD_MULTIPLE, or another process owns the rank)");
    }
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    int rc = PMPI_Comm_dup(world, &D.comm);
    sluice_time_leave(prev);
    if (rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&D.lock);
        return dsm_fail(SLUICE_DSM_EMPI, "MPI_Comm_dup failed (error %d)", rc);
    }
    PMPI_Comm_rank(D.comm, &D.rank);
    PMPI_Comm_size(D.comm, &D.size);
    D.chunk_size = (size_t)sluice_config.DSM_CHUNK_SIZE;
    D.cache_limit = sluice_config.DSM_CACHE_CHUNKS;
    D.timeout_ns = sluice_config.DSM_TIMEOUT * 1000000000ull;
    D.spin_ns = sluice_config.DSM_SPIN * 1000ull;
    rc = parse_servers(sluice_config.DSM_SERVERS);
    if (rc) {
        PMPI_Comm_free(&D.comm);
        pthread_mutex_unlock(&D.lock);
        return rc;
    }
    dsm_guard_install();
    D.up = true;
    dsm_transport_start();
    if (!hooked) {
        hooked = true;
        sluice_mpi_on_finalize(finalize_hook);
    }
    pthread_mutex_unlock(&D.lock);
    return 0;
}

void dsm_free_state(void)
{
    while (D.all)
        dsm_chain_destroy(D.all);
    dsm_chunk_pool_drain();
    struct dsm_chunk *c, *tmp;
    HASH_ITER(hh, D.chunks, c, tmp)
    {
        HASH_DEL(D.chunks, c);
        free(c->inst);
        free(c);
    }
    dsm_home_free_all();
    dsm_sync_free_all();
    dsm_pubsub_free_all();
    dsm_transport_free_self();
}

static void finalize_locked(void)
{
    D.in_finalize = true;
    /* Phase 0: nobody asks anything after it. Phase 1: whatever phase 0 caused (a publish of a
     * last write-back) has reached its receiver, which still receives until then. */
    dsm_done_phase(0);
    dsm_done_phase(1);
    dsm_transport_stop();
    D.up = false;
    dsm_free_state();
    PMPI_Comm_free(&D.comm);
    D.comm = MPI_COMM_NULL;
    D.in_finalize = false;
}

SLUICE_EXPORT int sluice_dsm_finalize(void)
{
    finalize_hook();
    return 0;
}

#define LOCKED_OR(ret)                                                                                       \
    __atomic_add_fetch(&D.entering, 1, __ATOMIC_RELAXED);                                                    \
    pthread_mutex_lock(&D.lock);                                                                             \
    __atomic_sub_fetch(&D.entering, 1, __ATOMIC_RELAXED);                                                    \
    if (!D.up) {                                                                                             \
        pthread_mutex_unlock(&D.lock);                                                                       \
        dsm_fail(SLUICE_DSM_ENOINIT, "%s before sluice_dsm_init()", __func__);                               \
        return ret;                                                                                          \
    }

SLUICE_EXPORT int sluice_dsm_rank(void)
{
    return D.up ? D.rank : -1;
}

SLUICE_EXPORT int sluice_dsm_size(void)
{
    return D.up ? D.size : 0;
}

/* ---- allocation ---------------------------------------------------------------------------- */

static int check_addrs(const unsigned long *addrs, size_t n, int protocol)
{
    if (protocol != SLUICE_DSM_MESI)
        return dsm_fail(SLUICE_DSM_EINVAL, "unknown protocol %d", protocol);
    for (size_t i = 0; i < n; i++)
        if (addrs[i] >= DSM_RESERVED)
            return dsm_fail(SLUICE_DSM_EINVAL, "chunk @%lu: addresses from %lu up are reserved for symbols",
                            addrs[i], DSM_RESERVED);
    return 0;
}

static struct sluice_dsm_chain *malloc_range(unsigned long base, size_t size, int protocol, bool reserved_ok)
{
    if (size == 0) {
        dsm_fail(SLUICE_DSM_EINVAL, "malloc at @%lu: size 0", base);
        return NULL;
    }
    size_t cs = D.chunk_size;
    size_t n = (size + cs - 1) / cs;
    if (base + (n - 1) < base) {
        dsm_fail(SLUICE_DSM_EINVAL, "malloc at @%lu: %zu chunks run past the address space", base, n);
        return NULL;
    }
    unsigned long *addrs = malloc(n * sizeof *addrs);
    size_t *sizes = malloc(n * sizeof *sizes);
    struct sluice_dsm_chain *ch = NULL;
    int err = 0;
    if (!addrs || !sizes) {
        dsm_fail(SLUICE_DSM_ENOMEM, "malloc at @%lu: out of memory", base);
    } else {
        for (size_t i = 0; i < n; i++) {
            addrs[i] = base + i;
            sizes[i] = i + 1 < n ? cs : size - (n - 1) * cs;
        }
        if (reserved_ok || check_addrs(addrs, n, protocol) == 0)
            ch = dsm_chain_make(addrs, sizes, n, protocol, &err);
    }
    free(addrs);
    free(sizes);
    return ch;
}

SLUICE_EXPORT sluice_dsm_chain *sluice_dsm_malloc(unsigned long base, size_t size, int protocol)
{
    LOCKED_OR(NULL);
    struct sluice_dsm_chain *ch = malloc_range(base, size, protocol, false);
    pthread_mutex_unlock(&D.lock);
    return ch;
}

SLUICE_EXPORT sluice_dsm_chain *sluice_dsm_malloc_lst(const unsigned long *addrs, size_t n,
                                                      const size_t *sizes, size_t nsizes, int protocol)
{
    LOCKED_OR(NULL);
    struct sluice_dsm_chain *ch = NULL;
    size_t *all = NULL;
    int err = 0;
    if (!addrs || n == 0 || !sizes || nsizes == 0) {
        dsm_fail(SLUICE_DSM_EINVAL, "malloc_lst: empty address or size list");
    } else if (check_addrs(addrs, n, protocol) == 0) {
        all = malloc(n * sizeof *all);
        if (!all)
            dsm_fail(SLUICE_DSM_ENOMEM, "malloc_lst: out of memory");
        for (size_t i = 0; all && i < n; i++) {
            all[i] = sizes[i % nsizes];
            if (all[i] == 0) {
                dsm_fail(SLUICE_DSM_EINVAL, "malloc_lst: chunk @%lu of size 0", addrs[i]);
                free(all);
                all = NULL;
            }
        }
        if (all)
            ch = dsm_chain_make(addrs, all, n, protocol, &err);
    }
    free(all);
    pthread_mutex_unlock(&D.lock);
    return ch;
}

/* Lookups in flight, answered by M_LOOKUP_REPLY. */
struct pending_lookup {
    unsigned long addr;
    bool done;
    uint64_t size;
    int proto;
    struct pending_lookup *next;
};
static struct pending_lookup *lookups;

static bool lookup_done(void *arg)
{
    return ((struct pending_lookup *)arg)->done;
}

void dsm_client_msg(const struct dsm_msg *m, const void *payload, size_t len, int src)
{
    (void)src;
    if (m->type == M_LOOKUP_REPLY) {
        for (struct pending_lookup *p = lookups; p; p = p->next)
            if (p->addr == m->addr) {
                p->done = true;
                p->size = m->size;
                p->proto = m->proto;
            }
        return;
    }
    if (m->type == M_SUB_ACK) {
        dsm_pubsub_ack(m);
        return;
    }
    struct dsm_chunk *c = dsm_chunk_find(m->addr);
    dsm_protocol(c ? c->proto : m->proto)->client_msg(c, m, payload, len);
}

static int lookup_one(unsigned long addr, size_t *size, int *proto)
{
    struct dsm_chunk *c = dsm_chunk_find(addr);
    if (c && c->version > 0) {
        *size = c->size;
        *proto = c->proto;
        return 0;
    }
    struct pending_lookup p = {.addr = addr, .next = lookups};
    lookups = &p;
    struct dsm_msg m = {.type = M_LOOKUP, .addr = addr};
    int rc = dsm_send(dsm_home_of(addr), &m, NULL, 0);
    if (rc == 0)
        rc = dsm_wait(lookup_done, &p, "lookup of chunk (never written?)", addr);
    for (struct pending_lookup **pp = &lookups; *pp; pp = &(*pp)->next)
        if (*pp == &p) {
            *pp = p.next;
            break;
        }
    *size = p.size;
    *proto = p.proto;
    return rc;
}

static struct sluice_dsm_chain *lookup_addrs(const unsigned long *addrs, size_t n)
{
    size_t *sizes = malloc(n * sizeof *sizes);
    if (!sizes) {
        dsm_fail(SLUICE_DSM_ENOMEM, "lookup: out of memory");
        return NULL;
    }
    int proto = 0, err = 0;
    struct sluice_dsm_chain *ch = NULL;
    size_t i = 0;
    for (; i < n; i++)
        if (lookup_one(addrs[i], &sizes[i], &proto) != 0)
            break;
    if (i == n) {
        ch = dsm_chain_make(addrs, sizes, n, proto, &err);
        if (ch)
            sluice_trace_instant(SLUICE_EV_DSM_LOOKUP, ch->base, ch->n, ch->bytes);
    }
    free(sizes);
    return ch;
}

SLUICE_EXPORT sluice_dsm_chain *sluice_dsm_lookup(unsigned long base, size_t nchunks)
{
    LOCKED_OR(NULL);
    struct sluice_dsm_chain *ch = NULL;
    unsigned long *addrs = nchunks ? malloc(nchunks * sizeof *addrs) : NULL;
    if (!addrs) {
        dsm_fail(nchunks ? SLUICE_DSM_ENOMEM : SLUICE_DSM_EINVAL, "lookup at @%lu of %zu chunks", base,
                 nchunks);
    } else {
        for (size_t i = 0; i < nchunks; i++)
            addrs[i] = base + i;
        ch = lookup_addrs(addrs, nchunks);
    }
    free(addrs);
    pthread_mutex_unlock(&D.lock);
    return ch;
}

SLUICE_EXPORT sluice_dsm_chain *sluice_dsm_lookup_lst(const unsigned long *addrs, size_t n)
{
    LOCKED_OR(NULL);
    struct sluice_dsm_chain *ch = NULL;
    if (!addrs || n == 0)
        dsm_fail(SLUICE_DSM_EINVAL, "lookup_lst: empty address list");
    else
        ch = lookup_addrs(addrs, n);
    pthread_mutex_unlock(&D.lock);
    return ch;
}

SLUICE_EXPORT int sluice_dsm_free(sluice_dsm_chain *ch)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = 0;
    if (!ch)
        rc = dsm_fail(SLUICE_DSM_EINVAL, "free of a NULL chain");
    else if (ch->scope != MODE_NONE)
        rc = dsm_fail(SLUICE_DSM_ESCOPE, "free of chain @%lu inside its scope (RELEASE first)", ch->base);
    else
        dsm_chain_destroy(ch);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT size_t sluice_dsm_chain_size(const sluice_dsm_chain *ch)
{
    return ch ? ch->bytes : 0;
}

SLUICE_EXPORT unsigned long sluice_dsm_chain_base(const sluice_dsm_chain *ch)
{
    return ch ? ch->base : 0;
}

/* ---- scopes -------------------------------------------------------------------------------- */

static const char *mode_name(int mode)
{
    return mode == MODE_READ ? "READ" : mode == MODE_WRITE ? "WRITE" : "READWRITE";
}

static int by_addr(const void *a, const void *b)
{
    unsigned long x = (*(struct dsm_chunk *const *)a)->addr, y = (*(struct dsm_chunk *const *)b)->addr;
    return x < y ? -1 : x > y;
}

static void trace_access(struct dsm_chunk *c, int mode)
{
    if (!sluice_trace_active())
        return;
    uint64_t now = sluice_now_ns();
    uint64_t kind = (mode == MODE_READ ? 1 : 3) + (c->scope_hit ? 0 : 1);
    sluice_trace_record(SLUICE_EV_DSM_ACCESS, 0, c->scope_t0, now - c->scope_t0, c->addr, c->size, kind);
}

/* Undoes the acquires of the first k chunks of order (all unchanged: no write-back). */
static void undo(struct dsm_chunk **order, size_t k, size_t n, int mode)
{
    for (size_t i = 0; i < n; i++) {
        struct dsm_chunk *c = order[i];
        if (i < k) {
            if (c->state == ST_M)
                c->state = ST_E;
            c->held = false;
            c->scope = MODE_NONE;
            dsm_protocol(c->proto)->release(c, MODE_READ, NULL);
        } else {
            c->scope = MODE_NONE;
        }
    }
    (void)mode;
}

void *dsm_scope_begin(struct sluice_dsm_chain *ch, int mode, bool want_data, int *err)
{
    if (!ch) {
        *err = dsm_fail(SLUICE_DSM_EINVAL, "%s scope on a NULL chain", mode_name(mode));
        return NULL;
    }
    if (ch->scope != MODE_NONE) {
        *err = dsm_fail(SLUICE_DSM_ESCOPE, "%s scope on chain @%lu, which is already in a %s scope",
                        mode_name(mode), ch->base, mode_name(ch->scope));
        return NULL;
    }
    for (size_t i = 0; i < ch->n; i++)
        if (ch->chunks[i]->scope != MODE_NONE) {
            *err = dsm_fail(SLUICE_DSM_EBUSY,
                            "%s scope on chain @%lu: its chunk @%lu is in a scope of another chain",
                            mode_name(mode), ch->base, ch->chunks[i]->addr);
            return NULL;
        }
    int rc = dsm_chain_ensure_memory(ch);
    if (rc) {
        *err = rc;
        return NULL;
    }
    struct dsm_chunk **order = malloc(ch->n * sizeof *order);
    if (!order) {
        *err = dsm_fail(SLUICE_DSM_ENOMEM, "scope on chain @%lu: out of memory", ch->base);
        return NULL;
    }
    memcpy(order, ch->chunks, ch->n * sizeof *order);
    /* Every process takes chunks in address order: no cycle of waits between processes. */
    qsort(order, ch->n, sizeof *order, by_addr);
    ch->scope = mode;
    dsm_chain_touch(ch);
    for (size_t i = 0; i < ch->n; i++) {
        order[i]->scope = mode;
        order[i]->reply = false;
    }
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = order[i];
        c->scope_t0 = sluice_now_ns();
        rc = dsm_protocol(c->proto)->acquire(c, mode, want_data, &c->scope_hit);
        if (rc) {
            undo(order, i, ch->n, mode);
            ch->scope = MODE_NONE;
            free(order);
            *err = rc;
            return NULL;
        }
        c->held = true;
    }
    free(order);
    if (mode == MODE_READ)
        dsm_guard_read(ch, true);
    else
        dsm_guard_writable(ch);
    dsm_evict_excess();
    return ch->buf;
}

int dsm_scope_end(struct sluice_dsm_chain *ch)
{
    if (!ch)
        return dsm_fail(SLUICE_DSM_EINVAL, "RELEASE of a NULL chain");
    if (ch->scope == MODE_NONE)
        return dsm_fail(SLUICE_DSM_ESCOPE,
                        "RELEASE of chain @%lu without a scope (no READ, WRITE or READWRITE open)", ch->base);
    int mode = ch->scope;
    if (mode == MODE_READ)
        dsm_guard_read(ch, false);
    for (size_t i = 0; i < ch->n; i++) {
        struct dsm_chunk *c = ch->chunks[i];
        const unsigned char *data = ch->buf + ch->offsets[i];
        if (mode & MODE_WRITE)
            dsm_chunk_copy_from(c, data);
        trace_access(c, mode);
        c->held = false;
        c->scope = MODE_NONE;
        dsm_protocol(c->proto)->release(c, mode, (mode & MODE_WRITE) ? data : NULL);
    }
    ch->scope = MODE_NONE;
    dsm_evict_excess();
    return 0;
}

static void *scope_api(sluice_dsm_chain *ch, int mode)
{
    LOCKED_OR(NULL);
    int err = 0;
    void *p = dsm_scope_begin(ch, mode, true, &err);
    pthread_mutex_unlock(&D.lock);
    return p;
}

SLUICE_EXPORT void *sluice_dsm_read(sluice_dsm_chain *ch)
{
    return scope_api(ch, MODE_READ);
}

SLUICE_EXPORT void *sluice_dsm_write(sluice_dsm_chain *ch)
{
    return scope_api(ch, MODE_WRITE);
}

SLUICE_EXPORT void *sluice_dsm_readwrite(sluice_dsm_chain *ch)
{
    return scope_api(ch, MODE_RW);
}

SLUICE_EXPORT int sluice_dsm_release(sluice_dsm_chain *ch)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_scope_end(ch);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT unsigned long sluice_dsm_version(const sluice_dsm_chain *ch)
{
    return ch && ch->n ? (unsigned long)ch->chunks[0]->version : 0;
}

SLUICE_EXPORT int sluice_dsm_map(sluice_dsm_chain *ch, void *ptr)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = 0;
    if (!ch || !ptr)
        rc = dsm_fail(SLUICE_DSM_EINVAL, "map: NULL chain or pointer");
    else if (ch->scope != MODE_NONE)
        rc = dsm_fail(SLUICE_DSM_ESCOPE, "map of chain @%lu inside its scope", ch->base);
    else
        dsm_chain_map(ch, ptr);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

static int empty_scope(sluice_dsm_chain *ch, int mode, const char *what)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = 0;
    if (ch && !ch->user_mapped)
        rc = dsm_fail(SLUICE_DSM_EINVAL, "%s of chain @%lu, which is not mapped (sluice_dsm_map first)", what,
                      ch->base);
    else if (dsm_scope_begin(ch, mode, mode == MODE_READ, &rc))
        rc = dsm_scope_end(ch);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_put(sluice_dsm_chain *ch)
{
    return empty_scope(ch, MODE_WRITE, "put");
}

SLUICE_EXPORT int sluice_dsm_get(sluice_dsm_chain *ch)
{
    return empty_scope(ch, MODE_READ, "get");
}

/* ---- symbols ------------------------------------------------------------------------------- */

SLUICE_EXPORT int sluice_dsm_symbol_define(const char *name, unsigned long base, size_t size)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = size == 0 ? dsm_fail(SLUICE_DSM_EINVAL, "symbol %s: size 0", name ? name : "(null)")
                       : dsm_symbol_define(name, base, size);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

static struct sluice_dsm_chain *symbol_chain(const char *name, bool quiet_missing, int *err)
{
    unsigned long base;
    size_t size;
    int rc = dsm_symbol_find(name, &base, &size);
    if (rc == SLUICE_DSM_ENOENT && quiet_missing) {
        *err = rc;
        return NULL;
    }
    if (rc == SLUICE_DSM_ENOENT)
        rc = dsm_fail(SLUICE_DSM_ENOENT, "symbol %s is not defined", name);
    if (rc) {
        *err = rc;
        return NULL;
    }
    return malloc_range(base, size, SLUICE_DSM_MESI, true);
}

SLUICE_EXPORT sluice_dsm_chain *sluice_dsm_symbol_lookup(const char *name)
{
    LOCKED_OR(NULL);
    int err = 0;
    struct sluice_dsm_chain *ch = symbol_chain(name, false, &err);
    pthread_mutex_unlock(&D.lock);
    return ch;
}

/* Copies size bytes between data and the symbol's chain in a scope of mode. */
static int symbol_copy(const char *name, void *data, size_t size, int mode)
{
    int err = 0;
    struct sluice_dsm_chain *ch = symbol_chain(name, mode != MODE_READ, &err);
    if (!ch && err == SLUICE_DSM_ENOENT && mode != MODE_READ) {
        unsigned long base = dsm_symbol_address(name);
        err = dsm_symbol_define(name, base, size);
        if (err == 0)
            ch = malloc_range(base, size, SLUICE_DSM_MESI, true);
    }
    if (!ch)
        return err ? err : last_error;
    if (ch->bytes != size)
        return dsm_fail(SLUICE_DSM_ESIZE, "symbol %s is %zu bytes, not %zu", name, ch->bytes, size);
    unsigned char *p = dsm_scope_begin(ch, mode, mode == MODE_READ, &err);
    if (!p)
        return err;
    if (mode == MODE_READ)
        memcpy(data, p, size);
    else
        memcpy(p, data, size);
    return dsm_scope_end(ch);
}

SLUICE_EXPORT int sluice_dsm_symbol_put(const char *name, const void *data, size_t size)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = !data || size == 0 ? dsm_fail(SLUICE_DSM_EINVAL, "symbol_put: no data")
                                : symbol_copy(name, (void *)data, size, MODE_WRITE);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_symbol_get(const char *name, void *data, size_t size)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = !data || size == 0 ? dsm_fail(SLUICE_DSM_EINVAL, "symbol_get: no buffer")
                                : symbol_copy(name, data, size, MODE_READ);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

/* ---- synchronization and events ------------------------------------------------------------ */

SLUICE_EXPORT int sluice_dsm_sleep(unsigned int id)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_sleep(id);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_wakeup(unsigned int id)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_wakeup(id);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_barrier(unsigned int id, unsigned int count)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_barrier(id, count);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_subscribe(unsigned long address, sluice_dsm_handler handler, void *args)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_subscribe(K_CHUNK, address, handler, args);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_unsubscribe(unsigned long address, sluice_dsm_handler handler, void *args)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_unsubscribe(K_CHUNK, address, handler, args);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_subscribe_signal(unsigned long id, sluice_dsm_handler handler, void *args)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_subscribe(K_SIGNAL, id, handler, args);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_unsubscribe_signal(unsigned long id, sluice_dsm_handler handler, void *args)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_unsubscribe(K_SIGNAL, id, handler, args);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_signal(unsigned long id)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_signal(id);
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_loop(void)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int rc = dsm_loop();
    pthread_mutex_unlock(&D.lock);
    return rc;
}

SLUICE_EXPORT int sluice_dsm_poll_events(void)
{
    LOCKED_OR(SLUICE_DSM_ENOINIT);
    int n = dsm_poll_events();
    pthread_mutex_unlock(&D.lock);
    return n;
}
