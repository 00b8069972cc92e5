/* SPDX-License-Identifier: MIT */
/* The OpenCL entry points that cannot be generated: those that return arrays of new objects
 * (platforms, devices, sub-devices, kernels), those that hand out function pointers
 * (clGetExtensionFunctionAddress*), clSetKernelArg (memory objects hide inside the value) and
 * queue creation (profiling added for the trace), clCreateContextFromType (its backend comes
 * from a property). Everything else is in the generated
 * cl/wrappers.c. Each forwards untouched when SLUICE_OPENCL=off; with it on, each decides
 * (distributed or not, traced or not) and forwards to the handle layer (runtime/cl/intercept/platform.c,
 * queue.c, kernel_args.c) or to the distributed backend. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/names.h"
#include "cl/intercept/wrap.h"
#include "cl/rank0/dist.h"

extern void (*const sluice_cl_wrappers[SLUICE_CL_FN_COUNT])(void);

/* Loader functions outside the headers that take no OpenCL objects, so the loader's own can be
 * handed out (clinfo prints the loader's identity through it). */
static const char *const handle_free_loader_functions[] = {"clGetICDLoaderInfoOCLICD"};

#define TRACE_BEGIN()                                                                                        \
    const bool tr_ = sluice_trace_active();                                                                  \
    const uint64_t t0_ = tr_ ? sluice_now_ns() : 0
#define TRACE_END(fn, code, obj)                                                                             \
    do {                                                                                                     \
        if (tr_)                                                                                             \
            sluice_cl_trace_call(SLUICE_CL_FN_##fn, t0_, (code), (obj));                                     \
    } while (0)

/* ---- platforms, devices, kernels: the handle layer's (runtime/cl/intercept/platform.c) --------------- */

/* clGetPlatformIDs and the ICD loader's clIcdGetPlatformIDsKHR have one signature and one
 * meaning: one body, instantiated for each name. */
#define PLATFORM_IDS_ENTRY(NAME)                                                                             \
    SLUICE_EXPORT cl_int CL_API_CALL NAME(cl_uint num_entries, cl_platform_id *platforms,                    \
                                          cl_uint *num_platforms)                                            \
    {                                                                                                        \
        sluice_cl_pfn_clGetPlatformIDs fn =                                                                  \
            (sluice_cl_pfn_clGetPlatformIDs)(sluice_cl_on(), sluice_cl_raw_api()->NAME);                     \
        if (!sluice_cl_on())                                                                                 \
            return fn ? fn(num_entries, platforms, num_platforms) : CL_PLATFORM_NOT_FOUND_KHR;               \
        TRACE_BEGIN();                                                                                       \
        cl_int ret = sluice_cl_dist_begin()                                                                  \
                         ? sluice_cl_dist_platform_ids(num_entries, platforms, num_platforms)                \
                         : sluice_cl_platform_ids(fn, num_entries, platforms, num_platforms);                \
        TRACE_END(NAME, ret, NULL);                                                                          \
        return ret;                                                                                          \
    }
PLATFORM_IDS_ENTRY(clGetPlatformIDs)
PLATFORM_IDS_ENTRY(clIcdGetPlatformIDsKHR)
#undef PLATFORM_IDS_ENTRY

SLUICE_EXPORT cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                                cl_uint num_entries, cl_device_id *devices,
                                                cl_uint *num_devices)
{
    if (!sluice_cl_on()) {
        sluice_cl_pfn_clGetDeviceIDs raw = sluice_cl_raw_api()->clGetDeviceIDs;
        return raw ? raw(platform, device_type, num_entries, devices, num_devices) : CL_INVALID_PLATFORM;
    }
    /* A distributed run's default platform is its first merged one, as the loader's is its first. */
    if (platform == NULL && sluice_cl_dist_begin())
        sluice_cl_dist_platform_ids(1, &platform, NULL);
    if (sluice_cl_backend_of(sluice_cl_valid(platform, SLUICE_CL_PLATFORM))->api.clGetDeviceIDs == NULL)
        return CL_INVALID_PLATFORM;
    TRACE_BEGIN();
    cl_int ret = sluice_cl_device_ids(platform, device_type, num_entries, devices, num_devices);
    TRACE_END(clGetDeviceIDs, ret, sluice_cl_valid(platform, SLUICE_CL_PLATFORM));
    return ret;
}

/* clCreateSubDevices and its EXT ancestor: new, reference-counted devices. */
#define CREATE_SUB_DEVICES(fn_name, prop_type, body)                                                         \
    SLUICE_EXPORT cl_int CL_API_CALL fn_name(cl_device_id in_device, const prop_type *properties,            \
                                             cl_uint num_entries, cl_device_id *out_devices,                 \
                                             cl_uint *num_devices)                                           \
    {                                                                                                        \
        if (!sluice_cl_on()) {                                                                               \
            sluice_cl_pfn_##fn_name raw = sluice_cl_raw_api()->fn_name;                                      \
            return raw ? raw(in_device, properties, num_entries, out_devices, num_devices)                   \
                       : CL_INVALID_OPERATION;                                                               \
        }                                                                                                    \
        struct sluice_cl_obj *d = sluice_cl_valid(in_device, SLUICE_CL_DEVICE);                              \
        if (sluice_cl_backend_of(d)->api.fn_name == NULL)                                                    \
            return CL_INVALID_OPERATION;                                                                     \
        TRACE_BEGIN();                                                                                       \
        cl_int ret = body(in_device, properties, num_entries, out_devices, num_devices);                     \
        TRACE_END(fn_name, ret, d);                                                                          \
        return ret;                                                                                          \
    }
CREATE_SUB_DEVICES(clCreateSubDevices, cl_device_partition_property, sluice_cl_sub_devices)
CREATE_SUB_DEVICES(clCreateSubDevicesEXT, cl_device_partition_property_ext, sluice_cl_sub_devices_ext)
#undef CREATE_SUB_DEVICES

SLUICE_EXPORT cl_int CL_API_CALL clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                                          cl_kernel *kernels, cl_uint *num_kernels_ret)
{
    if (!sluice_cl_on()) {
        sluice_cl_pfn_clCreateKernelsInProgram raw = sluice_cl_raw_api()->clCreateKernelsInProgram;
        return raw ? raw(program, num_kernels, kernels, num_kernels_ret) : CL_INVALID_PROGRAM;
    }
    struct sluice_cl_obj *p = sluice_cl_valid(program, SLUICE_CL_PROGRAM);
    if (sluice_cl_backend_of(p)->api.clCreateKernelsInProgram == NULL)
        return CL_INVALID_PROGRAM;
    TRACE_BEGIN();
    cl_int ret = sluice_cl_kernels_in_program(program, num_kernels, kernels, num_kernels_ret);
    TRACE_END(clCreateKernelsInProgram, ret, p);
    return ret;
}

/* ---- contexts ----------------------------------------------------------------------------- */

/* clCreateContextFromType names no object but its platform property: the backend is that
 * platform's, or, without one, the default platform's: a distributed run's first merged
 * platform, else the loader's choice. */
SLUICE_EXPORT cl_context CL_API_CALL
clCreateContextFromType(const cl_context_properties *properties, cl_device_type device_type,
                        void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                        void *user_data, cl_int *errcode_ret)
{
    if (!sluice_cl_on()) {
        sluice_cl_pfn_clCreateContextFromType raw = sluice_cl_raw_api()->clCreateContextFromType;
        if (raw == NULL) {
            if (errcode_ret)
                *errcode_ret = CL_INVALID_PLATFORM;
            return NULL;
        }
        return raw(properties, device_type, pfn_notify, user_data, errcode_ret);
    }
    cl_platform_id platform = NULL;
    if (!sluice_cl_props_platform(properties, &platform) && sluice_cl_dist_begin())
        sluice_cl_dist_platform_ids(1, &platform, NULL);
    cl_int err;
    TRACE_BEGIN();
    cl_context ctx =
        sluice_cl_context_from_type(platform, properties, device_type, pfn_notify, user_data, &err);
    if (errcode_ret != NULL)
        *errcode_ret = err;
    TRACE_END(clCreateContextFromType, err, sluice_cl_valid(platform, SLUICE_CL_PLATFORM));
    return ctx;
}

/* ---- extension functions ------------------------------------------------------------------ */

/* The pointer the program gets for `name`, given what the loader or vendor answered: sluice's
 * wrapper for every function it knows (so handles are translated), the loader's own for its
 * handle-free functions, and NULL otherwise, because a vendor function handed sluice's handles
 * would misread them. */
static void *extension_pointer(const char *name, void *real)
{
    if (real == NULL || name == NULL)
        return NULL;
    const struct sluice_cl_name *n = sluice_cl_name_find(name);
    if (n != NULL) {
        sluice_cl_loader_backend_learn(n, real);
        return (void *)sluice_cl_wrappers[n->id];
    }
    for (size_t i = 0; i < sizeof handle_free_loader_functions / sizeof handle_free_loader_functions[0]; i++)
        if (strcmp(name, handle_free_loader_functions[i]) == 0)
            return real;
    return NULL;
}

/* Entry points whose wrapper here serves a distributed run's merged platform itself. */
static const char *const dist_served_here[] = {"clGetPlatformIDs", "clIcdGetPlatformIDsKHR",
                                               "clGetExtensionFunctionAddressForPlatform"};

/* A merged platform of a distributed run: sluice's wrapper for every function the distributed
 * backend implements, NULL for the others (their wrapper would only return an error). */
static void *dist_extension_pointer(const struct sluice_cl_backend *be, const char *name)
{
    const struct sluice_cl_name *n = name ? sluice_cl_name_find(name) : NULL;
    if (n == NULL)
        return NULL;
    void *slot;
    memcpy(&slot, (const char *)&be->api + n->api_offset, sizeof slot);
    for (size_t i = 0; slot == NULL && i < sizeof dist_served_here / sizeof dist_served_here[0]; i++)
        if (strcmp(name, dist_served_here[i]) == 0)
            slot = (void *)sluice_cl_wrappers[n->id];
    return slot ? (void *)sluice_cl_wrappers[n->id] : NULL;
}

SLUICE_EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                         const char *func_name)
{
    int on = sluice_cl_on();
    struct sluice_cl_obj *p = on ? sluice_cl_valid(platform, SLUICE_CL_PLATFORM) : NULL;
    if (p != NULL && sluice_cl_dist_backend(p->backend)) {
        TRACE_BEGIN();
        void *ret = dist_extension_pointer(p->backend, func_name);
        TRACE_END(clGetExtensionFunctionAddressForPlatform, ret ? CL_SUCCESS : CL_INVALID_VALUE, p);
        return ret;
    }
    sluice_cl_pfn_clGetExtensionFunctionAddressForPlatform fn =
        sluice_cl_backend_of(p)->api.clGetExtensionFunctionAddressForPlatform;
    if (fn == NULL)
        return NULL;
    if (!on)
        return fn(platform, func_name);
    TRACE_BEGIN();
    void *ret = extension_pointer(func_name,
                                  fn((cl_platform_id)sluice_cl_in(platform, SLUICE_CL_PLATFORM), func_name));
    TRACE_END(clGetExtensionFunctionAddressForPlatform, ret ? CL_SUCCESS : CL_INVALID_VALUE, p);
    return ret;
}

SLUICE_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *func_name)
{
    int on = sluice_cl_on();
    sluice_cl_pfn_clGetExtensionFunctionAddress fn = sluice_cl_raw_api()->clGetExtensionFunctionAddress;
    if (fn == NULL)
        return NULL;
    if (!on)
        return fn(func_name);
    TRACE_BEGIN();
    void *ret = extension_pointer(func_name, fn(func_name));
    TRACE_END(clGetExtensionFunctionAddress, ret ? CL_SUCCESS : CL_INVALID_VALUE, NULL);
    return ret;
}

/* ---- kernel arguments --------------------------------------------------------------------- */

SLUICE_EXPORT cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                                const void *arg_value)
{
    if (!sluice_cl_on()) {
        sluice_cl_pfn_clSetKernelArg raw = sluice_cl_raw_api()->clSetKernelArg;
        return raw ? raw(kernel, arg_index, arg_size, arg_value) : CL_INVALID_KERNEL;
    }
    struct sluice_cl_obj *k = sluice_cl_valid(kernel, SLUICE_CL_KERNEL);
    sluice_cl_pfn_clSetKernelArg fn = sluice_cl_backend_of(k)->api.clSetKernelArg;
    if (fn == NULL)
        return CL_INVALID_KERNEL;
    TRACE_BEGIN();
    void *tmp;
    const void *value = sluice_cl_kernel_arg_value(k, arg_index, arg_size, arg_value, &tmp);
    cl_int ret = fn(k ? (cl_kernel)k->real : kernel, arg_index, arg_size, value);
    TRACE_END(clSetKernelArg, ret, k);
    return ret;
}

/* ---- command queues ----------------------------------------------------------------------- */

SLUICE_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
                                                                cl_command_queue_properties properties,
                                                                cl_int *errcode_ret)
{
    if (!sluice_cl_on()) {
        sluice_cl_pfn_clCreateCommandQueue raw = sluice_cl_raw_api()->clCreateCommandQueue;
        if (raw == NULL) {
            if (errcode_ret)
                *errcode_ret = CL_INVALID_CONTEXT;
            return NULL;
        }
        return raw(context, device, properties, errcode_ret);
    }
    struct sluice_cl_obj *c = sluice_cl_valid(context, SLUICE_CL_CONTEXT);
    const struct sluice_cl_backend *be = sluice_cl_backend_of(c);
    cl_int err = CL_INVALID_CONTEXT;
    cl_command_queue q = NULL;
    TRACE_BEGIN();
    if (be->api.clCreateCommandQueue != NULL) {
        bool forced = sluice_trace_active() && !(properties & CL_QUEUE_PROFILING_ENABLE);
        cl_command_queue real =
            be->api.clCreateCommandQueue((cl_context)sluice_cl_in(context, SLUICE_CL_CONTEXT),
                                         (cl_device_id)sluice_cl_in(device, SLUICE_CL_DEVICE),
                                         properties | (forced ? CL_QUEUE_PROFILING_ENABLE : 0), &err);
        if (real != NULL) {
            struct sluice_cl_obj *h =
                sluice_cl_queue_wrap(real, c, sluice_cl_valid(device, SLUICE_CL_DEVICE), NULL, forced);
            if (h != NULL)
                h->u.queue.app_props = properties;
            else
                err = CL_OUT_OF_HOST_MEMORY;
            q = (cl_command_queue)h;
        }
    }
    if (errcode_ret != NULL)
        *errcode_ret = err;
    TRACE_END(clCreateCommandQueue, err, c);
    return q;
}

#define CREATE_QUEUE_WITH_PROPERTIES(fn_name, prop_type)                                                     \
    SLUICE_EXPORT cl_command_queue CL_API_CALL fn_name(cl_context context, cl_device_id device,              \
                                                       const prop_type *properties, cl_int *errcode_ret)     \
    {                                                                                                        \
        if (!sluice_cl_on()) {                                                                               \
            sluice_cl_pfn_##fn_name raw = sluice_cl_raw_api()->fn_name;                                      \
            if (raw == NULL) {                                                                               \
                if (errcode_ret)                                                                             \
                    *errcode_ret = CL_INVALID_CONTEXT;                                                       \
                return NULL;                                                                                 \
            }                                                                                                \
            return raw(context, device, properties, errcode_ret);                                            \
        }                                                                                                    \
        struct sluice_cl_obj *c = sluice_cl_valid(context, SLUICE_CL_CONTEXT);                               \
        const struct sluice_cl_backend *be = sluice_cl_backend_of(c);                                        \
        cl_int err = CL_INVALID_CONTEXT;                                                                     \
        cl_command_queue q = NULL;                                                                           \
        TRACE_BEGIN();                                                                                       \
        if (be->api.fn_name != NULL) {                                                                       \
            cl_queue_properties buf[64];                                                                     \
            bool forced = false;                                                                             \
            const cl_queue_properties *props =                                                               \
                sluice_cl_queue_props_for_backend(properties, buf, 64, &forced);                             \
            cl_command_queue real =                                                                          \
                be->api.fn_name((cl_context)sluice_cl_in(context, SLUICE_CL_CONTEXT),                        \
                                (cl_device_id)sluice_cl_in(device, SLUICE_CL_DEVICE), props, &err);          \
            if (real != NULL) {                                                                              \
                q = (cl_command_queue)sluice_cl_queue_wrap(                                                  \
                    real, c, sluice_cl_valid(device, SLUICE_CL_DEVICE), properties, forced);                 \
                if (q == NULL)                                                                               \
                    err = CL_OUT_OF_HOST_MEMORY;                                                             \
            }                                                                                                \
        }                                                                                                    \
        if (errcode_ret != NULL)                                                                             \
            *errcode_ret = err;                                                                              \
        TRACE_END(fn_name, err, c);                                                                          \
        return q;                                                                                            \
    }
CREATE_QUEUE_WITH_PROPERTIES(clCreateCommandQueueWithProperties, cl_queue_properties)
CREATE_QUEUE_WITH_PROPERTIES(clCreateCommandQueueWithPropertiesKHR, cl_queue_properties_khr)
