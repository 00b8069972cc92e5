/* SPDX-License-Identifier: MIT */
/* The OBJ request of distributed OpenCL (remote_proto.h): object calls added after the first
 * slice, served by remote_objects.c. a0 names the operation, a1.. its arguments. */
#ifndef SLUICE_CL_SERVE_REMOTE_OBJECTS_H
#define SLUICE_CL_SERVE_REMOTE_OBJECTS_H

#include "cl/serve/remote_proto.h"

enum sluice_remote_obj_op {
    SLUICE_ROBJ_PROG_IL,      /* a1 ctx; bytes: the IL -> v0 program */
    SLUICE_ROBJ_PROG_BUILTIN, /* a1 ctx, a2 ndev; bytes: device rids, then the kernel names -> v0 program */
    SLUICE_ROBJ_PROG_COMPILE, /* a1 program, a2 ndev, a3 nheaders, a4 options length; bytes: device rids,
                               * header program rids, options, header names (each NUL-terminated) */
    SLUICE_ROBJ_PROG_LINK,    /* a1 ctx, a2 ndev, a3 ninputs, a4 options length; bytes: device rids,
                               * input program rids, options -> v0 program (also on failure) */
    SLUICE_ROBJ_UNLOAD_COMPILER, /* a1 platform */
    SLUICE_ROBJ_SPEC_CONSTANT,   /* a1 program, a2 spec id; bytes: the value */
    SLUICE_ROBJ_KERNEL_ARGS,     /* a1 kernel -> v0 number of arguments, bytes: per argument, struct
                                  * sluice_remote_kernel_arg */
    /* Images and samplers (remote_image.c). */
    SLUICE_ROBJ_IMAGE_CREATE,   /* a1 ctx, a2 flags; bytes: cl_image_format, cl_image_desc -> v0 image,
                                 * v1 its element size, bytes: struct sluice_remote_image_info */
    SLUICE_ROBJ_IMAGE_FORMATS,  /* a1 ctx, a2 flags, a3 type -> v0 count, bytes: the formats */
    SLUICE_ROBJ_IMAGE_INFO,     /* a1 image, a2 param, a3 size -> v0 size, bytes: the value */
    SLUICE_ROBJ_SAMPLER_CREATE, /* a1 ctx, a2 0: bytes the properties (none: NULL), 1: clCreateSampler
                                 * (a3 normalized, a4 addressing, a5 filter) -> v0 sampler */
    SLUICE_ROBJ_SAMPLER_INFO,   /* a1 sampler, a2 param, a3 size -> v0 size, bytes: the value */
    SLUICE_ROBJ_NATIVE_FIND,    /* bytes: struct sluice_native_fn -> whether its object is loaded here
                                 * (remote_native.h) */
};

/* What rank 0 needs to know of a kernel argument (all 0 when the program has no argument info). */
struct sluice_remote_kernel_arg {
    uint64_t address;   /* cl_kernel_arg_address_qualifier */
    uint64_t type_qual; /* cl_kernel_arg_type_qualifier */
    uint64_t size;      /* private scalars and vectors: the type's size (0: unknown) */
    uint64_t access;    /* cl_kernel_arg_access_qualifier (images: read_only is a read) */
};

/* Executes one OBJ request against this process's real OpenCL loader (request a[], payload p). */
void sluice_remote_objects(const uint64_t *a, const unsigned char *p, size_t len,
                           struct sluice_remote_msg *out);

#endif
