/* SPDX-License-Identifier: MIT */
/* Node-local versions agreed over all nodes of a job (level_agree.c, docs/REDUNDANCY.md). */
#ifndef SLUICE_CKPT_REDUNDANCY_LEVEL_AGREE_H
#define SLUICE_CKPT_REDUNDANCY_LEVEL_AGREE_H

struct sluice_level_table;

/* The table agreed on (level_table.h), NULL before the agreement or where there was none.
 * Immutable once published: any thread, no lock. */
const struct sluice_level_table *commit_level_agreed(void);

#endif
