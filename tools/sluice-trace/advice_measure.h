/* SPDX-License-Identifier: MIT */
/* The staged level's cost for the interval advice (advice.h), measured in a trace: what a
 * checkpoint costs the program when sluice stages it. Each member a rank opens for writing is
 * staged from its CKPT_OPEN to its CKPT_CLOSE (the program's writes go to node-local storage
 * between them); a rank's k-th checkpoint is the k-th such span of each member it writes, added
 * up; a checkpoint costs what its slowest rank spent (the ranks of a bulk-synchronous program
 * wait for it); the cost is the mean over checkpoints. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_ADVICE_MEASURE_H
#define SLUICE_TOOLS_SLUICE_TRACE_ADVICE_MEASURE_H

#include "traceset.h"

/* The mean staging cost per checkpoint in seconds and how many checkpoints it is the mean of
 * (*steps); -1 and 0 when the trace has no member written under capture. */
double advice_measure_staging(const struct trace_set *set, int *steps);

#endif
