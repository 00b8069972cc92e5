/* SPDX-License-Identifier: MIT */
/* Two-phase plan of a set laid out as one global array, made by the home (twophase_home.c): the
 * headers and the array each tile one stretch of the file, so the home plans these regions
 * (planner_array.h): file domains are stripes of the array region, in as many rounds as for
 * the rows themselves, at a cost that does not grow with the rows. Each participant then cuts
 * its own pieces from the layout record (twophase_part_array.c): an aggregator receives from
 * every rank the rows that fall in its domain. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/twophase/planner_array.h"
#include "ckpt/twophase/planner_twophase.h"

#include <errno.h>
#include <stdlib.h>

int commit_twophase_array_plan(const struct sluice_array *array, size_t n, const struct sluice_tp_params *prm,
                               struct sluice_tp_plan *plan)
{
    struct sluice_tp_member regions[2];
    size_t nreg = sluice_tp_array_regions(array, 0, regions);
    int rc = sluice_tp_plan_make(regions, nreg, prm, plan);
    unsigned char *direct = rc == 0 ? calloc(n ? n : 1, 1) : NULL; /* every member shuffled */
    if (rc == 0 && !direct)
        rc = -ENOMEM;
    if (rc == 0) {
        /* The regions' pieces are no one's: each participant cuts its own. */
        free(plan->pieces);
        plan->pieces = NULL;
        plan->npieces = 0;
        free(plan->direct);
        plan->direct = direct;
        plan->nmembers = n;
    }
    return rc; /* on failure the caller frees the plan */
}
