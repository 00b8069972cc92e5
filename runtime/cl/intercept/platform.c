/* SPDX-License-Identifier: MIT */
/* The objects OpenCL hands out in arrays (platforms, devices, sub-devices, a program's kernels)
 * and the backend of clCreateContextFromType: each real object the backend returns gets its
 * handle here, so that the entry points (shim/opencl_manual.c) only decide and forward. */
#include <stdlib.h>

#include "cl/intercept/wrap.h"

struct sluice_cl_obj *sluice_cl_platform_handle(cl_platform_id real)
{
    return sluice_cl_wrap_persistent(SLUICE_CL_PLATFORM, real, NULL, sluice_cl_platform_backend(real));
}

/* A root device's handle; its platform comes from the backend when the caller named none. */
static struct sluice_cl_obj *device_handle(cl_device_id real, struct sluice_cl_obj *platform)
{
    struct sluice_cl_obj *known = sluice_cl_find(real);
    if (known != NULL && known->kind == SLUICE_CL_DEVICE && !(known->flags & SLUICE_CL_F_PROVISIONAL))
        return known;
    if (platform == NULL) {
        cl_platform_id rp = NULL;
        const struct sluice_cl_api *api = sluice_cl_raw_api();
        if (api->clGetDeviceInfo != NULL &&
            api->clGetDeviceInfo(real, CL_DEVICE_PLATFORM, sizeof rp, &rp, NULL) == CL_SUCCESS)
            platform = sluice_cl_platform_handle(rp);
    }
    struct sluice_cl_obj *d =
        sluice_cl_wrap_persistent(SLUICE_CL_DEVICE, real, platform, sluice_cl_backend_of(platform));
    if (d != NULL && known == NULL && sluice_trace_active())
        sluice_cl_trace_device(d);
    return d;
}

static struct sluice_cl_obj *sub_device_handle(cl_device_id real, struct sluice_cl_obj *parent,
                                               const struct sluice_cl_backend *be)
{
    struct sluice_cl_obj *d = sluice_cl_wrap_new(SLUICE_CL_DEVICE, real, parent, be);
    if (d != NULL && sluice_trace_active())
        sluice_cl_trace_device(d);
    return d;
}

/* The shape every array-returning call shares: without room for objects the backend answers the
 * caller directly; else it fills a scratch array, whose first num_entries objects get handles
 * (`kind` says which), and *num_ret gets the backend's total. */
enum array_kind { ARRAY_PLATFORMS, ARRAY_DEVICES, ARRAY_SUB_DEVICES, ARRAY_KERNELS };
struct array_call {
    enum array_kind kind;
    struct sluice_cl_obj *owner; /* the platform, parent device or program named */
    const struct sluice_cl_backend *be;
    cl_int (*fill)(const struct array_call *a, cl_uint n, void **out, cl_uint *total);
    const void *args[2];                      /* the call's own arguments, for fill */
    sluice_cl_pfn_clGetPlatformIDs platforms; /* the entry point that lists platforms */
};

static cl_int list_and_wrap(const struct array_call *a, cl_uint num_entries, void **out, cl_uint *num_ret)
{
    if (out == NULL || num_entries == 0)
        return a->fill(a, num_entries, out, num_ret);
    void **tmp = calloc(num_entries, sizeof *tmp);
    if (tmp == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    cl_uint total = 0;
    cl_int ret = a->fill(a, num_entries, tmp, &total);
    if (ret == CL_SUCCESS) {
        cl_uint n = total < num_entries ? total : num_entries;
        for (cl_uint i = 0; i < n; i++) {
            struct sluice_cl_obj *h = NULL;
            switch (a->kind) {
            case ARRAY_PLATFORMS:
                h = sluice_cl_platform_handle((cl_platform_id)tmp[i]);
                break;
            case ARRAY_DEVICES:
                h = device_handle((cl_device_id)tmp[i], a->owner);
                break;
            case ARRAY_SUB_DEVICES:
                h = sub_device_handle((cl_device_id)tmp[i], a->owner, a->be);
                break;
            case ARRAY_KERNELS:
                h = sluice_cl_wrap_new(SLUICE_CL_KERNEL, tmp[i], a->owner, a->be);
                break;
            }
            out[i] = h;
        }
        if (num_ret != NULL)
            *num_ret = total;
    }
    free(tmp);
    return ret;
}

static cl_int fill_platforms(const struct array_call *a, cl_uint n, void **out, cl_uint *total)
{
    return a->platforms(n, (cl_platform_id *)out, total);
}

cl_int sluice_cl_platform_ids(sluice_cl_pfn_clGetPlatformIDs fn, cl_uint num_entries,
                              cl_platform_id *platforms, cl_uint *num_platforms)
{
    if (fn == NULL)
        return CL_PLATFORM_NOT_FOUND_KHR; /* what a loader with no ICD says */
    struct array_call a = {.kind = ARRAY_PLATFORMS, .fill = fill_platforms, .platforms = fn};
    return list_and_wrap(&a, num_entries, (void **)platforms, num_platforms);
}

static cl_int fill_devices(const struct array_call *a, cl_uint n, void **out, cl_uint *total)
{
    return a->be->api.clGetDeviceIDs((cl_platform_id)a->args[0], *(const cl_device_type *)a->args[1], n,
                                     (cl_device_id *)out, total);
}

cl_int sluice_cl_device_ids(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                            cl_device_id *devices, cl_uint *num_devices)
{
    struct sluice_cl_obj *p = sluice_cl_valid(platform, SLUICE_CL_PLATFORM);
    const struct sluice_cl_backend *be = sluice_cl_backend_of(p);
    if (be->api.clGetDeviceIDs == NULL)
        return CL_INVALID_PLATFORM;
    struct array_call a = {.kind = ARRAY_DEVICES,
                           .owner = p,
                           .be = be,
                           .fill = fill_devices,
                           .args = {sluice_cl_in(platform, SLUICE_CL_PLATFORM), &device_type}};
    return list_and_wrap(&a, num_entries, (void **)devices, num_devices);
}

static cl_int fill_sub_devices(const struct array_call *a, cl_uint n, void **out, cl_uint *total)
{
    return a->be->api.clCreateSubDevices((cl_device_id)a->args[0],
                                         (const cl_device_partition_property *)a->args[1], n,
                                         (cl_device_id *)out, total);
}

static cl_int fill_sub_devices_ext(const struct array_call *a, cl_uint n, void **out, cl_uint *total)
{
    return a->be->api.clCreateSubDevicesEXT((cl_device_id)a->args[0],
                                            (const cl_device_partition_property_ext *)a->args[1], n,
                                            (cl_device_id *)out, total);
}

/* clCreateSubDevices and its EXT form: the same listing, each with its own properties' type
 * (fill says which), CL_INVALID_OPERATION where the backend lacks the entry point. */
static cl_int sub_devices(cl_device_id in_device, const void *properties, bool present,
                          cl_int (*fill)(const struct array_call *, cl_uint, void **, cl_uint *),
                          struct sluice_cl_obj *d, cl_uint num_entries, cl_device_id *out_devices,
                          cl_uint *num_devices)
{
    if (!present)
        return CL_INVALID_OPERATION;
    struct array_call a = {.kind = ARRAY_SUB_DEVICES,
                           .owner = d,
                           .be = sluice_cl_backend_of(d),
                           .fill = fill,
                           .args = {sluice_cl_in(in_device, SLUICE_CL_DEVICE), properties}};
    return list_and_wrap(&a, num_entries, (void **)out_devices, num_devices);
}

cl_int sluice_cl_sub_devices(cl_device_id in_device, const cl_device_partition_property *properties,
                             cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    struct sluice_cl_obj *d = sluice_cl_valid(in_device, SLUICE_CL_DEVICE);
    return sub_devices(in_device, properties, sluice_cl_backend_of(d)->api.clCreateSubDevices != NULL,
                       fill_sub_devices, d, num_entries, out_devices, num_devices);
}

cl_int sluice_cl_sub_devices_ext(cl_device_id in_device, const cl_device_partition_property_ext *properties,
                                 cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    struct sluice_cl_obj *d = sluice_cl_valid(in_device, SLUICE_CL_DEVICE);
    return sub_devices(in_device, properties, sluice_cl_backend_of(d)->api.clCreateSubDevicesEXT != NULL,
                       fill_sub_devices_ext, d, num_entries, out_devices, num_devices);
}

static cl_int fill_kernels(const struct array_call *a, cl_uint n, void **out, cl_uint *total)
{
    return a->be->api.clCreateKernelsInProgram((cl_program)a->args[0], n, (cl_kernel *)out, total);
}

cl_int sluice_cl_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                    cl_uint *num_kernels_ret)
{
    struct sluice_cl_obj *p = sluice_cl_valid(program, SLUICE_CL_PROGRAM);
    const struct sluice_cl_backend *be = sluice_cl_backend_of(p);
    if (be->api.clCreateKernelsInProgram == NULL)
        return CL_INVALID_PROGRAM;
    struct array_call a = {.kind = ARRAY_KERNELS,
                           .owner = p,
                           .be = be,
                           .fill = fill_kernels,
                           .args = {sluice_cl_in(program, SLUICE_CL_PROGRAM)}};
    return list_and_wrap(&a, num_kernels, (void **)kernels, num_kernels_ret);
}

/* The platform a property list names (CL_CONTEXT_PLATFORM), 1 when it names one. */
int sluice_cl_props_platform(const cl_context_properties *properties, cl_platform_id *platform)
{
    int named = 0;
    for (size_t i = 0; properties != NULL && properties[i] != 0; i += 2)
        if (properties[i] == CL_CONTEXT_PLATFORM) {
            *platform = (cl_platform_id)properties[i + 1];
            named = 1;
        }
    return named;
}

/* The backend is the platform's (a distributed run's merged platform has the distributed
 * backend), the loader's for NULL (its default platform). */
cl_context sluice_cl_context_from_type(cl_platform_id platform, const cl_context_properties *properties,
                                       cl_device_type device_type,
                                       void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t,
                                                                     void *),
                                       void *user_data, cl_int *errcode_ret)
{
    struct sluice_cl_obj *p = sluice_cl_valid(platform, SLUICE_CL_PLATFORM);
    const struct sluice_cl_backend *be = sluice_cl_backend_of(p);
    cl_int err = CL_INVALID_PLATFORM;
    cl_context ctx = NULL;
    if (be->api.clCreateContextFromType != NULL) {
        cl_context_properties stk[SLUICE_CL_STACK_PROPS];
        cl_context_properties *heap = NULL;
        const cl_context_properties *r_props = sluice_cl_in_ctx_props(properties, stk, &heap);
        cl_context real = be->api.clCreateContextFromType(r_props, device_type, pfn_notify, user_data, &err);
        free(heap);
        if (real != NULL && (ctx = (cl_context)sluice_cl_wrap_new(SLUICE_CL_CONTEXT, real, p, be)) == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
    }
    *errcode_ret = err;
    return ctx;
}
