/* SPDX-License-Identifier: MIT */
/* The string answers of clGetDeviceInfo, clGetPlatformInfo and clGetKernelArgInfo, read whole
 * whatever their length (common/info_string.h): device versions, names and argument type names
 * are the driver's and the program's to choose. Each returns a malloc'd, NUL-terminated string
 * the caller frees, or NULL when the entry point is missing or the query fails. */
#ifndef SLUICE_CL_INTERCEPT_INFO_TEXT_H
#define SLUICE_CL_INTERCEPT_INFO_TEXT_H

#include "cl/api.h"

#ifdef __cplusplus
extern "C" {
#endif

char *sluice_cl_device_text(sluice_cl_pfn_clGetDeviceInfo info, cl_device_id dev, cl_device_info what);
char *sluice_cl_platform_text(sluice_cl_pfn_clGetPlatformInfo info, cl_platform_id p, cl_platform_info what);
char *sluice_cl_arg_text(sluice_cl_pfn_clGetKernelArgInfo info, cl_kernel k, cl_uint arg,
                         cl_kernel_arg_info what);

#ifdef __cplusplus
}
#endif
#endif
