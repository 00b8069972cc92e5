/* SPDX-License-Identifier: MIT */
/* Samplers of the distributed backend: created on every rank of their context, each rank's
 * sampler becomes its argument in that rank's kernel launches. */
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_image_internal.h"
#include "cl/serve/remote_objects.h"

DIST_LIVE_LIST(sampler, struct dist_sampler)

static void sampler_unref(struct dist_sampler *s)
{
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    sampler_live_remove(s);
    dist_release_everywhere(s->rid, SLUICE_CL_SAMPLER);
    dist_ctx_unref(s->ctx);
    free(s);
}

DIST_RETAIN_RELEASE(sampler, cl_sampler, struct dist_sampler, sampler_unref, CL_INVALID_SAMPLER)

/* in: clCreateSampler's arguments (with_args 1), or none and the property list in props. */
static cl_sampler make_sampler(cl_context context, struct sluice_robj_sampler_create in, const void *props,
                               size_t len, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    struct dist_sampler *s = calloc(1, sizeof *s);
    if (s == NULL) {
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    s->refs = 1;
    s->ctx = c;
    dist_ctx_retain(c);
    sampler_live_add(s);
    cl_int err = CL_SUCCESS;
    in.op = SLUICE_ROBJ_SAMPLER_CREATE;
    /* The first rank's driver checks the arguments, unless it took the same ones in this context
     * before (dist_image_accept.c); the others go without waiting. */
    bool first = !dist_sampler_accepted(c, &in, props, len);
    for_ranks(c, r)
    {
        in.ctx = c->rid[r];
        in.id = 0;
        err = first ? dist_call_v(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), props, len, &s->rid[r])
                    : dist_create(r, SLUICE_REMOTE_OBJ, DIST_WORDS_ID(in), props, len, &s->rid[r]);
        if (err != CL_SUCCESS)
            break;
        if (first && r > 0)
            dist_sampler_learn(c, &in, props, len);
        first = false;
    }
    dist_set_err(errcode_ret, err);
    if (err != CL_SUCCESS) {
        sampler_unref(s);
        return NULL;
    }
    return (cl_sampler)s;
}

static cl_sampler CL_API_CALL create_sampler(cl_context context, cl_bool norm, cl_addressing_mode addr,
                                             cl_filter_mode filter, cl_int *errcode_ret)
{
    struct sluice_robj_sampler_create in = {
        .with_args = 1, .normalized = norm, .addressing = addr, .filter = filter};
    return make_sampler(context, in, NULL, 0, errcode_ret);
}

static cl_sampler CL_API_CALL create_sampler_props(cl_context context, const cl_sampler_properties *props,
                                                   cl_int *errcode_ret)
{
    size_t n = 0;
    while (props != NULL && props[n] != 0 && n < 15)
        n += 2;
    if (props != NULL && props[n] != 0) {
        dist_set_err(errcode_ret, context == NULL ? CL_INVALID_CONTEXT : CL_INVALID_VALUE);
        return NULL;
    }
    struct sluice_robj_sampler_create in = {0};
    return make_sampler(context, in, props, props != NULL ? (n + 1) * sizeof *props : 0, errcode_ret);
}

static cl_int CL_API_CALL sampler_info(cl_sampler sampler, cl_sampler_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_sampler *s = (struct dist_sampler *)sampler;
    SLUICE_RETURN_ERROR_ON(s == NULL, CL_INVALID_SAMPLER, "no sampler (NULL)");
    if (param == CL_SAMPLER_CONTEXT)
        return dist_answer(&s->ctx, sizeof s->ctx, size, value, size_ret);
    if (param == CL_SAMPLER_REFERENCE_COUNT) {
        cl_uint n = (cl_uint)__atomic_load_n(&s->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    for_ranks(s->ctx, r) return dist_image_remote_info(r, SLUICE_ROBJ_SAMPLER_INFO, s->rid[r], param, size,
                                                       value, size_ret);
    return CL_INVALID_SAMPLER;
}

void dist_sampler_install(struct sluice_cl_api *api)
{
    api->clCreateSampler = create_sampler;
    api->clCreateSamplerWithProperties = create_sampler_props;
    api->clRetainSampler = retain_sampler;
    api->clReleaseSampler = release_sampler;
    api->clGetSamplerInfo = sampler_info;
}
