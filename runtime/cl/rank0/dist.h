/* SPDX-License-Identifier: MIT */
/* Distributed OpenCL on rank 0 (SLUICE_OPENCL=distributed under a launcher with more than one
 * rank): the entry points the rest of the OpenCL layer calls. Everything else reaches the
 * distributed runtime through its backend table (backend.h), behind ordinary sluice handles. */
#ifndef SLUICE_CL_RANK0_DIST_H
#define SLUICE_CL_RANK0_DIST_H

#include <CL/cl.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True on rank 0 of a distributed run, once its servers are reachable. */
bool sluice_cl_dist_active(void);
/* sluice_cl_dist_active(), after starting rank 0's distributed role if this is the first
 * OpenCL platform query of a rank 0 process (the shim's platform entry points call it). */
bool sluice_cl_dist_begin(void);
/* Rank 0 leaving before any of its processes began (dist_role.c): true if it took MPI now to
 * end the servers; the caller finalizes. */
bool dist_rank0_leaving(void);

/* clGetPlatformIDs of a distributed run: the platforms of every rank, merged by name, as
 * sluice handles with the distributed backend. */
cl_int sluice_cl_dist_platform_ids(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms);

/* True for the backend of a distributed run's merged platforms (and their objects). */
struct sluice_cl_backend;
bool sluice_cl_dist_backend(const struct sluice_cl_backend *be);

#ifdef __cplusplus
}
#endif
#endif
