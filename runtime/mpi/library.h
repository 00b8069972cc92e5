/* SPDX-License-Identifier: MIT */
/* The MPI library is not a link dependency of libsluice.so: loading it (and, with MPICH, UCX and
 * hwloc, which install signal handlers and probe devices) into every preloaded process would make
 * sluice visible to programs that never use MPI. MPI functions are bound lazily instead: in an MPI
 * program they resolve to the library the program linked; in a non-MPI program sluice loads the
 * library itself, with RTLD_GLOBAL, the first time a feature needs MPI. */
#ifndef SLUICE_MPI_LIBRARY_H
#define SLUICE_MPI_LIBRARY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the MPI library's symbols resolvable. Returns 0, or -1 after one warning line naming the
 * library that could not be loaded. Safe to call many times; not async-signal-safe. */
int sluice_mpi_library_load(void);

/* The MPI library's own definition of `name` (not a wrapper's), NULL if the library is not loaded
 * or lacks it. For names libsluice exports itself where nothing follows libsluice. */
void *sluice_mpi_library_symbol(const char *name);

#ifdef __cplusplus
}
#endif
#endif
