/* SPDX-License-Identifier: MIT */
/* Kernel arguments: which ones are memory objects (or samplers, or device queues) whose handle
 * must become the backend's object before clSetKernelArg reaches it.
 *
 * Robust when the backend knows argument qualifiers (clGetKernelArgInfo, available when the
 * program was built with -cl-kernel-arg-info): a global/constant pointer is a memory object, a
 * private sampler_t or queue_t its handle, anything else bytes. Otherwise the Intel layer's and
 * dOpenCL's rule: an argument of exactly sizeof(cl_mem) whose value is a live sluice handle. The
 * classification is made once per kernel, on its first clSetKernelArg. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/info_text.h"
#include "cl/intercept/wrap.h"

static uint8_t classify_one(const struct sluice_cl_backend *be, cl_kernel k, cl_uint i)
{
    cl_kernel_arg_address_qualifier aq;
    if (be->api.clGetKernelArgInfo == NULL ||
        be->api.clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL) != CL_SUCCESS)
        return SLUICE_CL_ARG_UNKNOWN;
    switch (aq) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
        return SLUICE_CL_ARG_MEM;
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
        return SLUICE_CL_ARG_LOCAL;
    default:
        break;
    }
    char *type = sluice_cl_arg_text(be->api.clGetKernelArgInfo, k, i, CL_KERNEL_ARG_TYPE_NAME);
    if (type == NULL)
        return SLUICE_CL_ARG_UNKNOWN;
    uint8_t cls = strcmp(type, "sampler_t") == 0 ? SLUICE_CL_ARG_SAMPLER
                  : strcmp(type, "queue_t") == 0 ? SLUICE_CL_ARG_QUEUE
                                                 : SLUICE_CL_ARG_BYTES; /* a struct of any name too */
    free(type);
    return cls;
}

static uint8_t *arg_classes(struct sluice_cl_obj *k)
{
    uint8_t *cls = __atomic_load_n(&k->u.kernel.arg_class, __ATOMIC_ACQUIRE);
    if (cls != NULL)
        return cls;
    const struct sluice_cl_backend *be = k->backend;
    cl_uint n = 0;
    if (be->api.clGetKernelInfo == NULL ||
        be->api.clGetKernelInfo(k->real, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL) != CL_SUCCESS)
        n = 0;
    cls = calloc(n + 1, 1); /* +1: never a zero-size allocation */
    if (cls == NULL)
        return NULL;
    for (cl_uint i = 0; i < n; i++)
        cls[i] = classify_one(be, k->real, i);
    uint8_t *expected = NULL;
    __atomic_store_n(&k->u.kernel.nargs, n, __ATOMIC_RELAXED); /* same value whoever wins */
    if (!__atomic_compare_exchange_n(&k->u.kernel.arg_class, &expected, cls, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(cls); /* another thread classified it first */
        return expected;
    }
    return cls;
}

#define KIND_BIT(k) (1u << (k))

const void *sluice_cl_kernel_arg_value(struct sluice_cl_obj *kernel, cl_uint index, size_t size,
                                       const void *value, void **tmp)
{
    if (kernel == NULL || value == NULL || size != sizeof(void *))
        return value;
    void *h;
    memcpy(&h, value, sizeof h); /* the program's buffer may be unaligned */
    if (h == NULL)
        return value;
    uint8_t *cls = arg_classes(kernel);
    uint8_t c = (cls != NULL && index < kernel->u.kernel.nargs) ? cls[index] : SLUICE_CL_ARG_UNKNOWN;
    int kind;
    switch (c) {
    case SLUICE_CL_ARG_MEM:
        kind = SLUICE_CL_MEM;
        break;
    case SLUICE_CL_ARG_SAMPLER:
        kind = SLUICE_CL_SAMPLER;
        break;
    case SLUICE_CL_ARG_QUEUE:
        kind = SLUICE_CL_QUEUE;
        break;
    case SLUICE_CL_ARG_BYTES:
    case SLUICE_CL_ARG_LOCAL:
        return value;
    default: {
        /* Unknown: only a value that is the address of a live handle is one (never dereference
         * an arbitrary 8-byte scalar). */
        if (!sluice_cl_is_live(h, KIND_BIT(SLUICE_CL_MEM) | KIND_BIT(SLUICE_CL_SAMPLER) |
                                      KIND_BIT(SLUICE_CL_QUEUE)))
            return value;
        kind = ((struct sluice_cl_obj *)h)->kind;
    }
    }
    struct sluice_cl_obj *o = sluice_cl_valid(h, kind);
    if (o == NULL)
        return value; /* not a handle: the backend reports CL_INVALID_MEM_OBJECT itself */
    *tmp = o->real;
    return tmp;
}
