/* SPDX-License-Identifier: MIT */
/* What every OpenCL wrapper (generated cl/wrappers.c and shim/opencl_manual.c) needs: the on/off
 * switch, handle translation in both directions, callbacks, and the trace hooks. The fast path
 * (trace off) is inline: a mode load, a magic check per handle, the backend's slot. */
#ifndef SLUICE_CL_INTERCEPT_WRAP_H
#define SLUICE_CL_INTERCEPT_WRAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "cl/api.h"
#include "cl/intercept/backend.h"
#include "cl/intercept/object.h"
#include "common/export.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- mode (loader.c) ---------------------------------------------------------------------- */
#define SLUICE_CL_UNSET 0
#define SLUICE_CL_OFF 1
#define SLUICE_CL_ON 2
extern int sluice_cl_state; /* accessed with __atomic builtins */
int sluice_cl_init(void);   /* opens the real loader once; returns SLUICE_CL_OFF or SLUICE_CL_ON */

/* False when SLUICE_OPENCL=off: wrappers then forward the caller's arguments untouched. */
static inline bool sluice_cl_on(void)
{
    int s = __atomic_load_n(&sluice_cl_state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(s == SLUICE_CL_UNSET, 0))
        s = sluice_cl_init();
    return s == SLUICE_CL_ON;
}

/* The loader's own entry points, for hands-off forwarding. */
static inline const struct sluice_cl_api *sluice_cl_raw_api(void)
{
    return &sluice_cl_loader_backend()->api;
}

static inline const struct sluice_cl_backend *sluice_cl_backend_of(const struct sluice_cl_obj *o)
{
    return o ? o->backend : sluice_cl_loader_backend();
}

/* ---- handles in --------------------------------------------------------------------------- */
#define SLUICE_CL_STACK_ARRAY 16
#define SLUICE_CL_STACK_PROPS 16

/* Translates an array of `n` handles into backend objects: into `stack` when it fits, else into
 * a malloc'd array stored in *heap (freed by the caller). NULL stays NULL. */
void *const *sluice_cl_in_array(void *const *handles, cl_uint n, int kind, void **stack, void **heap);

/* Context property lists name a platform (CL_CONTEXT_PLATFORM): translated copy, or the list
 * itself when it names none. */
const cl_context_properties *sluice_cl_in_ctx_props(const cl_context_properties *props,
                                                    cl_context_properties *stack,
                                                    cl_context_properties **heap);

/* Image descriptors may name a buffer (image1d_buffer, image2d from buffer). */
const cl_image_desc *sluice_cl_in_image_desc(const cl_image_desc *desc, cl_image_desc *copy);

/* clSetKernelArg: returns the value pointer to hand to the backend (`value` itself, or `tmp`
 * holding the translated object when the argument is a memory object, sampler or queue). */
const void *sluice_cl_kernel_arg_value(struct sluice_cl_obj *kernel, cl_uint index, size_t size,
                                       const void *value, void **tmp);

/* ---- queries out -------------------------------------------------------------------------- */
/* Answers queries whose truthful answer is what the program asked for rather than what sluice
 * gave the backend (queue properties, profiling availability). True if answered. */
bool sluice_cl_info_override(sluice_cl_fn_id fn, struct sluice_cl_obj *obj, cl_uint param_name, size_t size,
                             void *value, size_t *size_ret, cl_int *ret);
/* Rewrites backend objects in a query result into the program's handles. */
void sluice_cl_info_to_handles(sluice_cl_fn_id fn, struct sluice_cl_obj *obj, cl_uint param_name, void *value,
                               size_t size);

/* ---- platforms, devices, kernels (platform.c) ----------------------------------------------- */
/* The objects OpenCL returns in arrays, with sluice's handles; each is its entry point's body
 * with the handle layer on (fn: the clGetPlatformIDs-shaped entry point to list with). */
struct sluice_cl_obj *sluice_cl_platform_handle(cl_platform_id real);
cl_int sluice_cl_platform_ids(sluice_cl_pfn_clGetPlatformIDs fn, cl_uint num_entries,
                              cl_platform_id *platforms, cl_uint *num_platforms);
cl_int sluice_cl_device_ids(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                            cl_device_id *devices, cl_uint *num_devices);
cl_int sluice_cl_sub_devices(cl_device_id in_device, const cl_device_partition_property *properties,
                             cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices);
cl_int sluice_cl_sub_devices_ext(cl_device_id in_device, const cl_device_partition_property_ext *properties,
                                 cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices);
cl_int sluice_cl_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                    cl_uint *num_kernels_ret);
/* The platform a context property list names (CL_CONTEXT_PLATFORM): 1 and *platform, else 0. */
int sluice_cl_props_platform(const cl_context_properties *properties, cl_platform_id *platform);
/* clCreateContextFromType on the backend of `platform` (the loader's for NULL). */
cl_context sluice_cl_context_from_type(cl_platform_id platform, const cl_context_properties *properties,
                                       cl_device_type device_type,
                                       void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t,
                                                                     void *),
                                       void *user_data, cl_int *errcode_ret);

/* ---- callbacks (callbacks.c) -------------------------------------------------------------- */
struct sluice_cl_tramp;
struct sluice_cl_tramp *sluice_cl_tramp_new(void (*fn)(void), void *user_data, struct sluice_cl_obj *owner);
void CL_CALLBACK sluice_cl_tramp_program(cl_program program, void *tramp);
void CL_CALLBACK sluice_cl_tramp_mem(cl_mem mem, void *tramp);
void CL_CALLBACK sluice_cl_tramp_context(cl_context context, void *tramp);
void CL_CALLBACK sluice_cl_tramp_event(cl_event event, cl_int status, void *tramp);
void CL_CALLBACK sluice_cl_tramp_svm_free(cl_command_queue queue, cl_uint n, void *ptrs[], void *tramp);

/* ---- trace (trace_cl.c) ------------------------------------------------------------------- */
enum { SLUICE_CL_NONE = -1, SLUICE_CL_H2D = 0, SLUICE_CL_D2H = 1, SLUICE_CL_D2D = 2 };

/* Records one non-enqueue call (only called with the trace on). */
void sluice_cl_trace_call(sluice_cl_fn_id fn, uint64_t t0, cl_int code, const struct sluice_cl_obj *obj);

/* After every enqueue: hands the program its event handle if it asked for one, and with the
 * trace on records the command, its dependencies, bytes moved and (through profiling) its
 * device start and end. `real_event` is the backend's event (NULL if none was requested). */
void sluice_cl_enqueue_done(sluice_cl_fn_id fn, struct sluice_cl_obj *queue, cl_int code, cl_event real_event,
                            cl_event *app_event, bool traced, uint64_t t0, cl_uint nwait,
                            struct sluice_cl_obj *const *wait_list, int direction, uint64_t bytes);

/* Names a device in the trace (once per device handle, trace on), for per-device summaries. */
void sluice_cl_trace_device(const struct sluice_cl_obj *device);

/* Bytes of an image region (element size from the backend), for the trace. */
uint64_t sluice_cl_image_bytes(cl_mem image, const size_t *region);

/* Queue creation: adds CL_QUEUE_PROFILING_ENABLE while tracing; remembers what the program
 * asked for (queue.c). */
struct sluice_cl_obj *sluice_cl_queue_wrap(cl_command_queue real, struct sluice_cl_obj *context,
                                           struct sluice_cl_obj *device, const cl_queue_properties *app_props,
                                           bool forced);
const cl_queue_properties *sluice_cl_queue_props_for_backend(const cl_queue_properties *app,
                                                             cl_queue_properties *buf, size_t cap,
                                                             bool *forced);

#ifdef __cplusplus
}
#endif
#endif
