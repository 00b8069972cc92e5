/* SPDX-License-Identifier: MIT */
/* Internals of images and samplers on rank 0, shared by their files only (their contract with the
 * rest of the backend is dist_internal.h; dist_image.c says how images work):
 *
 *   dist_image.c       image records: creation, queries, supported formats; installs the slots
 *   dist_image_geom.c  the geometry of an image and of a region, host layouts, packing
 *   dist_image_cmds.c  the commands on images: reads, writes, copies, fills, maps
 *   dist_sampler.c     samplers
 *   dist_image_accept.c  which creations need not wait for the first rank's driver */
#ifndef SLUICE_CL_RANK0_DIST_IMAGE_INTERNAL_H
#define SLUICE_CL_RANK0_DIST_IMAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_objects.h"

/* Each rank r that holds a real object of the context (its rid). */
#define for_ranks(ctx, r)                                                                                    \
    for (int r = 0; r < dist_size(); r++)                                                                    \
        if ((ctx)->rid[r] != 0)

/* ---- dist_image_geom.c ---------------------------------------------------------------------- */

bool dist_image_arrayed_1d(const struct dist_image *im); /* a 1D image array: its rows are its images */
bool dist_image_has_slices(const struct dist_image *im); /* a 3D image or a 2D image array */
/* The image's dimensions as three (width, rows or array size, slices or depth or array size). */
void dist_image_view_dims(const cl_image_desc *d, size_t dims[3]);
/* Host memory of a region: the distance of its rows and of its slices, from the program's pitches
 * (0: packed). The rows of a 1D array are its images, a slice pitch apart. */
struct layout {
    size_t row, slice;
};

/* The layout of a region's host memory from the program's pitches (0: packed); CL_INVALID_VALUE
 * for pitches too small. */
cl_int dist_image_host_layout(const struct dist_image *im, const size_t *region, size_t rp, size_t sp,
                              struct layout *h);
/* CL_INVALID_VALUE unless origin and region lie in the image. */
cl_int dist_image_check_region(const struct dist_image *im, const size_t *origin, const size_t *region);
/* The engine's geometry (cl/serve/remote_image.h) of a region with host layout h. */
void dist_image_geom(const struct dist_image *im, const size_t *origin, const size_t *region,
                     const struct layout *h, struct sluice_rect_geom *g);
/* Between the packed form and host memory with layout h (to_host: unpack). */
void dist_image_copy_rows(unsigned char *packed, unsigned char *host, const size_t *region, size_t line,
                          const struct layout *h, bool to_host);

/* ---- dist_image.c ---------------------------------------------------------------------------- */

/* The program's memory of an image created with a host pointer: its layout. */
struct layout dist_image_creation_layout(const struct dist_image *im);
/* The same channel order and data type. */
bool dist_image_same_format(const cl_image_format *a, const cl_image_format *b);
/* An info query of an object rank r holds (OBJ op `op`), answered as the driver there answers. */
cl_int dist_image_remote_info(int r, uint64_t op, uint64_t rid, cl_uint param, size_t size, void *value,
                              size_t *size_ret);

/* ---- dist_image_accept.c ---------------------------------------------------------------------- */

/* The lowest rank holding a real object of the context (-1: none): its driver answers. */
int dist_first_rank(const struct dist_context *c);
/* The element size of an image the first rank's driver would take, known without asking it (a
 * serving rank took one of this kind in c, and this one is within every device's limits and its
 * buffer b, if any), else 0: wait for its reply. flags: those sent to the ranks. */
size_t dist_image_accepted(struct dist_context *c, cl_mem_flags flags, const cl_image_format *fmt,
                           const cl_image_desc *d, const struct dist_mem *b);
/* The first rank's driver took an image of this kind (of buffer b, or NULL), of element size elem. */
void dist_image_learn(struct dist_context *c, cl_mem_flags flags, const cl_image_format *fmt,
                      const cl_image_desc *d, const struct dist_mem *b, size_t elem);
/* The same for a sampler's arguments (in: its request's words; props, len: its property list). */
bool dist_sampler_accepted(struct dist_context *c, const struct sluice_robj_sampler_create *in,
                           const void *props, size_t len);
void dist_sampler_learn(struct dist_context *c, const struct sluice_robj_sampler_create *in,
                        const void *props, size_t len);

/* ---- the slots of dist_image_cmds.c and dist_sampler.c (dist_image_install installs them) ---- */

void dist_image_cmds_install(struct sluice_cl_api *api);
void dist_sampler_install(struct sluice_cl_api *api);

#endif
