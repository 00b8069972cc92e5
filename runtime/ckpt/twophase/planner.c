/* SPDX-License-Identifier: MIT */
/* Commit planner (planner.h): the direct layout of a set's members, in member_rank order
 * (the block-aligned placement itself is the container's, sluice_container_place). */
#include "ckpt/twophase/planner.h"

#include "ckpt/container/container.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_LIMIT (UINT64_C(1) << 63) /* off_t must hold every offset we hand out */

uint64_t sluice_plan_align_up(uint64_t v, uint64_t align, int *ok)
{
    uint64_t r = (v + align - 1) & ~(align - 1);
    if (r < v || r >= PLAN_LIMIT)
        *ok = 0;
    return r;
}

struct order_key {
    int member_rank;
    size_t index;
};

static int order_cmp(const void *a, const void *b)
{
    const struct order_key *x = a, *y = b;
    if (x->member_rank != y->member_rank)
        return x->member_rank < y->member_rank ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

int sluice_plan_direct(const struct sluice_plan_member *members, size_t n, uint64_t data_start,
                       uint64_t block_size, struct sluice_plan *out)
{
    if (!out || (n && !members) || block_size == 0 || (block_size & (block_size - 1)))
        return -EINVAL;
    memset(out, 0, sizeof(*out));

    int ok = 1;
    uint64_t pos = sluice_plan_align_up(data_start, block_size, &ok);
    if (!ok)
        return -EOVERFLOW;
    out->data_begin = pos;
    out->data_end = pos;
    if (n == 0)
        return 0;

    struct order_key *order = malloc(n * sizeof(*order));
    struct sluice_plan_write *w = calloc(n, sizeof(*w));
    uint64_t *bytes = malloc(n * sizeof(*bytes)), *off = malloc(n * sizeof(*off));
    int rc = order && w && bytes && off ? 0 : -ENOMEM;
    uint64_t end = pos, data = 0;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = (struct order_key){members[i].member_rank, i};
        qsort(order, n, sizeof(*order), order_cmp);
        for (size_t k = 0; k < n; k++)
            bytes[k] = members[order[k].index].size;
        /* The container's one block-aligned layout, in member_rank order. */
        rc = sluice_container_place(bytes, n, block_size, data_start, off, &end);
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const struct sluice_plan_member *m = &members[order[k].index];
        w[k] = (struct sluice_plan_write){order[k].index, off[k], m->size, m->writer_rank};
        data += m->size;
    }
    free(order);
    free(bytes);
    free(off);
    if (rc) {
        free(w);
        return rc;
    }
    /* Padding counts only the gaps between members, not the tail after the last one: the
     * index starts right after the data. */
    out->writes = w;
    out->nwrites = n;
    out->data_end = end;
    out->padding = (end - out->data_begin) - data;
    return 0;
}

void sluice_plan_free(struct sluice_plan *plan)
{
    if (!plan)
        return;
    free(plan->writes);
    plan->writes = NULL;
    plan->nwrites = 0;
}
