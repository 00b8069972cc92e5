/* SPDX-License-Identifier: MIT */
/* sluice_dql_describe (dql_device.h): one clGetDeviceInfo per attribute of dql_attrs.def. */
#include "cl/dql/dql_device.h"

#include "common/info_string.h"

#include <stdlib.h>
#include <string.h>

/* Reads a scalar of any width clGetDeviceInfo returns (cl_uint, cl_ulong, size_t, cl_bool,
 * bitfields) into a uint64_t; 0 if the query fails. */
static uint64_t info_u64(sluice_dql_device_info_fn info, cl_device_id dev, cl_device_info what, cl_int *err)
{
    unsigned char buf[8] = {0};
    size_t got = 0;
    cl_int rc = info(dev, what, sizeof buf, buf, &got);
    if (err)
        *err = rc;
    if (rc != CL_SUCCESS)
        return 0;
    switch (got) {
    case 1:
        return buf[0];
    case 2: {
        uint16_t v;
        memcpy(&v, buf, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, buf, 4);
        return v;
    }
    case 8: {
        uint64_t v;
        memcpy(&v, buf, 8);
        return v;
    }
    default:
        return 0;
    }
}

/* One string query, device's or platform's, for common/info_string.h. */
struct str_ask {
    sluice_dql_device_info_fn device_info;
    sluice_dql_platform_info_fn platform_info;
    cl_device_id dev;
    cl_platform_id platform;
    cl_uint what;
};

static int32_t ask_str(const void *ctx, size_t size, void *value, size_t *ret)
{
    const struct str_ask *a = ctx;
    return a->device_info != NULL ? a->device_info(a->dev, a->what, size, value, ret)
                                  : a->platform_info(a->platform, a->what, size, value, ret);
}

/* Reads text attribute `attr` of d: asked whole, whatever its length, then cut to its field
 * and marked so (dql.h). */
static cl_int info_str(const struct str_ask *a, struct sluice_dql_device *d, int attr)
{
    char *field = (char *)d + sluice_dql_attrs[attr].offset;
    int32_t rc = 0;
    char *s = sluice_info_string(ask_str, a, &rc);
    field[0] = '\0';
    if (s == NULL)
        return rc;
    size_t n = strlen(s);
    if (n > SLUICE_DQL_STR_MAX - 1) {
        n = SLUICE_DQL_STR_MAX - 1;
        d->cut |= 1u << attr;
    }
    memcpy(field, s, n);
    field[n] = '\0';
    free(s);
    return CL_SUCCESS;
}

static cl_int device_str(sluice_dql_device_info_fn info, cl_device_id dev, cl_device_info what,
                         struct sluice_dql_device *d, int attr)
{
    struct str_ask a = {.device_info = info, .dev = dev, .what = what};
    return info_str(&a, d, attr);
}

cl_int sluice_dql_describe(cl_device_id dev, uint64_t node, uint64_t index,
                           sluice_dql_device_info_fn device_info, sluice_dql_platform_info_fn platform_info,
                           struct sluice_dql_device *d)
{
    memset(d, 0, sizeof *d);
    d->node = node;
    d->index = index;
    cl_int err;
    d->type = info_u64(device_info, dev, CL_DEVICE_TYPE, &err);
    if (err != CL_SUCCESS)
        return err;
    if ((err = device_str(device_info, dev, CL_DEVICE_NAME, d, SLUICE_DQL_ATTR_name)) != CL_SUCCESS ||
        (err = device_str(device_info, dev, CL_DEVICE_VENDOR, d, SLUICE_DQL_ATTR_vendor)) != CL_SUCCESS ||
        (err = device_str(device_info, dev, CL_DEVICE_VERSION, d, SLUICE_DQL_ATTR_version)) != CL_SUCCESS)
        return err;
    device_str(device_info, dev, CL_DRIVER_VERSION, d, SLUICE_DQL_ATTR_driver_version);
    device_str(device_info, dev, CL_DEVICE_OPENCL_C_VERSION, d, SLUICE_DQL_ATTR_opencl_c_version);
    d->vendor_id = info_u64(device_info, dev, CL_DEVICE_VENDOR_ID, NULL);
    d->compute_units = info_u64(device_info, dev, CL_DEVICE_MAX_COMPUTE_UNITS, NULL);
    d->clock = info_u64(device_info, dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, NULL);
    d->global_mem = info_u64(device_info, dev, CL_DEVICE_GLOBAL_MEM_SIZE, NULL);
    d->local_mem = info_u64(device_info, dev, CL_DEVICE_LOCAL_MEM_SIZE, NULL);
    d->max_alloc = info_u64(device_info, dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, NULL);
    d->global_cache = info_u64(device_info, dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, NULL);
    d->constant_mem = info_u64(device_info, dev, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, NULL);
    d->max_work_group_size = info_u64(device_info, dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, NULL);
    d->max_work_item_dimensions = info_u64(device_info, dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, NULL);
    d->address_bits = info_u64(device_info, dev, CL_DEVICE_ADDRESS_BITS, NULL);
    d->available = info_u64(device_info, dev, CL_DEVICE_AVAILABLE, NULL) != 0;
    d->compiler_available = info_u64(device_info, dev, CL_DEVICE_COMPILER_AVAILABLE, NULL) != 0;
    d->image_support = info_u64(device_info, dev, CL_DEVICE_IMAGE_SUPPORT, NULL) != 0;
    d->fp64 = info_u64(device_info, dev, CL_DEVICE_DOUBLE_FP_CONFIG, NULL) != 0;
    cl_platform_id platform = NULL;
    if (platform_info &&
        device_info(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) == CL_SUCCESS) {
        struct str_ask a = {.platform_info = platform_info, .platform = platform, .what = CL_PLATFORM_NAME};
        info_str(&a, d, SLUICE_DQL_ATTR_platform);
    }
    return CL_SUCCESS;
}
