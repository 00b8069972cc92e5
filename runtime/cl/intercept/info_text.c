/* SPDX-License-Identifier: MIT */
#include "cl/intercept/info_text.h"

#include "common/info_string.h"

_Static_assert(SLUICE_INFO_NO_MEMORY == CL_OUT_OF_HOST_MEMORY, "common/info_string.h's error is OpenCL's");

struct device_ask {
    sluice_cl_pfn_clGetDeviceInfo info;
    cl_device_id dev;
    cl_device_info what;
};

static int32_t ask_device(const void *ctx, size_t size, void *value, size_t *ret)
{
    const struct device_ask *a = ctx;
    return a->info(a->dev, a->what, size, value, ret);
}

char *sluice_cl_device_text(sluice_cl_pfn_clGetDeviceInfo info, cl_device_id dev, cl_device_info what)
{
    struct device_ask a = {info, dev, what};
    return info != NULL ? sluice_info_string(ask_device, &a, NULL) : NULL;
}

struct platform_ask {
    sluice_cl_pfn_clGetPlatformInfo info;
    cl_platform_id p;
    cl_platform_info what;
};

static int32_t ask_platform(const void *ctx, size_t size, void *value, size_t *ret)
{
    const struct platform_ask *a = ctx;
    return a->info(a->p, a->what, size, value, ret);
}

char *sluice_cl_platform_text(sluice_cl_pfn_clGetPlatformInfo info, cl_platform_id p, cl_platform_info what)
{
    struct platform_ask a = {info, p, what};
    return info != NULL ? sluice_info_string(ask_platform, &a, NULL) : NULL;
}

struct arg_ask {
    sluice_cl_pfn_clGetKernelArgInfo info;
    cl_kernel k;
    cl_uint arg;
    cl_kernel_arg_info what;
};

static int32_t ask_arg(const void *ctx, size_t size, void *value, size_t *ret)
{
    const struct arg_ask *a = ctx;
    return a->info(a->k, a->arg, a->what, size, value, ret);
}

char *sluice_cl_arg_text(sluice_cl_pfn_clGetKernelArgInfo info, cl_kernel k, cl_uint arg,
                         cl_kernel_arg_info what)
{
    struct arg_ask a = {info, k, arg, what};
    return info != NULL ? sluice_info_string(ask_arg, &a, NULL) : NULL;
}
