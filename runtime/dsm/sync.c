/* SPDX-License-Identifier: MIT */
/* Rendezvous and barriers without a coordinator (in the spirit of Raynal's broadcast-based
 * algorithms): every process keeps its own counts, fed by messages every other process
 * broadcasts, and decides locally when it may go on.
 *   barrier(id, count): the k-th entry of a process into barrier id broadcasts ARRIVE(id, k);
 *     it leaves when count ARRIVE(id, k) have reached it (its own included).
 *   wakeup(id) broadcasts WAKE(id); the k-th sleep(id) of a process returns when k WAKE(id)
 *     have reached it, so a wake-up sent before the sleep is not lost.
 * Finalization uses the same idea with DONE(phase) from every rank. */
#include <stdlib.h>

#include "dsm/dsm.h"

static struct dsm_counter *counter(struct dsm_counter **table, uint64_t a, uint64_t b)
{
    uint64_t key[2] = {a, b};
    struct dsm_counter *c = NULL;
    HASH_FIND(hh, *table, key, sizeof key, c);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->key[0] = a;
    c->key[1] = b;
    HASH_ADD(hh, *table, key, sizeof c->key, c);
    return c;
}

void dsm_sync_msg(const struct dsm_msg *m, int src)
{
    (void)src;
    struct dsm_counter *c = NULL;
    switch (m->type) {
    case M_ARRIVE:
        c = counter(&D.barrier_arrived, m->addr, m->version);
        break;
    case M_WAKE:
        c = counter(&D.rendezvous, m->addr, 0);
        break;
    case M_DONE:
        if (m->arg >= 0 && m->arg < 2)
            D.done[m->arg]++;
        return;
    }
    if (c)
        c->value++;
}

static int broadcast(uint32_t type, uint64_t addr, uint64_t version)
{
    for (int r = 0; r < D.size; r++) {
        struct dsm_msg m = {.type = type, .addr = addr, .version = version};
        int rc = dsm_send(r, &m, NULL, 0);
        if (rc)
            return rc;
    }
    return 0;
}

struct until {
    struct dsm_counter *c;
    uint64_t need;
};
static bool reached(void *arg)
{
    struct until *u = arg;
    return u->c->value >= u->need;
}

int dsm_barrier(unsigned int id, unsigned int count)
{
    if (count == 0 || count > (unsigned)D.size)
        return dsm_fail(SLUICE_DSM_EINVAL, "barrier %u: count %u is not between 1 and the %d ranks", id,
                        count, D.size);
    struct dsm_counter *g = counter(&D.barrier_gen, id, 0);
    if (!g)
        return dsm_fail(SLUICE_DSM_ENOMEM, "barrier %u: out of memory", id);
    uint64_t gen = ++g->value;
    struct dsm_counter *a = counter(&D.barrier_arrived, id, gen);
    if (!a)
        return dsm_fail(SLUICE_DSM_ENOMEM, "barrier %u: out of memory", id);
    int rc = broadcast(M_ARRIVE, id, gen);
    if (rc)
        return rc;
    struct until u = {a, count};
    rc = dsm_wait(reached, &u, "barrier", id);
    if (rc == 0) {
        HASH_DEL(D.barrier_arrived, a);
        free(a);
    }
    return rc;
}

int dsm_wakeup(unsigned int id)
{
    return broadcast(M_WAKE, id, 0);
}

int dsm_sleep(unsigned int id)
{
    struct dsm_counter *c = counter(&D.rendezvous, id, 0);
    if (!c)
        return dsm_fail(SLUICE_DSM_ENOMEM, "rendezvous %u: out of memory", id);
    struct until u = {c, c->used + 1};
    int rc = dsm_wait(reached, &u, "sleep on rendezvous", id);
    if (rc == 0)
        c->used++;
    return rc;
}

static bool all_done(void *arg)
{
    return D.done[*(int *)arg] >= D.size;
}

int dsm_done_phase(int phase)
{
    for (int r = 0; r < D.size; r++) {
        struct dsm_msg m = {.type = M_DONE, .arg = phase};
        int rc = dsm_send(r, &m, NULL, 0);
        if (rc)
            return rc;
    }
    return dsm_wait(all_done, &phase, "finalize, waiting for every rank", (unsigned long)phase);
}

static void free_table(struct dsm_counter **t)
{
    struct dsm_counter *c, *tmp;
    HASH_ITER(hh, *t, c, tmp)
    {
        HASH_DEL(*t, c);
        free(c);
    }
}

void dsm_sync_free_all(void)
{
    free_table(&D.barrier_gen);
    free_table(&D.barrier_arrived);
    free_table(&D.rendezvous);
    D.done[0] = D.done[1] = 0;
}
