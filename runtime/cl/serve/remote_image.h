/* SPDX-License-Identifier: MIT */
/* Images and samplers of distributed OpenCL, serving side (remote_image.c): the OBJ operations
 * that create and query them, and the image commands the engine (remote_engine.c) hands over.
 *
 * Image commands reuse the rect geometry of buffer commands (struct sluice_rect_geom,
 * cl/serve/remote_proto.h): the image origin, the region in pixels, the element size and the host
 * row and slice pitches in bytes. Between ranks the host side is packed: rows of region[0] *
 * elem_size bytes. */
#ifndef SLUICE_CL_SERVE_REMOTE_IMAGE_H
#define SLUICE_CL_SERVE_REMOTE_IMAGE_H

#include <CL/cl.h>

#include "cl/serve/remote_objects.h"
#include "cl/serve/remote_proto.h"

/* The driver's clGetImageInfo answers for an image (parameter, type, field), asked once at its
 * creation so that rank 0 answers the program's queries of it without a round trip. */
#define SLUICE_REMOTE_IMAGE_INFO(X)                                                                          \
    X(CL_IMAGE_ELEMENT_SIZE, size_t, elem)                                                                   \
    X(CL_IMAGE_ROW_PITCH, size_t, row_pitch)                                                                 \
    X(CL_IMAGE_SLICE_PITCH, size_t, slice_pitch)                                                             \
    X(CL_IMAGE_WIDTH, size_t, width)                                                                         \
    X(CL_IMAGE_HEIGHT, size_t, height)                                                                       \
    X(CL_IMAGE_DEPTH, size_t, depth)                                                                         \
    X(CL_IMAGE_ARRAY_SIZE, size_t, array_size)                                                               \
    X(CL_IMAGE_NUM_MIP_LEVELS, cl_uint, num_mip_levels)                                                      \
    X(CL_IMAGE_NUM_SAMPLES, cl_uint, num_samples)
struct sluice_remote_image_info {
#define SLUICE_X(param, type, field) type field;
    SLUICE_REMOTE_IMAGE_INFO(SLUICE_X)
#undef SLUICE_X
    size_t mem_size; /* CL_MEM_SIZE */
};

/* The OBJ operations of images and samplers (remote_objects.h numbers them). */
void sluice_remote_image_obj(const union sluice_robj_args *in, const unsigned char *p, size_t len,
                             struct sluice_remote_msg *out);

/* A read (write = 0) or write of the image region of g between the device and host memory at
 * ptr, with g's host pitches, or packed (non-blocking, like the engine's other enqueues). */
cl_int sluice_remote_image_rw(cl_command_queue q, int write, cl_mem img, const struct sluice_rect_geom *g,
                              int packed, void *ptr, cl_uint nw, const cl_event *wl, cl_event *ev);
/* The packed row pitch of g's region (what travels between ranks). */
static inline size_t sluice_remote_image_row(const struct sluice_rect_geom *g)
{
    return g->region[0] * g->elem_size;
}

/* CMD_COPY and CMD_FILL of images (flag SLUICE_CMD_IMAGE): a0 source, a1 destination (copies), a2
 * kind (SLUICE_IMG_COPY_*); bytes: struct sluice_remote_image_cmd. */
enum { SLUICE_IMG_COPY_IMAGE, SLUICE_IMG_COPY_TO_BUFFER, SLUICE_IMG_COPY_FROM_BUFFER };
struct sluice_remote_image_cmd {
    size_t src_origin[3], dst_origin[3], region[3];
    size_t offset;          /* the buffer's offset of image-buffer copies */
    unsigned char fill[16]; /* a fill's colour (cl_float4, cl_int4 or cl_uint4) */
};
cl_int sluice_remote_image_cmd(cl_command_queue q, const struct sluice_remote_req *req,
                               const unsigned char *p, size_t len, cl_uint nw, const cl_event *wl,
                               cl_event *ev);

#endif
