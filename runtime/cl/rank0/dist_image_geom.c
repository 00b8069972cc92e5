/* SPDX-License-Identifier: MIT */
/* Images on rank 0: the geometry of an image and of a region of it, the layout of the program's
 * host memory from its pitches, and packing rows between the two. */
#include <stdlib.h>
#include <string.h>

#include "cl/rank0/dist_image_internal.h"

/* ---- geometry ------------------------------------------------------------------------------ */

bool dist_image_arrayed_1d(const struct dist_image *im)
{
    return im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
}

bool dist_image_has_slices(const struct dist_image *im)
{
    return im->desc.image_type == CL_MEM_OBJECT_IMAGE3D || im->desc.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
}

void dist_image_view_dims(const cl_image_desc *d, size_t dims[3])
{
    dims[0] = d->image_width;
    dims[1] = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? d->image_array_size
              : d->image_type == CL_MEM_OBJECT_IMAGE2D || d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                      d->image_type == CL_MEM_OBJECT_IMAGE3D
                  ? d->image_height
                  : 1;
    dims[2] = d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? d->image_array_size
              : d->image_type == CL_MEM_OBJECT_IMAGE3D     ? d->image_depth
                                                           : 1;
}

cl_int dist_image_host_layout(const struct dist_image *im, const size_t *region, size_t rp, size_t sp,
                              struct layout *h)
{
    size_t line = region[0] * im->elem;
    if (dist_image_arrayed_1d(im)) {
        h->row = sp ? sp : line;
        h->slice = h->row * region[1];
        return (rp != 0 && rp < line) || (sp != 0 && sp < line) ? CL_INVALID_VALUE : CL_SUCCESS;
    }
    h->row = rp ? rp : line;
    h->slice = sp ? sp : h->row * region[1];
    return rp < line && rp != 0                                              ? CL_INVALID_VALUE
           : dist_image_has_slices(im) && sp != 0 && sp < h->row * region[1] ? CL_INVALID_VALUE
                                                                             : CL_SUCCESS;
}

cl_int dist_image_check_region(const struct dist_image *im, const size_t *origin, const size_t *region)
{
    SLUICE_RETURN_ERROR_ON(origin == NULL || region == NULL, CL_INVALID_VALUE,
                           "origin == NULL || region == NULL");
    for (int i = 0; i < 3; i++)
        SLUICE_RETURN_ERROR_ON(
            region[i] == 0 || origin[i] > im->dims[i] || region[i] > im->dims[i] - origin[i],
            CL_INVALID_VALUE,
            "region[i] == 0 || origin[i] > im->dims[i] || region[i] > im->dims[i] - origin[i]");
    return CL_SUCCESS;
}

/* The engine's geometry (cl/serve/remote_image.h) of a region with host layout h. */
void dist_image_geom(const struct dist_image *im, const size_t *origin, const size_t *region,
                     const struct layout *h, struct sluice_rect_geom *g)
{
    memset(g, 0, sizeof *g);
    memcpy(g->origin, origin, sizeof g->origin);
    memcpy(g->region, region, sizeof g->region);
    g->elem_size = im->elem;
    g->host_row_pitch = h->row;
    g->host_slice_pitch = dist_image_arrayed_1d(im) ? h->row : h->slice;
}

void dist_image_whole(const struct dist_mem *m, struct sluice_rect_geom *g)
{
    static const size_t zero[3] = {0, 0, 0};
    struct layout h;
    dist_image_host_layout(m->image, m->image->dims, 0, 0, &h);
    dist_image_geom(m->image, zero, m->image->dims, &h, g);
}

/* Between the packed form and host memory with layout h (to_host: unpack). */
void dist_image_copy_rows(unsigned char *packed, unsigned char *host, const size_t *region, size_t line,
                          const struct layout *h, bool to_host)
{
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++, packed += line) {
            unsigned char *p = host + z * h->slice + y * h->row;
            memcpy(to_host ? p : packed, to_host ? packed : p, line);
        }
}
