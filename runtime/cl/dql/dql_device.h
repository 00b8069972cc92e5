/* SPDX-License-Identifier: MIT */
/* Fills a DQL device descriptor from clGetDeviceInfo. The runtime calls it on each rank for
 * each local device and sends the descriptors to rank 0. The info functions are parameters, so
 * that the caller passes the real loader's entry points (never sluice's own wrappers) and so
 * that this stays pure code a unit test can run against a real OpenCL platform. */
#ifndef SLUICE_CL_DQL_DQL_DEVICE_H
#define SLUICE_CL_DQL_DQL_DEVICE_H

#include <CL/cl.h>

#include "cl/dql/dql.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef cl_int (*sluice_dql_device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);
typedef cl_int (*sluice_dql_platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);

/* Describes `dev`, the `index`-th device of rank `node`. Text longer than the descriptor's
 * fields is truncated. Returns CL_SUCCESS, or the first error of a query every device must
 * answer (type, name, vendor, version); optional ones that fail read as 0 or "". */
cl_int sluice_dql_describe(cl_device_id dev, uint64_t node, uint64_t index,
                           sluice_dql_device_info_fn device_info, sluice_dql_platform_info_fn platform_info,
                           struct sluice_dql_device *out);

#ifdef __cplusplus
}
#endif
#endif
