/* SPDX-License-Identifier: MIT */
/* Who writes the members that are not shuffled (the direct path, and the members the two-phase
 * planner leaves direct): the aggregator of the member's node copies it into the temporary
 * container from its staging file, so that only aggregators open and fdatasync the container
 * and a version costs O(1) metadata operations per aggregator, not per rank (docs/COMMIT.md,
 * "Cost as the job grows"). The staging file's name travels in MSG_MEMBERS; the writer opens it
 * in its own stage folder, which is the owner's: the same folder seen by the same kernel.
 *
 * A rank's stage key says which folder that is: the host id (boot id, PID namespace, host name:
 * common/host_id.h) with the stage folder's device and inode. Ranks of equal keys form a group;
 * a group's members go to the aggregators in it (twophase_home.c picks them: one per node by
 * default, SLUICE_CB_NODES more), an aggregator's own member to itself, the others spread by
 * owner rank; a group without an aggregator (SLUICE_CB_NODES below the node count) is written by
 * its lowest rank. A rank whose key is unknown (0: its stage folder cannot be looked at) writes
 * its own members, as every rank did before. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/stage.h"
#include "common/hash.h"
#include "common/host_id.h"
#include "common/real.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t commit_direct_stage_key(void)
{
    static uint64_t key; /* a fork keeps host, namespace and folder: the key stays right */
    if (key)
        return key;
    const char *dir = sluice_stage_dir();
    struct stat st;
    if (!dir || SLUICE_REAL(stat)(dir, &st) != 0)
        return 0;
    char host[SLUICE_HOST_ID_LEN + 1];
    sluice_host_id(host);
    uint64_t h = sluice_fnv1a(SLUICE_FNV_INIT, host, strlen(host));
    uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino;
    h = sluice_fnv1a(h, &dev, sizeof dev);
    h = sluice_fnv1a(h, &ino, sizeof ino);
    key = h ? h : 1;
    return key;
}

/* Home side, progress thread only: the stage key of each rank that sent MSG_MEMBERS. */
static uint64_t *key_of_rank;
static int key_cap;

void commit_direct_note(int rank, uint64_t key)
{
    if (rank < 0)
        return;
    if (rank >= key_cap) {
        int cap = rank + 1 > 64 ? rank + 1 : 64;
        uint64_t *p = realloc(key_of_rank, (size_t)cap * sizeof(*p));
        if (!p)
            return; /* unknown: that rank writes its own members, still correct */
        memset(p + key_cap, 0, (size_t)(cap - key_cap) * sizeof(*p));
        key_of_rank = p;
        key_cap = cap;
    }
    key_of_rank[rank] = key;
}

static uint64_t key_of(int rank)
{
    if (rank == commit_g.rank)
        return commit_direct_stage_key();
    return rank >= 0 && rank < key_cap ? key_of_rank[rank] : 0;
}

struct keyed {
    uint64_t key;
    int rank;
};

static int keyed_cmp(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The first entry of v[0..n) with this key, or n. */
static size_t first_of(const struct keyed *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int commit_direct_assign(struct commit_tp_member *m, size_t n, const unsigned char *shuffled, const int *aggr,
                         int naggr)
{
    struct keyed *ag = calloc(naggr > 0 ? (size_t)naggr : 1, sizeof(*ag));
    struct keyed *own = calloc(n ? n : 1, sizeof(*own));
    if (!ag || !own) {
        free(ag);
        free(own);
        return -ENOMEM;
    }
    size_t na = 0, no = 0;
    for (int i = 0; i < naggr; i++)
        if ((ag[na].key = key_of(aggr[i])) != 0)
            ag[na++].rank = aggr[i];
    for (size_t i = 0; i < n; i++)
        if (m[i].src >= 0 && !(shuffled && shuffled[i]) && (own[no].key = key_of(m[i].src)) != 0)
            own[no++].rank = m[i].src;
    qsort(ag, na, sizeof(*ag), keyed_cmp);
    qsort(own, no, sizeof(*own), keyed_cmp);
    for (size_t i = 0; i < n; i++) {
        struct commit_tp_member *x = &m[i];
        uint64_t key = x->src >= 0 ? key_of(x->src) : 0;
        if (x->src < 0 || (shuffled && shuffled[i])) {
            x->writer = -1; /* carried over by the home, or shuffled to an aggregator */
        } else if (key == 0) {
            x->writer = x->src;
        } else {
            size_t a = first_of(ag, na, key), e = a;
            int self = 0;
            while (e < na && ag[e].key == key)
                self |= ag[e++].rank == x->src;
            if (self)
                x->writer = x->src;
            else if (e > a)
                x->writer = ag[a + (size_t)x->src % (e - a)].rank;
            else
                x->writer = own[first_of(own, no, key)].rank; /* the group's lowest rank */
        }
    }
    free(ag);
    free(own);
    return 0;
}
