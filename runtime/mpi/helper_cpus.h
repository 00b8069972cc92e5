/* SPDX-License-Identifier: MIT */
/* Which CPUs sluice's own threads run on (SLUICE_HELPER_CPUS, docs/ENV.md). */
#ifndef SLUICE_MPI_HELPER_CPUS_H
#define SLUICE_MPI_HELPER_CPUS_H

#include "common/mpi_c.h"

/* Collective over comm (every rank calls it once, at the same point): decides where this rank's
 * sluice threads go and moves them (threads/helper_threads.h). whole_process: the calling thread and every
 * thread it starts later go there too (a serving rank of distributed OpenCL, which runs no
 * program code). */
void sluice_helper_cpus_plan(MPI_Comm comm, int whole_process);

#endif
