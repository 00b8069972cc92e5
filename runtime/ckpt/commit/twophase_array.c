/* SPDX-License-Identifier: MIT */
/* Two-phase plan of a set laid out as one global array, made by the home (twophase_home.c):
 * the members expanded into their header and the merged runs of their block
 * (planner_array.h), planned like any members, so that file domains are stripes of the array
 * region and each aggregator receives the rows of every rank that fall in its domain; then
 * folded back into member numbering, so that participants get ordinary shares. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/twophase/planner_array.h"
#include "ckpt/twophase/planner_twophase.h"

#include <errno.h>
#include <stdlib.h>

int commit_twophase_array_plan(const struct sluice_array *array, const struct commit_tp_member *m, size_t n,
                               const struct sluice_tp_params *prm, struct sluice_tp_plan *plan)
{
    int *rank = malloc((n ? n : 1) * sizeof *rank), *src = malloc((n ? n : 1) * sizeof *src);
    struct sluice_tp_member *tm = NULL;
    struct sluice_tp_array_range *rs = NULL;
    size_t nx = 0;
    int rc = rank && src ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rank[i] = m[i].member_rank;
        src[i] = m[i].src;
    }
    if (rc == 0)
        rc = sluice_tp_array_expand(array, rank, src, n, &tm, &rs, &nx);
    if (rc == 0)
        rc = sluice_tp_plan_make(tm, nx, prm, plan);
    free(rank);
    free(src);
    free(tm);
    /* A piece of range x is a piece of member rs[x].member at rs[x].logical + its offset; the
     * ranges of a member come in logical and file order, so its pieces still do. */
    unsigned char *direct = rc == 0 ? calloc(n ? n : 1, 1) : NULL;
    if (rc == 0 && !direct)
        rc = -ENOMEM;
    for (size_t k = 0; rc == 0 && k < plan->npieces; k++) {
        struct sluice_tp_piece *pc = &plan->pieces[k];
        pc->member_off += rs[pc->member].logical;
        pc->member = rs[pc->member].member;
    }
    if (rc == 0) {
        free(plan->direct);
        plan->direct = direct;
        plan->nmembers = n;
    }
    free(rs); /* on failure the caller frees the plan */
    return rc;
}
