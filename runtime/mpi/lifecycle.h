/* SPDX-License-Identifier: MIT */
/* What the MPI entry points in shim/mpi.c hand to the runtime (roles.c). Each returns an MPI
 * error code, as the MPI call it implements. With sluice inert (no SLUICE_* variable set)
 * every one is a plain pass-through to the PMPI call. */
#ifndef SLUICE_MPI_LIFECYCLE_H
#define SLUICE_MPI_LIFECYCLE_H

#include "common/mpi_c.h"
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MPI_Init (thread_call false; required is ignored) and MPI_Init_thread. */
int sluice_mpi_app_init(int *argc, char ***argv, bool thread_call, int required, int *provided);
int sluice_mpi_app_finalize(void);
/* The application's view: MPI counts as initialized/finalized only if the application itself
 * initialized it; MPI that sluice initialized for its own use is invisible. */
int sluice_mpi_app_initialized(int *flag);
int sluice_mpi_app_finalized(int *flag);
/* The thread level the application was given, not the one sluice asked for. */
int sluice_mpi_app_query_thread(int *provided);

#ifdef __cplusplus
}
#endif
#endif
