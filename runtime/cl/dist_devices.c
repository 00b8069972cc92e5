/* Platforms and devices of the distributed backend: a platform merged by name holds the
 * devices of every rank; queries go to the rank that owns the object, except those whose
 * answer is an object (answered here, with rank 0's view of it). */
#include <stdlib.h>
#include <string.h>

#include "cl/dist_internal.h"
#include "cl/object.h"

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
        cl_device_id parent = (cl_device_id)d->parent;
        return dist_answer(&parent, sizeof parent, size, value, size_ret);
    }
    return dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param, size, value, size_ret);
}

/* Root devices are never freed; sub-devices are counted here and released on their rank. */
static cl_int CL_API_CALL retain_device(cl_device_id device)
{
    struct dist_device *d = DEV(device);
    if (d == NULL)
        return CL_INVALID_DEVICE;
    if (d->parent != NULL)
        __atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_device(cl_device_id device)
{
    struct dist_device *d = DEV(device);
    if (d == NULL)
        return CL_INVALID_DEVICE;
    if (d->parent != NULL && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        uint64_t a[2] = {SLUICE_CL_DEVICE, d->rid};
        dist_call(d->rank, SLUICE_REMOTE_RELEASE, a, 2, NULL, 0, NULL);
        free(d);
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL create_sub_devices(cl_device_id device, const cl_device_partition_property *props,
                                             cl_uint num, cl_device_id *out, cl_uint *num_ret)
{
    struct dist_device *d = DEV(device);
    if (d == NULL)
        return CL_INVALID_DEVICE;
    if (props == NULL)
        return CL_INVALID_VALUE;
    size_t n = 0;
    while (n < 63 && props[n] != 0)
        n++;
    n++; /* the terminating 0 */
    uint64_t a[1] = {d->rid};
    struct sluice_remote_msg m;
    cl_int r = dist_call(d->rank, SLUICE_REMOTE_SUBDEVICES, a, 1, props, n * sizeof props[0], &m);
    cl_uint ns = (cl_uint)(m.rep.nbytes / sizeof(uint64_t));
    if (r == CL_SUCCESS && out != NULL && num < ns)
        r = CL_INVALID_VALUE;
    for (cl_uint i = 0; i < ns; i++) {
        uint64_t rid;
        memcpy(&rid, m.bytes + i * sizeof rid, sizeof rid);
        struct dist_device *s = r == CL_SUCCESS && out != NULL ? calloc(1, sizeof *s) : NULL;
        if (s == NULL) {
            uint64_t rel[2] = {SLUICE_CL_DEVICE, rid};
            dist_call(d->rank, SLUICE_REMOTE_RELEASE, rel, 2, NULL, 0, NULL);
            continue;
        }
        *s = (struct dist_device){.rank = d->rank, .rid = rid, .type = d->type, .platform = d->platform,
                                  .parent = d, .refs = 1};
        out[i] = (cl_device_id)s;
    }
    free(m.bytes);
    if (r == CL_SUCCESS && num_ret != NULL)
        *num_ret = ns;
    return r;
}

void dist_devices_install(struct sluice_cl_api *api)
{
    api->clGetPlatformInfo = platform_info;
    api->clGetDeviceIDs = device_ids;
    api->clGetDeviceInfo = device_info;
    api->clRetainDevice = retain_device;
    api->clReleaseDevice = release_device;
    api->clCreateSubDevices = create_sub_devices;
}
