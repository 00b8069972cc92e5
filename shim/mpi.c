/* SPDX-License-Identifier: MIT */
/* MPI entry points interposed by sluice: initialization, finalization and the queries whose
 * answers sluice changes (see runtime/mpi/lifecycle.h for what changes and why). Thin: each
 * hands the call to the runtime.
 *
 * Initialization and finalization are exported under their PMPI_ names too: a tool preloaded
 * before sluice (Darshan, any PMPI profiler) forwards the program's MPI_Init with
 * dlsym(RTLD_NEXT, "PMPI_Init") or a call of PMPI_Init, which must reach sluice rather than skip
 * it to the library. The runtime reaches the next definition after sluice (a tool preloaded after
 * it, or the library) through SLUICE_REAL. The queries are left to the library under their PMPI_
 * names: libmpich calls PMPI_Initialized itself and must get the library's answer. */
#include <mpi.h>
#include <stddef.h>

#include "common/export.h"
#include "mpi/lifecycle.h"
#include "mpi/node_report.h"

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

/* The program ends the job: its ranks' ends are the abort's, not deaths to report (the node
 * watchers of sluice --watch-nodes, runtime/mpi/node_report.h). */
SLUICE_EXPORT int MPI_Abort(MPI_Comm comm, int code)
{
    sluice_node_report_aborting();
    return PMPI_Abort(comm, code);
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

SLUICE_EXPORT __typeof__(MPI_Init) PMPI_Init __attribute__((alias("MPI_Init")));
SLUICE_EXPORT __typeof__(MPI_Init_thread) PMPI_Init_thread __attribute__((alias("MPI_Init_thread")));
SLUICE_EXPORT __typeof__(MPI_Finalize) PMPI_Finalize __attribute__((alias("MPI_Finalize")));
