/* SPDX-License-Identifier: MIT */
/* Clock alignment across ranks (docs/TRACE.md): the mpi part calls these when it has made
 * sluice's communicator and before it finalizes MPI, on every rank (both points are collective
 * already). Each records CLOCK_SYNC; sluice-trace corrects each rank's clock linearly between the
 * two. Nothing happens unless the statistics stream is on. */
#ifndef SLUICE_TRACE_CLOCKSYNC_H
#define SLUICE_TRACE_CLOCKSYNC_H

#include "common/mpi_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* With sluice's communicator `comm` just made (collective): keeps a duplicate and measures. */
void sluice_trace_clock_sync_start(MPI_Comm comm);
/* Before MPI is finalized (collective): measures again and frees the duplicate. */
void sluice_trace_clock_sync_exit(void);

#ifdef __cplusplus
}
#endif
#endif
