/* Platforms and devices of the distributed backend: a platform merged by name holds the
 * devices of every rank; queries go to the rank that owns the object, except those whose
 * answer is an object (answered here, with rank 0's view of it). */
#include <string.h>

#include "cl/dist_internal.h"

#define DEV(d) ((struct dist_device *)(d))
#define PLAT(p) ((struct dist_platform *)(p))

static cl_int CL_API_CALL platform_info(cl_platform_id platform, cl_platform_info param, size_t size, void *value,
                                        size_t *size_ret)
{
    if (platform == NULL)
        return CL_INVALID_PLATFORM;
    struct dist_platform *p = PLAT(platform);
    return dist_info(p->rank, SLUICE_RG_PLATFORM, p->rid, 0, param, size, value, size_ret);
}

static cl_int CL_API_CALL device_ids(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                     cl_device_id *devices, cl_uint *num_devices)
{
    if (platform == NULL)
        return CL_INVALID_PLATFORM;
    if ((devices == NULL && num_devices == NULL) || (devices != NULL && num_entries == 0))
        return CL_INVALID_VALUE;
    struct dist_platform *p = PLAT(platform);
    cl_uint n = 0;
    for (int i = 0; i < p->ndev; i++) {
        bool match = type == CL_DEVICE_TYPE_ALL || (p->devs[i]->type & type) != 0 ||
                     (type == CL_DEVICE_TYPE_DEFAULT && n == 0);
        if (!match)
            continue;
        if (devices != NULL && n < num_entries)
            devices[n] = (cl_device_id)p->devs[i];
        n++;
        if (type == CL_DEVICE_TYPE_DEFAULT)
            break;
    }
    if (num_devices != NULL)
        *num_devices = n;
    return n == 0 ? CL_DEVICE_NOT_FOUND : CL_SUCCESS;
}

static cl_int CL_API_CALL device_info(cl_device_id device, cl_device_info param, size_t size, void *value,
                                      size_t *size_ret)
{
    if (device == NULL)
        return CL_INVALID_DEVICE;
    struct dist_device *d = DEV(device);
    if (param == CL_DEVICE_PLATFORM) {
        cl_platform_id p = (cl_platform_id)d->platform;
        return dist_answer(&p, sizeof p, size, value, size_ret);
    }
    if (param == CL_DEVICE_PARENT_DEVICE) {
        cl_device_id none = NULL;
        return dist_answer(&none, sizeof none, size, value, size_ret);
    }
    return dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param, size, value, size_ret);
}

static cl_int CL_API_CALL device_keep(cl_device_id device)
{
    return device ? CL_SUCCESS : CL_INVALID_DEVICE; /* root devices are never freed */
}

void dist_devices_install(struct sluice_cl_api *api)
{
    api->clGetPlatformInfo = platform_info;
    api->clGetDeviceIDs = device_ids;
    api->clGetDeviceInfo = device_info;
    api->clRetainDevice = device_keep;
    api->clReleaseDevice = device_keep;
}
