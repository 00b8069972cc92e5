/* SPDX-License-Identifier: MIT */
/* <mpi.h>, its C API only: runtime headers include MPI through this one. C++ includers (unit
 * tests) want the C API only: Open MPI's and MPICH's mpi.h otherwise pull in their C++
 * bindings, which need libmpi_cxx at link time. */
#ifndef SLUICE_COMMON_MPI_C_H
#define SLUICE_COMMON_MPI_C_H

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#endif
