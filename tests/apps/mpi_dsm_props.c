/* SPDX-License-Identifier: MIT */
/* Property checks of sluice's DSM (sluice_dsm.h), one mode per run, under mpiexec with any rank
 * count. Each mode checks its property itself and prints "MODE ok ..." on rank 0 (or "FAIL ..."
 * on the rank that saw it, exit 1). tests/integration/dsm/dsm_*.sh run them.
 *   coherence N   N random READ / READWRITE scopes per rank over chains of 1-3 of 4 counters:
 *                 no lost increment, no torn chunk, reads never go back; then rounds where one
 *                 rank writes and every rank must read exactly that value
 *   pubsub W      every rank but 0 writes one chunk W times; rank 0's handler must run exactly
 *                 once per write; signals likewise
 *   sync R        R barrier rounds (all ranks, then all but rank 0), rendezvous with wake-ups
 *                 sent before and after the sleep
 *   evict         16 chains per rank under a small SLUICE_DSM_CACHE_CHUNKS, read back twice
 *   symbols       symbol table (concurrent definitions), lookup, map/put/get, a chunk in two chains
 *   misuse        RELEASE without scope, double scope, reserved address, size mismatch: errors
 *   misuse-write  writes inside a READ scope: must be stopped with a message
 *   threads N     3 threads per rank at once, each N increments of a chunk it shares with the
 *                 same thread of every other rank: no lost increment */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice_dsm.h"

static int rank, size;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAIL rank %d line %d: ", rank, __LINE__);                                       \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- coherence ----------------------------------------------------------------------------- */

#define NCOUNTERS 4
#define CSIZE 256 /* SLUICE_DSM_CHUNK_SIZE=256 in the test: one chunk per counter */
struct counter {
    uint64_t value;
    uint64_t last_writer;
    unsigned char fill[CSIZE - 16]; /* every byte = value & 0xff: a torn copy shows */
};

static void check_counter(const struct counter *c, int j)
{
    for (size_t i = 0; i < sizeof c->fill; i++)
        CHECK(c->fill[i] == (unsigned char)(c->value & 0xff), "counter %d torn: value %llu byte %zu is %u", j,
              (unsigned long long)c->value, i, c->fill[i]);
}

static int mode_coherence(int iters)
{
    const unsigned long base = 1000;
    sluice_dsm_chain *one[NCOUNTERS];
    for (int j = 0; j < NCOUNTERS; j++)
        one[j] = sluice_dsm_malloc(base + j, CSIZE, SLUICE_DSM_MESI);
    /* Multi-chunk chains, allocated as chains of consecutive counters (wrapping ones by list). */
    sluice_dsm_chain *multi[NCOUNTERS];
    for (int j = 0; j < NCOUNTERS; j++) {
        unsigned long addrs[3] = {base + j, base + (j + 1) % NCOUNTERS, base + (j + 2) % NCOUNTERS};
        size_t sz = CSIZE;
        multi[j] = sluice_dsm_malloc_lst(addrs, 1 + j % 3, &sz, 1, SLUICE_DSM_MESI);
        CHECK(multi[j], "malloc_lst");
    }
    uint64_t mine[NCOUNTERS] = {0}, seen[NCOUNTERS] = {0};
    rng += (uint64_t)rank * 7919;
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    for (int it = 0; it < iters; it++) {
        int j = (int)(next_rand() % NCOUNTERS);
        bool multi_chain = next_rand() % 3 == 0;
        sluice_dsm_chain *ch = multi_chain ? multi[j] : one[j];
        size_t n = sluice_dsm_chain_size(ch) / CSIZE;
        bool write = next_rand() % 2;
        struct counter *c = write ? sluice_dsm_readwrite(ch) : sluice_dsm_read(ch);
        CHECK(c, "scope on chain @%lu", sluice_dsm_chain_base(ch));
        for (size_t k = 0; k < n; k++) {
            int cj = (int)((j + k) % NCOUNTERS);
            check_counter(&c[k], cj);
            CHECK(c[k].value >= seen[cj], "counter %d went back from %llu to %llu", cj,
                  (unsigned long long)seen[cj], (unsigned long long)c[k].value);
            seen[cj] = c[k].value;
            if (write) {
                c[k].value++;
                c[k].last_writer = (uint64_t)rank;
                memset(c[k].fill, (int)(c[k].value & 0xff), sizeof c[k].fill);
                seen[cj] = c[k].value;
                mine[cj]++;
            }
        }
        if (next_rand() % 4 == 0)
            usleep((useconds_t)(next_rand() % 200));
        CHECK(sluice_dsm_release(ch) == 0, "release");
    }
    /* Each rank's increments, published in a chunk of its own; rank 0 adds them up. */
    sluice_dsm_chain *res = sluice_dsm_malloc(2000 + (unsigned long)rank, sizeof mine, SLUICE_DSM_MESI);
    uint64_t *r = sluice_dsm_write(res);
    memcpy(r, mine, sizeof mine);
    sluice_dsm_release(res);
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    if (rank == 0) {
        uint64_t total[NCOUNTERS] = {0};
        for (int p = 0; p < size; p++) {
            sluice_dsm_chain *o = sluice_dsm_lookup(2000 + (unsigned long)p, 1);
            CHECK(o && sluice_dsm_chain_size(o) == sizeof mine, "lookup of rank %d's results", p);
            const uint64_t *v = sluice_dsm_read(o);
            for (int j = 0; j < NCOUNTERS; j++)
                total[j] += v[j];
            sluice_dsm_release(o);
        }
        for (int j = 0; j < NCOUNTERS; j++) {
            const struct counter *c = sluice_dsm_read(one[j]);
            check_counter(c, j);
            CHECK(c->value == total[j], "counter %d is %llu after %llu increments (lost writes)", j,
                  (unsigned long long)c->value, (unsigned long long)total[j]);
            sluice_dsm_release(one[j]);
        }
        printf("coherence random ok: ranks %d increments %llu %llu %llu %llu\n", size,
               (unsigned long long)total[0], (unsigned long long)total[1], (unsigned long long)total[2],
               (unsigned long long)total[3]);
    }
    /* Rounds: one writer, then every rank must read exactly the value released. */
    for (int round = 0; round < 3 * size; round++) {
        int j = round % NCOUNTERS;
        if (round % size == rank) {
            struct counter *c = sluice_dsm_write(one[j]);
            c->value = 1000000u + (unsigned)round;
            memset(c->fill, (int)(c->value & 0xff), sizeof c->fill);
            sluice_dsm_release(one[j]);
        }
        CHECK(sluice_dsm_barrier(2, (unsigned)size) == 0, "barrier");
        const struct counter *c = sluice_dsm_read(one[j]);
        CHECK(c->value == 1000000u + (unsigned)round, "round %d: read %llu, the last released write is %u",
              round, (unsigned long long)c->value, 1000000u + (unsigned)round);
        check_counter(c, j);
        sluice_dsm_release(one[j]);
        CHECK(sluice_dsm_barrier(3, (unsigned)size) == 0, "barrier");
    }
    if (rank == 0)
        printf("coherence last-write ok: %d rounds\n", 3 * size);
    return 0;
}

/* ---- publish-subscribe --------------------------------------------------------------------- */

static int events_x, ends_seen, signals_seen;
static const unsigned long X = 5000;

static void on_x(unsigned long addr, void *args)
{
    (void)args;
    CHECK(addr == X, "handler of @%lu called for @%lu", X, addr);
    events_x++;
}

static void on_end(unsigned long addr, void *args)
{
    int *expected = args;
    (void)addr;
    if (++ends_seen == *expected) {
        /* Unsubscribing from inside a handler, both subscriptions. */
        CHECK(sluice_dsm_unsubscribe(X, on_x, NULL) == 0, "unsubscribe x");
        CHECK(sluice_dsm_unsubscribe(addr, on_end, args) == 0, "unsubscribe end");
    }
}

static void on_signal(unsigned long id, void *args)
{
    (void)args;
    CHECK(id == 77, "signal handler got id %lu", id);
    if (++signals_seen == 3)
        sluice_dsm_unsubscribe_signal(77, on_signal, NULL);
}

static int mode_pubsub(int writes)
{
    /* The end chunk has the same home as X: publications of one writer arrive in order. */
    unsigned long end = X + (unsigned long)size * 16;
    sluice_dsm_chain *x = sluice_dsm_malloc(X, 64, SLUICE_DSM_MESI);
    sluice_dsm_chain *e = sluice_dsm_malloc(end, 64, SLUICE_DSM_MESI);
    int expected_ends = size - 1;
    if (rank == 0) {
        CHECK(sluice_dsm_subscribe(X, on_x, NULL) == 0, "subscribe");
        CHECK(sluice_dsm_subscribe(end, on_end, &expected_ends) == 0, "subscribe");
    }
    if (rank == size - 1)
        CHECK(sluice_dsm_subscribe_signal(77, on_signal, NULL) == 0, "subscribe signal");
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    if (rank != 0) {
        for (int i = 0; i < writes; i++) {
            int *v = sluice_dsm_readwrite(x);
            (*v)++;
            sluice_dsm_release(x);
        }
        int *v = sluice_dsm_readwrite(e);
        (*v)++;
        sluice_dsm_release(e);
    }
    if (rank == 0)
        for (int i = 0; i < 3; i++)
            CHECK(sluice_dsm_signal(77) == 0, "signal");
    /* Main's work is done: the event loop runs until no subscription is left. */
    CHECK(sluice_dsm_loop() == 0, "loop");
    if (rank == 0) {
        CHECK(events_x == (size - 1) * writes, "%d handler calls for %d writes", events_x,
              (size - 1) * writes);
        const int *v = sluice_dsm_read(x);
        CHECK(*v == (size - 1) * writes, "value %d", *v);
        sluice_dsm_release(x);
        printf("pubsub ok: %d writes, %d handler calls\n", (size - 1) * writes, events_x);
    }
    if (rank == size - 1) {
        CHECK(signals_seen == 3, "%d signal handler calls for 3 signals", signals_seen);
        fprintf(stderr, "pubsub signals ok: 3\n");
    }
    sluice_dsm_barrier(1, (unsigned)size);
    return 0;
}

/* ---- barriers and rendezvous --------------------------------------------------------------- */

static int mode_sync(int rounds)
{
    sluice_dsm_chain *cnt = sluice_dsm_malloc(6000, sizeof(uint64_t), SLUICE_DSM_MESI);
    rng += (uint64_t)rank * 31;
    for (int r = 0; r < rounds; r++) {
        usleep((useconds_t)(next_rand() % 3000));
        uint64_t *v = sluice_dsm_readwrite(cnt);
        (*v)++;
        sluice_dsm_release(cnt);
        CHECK(sluice_dsm_barrier(10, (unsigned)size) == 0, "barrier");
        const uint64_t *w = sluice_dsm_read(cnt);
        CHECK(*w >= (uint64_t)size * (uint64_t)(r + 1),
              "round %d: left the barrier with %llu of %d increments", r, (unsigned long long)*w,
              size * (r + 1));
        sluice_dsm_release(cnt);
    }
    /* A barrier of all ranks but 0, while rank 0 waits elsewhere. */
    if (size > 1 && rank != 0)
        for (int r = 0; r < rounds; r++)
            CHECK(sluice_dsm_barrier(11, (unsigned)size - 1) == 0, "sub-barrier");
    /* Rendezvous: the last rank writes, then wakes rank 0 up. */
    sluice_dsm_chain *msg = sluice_dsm_malloc(6001, 32, SLUICE_DSM_MESI);
    if (rank == size - 1) {
        usleep(20000);
        char *p = sluice_dsm_write(msg);
        snprintf(p, 32, "hello from %d", rank);
        sluice_dsm_release(msg);
        CHECK(sluice_dsm_wakeup(20) == 0, "wakeup");
    }
    if (rank == 0) {
        CHECK(sluice_dsm_sleep(20) == 0, "sleep");
        const char *p = sluice_dsm_read(msg);
        char want[32];
        snprintf(want, sizeof want, "hello from %d", size - 1);
        CHECK(strcmp(p, want) == 0, "after wake-up read [%s], want [%s]", p, want);
        sluice_dsm_release(msg);
    }
    /* A wake-up sent before the sleep is not lost. */
    if (rank == size - 1)
        sluice_dsm_wakeup(21);
    CHECK(sluice_dsm_barrier(12, (unsigned)size) == 0, "barrier");
    CHECK(sluice_dsm_sleep(21) == 0, "sleep after wake-up");
    CHECK(sluice_dsm_barrier(12, (unsigned)size) == 0, "barrier");
    if (rank == 0)
        printf("sync ok: ranks %d rounds %d\n", size, rounds);
    return 0;
}

/* ---- eviction ------------------------------------------------------------------------------ */

static int mode_evict(void)
{
    enum { N = 16, BYTES = 1000 };
    sluice_dsm_chain *ch[64][N];
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            ch[p][i] = sluice_dsm_malloc(7000 + 4 * (unsigned long)(p * N + i), BYTES, SLUICE_DSM_MESI);
    for (int i = 0; i < N; i++) {
        unsigned char *d = sluice_dsm_write(ch[rank][i]);
        memset(d, rank * N + i + 1, BYTES);
        sluice_dsm_release(ch[rank][i]);
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    for (int pass = 0; pass < 2; pass++)
        for (int p = 0; p < size; p++)
            for (int i = 0; i < N; i++) {
                const unsigned char *d = sluice_dsm_read(ch[p][i]);
                CHECK(d, "read");
                for (int b = 0; b < BYTES; b++)
                    CHECK(d[b] == (unsigned char)(p * N + i + 1), "pass %d chain %d/%d byte %d is %u", pass,
                          p, i, b, d[b]);
                sluice_dsm_release(ch[p][i]);
            }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    if (rank == 0)
        printf("evict ok: %d chains read back twice\n", size * N);
    return 0;
}

/* ---- symbols, lookup, map ------------------------------------------------------------------ */

static int mode_symbols(void)
{
    char name[64];
    /* Concurrent definitions into the shared table: none may be lost. */
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "sym.%d.%d", rank, i);
        CHECK(sluice_dsm_symbol_define(name, 100000 + (unsigned long)(rank * 1000 + i), 10 + (size_t)i) == 0,
              "define %s", name);
    }
    if (rank == 0) {
        double v[100];
        for (int i = 0; i < 100; i++)
            v[i] = i * 0.5;
        CHECK(sluice_dsm_symbol_put("alpha", v, sizeof v) == 0, "put alpha");
    }
    /* A chain written by rank 1 that rank 0 finds by lookup, size unknown to it. */
    size_t big = 3 * 256 + 10; /* 4 chunks with SLUICE_DSM_CHUNK_SIZE=256 */
    if (rank == size - 1) {
        sluice_dsm_chain *c = sluice_dsm_malloc(300, big, SLUICE_DSM_MESI);
        unsigned char *p = sluice_dsm_write(c);
        for (size_t i = 0; i < big; i++)
            p[i] = (unsigned char)(i * 7);
        sluice_dsm_release(c);
    }
    if (rank == 0) {
        sluice_dsm_chain *c = sluice_dsm_lookup(300, 4);
        CHECK(c && sluice_dsm_chain_size(c) == big, "lookup size %zu", c ? sluice_dsm_chain_size(c) : 0);
        const unsigned char *p = sluice_dsm_read(c);
        for (size_t i = 0; i < big; i++)
            CHECK(p[i] == (unsigned char)(i * 7), "lookup byte %zu", i);
        sluice_dsm_release(c);
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 40; i++) {
            snprintf(name, sizeof name, "sym.%d.%d", p, i);
            sluice_dsm_chain *c = sluice_dsm_symbol_lookup(name);
            CHECK(c, "symbol %s lost", name);
            CHECK(sluice_dsm_chain_base(c) == 100000 + (unsigned long)(p * 1000 + i) &&
                      sluice_dsm_chain_size(c) == 10 + (size_t)i,
                  "symbol %s is @%lu size %zu", name, sluice_dsm_chain_base(c), sluice_dsm_chain_size(c));
        }
    double v[100];
    CHECK(sluice_dsm_symbol_get("alpha", v, sizeof v) == 0, "get alpha");
    for (int i = 0; i < 100; i++)
        CHECK(v[i] == i * 0.5, "alpha[%d] = %g", i, v[i]);
    CHECK(sluice_dsm_symbol_lookup("no.such.symbol") == NULL && sluice_dsm_last_error() == SLUICE_DSM_ENOENT,
          "undefined symbol found");
    /* MAP / PUT / GET: zero-copy in the caller's memory. */
    static int mapped[512];
    sluice_dsm_chain *m = sluice_dsm_malloc(400, sizeof mapped, SLUICE_DSM_MESI);
    CHECK(sluice_dsm_map(m, mapped) == 0, "map");
    if (rank == 0) {
        for (int i = 0; i < 512; i++)
            mapped[i] = i * 3;
        CHECK(sluice_dsm_put(m) == 0, "put");
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    CHECK(sluice_dsm_get(m) == 0, "get");
    for (int i = 0; i < 512; i++)
        CHECK(mapped[i] == i * 3, "mapped[%d] = %d", i, mapped[i]);
    /* One chunk in two chains: a write through one is seen through the other, locally. */
    sluice_dsm_chain *a = sluice_dsm_malloc(500, 2 * 256, SLUICE_DSM_MESI);
    unsigned long lst[2] = {501, 502};
    size_t sz = 256;
    sluice_dsm_chain *b = sluice_dsm_malloc_lst(lst, 2, &sz, 1, SLUICE_DSM_MESI);
    CHECK(sluice_dsm_malloc(500, 2 * 256, SLUICE_DSM_MESI) == a, "same chain twice is not the same");
    if (rank == 0) {
        unsigned char *p = sluice_dsm_write(a);
        memset(p + 256, 0x5a, 256);
        sluice_dsm_release(a);
        const unsigned char *q = sluice_dsm_read(b);
        CHECK(q[0] == 0x5a && q[255] == 0x5a, "chunk 501 through the other chain: %u", q[0]);
        sluice_dsm_release(b);
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    if (rank == 0)
        printf("symbols ok: %d symbols, lookup, map, shared chunk\n", 40 * size + 1);
    return 0;
}

/* ---- misuse -------------------------------------------------------------------------------- */

static int mode_misuse(void)
{
    sluice_dsm_chain *c = sluice_dsm_malloc(800 + (unsigned long)rank, 64, SLUICE_DSM_MESI);
    CHECK(sluice_dsm_release(c) == SLUICE_DSM_ESCOPE, "release without scope accepted");
    CHECK(sluice_dsm_read(c) != NULL, "read");
    CHECK(sluice_dsm_write(c) == NULL && sluice_dsm_last_error() == SLUICE_DSM_ESCOPE, "scope inside scope");
    CHECK(sluice_dsm_release(c) == 0, "release");
    CHECK(sluice_dsm_release(c) == SLUICE_DSM_ESCOPE, "second release accepted");
    CHECK(sluice_dsm_malloc(~0ul - 3, 64, SLUICE_DSM_MESI) == NULL &&
              sluice_dsm_last_error() == SLUICE_DSM_EINVAL,
          "reserved address");
    CHECK(sluice_dsm_malloc(900, 0, SLUICE_DSM_MESI) == NULL, "size 0");
    CHECK(sluice_dsm_barrier(1, (unsigned)size + 1) == SLUICE_DSM_EINVAL, "barrier count above ranks");
    /* Size mismatch: rank 0 makes chunk 850 64 bytes; others then ask for 128. */
    if (rank == 0) {
        sluice_dsm_chain *s = sluice_dsm_malloc(850, 64, SLUICE_DSM_MESI);
        sluice_dsm_write(s);
        sluice_dsm_release(s);
    }
    sluice_dsm_barrier(1, (unsigned)size);
    if (rank != 0) {
        sluice_dsm_chain *s = sluice_dsm_malloc(850, 128, SLUICE_DSM_MESI);
        CHECK(sluice_dsm_read(s) == NULL && sluice_dsm_last_error() == SLUICE_DSM_ESIZE,
              "size mismatch accepted");
    }
    sluice_dsm_barrier(1, (unsigned)size);
    if (rank == 0)
        printf("misuse ok\n");
    return 0;
}

static int mode_misuse_write(void)
{
    sluice_dsm_chain *c = sluice_dsm_malloc(42, 64, SLUICE_DSM_MESI);
    char *p = sluice_dsm_write(c);
    strcpy(p, "written");
    sluice_dsm_release(c);
    volatile char *q = sluice_dsm_read(c);
    fprintf(stderr, "read scope sees [%s]\n", (const char *)q);
    q[0] = 'X'; /* must not get through */
    fprintf(stderr, "FAIL: a write inside a READ scope went through\n");
    return 1;
}

/* ---- threads ------------------------------------------------------------------------------ */

#define NTHREADS 3
static int thread_iters;

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    sluice_dsm_chain *mine = sluice_dsm_malloc(9500 + (unsigned long)t, sizeof(uint64_t), SLUICE_DSM_MESI);
    uint64_t seen = 0;
    for (int i = 0; i < thread_iters; i++) {
        uint64_t *v = sluice_dsm_readwrite(mine);
        CHECK(v, "thread %d: readwrite", t);
        (*v)++;
        CHECK(sluice_dsm_release(mine) == 0, "thread %d: release", t);
        const uint64_t *w = sluice_dsm_read(mine);
        CHECK(w, "thread %d: read", t);
        CHECK(*w >= seen, "thread %d: counter went back", t);
        seen = *w;
        sluice_dsm_release(mine);
    }
    return NULL;
}

static int mode_threads(int iters)
{
    thread_iters = iters;
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    if (rank == 0) {
        for (int t = 0; t < NTHREADS; t++) {
            sluice_dsm_chain *c =
                sluice_dsm_malloc(9500 + (unsigned long)t, sizeof(uint64_t), SLUICE_DSM_MESI);
            const uint64_t *v = sluice_dsm_read(c);
            CHECK(*v == (uint64_t)size * (uint64_t)iters, "counter %d is %llu, want %llu", t,
                  (unsigned long long)*v, (unsigned long long)size * iters);
            sluice_dsm_release(c);
        }
        printf("threads ok: %d ranks x %d threads x %d increments\n", size, NTHREADS, iters);
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s coherence|pubsub|sync|evict|symbols|misuse|misuse-write [N]\n", argv[0]);
        return 2;
    }
    if (sluice_dsm_init() != 0)
        return 1;
    rank = sluice_dsm_rank();
    size = sluice_dsm_size();
    int n = argc > 2 ? atoi(argv[2]) : 0;
    int rc = 2;
    if (strcmp(argv[1], "coherence") == 0)
        rc = mode_coherence(n ? n : 200);
    else if (strcmp(argv[1], "pubsub") == 0)
        rc = mode_pubsub(n ? n : 20);
    else if (strcmp(argv[1], "sync") == 0)
        rc = mode_sync(n ? n : 10);
    else if (strcmp(argv[1], "evict") == 0)
        rc = mode_evict();
    else if (strcmp(argv[1], "symbols") == 0)
        rc = mode_symbols();
    else if (strcmp(argv[1], "misuse") == 0)
        rc = mode_misuse();
    else if (strcmp(argv[1], "threads") == 0)
        rc = mode_threads(n ? n : 50);
    else if (strcmp(argv[1], "misuse-write") == 0)
        rc = mode_misuse_write();
    else
        fprintf(stderr, "unknown mode %s\n", argv[1]);
    if (sluice_dsm_finalize() != 0)
        return 1;
    return rc;
}
