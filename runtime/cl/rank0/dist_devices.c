/* SPDX-License-Identifier: MIT */
/* Platforms and devices of the distributed backend: a platform merged by name holds the
 * devices of every rank; queries go to the rank that owns the object, except those whose
 * answer is an object (answered here, with rank 0's view of it). */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_objects.h"

#define DEV(d) ((struct dist_device *)(d))
#define PLAT(p) ((struct dist_platform *)(p))

static cl_int CL_API_CALL device_ids(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                     cl_device_id *devices, cl_uint *num_devices)
{
    SLUICE_RETURN_ERROR_ON(platform == NULL, CL_INVALID_PLATFORM, "no platform (NULL)");
    SLUICE_RETURN_ERROR_ON(
        (devices == NULL && num_devices == NULL) || (devices != NULL && num_entries == 0), CL_INVALID_VALUE,
        "(devices == NULL && num_devices == NULL) || (devices != NULL && num_entries == 0)");
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

/* Pipes and SVM do not work across ranks (docs/DISTRIBUTED_API.md), so every device says it has
 * none, with the values OpenCL 3.0 gives a device without them: programs that check take their
 * fallback path instead of failing at their first such call. Images and samplers, those made
 * from buffers included, are the owning rank's (dist_image.c). */
#define DIST_DEVICE_ABSENT(X)                                                                                \
    X(CL_DEVICE_SVM_CAPABILITIES, cl_device_svm_capabilities)                                                \
    X(CL_DEVICE_PIPE_SUPPORT, cl_bool)                                                                       \
    X(CL_DEVICE_MAX_PIPE_ARGS, cl_uint)                                                                      \
    X(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, cl_uint)                                                       \
    X(CL_DEVICE_PIPE_MAX_PACKET_SIZE, cl_uint)

/* Extensions and OpenCL C features that name what does not work across ranks (pipes, mipmaps,
 * entry points the distributed backend lacks): hidden from the lists
 * devices and platforms give, so that a program never finds an extension whose functions are
 * missing. */
static const char *const hidden_names[] = {
    "cl_khr_command_buffer", "cl_khr_mipmap_image", "cl_khr_mipmap_image_writes",
    "cl_pocl_content_size",  "__opencl_c_pipes",
};

static bool hidden(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof hidden_names / sizeof hidden_names[0]; i++)
        if (strlen(hidden_names[i]) == n && strncmp(hidden_names[i], name, n) == 0)
            return true;
    return false;
}

/* Removes hidden names from a space-separated list, in place, keeping the separators of the
 * others as the driver wrote them (a hidden name goes with the spaces after it, or before it
 * when it is the last one). */
static void filter_string(char *s)
{
    char *out = s;
    for (char *p = s; *p != '\0';) {
        size_t gap = strspn(p, " ");
        size_t n = strcspn(p + gap, " ");
        size_t after = strspn(p + gap + n, " ");
        if (n > 0 && hidden(p + gap, n)) {
            bool last = p[gap + n + after] == '\0';
            memmove(out, last ? p + gap + n : p, last ? after : gap);
            out += last ? after : gap;
            p += gap + n + after;
        } else {
            memmove(out, p, gap + n);
            out += gap + n;
            p += gap + n;
        }
    }
    *out = '\0';
}

/* Removes hidden names from a cl_name_version array; returns the new count. */
static size_t filter_versions(cl_name_version *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!hidden(v[i].name, strnlen(v[i].name, CL_NAME_VERSION_MAX_NAME_SIZE)))
            v[k++] = v[i];
    return k;
}

/* A list query (extensions, features) asked of the owning rank, without the hidden names. */
static cl_int filtered(int rank, int getter, uint64_t rid, cl_uint param, bool versions, size_t size,
                       void *value, size_t *size_ret)
{
    size_t n = 0;
    cl_int r = dist_info(rank, getter, rid, 0, param, 0, NULL, &n);
    unsigned char *buf = r == CL_SUCCESS ? calloc(1, n + 1) : NULL;
    if (r == CL_SUCCESS && buf == NULL)
        r = CL_OUT_OF_HOST_MEMORY;
    if (r == CL_SUCCESS)
        r = dist_info(rank, getter, rid, 0, param, n, buf, NULL);
    if (r == CL_SUCCESS) {
        if (versions) {
            n = filter_versions((cl_name_version *)(void *)buf, n / sizeof(cl_name_version)) *
                sizeof(cl_name_version);
        } else {
            filter_string((char *)buf);
            n = strlen((char *)buf) + 1;
        }
        r = dist_answer(buf, n, size, value, size_ret);
    }
    free(buf);
    return r;
}

static cl_int CL_API_CALL platform_info(cl_platform_id platform, cl_platform_info param, size_t size,
                                        void *value, size_t *size_ret)
{
    SLUICE_RETURN_ERROR_ON(platform == NULL, CL_INVALID_PLATFORM, "no platform (NULL)");
    struct dist_platform *p = PLAT(platform);
    if (param == CL_PLATFORM_EXTENSIONS || param == CL_PLATFORM_EXTENSIONS_WITH_VERSION)
        return filtered(p->rank, SLUICE_RG_PLATFORM, p->rid, param, param != CL_PLATFORM_EXTENSIONS, size,
                        value, size_ret);
    return dist_info(p->rank, SLUICE_RG_PLATFORM, p->rid, 0, param, size, value, size_ret);
}

/* The size of an absent feature's value (0 if `param` is not one). */
static size_t absent_size(cl_device_info param)
{
    switch (param) {
#define X(name, type)                                                                                        \
    case name:                                                                                               \
        return sizeof(type);
        DIST_DEVICE_ABSENT(X)
#undef X
    default:
        return 0;
    }
}

static cl_int CL_API_CALL device_info(cl_device_id device, cl_device_info param, size_t size, void *value,
                                      size_t *size_ret)
{
    SLUICE_RETURN_ERROR_ON(device == NULL, CL_INVALID_DEVICE, "no device (NULL)");
    struct dist_device *d = DEV(device);
    size_t absent = absent_size(param);
    if (absent > 0) {
        static const uint64_t zero = 0;
        return dist_answer(&zero, absent, size, value, size_ret);
    }
    if (param == CL_DEVICE_PLATFORM) {
        cl_platform_id p = (cl_platform_id)d->platform;
        return dist_answer(&p, sizeof p, size, value, size_ret);
    }
    if (param == CL_DEVICE_EXTENSIONS || param == CL_DEVICE_EXTENSIONS_WITH_VERSION ||
        param == CL_DEVICE_OPENCL_C_FEATURES)
        return filtered(d->rank, SLUICE_RG_DEVICE, d->rid, param, param != CL_DEVICE_EXTENSIONS, size, value,
                        size_ret);
    if (param == CL_DEVICE_EXECUTION_CAPABILITIES) {
        /* Native kernels run in the process serving the rank: not advertised where that is
         * another program than rank 0's (dist_native.c). */
        cl_device_exec_capabilities caps = 0;
        cl_int r = dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param, sizeof caps, &caps, NULL);
        if (r == CL_SUCCESS && (caps & CL_EXEC_NATIVE_KERNEL) && !dist_native_program_there(d->rank))
            caps &= ~(cl_device_exec_capabilities)CL_EXEC_NATIVE_KERNEL;
        return r != CL_SUCCESS ? r : dist_answer(&caps, sizeof caps, size, value, size_ret);
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
    SLUICE_RETURN_ERROR_ON(d == NULL, CL_INVALID_DEVICE, "no device (NULL)");
    if (d->parent != NULL)
        __atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_device(cl_device_id device)
{
    struct dist_device *d = DEV(device);
    SLUICE_RETURN_ERROR_ON(d == NULL, CL_INVALID_DEVICE, "no device (NULL)");
    if (d->parent != NULL && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        struct sluice_req_release in = {SLUICE_CL_DEVICE, d->rid, 0};
        dist_call(d->rank, SLUICE_REMOTE_RELEASE, DIST_WORDS(in), NULL, 0, NULL);
        free(d);
    }
    return CL_SUCCESS;
}

static cl_int CL_API_CALL create_sub_devices(cl_device_id device, const cl_device_partition_property *props,
                                             cl_uint num, cl_device_id *out, cl_uint *num_ret)
{
    struct dist_device *d = DEV(device);
    SLUICE_RETURN_ERROR_ON(d == NULL, CL_INVALID_DEVICE, "no device (NULL)");
    SLUICE_RETURN_ERROR_ON(props == NULL, CL_INVALID_VALUE, "no value (NULL)");
    size_t n = 0;
    while (n < 63 && props[n] != 0)
        n++;
    n++; /* the terminating 0 */
    struct sluice_req_subdevices in = {d->rid};
    struct sluice_remote_msg m;
    cl_int r = dist_call(d->rank, SLUICE_REMOTE_SUBDEVICES, DIST_WORDS(in), props, n * sizeof props[0], &m);
    cl_uint ns = (cl_uint)(m.rep.nbytes / sizeof(uint64_t));
    SLUICE_ERROR_ON(r, out != NULL && num < ns, CL_INVALID_VALUE, "out != NULL && num < ns");
    for (cl_uint i = 0; i < ns; i++) {
        uint64_t rid;
        memcpy(&rid, m.bytes + i * sizeof rid, sizeof rid);
        struct dist_device *s = r == CL_SUCCESS && out != NULL ? calloc(1, sizeof *s) : NULL;
        if (s == NULL) {
            struct sluice_req_release rel = {SLUICE_CL_DEVICE, rid, 0};
            dist_call(d->rank, SLUICE_REMOTE_RELEASE, DIST_WORDS(rel), NULL, 0, NULL);
            continue;
        }
        *s = (struct dist_device){
            .rank = d->rank, .rid = rid, .type = d->type, .platform = d->platform, .parent = d, .refs = 1};
        out[i] = (cl_device_id)s;
    }
    free(m.bytes);
    if (r == CL_SUCCESS && num_ret != NULL)
        *num_ret = ns;
    return r;
}

/* Every rank of the merged platform unloads its own compiler. */
static cl_int CL_API_CALL unload_compiler(cl_platform_id platform)
{
    SLUICE_RETURN_ERROR_ON(platform == NULL, CL_INVALID_PLATFORM, "no platform (NULL)");
    cl_int first = CL_SUCCESS;
    for (int r = 0; r < dist_size(); r++)
        if (PLAT(platform)->rids[r] != 0) {
            struct sluice_robj_unload_compiler in = {SLUICE_ROBJ_UNLOAD_COMPILER, PLAT(platform)->rids[r]};
            cl_int e = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), NULL, 0, NULL);
            if (first == CL_SUCCESS)
                first = e;
        }
    return first;
}

void dist_devices_install(struct sluice_cl_api *api)
{
    api->clUnloadPlatformCompiler = unload_compiler;
    api->clGetPlatformInfo = platform_info;
    api->clGetDeviceIDs = device_ids;
    api->clGetDeviceInfo = device_info;
    api->clRetainDevice = retain_device;
    api->clReleaseDevice = release_device;
    api->clRetainDeviceEXT = retain_device;
    api->clReleaseDeviceEXT = release_device;
    api->clCreateSubDevices = create_sub_devices;
}
