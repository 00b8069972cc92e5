/* SPDX-License-Identifier: MIT */
/* Handle translation for arguments that carry objects inside arrays and structures, and for
 * query results that return objects (every clGet*Info that names a platform, device, context,
 * queue, memory object or program answers with the program's handles). */
#include <string.h>

#include "cl/intercept/wrap.h"

void *const *sluice_cl_in_array(void *const *handles, cl_uint n, int kind, void **stack, void **heap)
{
    if (handles == NULL || n == 0)
        return handles;
    void **out = stack;
    if (n > SLUICE_CL_STACK_ARRAY) {
        out = malloc(n * sizeof *out);
        if (out == NULL)
            return handles; /* the backend then rejects the handles it cannot know */
        *heap = out;
    }
    for (cl_uint i = 0; i < n; i++)
        out[i] = sluice_cl_in(handles[i], kind);
    return out;
}

const cl_context_properties *sluice_cl_in_ctx_props(const cl_context_properties *props,
                                                    cl_context_properties *stack,
                                                    cl_context_properties **heap)
{
    if (props == NULL)
        return NULL;
    size_t n = 0;
    bool names_platform = false;
    while (props[n] != 0) {
        if (props[n] == CL_CONTEXT_PLATFORM)
            names_platform = true;
        n += 2;
    }
    if (!names_platform)
        return props;
    cl_context_properties *out = stack;
    if (n + 1 > SLUICE_CL_STACK_PROPS) {
        out = malloc((n + 1) * sizeof *out);
        if (out == NULL)
            return props;
        *heap = out;
    }
    for (size_t i = 0; i < n; i += 2) {
        out[i] = props[i];
        out[i + 1] = props[i] == CL_CONTEXT_PLATFORM
                         ? (cl_context_properties)sluice_cl_in((void *)props[i + 1], SLUICE_CL_PLATFORM)
                         : props[i + 1];
    }
    out[n] = 0;
    return out;
}

const cl_image_desc *sluice_cl_in_image_desc(const cl_image_desc *desc, cl_image_desc *copy)
{
    if (desc == NULL || desc->buffer == NULL)
        return desc;
    *copy = *desc;
    copy->buffer = (cl_mem)sluice_cl_in(desc->buffer, SLUICE_CL_MEM);
    return copy;
}

/* Which query results hold objects (info_objects.def). */
struct info_object {
    sluice_cl_fn_id fn;
    cl_uint param;
    int kind; /* kind of the returned objects, or SLUICE_CL_CTX_PROPS */
};

static const struct info_object info_objects[] = {
#define SLUICE_CL_INFO_OBJECT(fn, param, kind) {SLUICE_CL_FN_##fn, param, kind},
#include "cl/intercept/info_objects.def"
#undef SLUICE_CL_INFO_OBJECT
};

void sluice_cl_info_to_handles(sluice_cl_fn_id fn, struct sluice_cl_obj *obj, cl_uint param_name, void *value,
                               size_t size)
{
    const struct sluice_cl_backend *be = sluice_cl_backend_of(obj);
    for (size_t i = 0; i < sizeof info_objects / sizeof info_objects[0]; i++) {
        const struct info_object *io = &info_objects[i];
        if (io->fn != fn || io->param != param_name)
            continue;
        if (io->kind == SLUICE_CL_CTX_PROPS) {
            cl_context_properties *p = value;
            size_t n = size / sizeof *p;
            for (size_t j = 0; j + 1 < n && p[j] != 0; j += 2)
                if (p[j] == CL_CONTEXT_PLATFORM)
                    p[j + 1] =
                        (cl_context_properties)sluice_cl_lookup(SLUICE_CL_PLATFORM, (void *)p[j + 1], be);
            return;
        }
        void **objs = value;
        for (size_t j = 0; j < size / sizeof(void *); j++)
            if (objs[j] != NULL)
                objs[j] = sluice_cl_lookup(io->kind, objs[j], be);
        return;
    }
}

static cl_int answer(const void *src, size_t n, size_t size, void *value, size_t *size_ret)
{
    if (size_ret != NULL)
        *size_ret = n;
    if (value != NULL) {
        if (size < n)
            return CL_INVALID_VALUE;
        memcpy(value, src, n);
    }
    return CL_SUCCESS;
}

bool sluice_cl_info_override(sluice_cl_fn_id fn, struct sluice_cl_obj *obj, cl_uint param_name, size_t size,
                             void *value, size_t *size_ret, cl_int *ret)
{
    if (obj == NULL)
        return false;
    if (fn == SLUICE_CL_FN_clGetCommandQueueInfo && obj->kind == SLUICE_CL_QUEUE &&
        obj->u.queue.forced_profiling) {
        if (param_name == CL_QUEUE_PROPERTIES) {
            *ret = answer(&obj->u.queue.app_props, sizeof obj->u.queue.app_props, size, value, size_ret);
            return true;
        }
        if (param_name == CL_QUEUE_PROPERTIES_ARRAY) {
            *ret = answer(obj->u.queue.app_props_array, obj->u.queue.app_props_array_bytes, size, value,
                          size_ret);
            return true;
        }
    }
    if (fn == SLUICE_CL_FN_clGetEventProfilingInfo && obj->kind == SLUICE_CL_EVENT) {
        /* Profiling sluice enabled for itself stays invisible to the program. */
        struct sluice_cl_obj *q = obj->parent;
        if (q != NULL && q->kind == SLUICE_CL_QUEUE && q->u.queue.forced_profiling) {
            *ret = CL_PROFILING_INFO_NOT_AVAILABLE;
            return true;
        }
    }
    return false;
}
