/* SPDX-License-Identifier: MIT */
/* Strings whose length the answerer decides (an OpenCL driver's clGet*Info answers: a PoCL
 * device version is 65 bytes on one CPU and 61 on another, a device name carries the CPU's
 * brand string): asked for their size first, then read whole into a buffer of that size, so that
 * no value is refused or cut for being longer than a guess. */
#ifndef SLUICE_COMMON_INFO_STRING_H
#define SLUICE_COMMON_INFO_STRING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The query with everything bound but its last three arguments, as clGet*Info takes them:
 * returns 0 (CL_SUCCESS) or an error code. */
typedef int32_t (*sluice_info_ask_fn)(const void *ctx, size_t size, void *value, size_t *size_ret);

/* The error given when the buffer cannot be allocated: CL_OUT_OF_HOST_MEMORY's value, so that
 * OpenCL callers pass it on unchanged. */
#define SLUICE_INFO_NO_MEMORY (-6)

/* The answer, NUL-terminated, in a malloc'd buffer the caller frees; NULL when the query fails
 * (*err, if not NULL, is its error, or SLUICE_INFO_NO_MEMORY). */
char *sluice_info_string(sluice_info_ask_fn ask, const void *ctx, int32_t *err);

#ifdef __cplusplus
}
#endif
#endif
