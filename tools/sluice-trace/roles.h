/* SPDX-License-Identifier: MIT */
/* What the events of a thread say about it: its role (main, progress, write-behind, dist
 * scheduler, OpenCL server), and whether an OpenCL call came from the program or from MPI's
 * hwloc probing the OpenCL loader inside MPI_Init. Used by the exporters and `calls`. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_ROLES_H
#define SLUICE_TOOLS_SLUICE_TRACE_ROLES_H

#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

/* "main", "progress", "write-behind", "dist scheduler", "main, OpenCL server", or
 * "thread N" when the events do not tell; written into buf. */
const char *role_of_thread(const struct sluice_trace_file *f, const struct sluice_trace_rthread *t, char *buf,
                           size_t len);

enum cl_origin {
    CL_ORIGIN_PROGRAM,    /* the program (or no way to tell otherwise) */
    CL_ORIGIN_HWLOC_SITE, /* its call site is in hwloc or libmpi */
    CL_ORIGIN_HWLOC_INIT  /* no call site; a query in the run of queries that ends at MPI_INIT */
};
/* Origin of event `e` (a CL_CALL) of thread t. */
enum cl_origin cl_call_origin(const struct sluice_trace_file *f, const struct sluice_trace_rthread *t,
                              uint64_t e);
/* A sentence for the trace viewer, or NULL for CL_ORIGIN_PROGRAM. */
const char *cl_origin_text(enum cl_origin o);

#endif
