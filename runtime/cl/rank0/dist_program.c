/* SPDX-License-Identifier: MIT */
/* Programs and kernels of the distributed backend. A program has one real program on every rank
 * its devices live on (those of the context, or those named by binaries or built-in kernels),
 * built there with that rank's devices; a kernel has one real kernel on every rank of its
 * program. Kernel arguments are kept here and sent with each launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/object.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_objects.h"

/* ---- programs ----------------------------------------------------------------------------- */

static void prog_unref(struct dist_program *p)
{
    if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    dist_release_everywhere(p->rid, SLUICE_CL_PROGRAM);
    dist_ctx_unref(p->ctx);
    free(p->devs);
    free(p);
}

static int prog_ndev(const struct dist_program *p)
{
    return p->devs ? p->ndev : p->ctx->ndev;
}

static struct dist_device *prog_dev(const struct dist_program *p, int i)
{
    return p->devs ? p->devs[i] : p->ctx->devs[i];
}

/* The position of the program's i-th device among the program's devices on the same rank: the
 * order the rank's real program lists them in. */
static int rank_index(const struct dist_program *p, int i)
{
    int j = 0;
    for (int k = 0; k < i; k++)
        j += prog_dev(p, k)->rank == prog_dev(p, i)->rank;
    return j;
}

/* CL_PROGRAM_BINARY_SIZES and CL_PROGRAM_BINARIES: per device, from the device's rank. */
static cl_int program_binaries(struct dist_program *p, cl_program_info param, size_t size, void *value,
                               size_t *size_ret)
{
    int n = prog_ndev(p);
    size_t need = (size_t)n * (param == CL_PROGRAM_BINARIES ? sizeof(unsigned char *) : sizeof(size_t));
    if (size_ret != NULL)
        *size_ret = need;
    if (value == NULL)
        return CL_SUCCESS;
    SLUICE_RETURN_ERROR_ON(size < need, CL_INVALID_VALUE, "size < need");
    for (int i = 0; i < n; i++) {
        struct dist_device *d = prog_dev(p, i);
        if (param == CL_PROGRAM_BINARY_SIZES) {
            size_t sizes[DIST_MAX_DEVICES];
            int j = rank_index(p, i);
            cl_int r = dist_info(d->rank, SLUICE_RG_PROGRAM, p->rid[d->rank], 0, CL_PROGRAM_BINARY_SIZES,
                                 sizeof sizes, sizes, NULL);
            if (r != CL_SUCCESS)
                return r;
            ((size_t *)value)[i] = sizes[j];
        } else {
            unsigned char *dst = ((unsigned char **)value)[i];
            if (dst == NULL)
                continue;
            struct sluice_req_prog_binary in = {p->rid[d->rank], (uint64_t)rank_index(p, i)};
            struct sluice_remote_msg m;
            cl_int r = dist_call(d->rank, SLUICE_REMOTE_PROG_BINARY, DIST_WORDS(in), NULL, 0, &m);
            if (r == CL_SUCCESS && m.bytes != NULL)
                memcpy(dst, m.bytes, (size_t)m.rep.nbytes);
            free(m.bytes);
            if (r != CL_SUCCESS)
                return r;
        }
    }
    return CL_SUCCESS;
}

static bool in_context(const struct dist_context *c, const struct dist_device *d)
{
    for (int i = 0; i < c->ndev; i++)
        if (c->devs[i] == d)
            return true;
    return false;
}

/* A new record over the context (devices named: only those, as for binaries). */
static struct dist_program *new_program(struct dist_context *c, cl_uint ndev, const cl_device_id *devices)
{
    struct dist_program *p = calloc(1, sizeof *p);
    if (p == NULL || (ndev > 0 && (p->devs = calloc(ndev, sizeof *p->devs)) == NULL)) {
        free(p);
        return NULL;
    }
    p->refs = 1;
    p->ctx = c;
    p->ndev = (int)ndev;
    for (cl_uint i = 0; i < ndev; i++)
        p->devs[i] = (struct dist_device *)devices[i];
    dist_ctx_retain(c);
    return p;
}

/* What a creation returns: p, or NULL after its last reference went when err (the first error)
 * is set; *errcode_ret is err. */
static cl_program prog_result(struct dist_program *p, cl_int err, cl_int *errcode_ret)
{
    if (err != CL_SUCCESS && p != NULL) {
        prog_unref(p);
        p = NULL;
    }
    dist_set_err(errcode_ret, err);
    return (cl_program)p;
}

static cl_program CL_API_CALL create_program_binary(cl_context context, cl_uint ndev,
                                                    const cl_device_id *devices, const size_t *lengths,
                                                    const unsigned char **binaries, cl_int *binary_status,
                                                    cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    if (ndev == 0 || devices == NULL || lengths == NULL || binaries == NULL || ndev > DIST_MAX_DEVICES) {
        dist_set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    for (cl_uint i = 0; i < ndev; i++) {
        if (!in_context(c, (struct dist_device *)devices[i])) {
            dist_set_err(errcode_ret, CL_INVALID_DEVICE);
            return NULL;
        }
        if (lengths[i] == 0 || binaries[i] == NULL) {
            if (binary_status != NULL)
                binary_status[i] = CL_INVALID_VALUE;
            dist_set_err(errcode_ret, CL_INVALID_VALUE);
            return NULL;
        }
    }
    struct dist_program *p = new_program(c, ndev, devices);
    if (p == NULL) {
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    for (int r = 0; r < dist_size() && err == CL_SUCCESS; r++) {
        size_t n = 0, bytes = 0;
        for (cl_uint i = 0; i < ndev; i++)
            if (p->devs[i]->rank == r) {
                n++;
                bytes += lengths[i];
            }
        if (n == 0)
            continue;
        unsigned char *buf = malloc(n * 2 * sizeof(uint64_t) + bytes);
        if (buf == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        size_t k = 0, off = n * 2 * sizeof(uint64_t);
        for (cl_uint i = 0; i < ndev; i++)
            if (p->devs[i]->rank == r) {
                uint64_t rec[2] = {p->devs[i]->rid, lengths[i]};
                memcpy(buf + k++ * sizeof rec, rec, sizeof rec);
                memcpy(buf + off, binaries[i], lengths[i]);
                off += lengths[i];
            }
        struct sluice_req_prog_from_binary in = {c->rid[r], n};
        struct sluice_remote_msg m;
        err = dist_call(r, SLUICE_REMOTE_PROG_FROM_BINARY, DIST_WORDS(in), buf, off, &m);
        free(buf);
        p->rid[r] = m.rep.v[0];
        k = 0;
        for (cl_uint i = 0; i < ndev && binary_status != NULL; i++)
            if (p->devs[i]->rank == r && (k + 1) * sizeof(cl_int) <= m.rep.nbytes) {
                memcpy(&binary_status[i], m.bytes + k * sizeof(cl_int), sizeof(cl_int));
                k++;
            }
        free(m.bytes);
    }
    return prog_result(p, err, errcode_ret);
}

static cl_program CL_API_CALL create_program_source(cl_context context, cl_uint count, const char **strings,
                                                    const size_t *lengths, cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_CONTEXT);
        return NULL;
    }
    if (count == 0 || strings == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_VALUE);
        return NULL;
    }
    size_t total = 0;
    for (cl_uint i = 0; i < count; i++) {
        if (strings[i] == NULL) {
            dist_set_err(errcode_ret, CL_INVALID_VALUE);
            return NULL;
        }
        total += (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
    }
    char *src = malloc(total + 1);
    struct dist_program *p = src != NULL ? new_program(c, 0, NULL) : NULL;
    if (p == NULL) {
        free(src);
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    size_t off = 0;
    for (cl_uint i = 0; i < count; i++) {
        size_t n = (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
        memcpy(src + off, strings[i], n);
        off += n;
    }
    cl_int err = CL_SUCCESS;
    for (int r = 0; r < dist_size() && err == CL_SUCCESS; r++)
        if (c->rid[r] != 0) {
            struct sluice_req_in_ctx in = {c->rid[r]};
            err = dist_call_v(r, SLUICE_REMOTE_PROG_CREATE, DIST_WORDS(in), src, total, &p->rid[r]);
        }
    free(src);
    return prog_result(p, err, errcode_ret);
}

/* Builds on every rank involved, each with its own devices of the list (or of the context). */
static cl_int CL_API_CALL build_program(cl_program program, cl_uint ndev, const cl_device_id *devices,
                                        const char *options, void(CL_CALLBACK *notify)(cl_program, void *),
                                        void *user_data)
{
    struct dist_program *p = (struct dist_program *)program;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    SLUICE_RETURN_ERROR_ON((ndev == 0) != (devices == NULL), CL_INVALID_VALUE,
                           "(ndev == 0) != (devices == NULL)");
    size_t olen = options ? strlen(options) : 0;
    cl_int first_err = CL_SUCCESS;
    p->built = true;
    for (int r = 0; r < dist_size(); r++) {
        if (p->rid[r] == 0)
            continue;
        size_t cap = (DIST_MAX_DEVICES * sizeof(uint64_t)) + olen;
        unsigned char *buf = malloc(cap);
        if (buf == NULL)
            return CL_OUT_OF_HOST_MEMORY;
        uint64_t n = 0;
        for (int i = 0; i < (devices ? (int)ndev : prog_ndev(p)); i++) {
            struct dist_device *d = devices ? (struct dist_device *)devices[i] : prog_dev(p, i);
            if (d == NULL) {
                free(buf);
                return CL_INVALID_DEVICE;
            }
            if (d->rank == r && n < DIST_MAX_DEVICES) {
                memcpy(buf + n * sizeof(uint64_t), &d->rid, sizeof(uint64_t));
                n++;
            }
        }
        if (n > 0) {
            memcpy(buf + n * sizeof(uint64_t), options ? options : "", olen);
            struct sluice_req_prog_build in = {p->rid[r], n};
            cl_int e = dist_call(r, SLUICE_REMOTE_PROG_BUILD, DIST_WORDS(in), buf,
                                 n * sizeof(uint64_t) + olen, NULL);
            if (e != CL_SUCCESS && first_err == CL_SUCCESS)
                first_err = e;
        }
        free(buf);
    }
    if (notify != NULL)
        notify(program, user_data); /* the build is complete when clBuildProgram returns */
    return first_err;
}

/* ---- programs from IL and built-in kernels, separate compilation and linking --------------- */

/* The device rids on rank r of a device list (or, without one, of `p`'s devices or the
 * context's): what that rank's real call names. Returns how many, or -1 for a foreign device. */
static int rank_devices(int r, struct dist_context *c, const struct dist_program *p, cl_uint ndev,
                        const cl_device_id *devices, uint64_t *out)
{
    int n = 0;
    int total = devices ? (int)ndev : p ? prog_ndev(p) : c->ndev;
    for (int i = 0; i < total; i++) {
        struct dist_device *d = devices ? (struct dist_device *)devices[i] : p ? prog_dev(p, i) : c->devs[i];
        if (d == NULL)
            return -1;
        if (d->rank == r && n < DIST_MAX_DEVICES)
            out[n++] = d->rid;
    }
    return n;
}

/* One OBJ request per rank that has devices in the list; the program record keeps each rank's
 * real program. `body` is the payload after the device rids. The first error is returned; a
 * record is returned if any rank made a program (a failed link still gives one). */
static struct dist_program *per_rank(struct dist_program *p, int op, const void *body, size_t blen,
                                     const uint64_t *const *rank_ids, const size_t *rank_nids, cl_uint ndev,
                                     const cl_device_id *devices, cl_int *err)
{
    *err = CL_SUCCESS;
    bool any = false;
    for (int r = 0; r < dist_size(); r++) {
        uint64_t devs[DIST_MAX_DEVICES];
        int n = rank_devices(r, p->ctx, NULL, ndev, devices, devs);
        if (n <= 0 || p->ctx->rid[r] == 0)
            continue;
        size_t nids = rank_ids ? rank_nids[r] : 0;
        size_t head = ((size_t)n + nids) * sizeof(uint64_t);
        unsigned char *buf = malloc(head + blen + 1);
        if (buf == NULL) {
            *err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        memcpy(buf, devs, (size_t)n * sizeof(uint64_t));
        if (nids > 0)
            memcpy(buf + (size_t)n * sizeof(uint64_t), rank_ids[r], nids * sizeof(uint64_t));
        memcpy(buf + head, body, blen);
        uint64_t rid = 0;
        cl_int e;
        if (op == SLUICE_ROBJ_PROG_LINK) { /* the options are the body */
            struct sluice_robj_link in = {SLUICE_ROBJ_PROG_LINK, p->ctx->rid[r], (uint64_t)n, nids, blen};
            e = dist_call_v(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), buf, head + blen, &rid);
        } else {
            struct sluice_robj_builtin in = {SLUICE_ROBJ_PROG_BUILTIN, p->ctx->rid[r], (uint64_t)n};
            e = dist_call_v(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), buf, head + blen, &rid);
        }
        free(buf);
        p->rid[r] = rid;
        any |= rid != 0;
        if (e != CL_SUCCESS && *err == CL_SUCCESS)
            *err = e;
    }
    if (!any) {
        prog_unref(p);
        return NULL;
    }
    return p;
}

static cl_program CL_API_CALL create_program_il(cl_context context, const void *il, size_t length,
                                                cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    if (c == NULL || il == NULL || length == 0) {
        dist_set_err(errcode_ret, c == NULL ? CL_INVALID_CONTEXT : CL_INVALID_VALUE);
        return NULL;
    }
    struct dist_program *p = new_program(c, 0, NULL);
    if (p == NULL) {
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    for (int r = 0; r < dist_size() && err == CL_SUCCESS; r++)
        if (c->rid[r] != 0) {
            struct sluice_robj_prog_il in = {SLUICE_ROBJ_PROG_IL, c->rid[r]};
            err = dist_call_v(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), il, length, &p->rid[r]);
        }
    return prog_result(p, err, errcode_ret);
}

static cl_program CL_API_CALL create_program_builtin(cl_context context, cl_uint ndev,
                                                     const cl_device_id *devices, const char *names,
                                                     cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    cl_int err = c == NULL ? CL_INVALID_CONTEXT
                 : (ndev == 0 || devices == NULL || names == NULL || ndev > DIST_MAX_DEVICES)
                     ? CL_INVALID_VALUE
                     : CL_SUCCESS;
    for (cl_uint i = 0; err == CL_SUCCESS && i < ndev; i++)
        if (!in_context(c, (struct dist_device *)devices[i]))
            err = CL_INVALID_DEVICE;
    struct dist_program *p = err == CL_SUCCESS ? new_program(c, ndev, devices) : NULL;
    if (err == CL_SUCCESS && p == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (p != NULL)
        p = per_rank(p, SLUICE_ROBJ_PROG_BUILTIN, names, strlen(names), NULL, NULL, ndev, devices, &err);
    return prog_result(p, err, errcode_ret);
}

/* Compiles on every rank of the program, with that rank's devices of the list and the headers'
 * real programs there. */
static cl_int CL_API_CALL compile_program(cl_program program, cl_uint ndev, const cl_device_id *devices,
                                          const char *options, cl_uint nheaders, const cl_program *headers,
                                          const char **names, void(CL_CALLBACK *notify)(cl_program, void *),
                                          void *user_data)
{
    struct dist_program *p = (struct dist_program *)program;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    SLUICE_RETURN_ERROR_ON(
        (ndev == 0) != (devices == NULL) || (nheaders == 0) != (headers == NULL) ||
            (nheaders > 0 && names == NULL) || (notify == NULL && user_data != NULL) || nheaders > 64,
        CL_INVALID_VALUE,
        "(ndev == 0) != (devices == NULL) || (nheaders == 0) != (headers == NULL) || (nheaders > 0 && names "
        "== NULL) || (notify == NULL && user_data != NULL) || nheaders > 64");
    size_t olen = options ? strlen(options) : 0, nlen = 0;
    for (cl_uint i = 0; i < nheaders; i++) {
        if (headers[i] == NULL || names[i] == NULL)
            return headers[i] == NULL ? CL_INVALID_PROGRAM : CL_INVALID_VALUE;
        nlen += strlen(names[i]) + 1;
    }
    unsigned char *body = malloc(olen + nlen + 1);
    if (body == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    memcpy(body, options ? options : "", olen);
    size_t off = olen;
    for (cl_uint i = 0; i < nheaders; i++) {
        size_t n = strlen(names[i]) + 1;
        memcpy(body + off, names[i], n);
        off += n;
    }
    cl_int first_err = CL_SUCCESS;
    p->built = true;
    for (int r = 0; r < dist_size(); r++) {
        if (p->rid[r] == 0)
            continue;
        /* Without a device list a rank compiles for all its devices of the program. */
        uint64_t devs[DIST_MAX_DEVICES];
        int n = devices ? rank_devices(r, p->ctx, p, ndev, devices, devs) : 0;
        if (n < 0) {
            first_err = CL_INVALID_DEVICE;
            break;
        }
        if (devices != NULL && n == 0)
            continue;
        unsigned char *buf = malloc(((size_t)n + nheaders) * sizeof(uint64_t) + off + 1);
        if (buf == NULL) {
            first_err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        size_t k = (size_t)n * sizeof(uint64_t);
        memcpy(buf, devs, k);
        for (cl_uint i = 0; i < nheaders; i++, k += sizeof(uint64_t))
            memcpy(buf + k, &((struct dist_program *)headers[i])->rid[r], sizeof(uint64_t));
        memcpy(buf + k, body, off);
        struct sluice_robj_compile in = {SLUICE_ROBJ_PROG_COMPILE, p->rid[r], (uint64_t)n, nheaders, olen};
        cl_int e = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), buf, k + off, NULL);
        free(buf);
        if (e != CL_SUCCESS && first_err == CL_SUCCESS)
            first_err = e;
    }
    free(body);
    if (notify != NULL)
        notify(program, user_data); /* the compilation is complete when clCompileProgram returns */
    return first_err;
}

/* Links on every rank that has devices in the list (or in the context), each rank its real
 * input programs. */
static cl_program CL_API_CALL link_program(cl_context context, cl_uint ndev, const cl_device_id *devices,
                                           const char *options, cl_uint ninputs, const cl_program *inputs,
                                           void(CL_CALLBACK *notify)(cl_program, void *), void *user_data,
                                           cl_int *errcode_ret)
{
    struct dist_context *c = (struct dist_context *)context;
    cl_int err = CL_SUCCESS;
    if (c == NULL)
        err = CL_INVALID_CONTEXT;
    else if ((ndev == 0) != (devices == NULL) || ninputs == 0 || inputs == NULL || ninputs > 64 ||
             ndev > DIST_MAX_DEVICES || (notify == NULL && user_data != NULL))
        err = CL_INVALID_VALUE;
    for (cl_uint i = 0; err == CL_SUCCESS && i < ndev; i++)
        if (!in_context(c, (struct dist_device *)devices[i]))
            err = CL_INVALID_DEVICE;
    for (cl_uint i = 0; err == CL_SUCCESS && i < ninputs; i++)
        if (inputs[i] == NULL || ((struct dist_program *)inputs[i])->ctx != c)
            err = CL_INVALID_PROGRAM;
    struct dist_program *p = err == CL_SUCCESS ? new_program(c, ndev, devices) : NULL;
    if (err == CL_SUCCESS && p == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err != CL_SUCCESS) {
        dist_set_err(errcode_ret, err);
        return NULL;
    }
    uint64_t *ids[DIST_MAX_RANKS];
    size_t nids[DIST_MAX_RANKS];
    uint64_t *all = calloc((size_t)dist_size() * ninputs, sizeof *all);
    if (all == NULL) {
        prog_unref(p);
        dist_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    for (int r = 0; r < dist_size(); r++) {
        ids[r] = all + (size_t)r * ninputs;
        nids[r] = ninputs;
        for (cl_uint i = 0; i < ninputs; i++)
            ids[r][i] = ((struct dist_program *)inputs[i])->rid[r];
    }
    size_t olen = options ? strlen(options) : 0;
    p = per_rank(p, SLUICE_ROBJ_PROG_LINK, options ? options : "", olen, (const uint64_t *const *)ids, nids,
                 ndev, devices, &err);
    free(all);
    if (p != NULL && notify != NULL)
        notify((cl_program)p, user_data);
    dist_set_err(errcode_ret, err);
    return (cl_program)p;
}

/* On every rank of the program (each checks that its program came from IL, as locally). */
static cl_int CL_API_CALL spec_constant(cl_program program, cl_uint id, size_t size, const void *value)
{
    struct dist_program *p = (struct dist_program *)program;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    SLUICE_RETURN_ERROR_ON(value == NULL || size == 0, CL_INVALID_VALUE, "value == NULL || size == 0");
    cl_int first = CL_SUCCESS;
    for (int r = 0; r < dist_size(); r++)
        if (p->rid[r] != 0) {
            struct sluice_robj_spec_constant in = {SLUICE_ROBJ_SPEC_CONSTANT, p->rid[r], id};
            cl_int e = dist_call(r, SLUICE_REMOTE_OBJ, DIST_WORDS(in), value, size, NULL);
            if (first == CL_SUCCESS)
                first = e;
        }
    return first;
}

DIST_RETAIN_RELEASE(program, cl_program, struct dist_program, prog_unref, CL_INVALID_PROGRAM)

static cl_int CL_API_CALL program_info(cl_program program, cl_program_info param, size_t size, void *value,
                                       size_t *size_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    switch (param) {
    case CL_PROGRAM_CONTEXT:
        return dist_answer(&p->ctx, sizeof p->ctx, size, value, size_ret);
    case CL_PROGRAM_DEVICES:
        return dist_answer(p->devs ? p->devs : p->ctx->devs, prog_ndev(p) * sizeof(void *), size, value,
                           size_ret);
    case CL_PROGRAM_NUM_DEVICES: {
        cl_uint n = (cl_uint)prog_ndev(p);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_PROGRAM_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&p->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    case CL_PROGRAM_BINARY_SIZES:
    case CL_PROGRAM_BINARIES:
        return program_binaries(p, param, size, value, size_ret);
    default:
        for (int r = 0; r < dist_size(); r++)
            if (p->rid[r] != 0)
                return dist_info(r, SLUICE_RG_PROGRAM, p->rid[r], 0, param, size, value, size_ret);
        return CL_INVALID_PROGRAM;
    }
}

/* CL_PROGRAM_BUILD_OPTIONS as the program passed them: without the -cl-kernel-arg-info the
 * servers append at build and compile (remote_server.c, remote_objects.c). */
static cl_int build_options(struct dist_program *p, struct dist_device *d, size_t size, void *value,
                            size_t *size_ret)
{
    static const char appended[] = " -cl-kernel-arg-info";
    cl_int r = CL_SUCCESS;
    char *opts =
        dist_info_text(d->rank, SLUICE_RG_BUILD, p->rid[d->rank], d->rid, CL_PROGRAM_BUILD_OPTIONS, &r);
    if (r == CL_SUCCESS) {
        size_t len = strlen(opts), k = sizeof appended - 1;
        if (strcmp(opts, appended + 1) == 0) /* the program passed none (PoCL trims the space) */
            opts[0] = '\0';
        else if (len >= k && strcmp(opts + len - k, appended) == 0)
            opts[len - k] = '\0';
        r = dist_answer(opts, strlen(opts) + 1, size, value, size_ret);
    }
    free(opts);
    return r;
}

static cl_int CL_API_CALL build_info(cl_program program, cl_device_id device, cl_program_build_info param,
                                     size_t size, void *value, size_t *size_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    struct dist_device *d = (struct dist_device *)device;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    SLUICE_RETURN_ERROR_ON(d == NULL || p->rid[d->rank] == 0, CL_INVALID_DEVICE,
                           "d == NULL || p->rid[d->rank] == 0");
    if (param == CL_PROGRAM_BUILD_OPTIONS)
        return build_options(p, d, size, value, size_ret);
    cl_int r = dist_info(d->rank, SLUICE_RG_BUILD, p->rid[d->rank], d->rid, param, size, value, size_ret);
    /* The log of a device not built while others of the program were (on other ranks, whose real
     * programs the build touched): empty, as PoCL answers for a device of a built program. The
     * real program of this rank was never built, which its driver calls CL_INVALID_PROGRAM. */
    if (r == CL_INVALID_PROGRAM && param == CL_PROGRAM_BUILD_LOG && p->built)
        r = dist_answer("", 1, size, value, size_ret);
    return r;
}

/* ---- kernels ------------------------------------------------------------------------------ */

static void kernel_unref(struct dist_kernel *k)
{
    if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    dist_release_everywhere(k->rid, SLUICE_CL_KERNEL);
    for (cl_uint i = 0; i < k->nargs; i++)
        free(k->args[i].bytes);
    free(k->args);
    free(k->devs);
    prog_unref(k->prog);
    free(k->name);
    free(k);
}

static struct dist_kernel *make_kernel(struct dist_program *p, const char *name, cl_int *err)
{
    struct dist_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    k->refs = 1;
    k->prog = p;
    retain_program((cl_program)p);
    if ((k->name = strdup(name)) == NULL) { /* the program's name, whatever its length (a clone's) */
        *err = CL_OUT_OF_HOST_MEMORY;
        kernel_unref(k);
        return NULL;
    }
    *err = CL_SUCCESS;
    int first = -1;
    cl_int unbuilt = CL_SUCCESS;
    for (int r = 0; r < dist_size(); r++) {
        if (p->rid[r] == 0)
            continue; /* a program from binaries lives only on the ranks of its devices */
        struct sluice_req_in_program in = {p->rid[r]};
        *err = dist_call_v(r, SLUICE_REMOTE_KERNEL_CREATE, DIST_WORDS(in), name, strlen(name), &k->rid[r]);
        if (*err == CL_INVALID_PROGRAM_EXECUTABLE) {
            /* Built for devices of other ranks only: the kernel exists for those (as for the
             * built devices of a local program), enqueues here are refused. */
            unbuilt = *err;
            *err = CL_SUCCESS;
            continue;
        }
        if (*err != CL_SUCCESS)
            break;
        if (first < 0)
            first = r;
    }
    if (*err == CL_SUCCESS && first < 0)
        *err = unbuilt != CL_SUCCESS ? unbuilt : CL_INVALID_PROGRAM_EXECUTABLE;
    /* The arguments' declarations, in one request: which buffer arguments the kernel only reads
     * (const or __constant; servers build with -cl-kernel-arg-info, and without the information
     * an argument counts as read-write), and what clSetKernelArg must check. */
    struct sluice_remote_msg m = {0};
    if (*err == CL_SUCCESS && first >= 0) {
        struct sluice_robj_kernel_args in = {SLUICE_ROBJ_KERNEL_ARGS, k->rid[first]};
        *err = dist_call(first, SLUICE_REMOTE_OBJ, DIST_WORDS(in), NULL, 0, &m);
        k->nargs = (cl_uint)m.rep.v[0];
    }
    if (*err == CL_SUCCESS && k->nargs > 0 && (k->args = calloc(k->nargs, sizeof *k->args)) == NULL)
        *err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; *err == CL_SUCCESS && i < k->nargs &&
                        (i + 1) * sizeof(struct sluice_remote_kernel_arg) <= m.rep.nbytes;
         i++) {
        struct sluice_remote_kernel_arg ra;
        memcpy(&ra, m.bytes + i * sizeof ra, sizeof ra);
        k->args[i].read_only = ra.address == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
                               (ra.type_qual & CL_KERNEL_ARG_TYPE_CONST) != 0 ||
                               ra.access == CL_KERNEL_ARG_ACCESS_READ_ONLY;
        k->args[i].addr = (cl_kernel_arg_address_qualifier)ra.address;
        k->args[i].type_size = (size_t)ra.size;
    }
    free(m.bytes);
    if (*err != CL_SUCCESS) {
        kernel_unref(k);
        return NULL;
    }
    dist_kernel_limits(k);
    return k;
}

static cl_kernel CL_API_CALL create_kernel(cl_program program, const char *name, cl_int *errcode_ret)
{
    cl_int err = CL_INVALID_PROGRAM;
    struct dist_kernel *k = NULL;
    if (program != NULL && name == NULL)
        err = CL_INVALID_VALUE;
    else if (program != NULL)
        k = make_kernel((struct dist_program *)program, name, &err);
    dist_set_err(errcode_ret, err);
    return (cl_kernel)k;
}

static cl_int CL_API_CALL create_kernels(cl_program program, cl_uint num, cl_kernel *kernels,
                                         cl_uint *num_ret)
{
    struct dist_program *p = (struct dist_program *)program;
    SLUICE_RETURN_ERROR_ON(p == NULL, CL_INVALID_PROGRAM, "no program (NULL)");
    size_t len = 0;
    cl_int err = program_info(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &len);
    char *names = err == CL_SUCCESS ? calloc(1, len + 1) : NULL;
    if (err == CL_SUCCESS && names == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = program_info(program, CL_PROGRAM_KERNEL_NAMES, len, names, NULL);
    if (err != CL_SUCCESS) {
        free(names);
        return err;
    }
    /* Too little room is refused before any kernel is made. */
    cl_uint n = names[0] != '\0';
    for (const char *c = names; *c != '\0'; c++)
        n += *c == ';';
    if (kernels != NULL && num < n)
        err = CL_INVALID_VALUE;
    cl_uint made = 0;
    for (char *save = NULL, *s = strtok_r(names, ";", &save);
         err == CL_SUCCESS && kernels != NULL && s != NULL; s = strtok_r(NULL, ";", &save)) {
        kernels[made] = (cl_kernel)make_kernel(p, s, &err);
        if (err == CL_SUCCESS)
            made++;
    }
    free(names);
    if (err != CL_SUCCESS) {
        while (made-- > 0)
            kernel_unref((struct dist_kernel *)kernels[made]);
        return err;
    }
    if (num_ret != NULL)
        *num_ret = n;
    return CL_SUCCESS;
}

static cl_kernel CL_API_CALL clone_kernel(cl_kernel source, cl_int *errcode_ret)
{
    struct dist_kernel *s = (struct dist_kernel *)source;
    if (s == NULL) {
        dist_set_err(errcode_ret, CL_INVALID_KERNEL);
        return NULL;
    }
    cl_int err;
    struct dist_kernel *k = make_kernel(s->prog, s->name, &err);
    for (cl_uint i = 0; k != NULL && i < k->nargs && i < s->nargs; i++) {
        k->args[i] = s->args[i];
        if (s->args[i].bytes != NULL && (k->args[i].bytes = malloc(s->args[i].size)) != NULL)
            memcpy(k->args[i].bytes, s->args[i].bytes, s->args[i].size);
    }
    dist_set_err(errcode_ret, err);
    return (cl_kernel)k;
}

/* Arguments are kept here and sent to the rank of the queue at each launch. */
static cl_int CL_API_CALL set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    SLUICE_RETURN_ERROR_ON(k == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    SLUICE_RETURN_ERROR_ON(index >= k->nargs, CL_INVALID_ARG_INDEX, "argument %u of a kernel of %u", index,
                           k->nargs);
    struct dist_arg a = {.set = 1, .size = size};
    /* The checks the driver would make, from the argument's declaration (PoCL's codes). */
    cl_kernel_arg_address_qualifier aq = k->args[index].addr;
    bool pointer = aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT;
    size_t ts = k->args[index].type_size;
    SLUICE_RETURN_ERROR_ON(pointer && size != sizeof(cl_mem), CL_INVALID_ARG_SIZE,
                           "argument %u is a buffer (%zu bytes), given %zu", index, sizeof(cl_mem), size);
    SLUICE_RETURN_ERROR_ON((aq == CL_KERNEL_ARG_ADDRESS_LOCAL && value != NULL) ||
                               (aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && value == NULL),
                           CL_INVALID_ARG_VALUE,
                           "(aq == CL_KERNEL_ARG_ADDRESS_LOCAL && value != NULL) || (aq == "
                           "CL_KERNEL_ARG_ADDRESS_PRIVATE && value == NULL)");
    SLUICE_RETURN_ERROR_ON(aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && ts != 0 && size != ts, CL_INVALID_ARG_SIZE,
                           "argument %u is %zu bytes, given %zu", index, ts, size);
    static const void *const null_mem = NULL;
    if (pointer && value == NULL)
        value = &null_mem; /* a NULL buffer, not a local size */
    if (value == NULL) {
        SLUICE_RETURN_ERROR_ON(size == 0, CL_INVALID_ARG_SIZE, "size == 0");
        a.kind = SLUICE_KARG_LOCAL;
    } else {
        void *p = NULL;
        if (size == sizeof(cl_mem))
            memcpy(&p, value, sizeof p);
        pthread_mutex_lock(&dist_lock);
        bool mem = p != NULL && dist_mem_is_live(p);
        bool sampler = p != NULL && !mem && dist_sampler_is_live(p);
        pthread_mutex_unlock(&dist_lock);
        if (sampler) {
            a.kind = DIST_ARG_SAMPLER;
            a.sampler = p;
            SLUICE_RETURN_ERROR_ON(
                ((struct dist_sampler *)p)->ctx != k->prog->ctx, CL_INVALID_SAMPLER,
                "objects of two contexts (((struct dist_sampler *)p)->ctx != k->prog->ctx)");
        } else if (mem) {
            a.kind = SLUICE_KARG_MEM;
            a.mem = p;
            SLUICE_RETURN_ERROR_ON(((struct dist_mem *)p)->ctx != k->prog->ctx, CL_INVALID_MEM_OBJECT,
                                   "objects of two contexts (((struct dist_mem *)p)->ctx != k->prog->ctx)");
        } else {
            if ((a.bytes = malloc(size ? size : 1)) == NULL)
                return CL_OUT_OF_HOST_MEMORY;
            memcpy(a.bytes, value, size);
        }
    }
    pthread_mutex_lock(&dist_lock);
    free(k->args[index].bytes);
    a.read_only = k->args[index].read_only;
    a.addr = k->args[index].addr;
    a.type_size = k->args[index].type_size;
    k->args[index] = a;
    pthread_mutex_unlock(&dist_lock);
    return CL_SUCCESS;
}

/* The devices report no SVM: only "no fine-grain system SVM" can be set (the specification's
 * rules for such devices). */
static cl_int CL_API_CALL kernel_exec_info(cl_kernel kernel, cl_kernel_exec_info param, size_t size,
                                           const void *value)
{
    SLUICE_RETURN_ERROR_ON(kernel == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    SLUICE_RETURN_ERROR_ON(param == CL_KERNEL_EXEC_INFO_SVM_PTRS, CL_INVALID_OPERATION,
                           "CL_KERNEL_EXEC_INFO_SVM_PTRS: the devices of a distributed platform have no SVM");
    SLUICE_RETURN_ERROR_ON(
        param != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM || value == NULL || size != sizeof(cl_bool),
        CL_INVALID_VALUE,
        "param != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM || value == NULL || size != sizeof(cl_bool)");
    return *(const cl_bool *)value ? CL_INVALID_OPERATION : CL_SUCCESS;
}

DIST_RETAIN_RELEASE(kernel, cl_kernel, struct dist_kernel, kernel_unref, CL_INVALID_KERNEL)

static int first_rank(const uint64_t *rid)
{
    for (int r = 0; r < dist_size(); r++)
        if (rid[r] != 0)
            return r;
    return -1;
}

static cl_int CL_API_CALL kernel_info(cl_kernel kernel, cl_kernel_info param, size_t size, void *value,
                                      size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    SLUICE_RETURN_ERROR_ON(k == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    switch (param) {
    case CL_KERNEL_PROGRAM:
        return dist_answer(&k->prog, sizeof k->prog, size, value, size_ret);
    case CL_KERNEL_CONTEXT:
        return dist_answer(&k->prog->ctx, sizeof k->prog->ctx, size, value, size_ret);
    case CL_KERNEL_REFERENCE_COUNT: {
        cl_uint n = (cl_uint)__atomic_load_n(&k->refs, __ATOMIC_ACQUIRE);
        return dist_answer(&n, sizeof n, size, value, size_ret);
    }
    default: {
        int r = first_rank(k->rid);
        return r < 0 ? CL_INVALID_KERNEL
                     : dist_info(r, SLUICE_RG_KERNEL, k->rid[r], 0, param, size, value, size_ret);
    }
    }
}

static cl_int CL_API_CALL kernel_wg_info(cl_kernel kernel, cl_device_id device,
                                         cl_kernel_work_group_info param, size_t size, void *value,
                                         size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    SLUICE_RETURN_ERROR_ON(k == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    struct dist_device *d = (struct dist_device *)device;
    if (d == NULL && k->prog->ctx->ndev == 1)
        d = k->prog->ctx->devs[0];
    SLUICE_RETURN_ERROR_ON(d == NULL || k->rid[d->rank] == 0, CL_INVALID_DEVICE,
                           "d == NULL || k->rid[d->rank] == 0");
    return dist_info(d->rank, SLUICE_RG_KERNEL_WG, k->rid[d->rank], d->rid, param, size, value, size_ret);
}

static cl_int CL_API_CALL kernel_arg_info(cl_kernel kernel, cl_uint index, cl_kernel_arg_info param,
                                          size_t size, void *value, size_t *size_ret)
{
    struct dist_kernel *k = (struct dist_kernel *)kernel;
    SLUICE_RETURN_ERROR_ON(k == NULL, CL_INVALID_KERNEL, "no kernel (NULL)");
    int r = first_rank(k->rid);
    return r < 0 ? CL_INVALID_KERNEL
                 : dist_info(r, SLUICE_RG_KERNEL_ARG, k->rid[r], index, param, size, value, size_ret);
}

void dist_program_install(struct sluice_cl_api *api)
{
    api->clCreateProgramWithSource = create_program_source;
    api->clCreateProgramWithBinary = create_program_binary;
    api->clCreateProgramWithIL = create_program_il;
    api->clCreateProgramWithILKHR = create_program_il;
    api->clCreateProgramWithBuiltInKernels = create_program_builtin;
    api->clCompileProgram = compile_program;
    api->clSetProgramSpecializationConstant = spec_constant;
    api->clSetKernelExecInfo = kernel_exec_info;
    api->clLinkProgram = link_program;
    api->clBuildProgram = build_program;
    api->clRetainProgram = retain_program;
    api->clReleaseProgram = release_program;
    api->clGetProgramInfo = program_info;
    api->clGetProgramBuildInfo = build_info;
    api->clCreateKernel = create_kernel;
    api->clCreateKernelsInProgram = create_kernels;
    api->clCloneKernel = clone_kernel;
    api->clSetKernelArg = set_kernel_arg;
    api->clRetainKernel = retain_kernel;
    api->clReleaseKernel = release_kernel;
    api->clGetKernelInfo = kernel_info;
    api->clGetKernelWorkGroupInfo = kernel_wg_info;
    api->clGetKernelArgInfo = kernel_arg_info;
}
