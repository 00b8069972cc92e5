/* SPDX-License-Identifier: MIT */
/* A writer against the sharers of a chunk (the three-hop write miss of docs/DSM.md), under
 * mpiexec; rank 0 prints "MODE ok ..." (or a rank prints "FAIL ...", exit 1).
 *   writemiss R     3 or more ranks, R rounds: ranks 1..n-1 read chunk X (homed on rank n-1, a
 *                   sharer too), then rank 0 writes it: a write miss with n-1 sharers and no
 *                   owner, nothing else in flight (rendezvous order the rounds). Odd rounds
 *                   rank 0 still holds its read copy (an upgrade: no data), even rounds it drops
 *                   it first (the data comes with the grant). After each write it reads the
 *                   chunk again (a hit: it kept a read copy). Every scope checks it sees the
 *                   last write; the trace shows the hops (tests/integration/dsm/dsm_sharers.sh).
 *   alternate R     2 or more ranks, R rounds: ranks 0 and 1 take turns writing chunk X (homed on
 *                   rank n-1: a third rank, or with 2 ranks the second writer), each after the
 *                   other's write (rendezvous order the turns): a migratory chunk, each write
 *                   miss after the first ones is WR_REQ and WR_GRANT. Every scope checks it sees
 *                   the last write, and every rank reads the last one at the end.
 *   exclusion R F   2 or more ranks, R rounds: the writer takes turns; every other rank opens a
 *                   READ scope of a two-chunk chain (homes on two ranks), waits at a barrier
 *                   with the writer, so that the writer's request finds them all inside, and
 *                   stays a random time. File F, mapped by every rank (one node), counts the
 *                   ranks inside READ scopes and flags the writer inside its WRITE scope: the
 *                   writer must find no reader, a reader never the writer. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* 64 bytes: a value and every other byte equal to it, so that a torn copy shows. */
struct cell {
    uint64_t value;
    unsigned char fill[56];
};

static void check_cell(const struct cell *c, uint64_t want, const char *what)
{
    CHECK(c->value == want, "%s: value %llu, the last write is %llu", what, (unsigned long long)c->value,
          (unsigned long long)want);
    for (size_t i = 0; i < sizeof c->fill; i++)
        CHECK(c->fill[i] == (unsigned char)want, "%s: torn at byte %zu", what, i);
}

static void set_cell(struct cell *c, uint64_t v)
{
    c->value = v;
    memset(c->fill, (int)(unsigned char)v, sizeof c->fill);
}

static int mode_writemiss(int rounds)
{
    CHECK(size >= 3, "writemiss needs 3 or more ranks");
    const unsigned long x = (unsigned long)(size - 1) + 100ul * (unsigned long)size; /* home: rank n-1 */
    sluice_dsm_chain *c = sluice_dsm_malloc(x, sizeof(struct cell), SLUICE_DSM_MESI);
    CHECK(c, "malloc");
    if (rank == 0) {
        for (int r = 0; r < rounds; r++) {
            for (int k = 1; k < size; k++) /* every reader has read round r's value */
                CHECK(sluice_dsm_sleep(11) == 0, "sleep");
            if (r % 2 == 0 && r > 0) { /* drop the read copy: the grant brings the data */
                CHECK(sluice_dsm_free(c) == 0, "free");
                c = sluice_dsm_malloc(x, sizeof(struct cell), SLUICE_DSM_MESI);
            }
            struct cell *p = sluice_dsm_write(c);
            CHECK(p, "write round %d", r);
            check_cell(p, (uint64_t)r, "write scope");
            set_cell(p, (uint64_t)r + 1);
            CHECK(sluice_dsm_release(c) == 0, "release");
            const struct cell *q = sluice_dsm_read(c);
            CHECK(q, "read after write round %d", r);
            check_cell(q, (uint64_t)r + 1, "read after write");
            CHECK(sluice_dsm_release(c) == 0, "release");
            CHECK(sluice_dsm_wakeup(10) == 0, "wakeup");
        }
        for (int k = 1; k < size; k++)
            CHECK(sluice_dsm_sleep(11) == 0, "sleep");
        printf("writemiss ok: %d rounds, %d sharers\n", rounds, size - 1);
    } else {
        for (int r = 0; r <= rounds; r++) {
            if (r > 0)
                CHECK(sluice_dsm_sleep(10) == 0, "sleep");
            const struct cell *p = sluice_dsm_read(c);
            CHECK(p, "read round %d", r);
            check_cell(p, (uint64_t)r, "read scope");
            CHECK(sluice_dsm_release(c) == 0, "release");
            CHECK(sluice_dsm_wakeup(11) == 0, "wakeup");
        }
    }
    return 0;
}

static int mode_alternate(int rounds)
{
    CHECK(size >= 2, "alternate needs 2 or more ranks");
    const unsigned long x = (unsigned long)(size - 1) + 100ul * (unsigned long)size; /* home: rank n-1 */
    sluice_dsm_chain *c = sluice_dsm_malloc(x, sizeof(struct cell), SLUICE_DSM_MESI);
    CHECK(c, "malloc");
    if (rank <= 1) {
        for (int r = rank; r < rounds; r += 2) {
            if (r > 0) /* the other writer's turn is over */
                CHECK(sluice_dsm_sleep(20u + (unsigned)rank) == 0, "sleep");
            struct cell *p = sluice_dsm_write(c);
            CHECK(p, "write round %d", r);
            check_cell(p, (uint64_t)r, "write scope");
            set_cell(p, (uint64_t)r + 1);
            CHECK(sluice_dsm_release(c) == 0, "release");
            if (r + 1 < rounds)
                CHECK(sluice_dsm_wakeup(21u - (unsigned)rank) == 0, "wakeup");
        }
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    const struct cell *p = sluice_dsm_read(c);
    CHECK(p, "last read");
    check_cell(p, (uint64_t)rounds, "last read");
    CHECK(sluice_dsm_release(c) == 0, "release");
    if (rank == 0)
        printf("alternate ok: %d rounds, %d ranks\n", rounds, size);
    return 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct shared_counts {
    int readers; /* ranks inside a READ scope */
    int writer;  /* 1 while the writer is inside its WRITE scope */
};

static int mode_exclusion(int rounds, const char *path)
{
    CHECK(path, "exclusion needs a file shared by the ranks");
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    CHECK(fd >= 0, "open %s", path);
    CHECK(ftruncate(fd, 4096) == 0, "ftruncate %s", path);
    struct shared_counts *n = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(n != MAP_FAILED, "mmap %s", path);
    close(fd);
    if (rank == 0)
        memset(n, 0, sizeof *n);
    unsigned long addrs[2] = {7000, 7001}; /* homes: ranks 7000 % n and 7001 % n */
    size_t sz = sizeof(struct cell);
    sluice_dsm_chain *c = sluice_dsm_malloc_lst(addrs, 2, &sz, 1, SLUICE_DSM_MESI);
    CHECK(c, "malloc_lst");
    rng += (uint64_t)rank * 7919;
    int waited = 0; /* rounds in which a reader was still inside when the writer asked */
    for (int r = 0; r < rounds; r++) {
        int w = r % size;
        CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
        if (rank != w) {
            struct cell *p = sluice_dsm_read(c);
            CHECK(p, "read round %d", r);
            __atomic_add_fetch(&n->readers, 1, __ATOMIC_SEQ_CST);
            CHECK(__atomic_load_n(&n->writer, __ATOMIC_SEQ_CST) == 0, "round %d: the writer is inside", r);
            check_cell(&p[0], (uint64_t)r, "read scope");
            check_cell(&p[1], (uint64_t)r, "read scope");
            CHECK(sluice_dsm_barrier(2, (unsigned)size) == 0, "barrier");
            if (next_rand() % 4)
                usleep((useconds_t)(next_rand() % 1500));
            CHECK(__atomic_load_n(&n->writer, __ATOMIC_SEQ_CST) == 0, "round %d: the writer came in", r);
            __atomic_sub_fetch(&n->readers, 1, __ATOMIC_SEQ_CST);
            CHECK(sluice_dsm_release(c) == 0, "release");
        } else {
            CHECK(sluice_dsm_barrier(2, (unsigned)size) == 0, "barrier");
            waited += __atomic_load_n(&n->readers, __ATOMIC_SEQ_CST) > 0;
            struct cell *p = sluice_dsm_write(c);
            CHECK(p, "write round %d", r);
            int inside = __atomic_load_n(&n->readers, __ATOMIC_SEQ_CST);
            CHECK(inside == 0, "round %d: WRITE scope open while %d ranks are inside READ scopes", r, inside);
            __atomic_store_n(&n->writer, 1, __ATOMIC_SEQ_CST);
            check_cell(&p[0], (uint64_t)r, "write scope");
            check_cell(&p[1], (uint64_t)r, "write scope");
            if (next_rand() % 2)
                usleep((useconds_t)(next_rand() % 300));
            set_cell(&p[0], (uint64_t)r + 1);
            set_cell(&p[1], (uint64_t)r + 1);
            __atomic_store_n(&n->writer, 0, __ATOMIC_SEQ_CST);
            CHECK(sluice_dsm_release(c) == 0, "release");
        }
    }
    CHECK(sluice_dsm_barrier(1, (unsigned)size) == 0, "barrier");
    const struct cell *p = sluice_dsm_read(c);
    check_cell(&p[0], (uint64_t)rounds, "last read");
    sluice_dsm_release(c);
    if (rank == 0)
        printf("exclusion ok: %d rounds, %d ranks\n", rounds, size);
    /* The reader's scope outlived the barrier: the writer's acquire waited for its answer. */
    printf("rank %d: readers inside at %d of %d write requests\n", rank, waited,
           (rounds - rank + size - 1) / size);
    munmap(n, 4096);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s writemiss ROUNDS | alternate ROUNDS | exclusion ROUNDS FILE\n", argv[0]);
        return 2;
    }
    if (sluice_dsm_init() != 0)
        return 1;
    rank = sluice_dsm_rank();
    size = sluice_dsm_size();
    int rounds = atoi(argv[2]);
    int rc = 2;
    if (strcmp(argv[1], "writemiss") == 0)
        rc = mode_writemiss(rounds);
    else if (strcmp(argv[1], "alternate") == 0)
        rc = mode_alternate(rounds);
    else if (strcmp(argv[1], "exclusion") == 0)
        rc = mode_exclusion(rounds, argc > 3 ? argv[3] : NULL);
    else
        fprintf(stderr, "unknown mode %s\n", argv[1]);
    if (sluice_dsm_finalize() != 0)
        return 1;
    return rc;
}
