/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): images and samplers made in a context of every
 * device of the first platform but the first one (all of them when there is one), and what
 * OpenCL answers about them. On each device of that context: N 2D images, each written at once,
 * and N samplers (two sets of arguments, taking turns); every clGetImageInfo answer and
 * CL_MEM_SIZE of the first and the last image; the modes of the last sampler; every image read
 * back and hashed. On its first device: a 1D, a 1D array, a 2D array and a 3D image of other
 * formats, written, read back and queried the same way; and the codes of creations a driver
 * refuses (a format it lacks, a width or height above its limit, a zero width, an array above
 * its limit, a sampler's invalid addressing mode), and of a 3D image one slice deep and a sampler
 * from a property list, made twice each. Then on each device N 1D images of one buffer
 * (CL_MEM_OBJECT_IMAGE1D_BUFFER) of changing widths, two sets of flags taking turns, each written;
 * the buffer read back and hashed, the answers about the first and the last; and on its first
 * device the codes of images of buffers (made twice where the first may teach rank 0 a kind, or
 * a refusal could be remembered): wider than the buffer, above
 * CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, of width 0, with a row pitch (not a multiple of the element,
 * beyond the buffer, within it), with a height, of a sub-buffer, write-only of a read-only buffer,
 * host-readable of a host-write-only buffer, and 2D images of a buffer (cl_khr_image2d_from_buffer:
 * packed, a pitch off the device's CL_DEVICE_IMAGE_PITCH_ALIGNMENT, taller than the buffer). With
 * --copy2d ITER, then the loop of the conformance suite's copy_2D in that context (cl_copy2d.h);
 * --time prints its seconds. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "cl_copy2d.h"
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXD = 8, IW = 23, IH = 6 };

static const cl_image_info image_params[] = {
    CL_IMAGE_ELEMENT_SIZE, CL_IMAGE_ROW_PITCH,      CL_IMAGE_SLICE_PITCH,
    CL_IMAGE_WIDTH,        CL_IMAGE_HEIGHT,         CL_IMAGE_DEPTH,
    CL_IMAGE_ARRAY_SIZE,   CL_IMAGE_NUM_MIP_LEVELS, CL_IMAGE_NUM_SAMPLES,
};

/* Every answer about img, on one line. */
static void print_answers(const char *what, cl_mem img)
{
    printf("%s:", what);
    for (size_t i = 0; i < sizeof image_params / sizeof image_params[0]; i++) {
        size_t v = 0, got = 0; /* the last two are cl_uint: their size is answered too */
        CHECK(clGetImageInfo(img, image_params[i], sizeof v, &v, &got));
        printf(" %zu/%zu", v, got);
    }
    cl_image_format f;
    CHECK(clGetImageInfo(img, CL_IMAGE_FORMAT, sizeof f, &f, NULL));
    printf(", format %#x %#x, CL_MEM_SIZE %zu\n", f.image_channel_order, f.image_channel_data_type,
           mem_info_size(img, CL_MEM_SIZE));
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    return fnv1a(p, n) ^ (h * 1099511628211ull);
}

/* N 2D images and N samplers on device d. */
static uint64_t images_and_samplers(cl_context ctx, cl_command_queue q, cl_uint d, int n)
{
    cl_int err;
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IW, .image_height = IH};
    size_t o[3] = {0, 0, 0}, reg[3] = {IW, IH, 1}, bytes = IW * IH * 4;
    cl_mem *img = calloc((size_t)n, sizeof *img);
    cl_sampler *smp = calloc((size_t)n, sizeof *smp);
    unsigned char *px = malloc((size_t)n * bytes), *back = malloc(bytes);
    for (int i = 0; i < n; i++) {
        img[i] = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
        CHECK(err);
        unsigned char *hp = px + (size_t)i * bytes;
        for (size_t k = 0; k < bytes; k++)
            hp[k] = (unsigned char)(k * 11 + (size_t)i * 3 + d);
        CHECK(clEnqueueWriteImage(q, img[i], CL_FALSE, o, reg, 0, 0, hp, 0, NULL, NULL));
        smp[i] = i % 2 ? clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err)
                       : clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err);
        CHECK(err);
    }
    char what[64];
    snprintf(what, sizeof what, "device %u: image 0", d);
    print_answers(what, img[0]);
    snprintf(what, sizeof what, "device %u: image %d", d, n - 1);
    print_answers(what, img[n - 1]);
    cl_bool norm = 0;
    cl_addressing_mode am = 0;
    cl_filter_mode fm = 0;
    CHECK(clGetSamplerInfo(smp[n - 1], CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL));
    CHECK(clGetSamplerInfo(smp[n - 1], CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL));
    CHECK(clGetSamplerInfo(smp[n - 1], CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
    printf("device %u: %d samplers, the last: normalized %u, addressing %#x, filter %#x\n", d, n, norm, am,
           fm);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        CHECK(clEnqueueReadImage(q, img[i], CL_TRUE, o, reg, 0, 0, back, 0, NULL, NULL));
        h = mix(h, back, bytes);
        CHECK(clReleaseMemObject(img[i]));
        CHECK(clReleaseSampler(smp[i]));
    }
    free(img), free(smp), free(px), free(back);
    return h;
}

/* An image of another type and format: written, read back, queried. */
static uint64_t other_type(cl_context ctx, cl_command_queue q, const char *what, cl_image_format fmt,
                           cl_image_desc desc, size_t elem, uint64_t h)
{
    cl_int err;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err);
    bool arr1 = desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    size_t reg[3] = {desc.image_width,
                     arr1                ? desc.image_array_size
                     : desc.image_height ? desc.image_height
                                         : 1,
                     desc.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? desc.image_array_size
                     : desc.image_depth                             ? desc.image_depth
                                                                    : 1};
    size_t o[3] = {0, 0, 0}, bytes = reg[0] * reg[1] * reg[2] * elem;
    unsigned char *src = malloc(bytes), *back = malloc(bytes);
    for (size_t k = 0; k < bytes; k++)
        src[k] = (unsigned char)(k * 7 + 1);
    CHECK(clEnqueueWriteImage(q, img, CL_FALSE, o, reg, 0, 0, src, 0, NULL, NULL));
    CHECK(clEnqueueReadImage(q, img, CL_TRUE, o, reg, 0, 0, back, 0, NULL, NULL));
    printf("%s: read back %s\n", what, memcmp(src, back, bytes) == 0 ? "as written" : "DIFFERENT");
    print_answers(what, img);
    h = mix(h, back, bytes);
    free(src), free(back);
    CHECK(clReleaseMemObject(img));
    return h;
}

/* The code of an image's creation (released if made). */
static void creation_code(const char *what, cl_context ctx, const cl_image_format *fmt,
                          const cl_image_desc *desc)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateImage(ctx, CL_MEM_READ_WRITE, fmt, desc, NULL, &err);
    printf("%s: %d%s\n", what, err, m != NULL ? " (created)" : "");
    if (m != NULL)
        CHECK(clReleaseMemObject(m));
}

enum { BW = 96 }; /* the buffer's width in CL_RGBA, CL_UNSIGNED_INT8 pixels */

/* N 1D images of one buffer on device d, each written through; the buffer read back. */
static uint64_t images_of_buffer(cl_context ctx, cl_command_queue q, cl_uint d, int n)
{
    cl_int err;
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    unsigned char src[(BW + 7) * 4], back[BW * 4]; /* image i written from pixel i % 7 on */
    for (size_t k = 0; k < sizeof src; k++)
        src[k] = (unsigned char)(k * 5 + d);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof back, src, &err);
    CHECK(err);
    cl_mem *img = calloc((size_t)n, sizeof *img);
    size_t o[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER,
                              .image_width = 1 + (size_t)i * 37 % BW,
                              .buffer = buf};
        img[i] = clCreateImage(ctx, i % 2 ? CL_MEM_READ_ONLY : 0, &fmt, &desc, NULL, &err);
        CHECK(err);
        size_t reg[3] = {desc.image_width, 1, 1};
        CHECK(clEnqueueWriteImage(q, img[i], CL_FALSE, o, reg, 0, 0, src + (size_t)i % 7 * 4, 0, NULL, NULL));
    }
    char what[64];
    snprintf(what, sizeof what, "device %u: image 0 of a buffer", d);
    print_answers(what, img[0]);
    snprintf(what, sizeof what, "device %u: image %d of a buffer", d, n - 1);
    print_answers(what, img[n - 1]);
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    for (int i = 0; i < n; i++)
        CHECK(clReleaseMemObject(img[i]));
    CHECK(clReleaseMemObject(buf));
    free(img);
    return fnv1a(back, sizeof back);
}

/* The codes of an image of a buffer made `times` times (released if made). */
static void buffer_image_code(const char *what, cl_context ctx, cl_mem_flags flags, const cl_image_desc *desc,
                              int times)
{
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    printf("%s:", what);
    for (int i = 0; i < times; i++) {
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateImage(ctx, flags, &fmt, desc, NULL, &err);
        printf(" %d%s", err, m != NULL ? " (created)" : "");
        if (m != NULL)
            CHECK(clReleaseMemObject(m));
    }
    printf("\n");
}

static void buffer_refusals(cl_context ctx, cl_device_id dev)
{
    cl_int err;
    size_t max_px = 0, max_w = 0;
    cl_uint pitch = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, sizeof max_px, &max_px, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof max_w, &max_w, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof pitch, &pitch, NULL));
    cl_mem rw = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BW * 4, NULL, &err);
    CHECK(err);
    cl_mem ro = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY, BW * 4, NULL, &err);
    CHECK(err);
    cl_buffer_region region = {0, BW * 2};
    cl_mem sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err);
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = BW, .buffer = rw};
    buffer_image_code("a 1D image buffer as wide as its buffer", ctx, 0, &d, 2);
    d.image_width = BW + 1;
    buffer_image_code("a 1D image buffer wider than its buffer", ctx, 0, &d, 2);
    d.image_width = max_px + 1;
    buffer_image_code("a 1D image buffer above CL_DEVICE_IMAGE_MAX_BUFFER_SIZE", ctx, 0, &d, 1);
    d.image_width = 0;
    buffer_image_code("a 1D image buffer of width 0", ctx, 0, &d, 1);
    d.image_width = BW / 2;
    d.image_row_pitch = BW * 2 + 1;
    buffer_image_code("a 1D image buffer, row pitch not a multiple of the element", ctx, 0, &d, 1);
    d.image_row_pitch = BW * 4 + 4;
    buffer_image_code("a 1D image buffer, row pitch beyond the buffer", ctx, 0, &d, 1);
    d.image_row_pitch = BW * 4;
    buffer_image_code("a 1D image buffer, row pitch within the buffer", ctx, 0, &d, 1);
    d.image_row_pitch = 0;
    d.image_height = 3;
    buffer_image_code("a 1D image buffer with a height", ctx, 0, &d, 1);
    d.image_height = 0;
    d.buffer = sub;
    buffer_image_code("a 1D image buffer of a sub-buffer", ctx, 0, &d, 1);
    d.buffer = ro;
    buffer_image_code("a write-only 1D image buffer of a read-only buffer", ctx, CL_MEM_WRITE_ONLY, &d, 2);
    buffer_image_code("a 1D image buffer of a read-only buffer", ctx, 0, &d, 2);
    buffer_image_code("a host-readable 1D image buffer of a host-write-only buffer", ctx,
                      CL_MEM_HOST_READ_ONLY, &d, 1);
    cl_image_desc d2 = {
        .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 4, .buffer = rw};
    buffer_image_code("a 2D image of a buffer", ctx, 0, &d2, 1);
    d2.image_row_pitch = (pitch > 1 ? pitch + 1 : 9) * 4;
    buffer_image_code("a 2D image of a buffer, row pitch off the pitch alignment", ctx, 0, &d2, 1);
    d2.image_row_pitch = 0;
    d2.image_height = BW / 8 + 1;
    buffer_image_code("a 2D image of a buffer taller than it", ctx, 0, &d2, 1);
    d2.image_height = 2;
    d2.image_width = max_w + 1;
    buffer_image_code("a 2D image of a buffer above CL_DEVICE_IMAGE2D_MAX_WIDTH", ctx, 0, &d2, 1);
    CHECK(clReleaseMemObject(sub));
    CHECK(clReleaseMemObject(ro));
    CHECK(clReleaseMemObject(rw));
}

static void refusals(cl_context ctx, cl_device_id dev)
{
    cl_int err;
    size_t max_w = 0, max_h = 0, max_n = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof max_w, &max_w, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof max_h, &max_h, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, sizeof max_n, &max_n, NULL));
    cl_image_format rgba = {CL_RGBA, CL_UNSIGNED_INT8}, rgb = {CL_RGB, CL_UNORM_INT8};
    cl_image_format rf = {CL_RGBA, CL_HALF_FLOAT};
    cl_image_desc d2 = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 8};
    creation_code("a format the driver lacks (CL_RGB, CL_UNORM_INT8)", ctx, &rgb, &d2);
    cl_image_desc wide = d2, tall = d2, none = d2;
    wide.image_width = max_w + 1;
    tall.image_height = max_h + 1;
    none.image_width = 0;
    creation_code("a width above CL_DEVICE_IMAGE2D_MAX_WIDTH", ctx, &rgba, &wide);
    creation_code("a height above CL_DEVICE_IMAGE2D_MAX_HEIGHT", ctx, &rgba, &tall);
    creation_code("a zero width", ctx, &rgba, &none);
    cl_image_desc arr = {.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY,
                         .image_width = 4,
                         .image_height = 4,
                         .image_array_size = max_n + 1};
    creation_code("an array above CL_DEVICE_IMAGE_MAX_ARRAY_SIZE", ctx, &rf, &arr);
    cl_image_desc flat = {
        .image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = 4, .image_height = 4, .image_depth = 1};
    for (int i = 0; i < 2; i++)
        creation_code("a 3D image one slice deep", ctx, &rf, &flat);
    cl_sampler s = clCreateSampler(ctx, CL_TRUE, (cl_addressing_mode)0x1234, CL_FILTER_LINEAR, &err);
    printf("a sampler of addressing mode 0x1234: %d%s\n", err, s != NULL ? " (created)" : "");
    if (s != NULL)
        CHECK(clReleaseSampler(s));
    cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_TRUE, CL_SAMPLER_FILTER_MODE,
                                     CL_FILTER_LINEAR, 0};
    for (int i = 0; i < 2; i++) {
        s = clCreateSamplerWithProperties(ctx, props, &err);
        cl_filter_mode fm = 0;
        if (s != NULL)
            CHECK(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
        printf("a sampler from properties: %d, filter %#x\n", err, fm);
        if (s != NULL)
            CHECK(clReleaseSampler(s));
    }
}

int main(int argc, char **argv)
{
    int n = 100, iters = 0, timed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--copy2d") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--time") == 0)
            timed = 1;
        else
            n = atoi(argv[i]);
    }
    cl_platform_id platform;
    cl_device_id all[MAXD];
    cl_uint na = 0;
    first_platform_devices(&platform, MAXD, all, &na);
    cl_uint skip = na > 1 ? 1 : 0, nd = na - skip;
    const cl_device_id *dev = all + skip;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, nd, dev, NULL, NULL, &err);
    CHECK(err);
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(dev[0], CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (!images) {
        printf("no image support\n");
        CHECK(clReleaseContext(ctx));
        return 0;
    }
    uint64_t h = 1469598103934665603ull;
    for (cl_uint d = 0; d < nd && n > 0; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        h = mix(h, (uint64_t[]){images_and_samplers(ctx, q, d, n)}, sizeof h);
        h = mix(h, (uint64_t[]){images_of_buffer(ctx, q, d, n)}, sizeof h);
        if (d == 0) {
            cl_image_desc d1 = {.image_type = CL_MEM_OBJECT_IMAGE1D, .image_width = 33};
            cl_image_desc d1a = {
                .image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY, .image_width = 21, .image_array_size = 3};
            cl_image_desc d2a = {.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY,
                                 .image_width = 13,
                                 .image_height = 5,
                                 .image_array_size = 2};
            cl_image_desc d3 = {
                .image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = 9, .image_height = 4, .image_depth = 3};
            h = other_type(ctx, q, "1D image", (cl_image_format){CL_RGBA, CL_UNORM_INT8}, d1, 4, h);
            h = other_type(ctx, q, "1D image array", (cl_image_format){CL_RGBA, CL_SIGNED_INT8}, d1a, 4, h);
            h = other_type(ctx, q, "2D image array", (cl_image_format){CL_RGBA, CL_FLOAT}, d2a, 16, h);
            h = other_type(ctx, q, "3D image", (cl_image_format){CL_RGBA, CL_HALF_FLOAT}, d3, 8, h);
            refusals(ctx, dev[0]);
            buffer_refusals(ctx, dev[0]);
        }
        CHECK(clReleaseCommandQueue(q));
    }
    printf("hash of every image read back: %016llx\n", (unsigned long long)h);
    int rc = iters > 0 ? copy2d(ctx, nd, dev, iters, timed) : 0;
    CHECK(clReleaseContext(ctx));
    return rc;
}
