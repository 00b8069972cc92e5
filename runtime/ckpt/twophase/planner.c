/* SPDX-License-Identifier: MIT */
/* Commit planner (planner.h): block-aligned direct layout of a set's members. */
#include "ckpt/twophase/planner.h"

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
    if (!order || !w) {
        free(order);
        free(w);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (struct order_key){members[i].member_rank, i};
    qsort(order, n, sizeof(*order), order_cmp);

    uint64_t end = pos, padding = 0;
    for (size_t k = 0; k < n; k++) {
        const struct sluice_plan_member *m = &members[order[k].index];
        /* Each member starts on a block boundary; zero-byte members take no space, so they
         * neither move the cursor nor add padding. */
        uint64_t off = pos;
        if (m->size) {
            if (m->size >= PLAN_LIMIT - off) {
                ok = 0;
                break;
            }
            end = off + m->size;
            uint64_t next = sluice_plan_align_up(end, block_size, &ok);
            if (!ok)
                break;
            pos = next;
        }
        w[k] = (struct sluice_plan_write){order[k].index, off, m->size, m->writer_rank};
    }
    free(order);
    if (!ok) {
        free(w);
        return -EOVERFLOW;
    }
    /* Padding counts only the gaps between members, not the tail after the last one: the
     * index starts right after the data. */
    uint64_t data = 0;
    for (size_t k = 0; k < n; k++)
        data += w[k].size;
    padding = (end - out->data_begin) - data;
    out->writes = w;
    out->nwrites = n;
    out->data_end = end;
    out->padding = padding;
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
