/* SPDX-License-Identifier: MIT */
/* MPI entry points interposed by sluice: initialization, finalization and the queries whose
 * answers sluice changes (see runtime/mpi/lifecycle.h for what changes and why). Thin: each
 * hands the call to the runtime. Only the MPI_ names are interposed; a tool or program calling
 * the PMPI_ names directly gets the library's answers. */
#include <mpi.h>
#include <stddef.h>

#include "common/export.h"
#include "mpi/lifecycle.h"

SLUICE_EXPORT int MPI_Init(int *argc, char ***argv)
{
    return sluice_mpi_app_init(argc, argv, false, MPI_THREAD_SINGLE, NULL);
}

SLUICE_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return sluice_mpi_app_init(argc, argv, true, required, provided);
}

SLUICE_EXPORT int MPI_Finalize(void)
{
    return sluice_mpi_app_finalize();
}

SLUICE_EXPORT int MPI_Initialized(int *flag)
{
    return sluice_mpi_app_initialized(flag);
}

SLUICE_EXPORT int MPI_Finalized(int *flag)
{
    return sluice_mpi_app_finalized(flag);
}

SLUICE_EXPORT int MPI_Query_thread(int *provided)
{
    return sluice_mpi_app_query_thread(provided);
}
