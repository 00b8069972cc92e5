/* SPDX-License-Identifier: MIT */
/* A backend is whoever owns the real objects behind sluice's handles, as a table with one slot
 * per OpenCL entry point (generated from the headers, cl/api.h). Today: the local ICD loader,
 * one table per platform (extension entry points differ per vendor), and distributed OpenCL's
 * (runtime/cl/rank0, docs/DISTRIBUTED.md "Objects and calls"), whose slots forward to the rank
 * that holds the object; the wrappers only ever call
 * `handle->backend->api.clXxx(handle->real, ...)`. */
#ifndef SLUICE_CL_INTERCEPT_BACKEND_H
#define SLUICE_CL_INTERCEPT_BACKEND_H

#include "cl/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_cl_backend {
    const char *name; /* "local" */
    struct sluice_cl_api api;
};

/* The real ICD loader's exported entry points (loader.c). Never NULL once sluice_cl_on() ran;
 * its slots are NULL when no loader could be opened. */
const struct sluice_cl_backend *sluice_cl_loader_backend(void);

/* The local backend for one real platform: the loader's entry points plus that vendor's
 * extension functions. Created on first use, never freed. */
const struct sluice_cl_backend *sluice_cl_platform_backend(cl_platform_id real_platform);

/* Records a loader-wide entry point learnt through clGetExtensionFunctionAddress. */
struct sluice_cl_name;
void sluice_cl_loader_backend_learn(const struct sluice_cl_name *n, void *fn);

/* Path of the loader sluice opened ("" if none), for documentation and error messages. */
const char *sluice_cl_loader_path(void);

#ifdef __cplusplus
}
#endif
#endif
