/* SPDX-License-Identifier: MIT */
/* The OBJ request of distributed OpenCL (remote_proto.h): object calls added after the first
 * slice, served by remote_objects.c. Its words are the operation's struct below, each starting
 * with `op` (enum sluice_remote_obj_op); rank 0 fills one (DIST_WORDS), the server reads it from
 * the request's words (union sluice_robj_args). */
#ifndef SLUICE_CL_SERVE_REMOTE_OBJECTS_H
#define SLUICE_CL_SERVE_REMOTE_OBJECTS_H

#include <stddef.h>

#include "cl/serve/remote_proto.h"

enum sluice_remote_obj_op {
    SLUICE_ROBJ_PROG_IL,         /* struct sluice_robj_prog_il; bytes: the IL -> v0 program */
    SLUICE_ROBJ_PROG_BUILTIN,    /* struct sluice_robj_builtin */
    SLUICE_ROBJ_PROG_COMPILE,    /* struct sluice_robj_compile */
    SLUICE_ROBJ_PROG_LINK,       /* struct sluice_robj_link */
    SLUICE_ROBJ_UNLOAD_COMPILER, /* struct sluice_robj_unload_compiler */
    SLUICE_ROBJ_SPEC_CONSTANT,   /* struct sluice_robj_spec_constant; bytes: the value */
    SLUICE_ROBJ_KERNEL_ARGS,     /* struct sluice_robj_kernel_args -> v0 number of arguments, bytes:
                                  * per argument, struct sluice_remote_kernel_arg */
    /* Images and samplers (remote_image.c). */
    SLUICE_ROBJ_IMAGE_CREATE,   /* struct sluice_robj_image_create; bytes: cl_image_format,
                                 * cl_image_desc -> v0 image, v1 its element size, bytes: struct
                                 * sluice_remote_image_info */
    SLUICE_ROBJ_IMAGE_FORMATS,  /* struct sluice_robj_image_formats -> v0 count, bytes: the formats */
    SLUICE_ROBJ_IMAGE_INFO,     /* struct sluice_robj_info -> v0 size, bytes: the value */
    SLUICE_ROBJ_IMAGE_ANSWERS,  /* struct sluice_robj_info (obj only) -> bytes: struct
                                 * sluice_remote_image_info (an image created under an id) */
    SLUICE_ROBJ_SAMPLER_CREATE, /* struct sluice_robj_sampler_create -> v0 sampler */
    SLUICE_ROBJ_SAMPLER_INFO,   /* struct sluice_robj_info -> v0 size, bytes: the value */
    SLUICE_ROBJ_NATIVE_FIND,    /* struct sluice_robj_native_find; bytes: struct sluice_native_fn ->
                                 * whether its object is loaded here (remote_native.h) */
};

/* The operations' words: rids of the rank's own objects, and values. */
struct sluice_robj_prog_il {
    uint64_t op;
    uint64_t ctx;
};
/* bytes: device rids, then the kernel names -> v0 program */
struct sluice_robj_builtin {
    uint64_t op;
    uint64_t ctx;
    uint64_t ndev;
};
/* bytes: device rids, header program rids, options, header names (each NUL-terminated) */
struct sluice_robj_compile {
    uint64_t op;
    uint64_t program;
    uint64_t ndev, nheaders;
    uint64_t options_len;
};
/* bytes: device rids, input program rids, options -> v0 program (also on failure) */
struct sluice_robj_link {
    uint64_t op;
    uint64_t ctx;
    uint64_t ndev, ninputs;
    uint64_t options_len;
};
struct sluice_robj_unload_compiler {
    uint64_t op;
    uint64_t platform;
};
struct sluice_robj_spec_constant {
    uint64_t op;
    uint64_t program;
    uint64_t spec_id;
};
struct sluice_robj_kernel_args {
    uint64_t op;
    uint64_t kernel;
};
/* id: as in the creations of remote_proto.h (0: reply; else rank 0's id, no reply). */
struct sluice_robj_image_create {
    uint64_t op;
    uint64_t ctx, flags;
    uint64_t id;
};
struct sluice_robj_image_formats {
    uint64_t op;
    uint64_t ctx, flags;
    uint64_t type; /* cl_mem_object_type */
};
/* IMAGE_INFO and SAMPLER_INFO. */
struct sluice_robj_info {
    uint64_t op;
    uint64_t obj; /* the image or the sampler */
    uint64_t param;
    uint64_t size; /* of the value wanted; 0: only its size */
};
/* with_args 1: clCreateSampler's arguments; 0: clCreateSamplerWithProperties, the property list
 * in the bytes (none: NULL properties) and the arguments 0. */
struct sluice_robj_sampler_create {
    uint64_t op;
    uint64_t ctx;
    uint64_t with_args;
    uint64_t normalized, addressing, filter;
    uint64_t id; /* as image_create's */
};
struct sluice_robj_native_find {
    uint64_t op;
};

/* The words of an OBJ request, read as its operation's. */
union sluice_robj_args {
    uint64_t op; /* enum sluice_remote_obj_op */
    struct sluice_robj_prog_il prog_il;
    struct sluice_robj_builtin builtin;
    struct sluice_robj_compile compile;
    struct sluice_robj_link link;
    struct sluice_robj_unload_compiler unload_compiler;
    struct sluice_robj_spec_constant spec_constant;
    struct sluice_robj_kernel_args kernel_args;
    struct sluice_robj_image_create image_create;
    struct sluice_robj_image_formats image_formats;
    struct sluice_robj_info info;
    struct sluice_robj_sampler_create sampler_create;
    struct sluice_robj_native_find native_find;
};
#ifndef __cplusplus
_Static_assert(sizeof(union sluice_robj_args) <= SLUICE_REMOTE_NARGS * sizeof(uint64_t),
               "an OBJ operation's words fit the request's");
/* The words each field had before the structs (a1 ctx, ...): the wire is unchanged. */
#define SLUICE_ROBJ_WORD(type, field, n)                                                                     \
    _Static_assert(offsetof(struct type, field) == (n) * sizeof(uint64_t), #type "." #field " is word " #n)
SLUICE_ROBJ_WORD(sluice_robj_compile, options_len, 4);
SLUICE_ROBJ_WORD(sluice_robj_link, options_len, 4);
SLUICE_ROBJ_WORD(sluice_robj_spec_constant, spec_id, 2);
SLUICE_ROBJ_WORD(sluice_robj_image_formats, type, 3);
SLUICE_ROBJ_WORD(sluice_robj_info, size, 3);
SLUICE_ROBJ_WORD(sluice_robj_sampler_create, filter, 5);
#undef SLUICE_ROBJ_WORD
#endif

/* What rank 0 needs to know of a kernel argument (all 0 when the program has no argument info). */
struct sluice_remote_kernel_arg {
    uint64_t address;   /* cl_kernel_arg_address_qualifier */
    uint64_t type_qual; /* cl_kernel_arg_type_qualifier */
    uint64_t size;      /* private scalars and vectors: the type's size (0: unknown) */
    uint64_t access;    /* cl_kernel_arg_access_qualifier (images: read_only is a read) */
};

/* Executes one OBJ request against this process's real OpenCL loader (its words in req, payload p). */
void sluice_remote_objects(const struct sluice_remote_req *req, const unsigned char *p, size_t len,
                           struct sluice_remote_msg *out);

#endif
