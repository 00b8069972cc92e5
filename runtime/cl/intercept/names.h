/* SPDX-License-Identifier: MIT */
/* The sorted table of every OpenCL entry point sluice knows (generated cl/names.c), and lookups
 * over it: name -> id for the loader binding, dlsym and clGetExtensionFunctionAddress. */
#ifndef SLUICE_CL_INTERCEPT_NAMES_H
#define SLUICE_CL_INTERCEPT_NAMES_H

#include <stddef.h>

#include "cl/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_cl_name {
    const char *name;
    sluice_cl_fn_id id;
    size_t api_offset; /* offsetof(struct sluice_cl_api, <name>) */
};

extern const struct sluice_cl_name sluice_cl_names[SLUICE_CL_FN_COUNT];

/* The entry for `name`, or NULL if sluice does not wrap it. */
const struct sluice_cl_name *sluice_cl_name_find(const char *name);

/* Name of a function id. */
const char *sluice_cl_fn_name(sluice_cl_fn_id id);

#ifdef __cplusplus
}
#endif
#endif
