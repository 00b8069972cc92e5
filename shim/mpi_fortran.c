/* SPDX-License-Identifier: MIT */
/* Fortran MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE, MPI_INITIALIZED, MPI_FINALIZED and
 * MPI_QUERY_THREAD for Open MPI.
 *
 * MPICH needs nothing here: its Fortran bindings (libmpichfort) call the C MPI_Init,
 * MPI_Init_thread and MPI_Finalize, which shim/mpi.c already interposes, and they must keep
 * running their own Fortran set-up (MPI_BOTTOM, MPI_IN_PLACE...), so sluice must not replace
 * them. Open MPI 4.1's bindings (libmpi_mpifh) call PMPI_Init directly and do nothing else,
 * so sluice provides the Fortran symbols itself, in every common name mangling, and sends them
 * down the C path. */
#include <mpi.h>

#if defined(OPEN_MPI)
#include <stddef.h>

#include "common/export.h"
#include "mpi/lifecycle.h"

/* One definition, exported under NAME, name, name_ and name__. */
#define SLUICE_FORTRAN_ALIASES(upper, lower, impl)                                                           \
    SLUICE_EXPORT __typeof__(impl) upper __attribute__((alias(#impl)));                                      \
    SLUICE_EXPORT __typeof__(impl) lower __attribute__((alias(#impl)));                                      \
    SLUICE_EXPORT __typeof__(impl) lower##_ __attribute__((alias(#impl)));                                   \
    SLUICE_EXPORT __typeof__(impl) lower##__ __attribute__((alias(#impl)));

static void fortran_init(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    int rc = sluice_mpi_app_init(&argc, &argv, false, MPI_THREAD_SINGLE, NULL);
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    int got = MPI_THREAD_SINGLE;
    int rc = sluice_mpi_app_init(&argc, &argv, true, (int)*required, &got);
    if (rc == MPI_SUCCESS && provided)
        *provided = (MPI_Fint)got;
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_finalize(MPI_Fint *ierr)
{
    int rc = sluice_mpi_app_finalize();
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

/* Fortran LOGICAL: default kind, 4 bytes with gfortran, .TRUE. is 1 (Open MPI's value). */
static void fortran_initialized(int *flag, MPI_Fint *ierr)
{
    int c = 0;
    int rc = sluice_mpi_app_initialized(&c);
    if (flag)
        *flag = c ? 1 : 0;
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_finalized(int *flag, MPI_Fint *ierr)
{
    int c = 0;
    int rc = sluice_mpi_app_finalized(&c);
    if (flag)
        *flag = c ? 1 : 0;
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_query_thread(MPI_Fint *provided, MPI_Fint *ierr)
{
    int level = MPI_THREAD_SINGLE;
    int rc = sluice_mpi_app_query_thread(&level);
    if (rc == MPI_SUCCESS && provided)
        *provided = (MPI_Fint)level;
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

SLUICE_FORTRAN_ALIASES(MPI_INIT, mpi_init, fortran_init)
SLUICE_FORTRAN_ALIASES(MPI_INITIALIZED, mpi_initialized, fortran_initialized)
SLUICE_FORTRAN_ALIASES(MPI_FINALIZED, mpi_finalized, fortran_finalized)
SLUICE_FORTRAN_ALIASES(MPI_QUERY_THREAD, mpi_query_thread, fortran_query_thread)
SLUICE_FORTRAN_ALIASES(MPI_INIT_THREAD, mpi_init_thread, fortran_init_thread)
SLUICE_FORTRAN_ALIASES(MPI_FINALIZE, mpi_finalize, fortran_finalize)

#else
typedef int sluice_no_fortran_shim_needed; /* MPICH: see above */
#endif
