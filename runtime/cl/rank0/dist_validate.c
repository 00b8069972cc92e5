/* SPDX-License-Identifier: MIT */
/* The errors OpenCL returns at enqueue, decided on rank 0. Commands are sent without waiting, so
 * a command the device's driver refuses would otherwise fail later, on its event, where the
 * program was told CL_SUCCESS. The limits come from the device (asked once, at its first queue)
 * and the kernel (its work-group info on each device, asked when it is created), so validation
 * costs no round trip. The rules and their order are the driver's (PoCL's
 * pocl_kernel_calc_wg_size), with the OpenCL 3.0 specification where PoCL is silent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_internal.h"

static size_t info_size(struct dist_device *d, cl_device_info param)
{
    size_t v = 0;
    return dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, param, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

/* Under dist_lock: host threads creating queues or kernels on one device at once ask together. */
static void device_limits_locked(struct dist_device *d)
{
    if (d->limits_known)
        return;
    cl_uint dims = 0;
    if (dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims,
                  &dims, NULL) != CL_SUCCESS ||
        dims == 0 || dims > 3)
        return; /* unknown: the driver decides, later */
    size_t items[3] = {0, 0, 0};
    dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL);
    int major = 1, minor = 0;
    char *ver = dist_info_text(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_VERSION, NULL);
    if (ver != NULL)
        sscanf(ver, "OpenCL %d.%d", &major, &minor);
    free(ver);
    cl_bool nonuni = CL_FALSE;
    if (major >= 3)
        dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
                  sizeof nonuni, &nonuni, NULL);
    d->max_dims = dims;
    memcpy(d->max_items, items, sizeof items);
    d->max_wg = info_size(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    cl_command_queue_properties qp = 0;
    if (dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL) ==
        CL_SUCCESS)
        d->queue_props = qp;
    cl_uint align = 0;
    if (dist_info(d->rank, SLUICE_RG_DEVICE, d->rid, 0, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align,
                  NULL) == CL_SUCCESS)
        d->base_align = align;
    d->version = major * 10 + minor;
    d->nonuniform = major == 2 || nonuni; /* mandatory in 2.x, optional in 3.0 */
    d->limits_known = 1;
}

void dist_device_limits(struct dist_device *d)
{
    pthread_mutex_lock(&dist_lock);
    device_limits_locked(d);
    pthread_mutex_unlock(&dist_lock);
}

/* ---- creations (sent without waiting: dist_ids.c) ---- */

static const struct sluice_dql_device *descriptor(const struct dist_device *d)
{
    while (d->parent != NULL) /* a sub-device: its root device's */
        d = d->parent;
    return d->dql;
}

cl_int dist_validate_buffer_size(const struct dist_context *c, size_t size)
{
    int known = 0, fits = 0;
    for (int i = 0; i < c->ndev; i++) {
        const struct sluice_dql_device *q = descriptor(c->devs[i]);
        if (q == NULL || q->max_alloc == 0)
            return CL_SUCCESS; /* unknown: the driver decides */
        known = 1;
        fits |= size <= q->max_alloc;
    }
    SLUICE_RETURN_ERROR_ON(known && !fits, CL_INVALID_BUFFER_SIZE,
                           "larger than every device's CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    return CL_SUCCESS;
}

cl_int dist_validate_queue(struct dist_device *d, cl_command_queue_properties props)
{
    const cl_command_queue_properties host =
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
    SLUICE_RETURN_ERROR_ON((props & ~host) != 0, CL_INVALID_VALUE, "unknown queue property bits");
    dist_device_limits(d);
    SLUICE_RETURN_ERROR_ON(d->limits_known && d->queue_props != 0 && (props & ~d->queue_props) != 0,
                           CL_INVALID_QUEUE_PROPERTIES, "a queue property the device does not support");
    return CL_SUCCESS;
}

cl_int dist_validate_sub_origin(const struct dist_context *c, size_t origin)
{
    for (int i = 0; i < c->ndev; i++) {
        struct dist_device *d = c->devs[i];
        dist_device_limits(d);
        size_t bytes = d->base_align / 8;
        SLUICE_RETURN_ERROR_ON(
            d->limits_known && bytes != 0 && origin % bytes != 0, CL_MISALIGNED_SUB_BUFFER_OFFSET,
            "origin %% (CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8) != 0 on a device of the context");
    }
    return CL_SUCCESS;
}

/* Whether the build options of the kernel's program on d allow non-uniform work-groups: an OpenCL
 * C 2.0 or later compilation without -cl-uniform-work-group-size. */
static int nonuniform_options(struct dist_kernel *k, struct dist_device *d, cl_program_build_info how)
{
    char *o = dist_info_text(d->rank, SLUICE_RG_BUILD, k->prog->rid[d->rank], d->rid, how, NULL);
    int ok = o != NULL && (strstr(o, "-cl-std=CL2.") != NULL || strstr(o, "-cl-std=CL3.") != NULL) &&
             strstr(o, "-cl-uniform-work-group-size") == NULL;
    free(o);
    return ok;
}

void dist_kernel_limits(struct dist_kernel *k)
{
    struct dist_context *c = k->prog->ctx;
    k->devs = calloc((size_t)c->ndev, sizeof *k->devs);
    if (k->devs == NULL)
        return; /* no limits known: the drivers decide, later */
    int asked = 0;
    for (int i = 0; i < c->ndev; i++) {
        struct dist_device *d = c->devs[i];
        uint64_t rid = k->rid[d->rank];
        if (rid == 0)
            continue;
        size_t wg = 0, reqd[3] = {0, 0, 0};
        if (dist_info(d->rank, SLUICE_RG_KERNEL_WG, rid, d->rid, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                      NULL) != CL_SUCCESS)
            continue; /* not built for this device: the driver refuses it at enqueue, as locally */
        if (!asked && dist_info(d->rank, SLUICE_RG_KERNEL_WG, rid, d->rid, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                sizeof reqd, reqd, NULL) == CL_SUCCESS) {
            memcpy(k->reqd, reqd, sizeof reqd); /* the source's attribute: the same on every device */
            asked = 1;
        }
        dist_device_limits(d);
        k->devs[i].wg = wg;
        k->devs[i].nonuniform =
            d->limits_known && d->nonuniform && nonuniform_options(k, d, CL_PROGRAM_BUILD_OPTIONS);
    }
}

static const struct dist_kernel_dev *kernel_dev(const struct dist_kernel *k, const struct dist_device *d)
{
    struct dist_context *c = k->prog->ctx;
    for (int i = 0; k->devs != NULL && i < c->ndev; i++)
        if (c->devs[i] == d)
            return &k->devs[i];
    return NULL;
}

cl_int dist_validate_ndrange(struct dist_queue *q, struct dist_kernel *k, cl_uint dims, const size_t *offset,
                             const size_t *global, const size_t *local, int *empty)
{
    struct dist_device *d = q->dev;
    *empty = 0;
    SLUICE_RETURN_ERROR_ON(dims < 1 || (d->limits_known && dims > d->max_dims) || dims > 3,
                           CL_INVALID_WORK_DIMENSION,
                           "dims < 1 || (d->limits_known && dims > d->max_dims) || dims > 3");
    int zero = global == NULL;
    for (cl_uint i = 0; global != NULL && i < dims; i++)
        zero |= global[i] == 0;
    if (zero) {
        /* No work-item: an error before OpenCL 2.1, a command that does nothing since. */
        SLUICE_RETURN_ERROR_ON(d->limits_known && d->version < 21, CL_INVALID_GLOBAL_WORK_SIZE,
                               "d->limits_known && d->version < 21");
        *empty = 1;
        return CL_SUCCESS;
    }
    for (cl_uint i = 0; offset != NULL && i < dims; i++)
        SLUICE_RETURN_ERROR_ON(offset[i] > SIZE_MAX - global[i], CL_INVALID_GLOBAL_OFFSET,
                               "offset[i] > SIZE_MAX - global[i]");
    const struct dist_kernel_dev *kd = kernel_dev(k, d);
    if (local != NULL) {
        size_t total = 1;
        for (cl_uint i = 0; i < dims; i++) {
            /* A zero local size is no size: PoCL divides by it (SIGFPE on a serving rank). */
            SLUICE_RETURN_ERROR_ON(local[i] == 0, CL_INVALID_WORK_GROUP_SIZE, "local[i] == 0");
            total = total > SIZE_MAX / local[i] ? SIZE_MAX : total * local[i];
        }
        SLUICE_RETURN_ERROR_ON(d->limits_known && d->max_wg != 0 && total > d->max_wg,
                               CL_INVALID_WORK_GROUP_SIZE,
                               "d->limits_known && d->max_wg != 0 && total > d->max_wg");
        for (cl_uint i = 0; d->limits_known && i < dims; i++)
            SLUICE_RETURN_ERROR_ON(d->max_items[i] != 0 && local[i] > d->max_items[i],
                                   CL_INVALID_WORK_ITEM_SIZE,
                                   "d->max_items[i] != 0 && local[i] > d->max_items[i]");
        SLUICE_RETURN_ERROR_ON(kd != NULL && kd->wg != 0 && total > kd->wg, CL_INVALID_WORK_GROUP_SIZE,
                               "kd != NULL && kd->wg != 0 && total > kd->wg");
        for (cl_uint i = 0; d->limits_known && i < dims; i++)
            SLUICE_RETURN_ERROR_ON(global[i] % local[i] != 0 && !(kd != NULL && kd->nonuniform),
                                   CL_INVALID_WORK_GROUP_SIZE,
                                   "global[i] %% local[i] != 0 && !(kd != NULL && kd->nonuniform)");
    }
    if (k->reqd[0] != 0) {
        /* reqd_work_group_size: the local size must be given, and be it. */
        SLUICE_RETURN_ERROR_ON(local == NULL, CL_INVALID_WORK_GROUP_SIZE, "no work group size (NULL)");
        for (cl_uint i = 0; i < 3; i++)
            SLUICE_RETURN_ERROR_ON((i < dims ? local[i] : 1) != k->reqd[i], CL_INVALID_WORK_GROUP_SIZE,
                                   "(i < dims ? local[i] : 1) != k->reqd[i]");
    }
    return CL_SUCCESS;
}
