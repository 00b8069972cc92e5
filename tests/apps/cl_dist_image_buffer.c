/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): 1D images made from buffers
 * (CL_MEM_OBJECT_IMAGE1D_BUFFER) share the buffer's storage, on whichever device touches either.
 * A buffer written from the host on device 0 is read through its image by a kernel on device 1,
 * which writes a second image; device 2 reads that image's buffer; a kernel on device 0 changes
 * the buffer and device 1 reads the change through the image; then a partial image write, a map
 * of the image for writing and a buffer-to-image copy, each read back through the other object on
 * another device; the image outlives the buffer released before it; queries of the pair; the
 * return codes of invalid creations (an image of a sub-buffer among them). PoCL 3.1 refuses
 * image-to-image copies of these images (CL_INVALID_MEM_OBJECT) and crashes in their fills and
 * image-to-buffer copies, locally too, so those are left out. Prints every value and code,
 * with FNV-1a hashes: the same with N local devices and on N ranks. */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 1000, PX = 16 }; /* RGBA float pixels */

static const char *source =
    "__kernel void scale(read_only image1d_buffer_t in, write_only image1d_buffer_t out, float k) {\n"
    "    int i = get_global_id(0);\n"
    "    write_imagef(out, i, read_imagef(in, i) * k + (float4)(0, 0, 0, i));\n"
    "}\n"
    "__kernel void bump(__global float4 *b, float k) {\n"
    "    b[get_global_id(0)] += (float4)(k, 0, k, 0);\n"
    "}\n";

static void show(const char *what, const float *v, size_t n)
{
    printf("%s: %zu bytes, fnv %016llx, [0] %g %g %g %g, [%zu] %g %g %g %g\n", what, n * sizeof *v,
           (unsigned long long)fnv1a(v, n * sizeof *v), v[0], v[1], v[2], v[3], n / 4 - 1, v[n - 4], v[n - 3],
           v[n - 2], v[n - 1]);
}

static cl_mem image_of(cl_context ctx, cl_mem_flags flags, cl_mem buf, size_t width, cl_int *err)
{
    cl_image_format f = {CL_RGBA, CL_FLOAT};
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = width, .buffer = buf};
    return clCreateImage(ctx, flags, &f, &d, NULL, err);
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev[3];
    cl_uint nd = 0;
    cl_int err;
    first_platform_devices(&platform, 3, dev, &nd);
    size_t maxpx = 0;
    cl_uint align = 0;
    CHECK(clGetDeviceInfo(dev[0], CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, sizeof maxpx, &maxpx, NULL));
    CHECK(clGetDeviceInfo(dev[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL));
    printf("devices: %u, image buffer max %zu pixels, base alignment %u bits\n", nd, maxpx, align);
    cl_command_queue q[3];
    cl_context ctx = context_with_queues(nd, dev, q);
    cl_uint d0 = 0, d1 = 1 % nd, d2 = 2 % nd;

    cl_uint nfmt = 0;
    CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE1D_BUFFER, 0, NULL, &nfmt));
    printf("1D buffer read-write formats: %u\n", nfmt);

    const size_t bytes = (size_t)W * PX, n = bytes / sizeof(float);
    float *host = malloc(bytes), *got = malloc(bytes);
    for (size_t i = 0; i < n; i++)
        host[i] = (float)(i % 97) * 0.5f;
    cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    cl_mem ia = image_of(ctx, 0, ba, W, &err);
    CHECK(err);
    cl_mem ib = image_of(ctx, CL_MEM_READ_WRITE, bb, W, &err);
    CHECK(err);

    /* queries of the pair */
    cl_mem m = NULL;
    cl_uint refs = 0;
    cl_mem_flags flags = 0;
    cl_mem_object_type t = 0;
    CHECK(clGetImageInfo(ia, CL_IMAGE_BUFFER, sizeof m, &m, NULL));
    printf("image buffer is the buffer: %d", m == ba);
    CHECK(clGetMemObjectInfo(ia, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof m, &m, NULL));
    printf(", associated: %d", m == ba);
    printf(", offset %zu", mem_info_size(ia, CL_MEM_OFFSET));
    CHECK(clGetMemObjectInfo(ia, CL_MEM_TYPE, sizeof t, &t, NULL));
    printf(", type %#x", t);
    CHECK(clGetMemObjectInfo(ia, CL_MEM_FLAGS, sizeof flags, &flags, NULL));
    printf(", flags %#llx", (unsigned long long)flags);
    printf(", size %zu", mem_info_size(ia, CL_MEM_SIZE));
    printf(", width %zu", image_info_size(ia, CL_IMAGE_WIDTH));
    printf(", row pitch %zu", image_info_size(ia, CL_IMAGE_ROW_PITCH));
    printf(", element %zu", image_info_size(ia, CL_IMAGE_ELEMENT_SIZE));
    CHECK(clGetMemObjectInfo(ba, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    printf(", buffer references %u\n", refs);
    /* Written only now: a driver releases what a command held after the command's blocking call
     * returned (PoCL does), so a count read just after a command that used the buffer is stale,
     * as the specification warns; this one is exact. */
    CHECK(clEnqueueWriteBuffer(q[d0], ba, CL_TRUE, 0, bytes, host, 0, NULL, NULL));

    /* queries programs repeat (the conformance suite's before every image), and images made and
     * released in a loop */
    size_t sum = 0;
    for (int i = 0; i < 100; i++) {
        cl_uint nf = 0;
        size_t rp = 0, ms = 0;
        CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE1D_BUFFER, 0, NULL, &nf));
        CHECK(clGetImageInfo(ib, CL_IMAGE_ROW_PITCH, sizeof rp, &rp, NULL));
        CHECK(clGetMemObjectInfo(ib, CL_MEM_SIZE, sizeof ms, &ms, NULL));
        cl_mem tmp = image_of(ctx, 0, ba, W / 2, &err);
        CHECK(err);
        CHECK(clReleaseMemObject(tmp));
        sum += nf + rp + ms;
    }
    printf("100 rounds of queries: %zu\n", sum);

    /* host write on device 0, read through the image by a kernel on device 1 */
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
    cl_kernel scale = clCreateKernel(prog, "scale", &err);
    CHECK(err);
    cl_kernel bump = clCreateKernel(prog, "bump", &err);
    CHECK(err);
    float k = 2.0f;
    CHECK(clSetKernelArg(scale, 0, sizeof ia, &ia));
    CHECK(clSetKernelArg(scale, 1, sizeof ib, &ib));
    CHECK(clSetKernelArg(scale, 2, sizeof k, &k));
    size_t gw = W;
    CHECK(clEnqueueNDRangeKernel(q[d1], scale, 1, NULL, &gw, NULL, 0, NULL, NULL));
    CHECK(clFinish(q[d1]));
    /* the image the kernel wrote, read as its buffer on device 2 */
    CHECK(clEnqueueReadBuffer(q[d2], bb, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    show("kernel's image read as buffer", got, n);

    /* a kernel changes the buffer on device 0; device 1 reads it through the image */
    CHECK(clSetKernelArg(bump, 0, sizeof bb, &bb));
    CHECK(clSetKernelArg(bump, 1, sizeof k, &k));
    CHECK(clEnqueueNDRangeKernel(q[d0], bump, 1, NULL, &gw, NULL, 0, NULL, NULL));
    size_t o0[3] = {0, 0, 0}, full[3] = {W, 1, 1};
    CHECK(clEnqueueReadImage(q[d1], ib, CL_TRUE, o0, full, 0, 0, got, 0, NULL, NULL));
    show("buffer's kernel read as image", got, n);

    /* part of ia written through the image on device 2, read as buffer ba on device 1 */
    size_t o10[3] = {10, 0, 0}, o500[3] = {500, 0, 0}, r400[3] = {400, 1, 1}, r50[3] = {50, 1, 1};
    CHECK(clEnqueueWriteImage(q[d2], ia, CL_TRUE, o500, r400, 0, 0, host + 4 * 7, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q[d1], ba, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    show("image write read as buffer", got, n);

    /* a map of ib for writing on device 2, read as buffer on device 1 */
    size_t rp = 0;
    float *p = clEnqueueMapImage(q[d2], ib, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, o10, r50, &rp, NULL, 0, NULL,
                                 NULL, &err);
    CHECK(err);
    for (size_t i = 0; i < 50 * 4; i++)
        p[i] = p[i] * -1.0f + 0.25f;
    CHECK(clEnqueueUnmapMemObject(q[d2], ib, p, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q[d1], bb, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    show("mapped image read as buffer", got, n);

    /* a buffer write of part of ba on device 1, then a buffer-to-image copy into ib on device 0 */
    CHECK(clEnqueueWriteBuffer(q[d1], ba, CL_TRUE, 16 * PX, 64 * PX, host + 4 * 900, 0, NULL, NULL));
    printf("copy buffer to image: %d\n",
           clEnqueueCopyBufferToImage(q[d0], ba, ib, 0, o0, full, 0, NULL, NULL));
    CHECK(clEnqueueReadImage(q[d2], ib, CL_TRUE, o0, full, 0, 0, got, 0, NULL, NULL));
    show("buffer write copied to image", got, n);

    /* an image of a sub-buffer at the base alignment: the driver's answer */
    size_t off = align / 8 > PX ? align / 8 : PX;
    cl_buffer_region reg = {off, bytes - off};
    cl_mem sub = clCreateSubBuffer(bb, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
    cl_mem is = image_of(ctx, 0, sub, (bytes - off) / PX, &err);
    printf("image of a sub-buffer: %d\n", err);
    if (is != NULL) {
        CHECK(clEnqueueWriteImage(q[d1], is, CL_TRUE, o0, r50, 0, 0, host, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q[d2], bb, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
        show("sub-buffer image write read as buffer", got, n);
        CHECK(clReleaseMemObject(is));
    }

    /* the image keeps its buffer: released first, the image still reads its contents */
    CHECK(clReleaseMemObject(sub));
    CHECK(clReleaseMemObject(bb));
    CHECK(clEnqueueReadImage(q[d1], ib, CL_TRUE, o0, full, 0, 0, got, 0, NULL, NULL));
    show("image after its buffer was released", got, n);

    /* invalid creations: the driver's codes */
    cl_mem bad;
    bad = image_of(ctx, 0, ba, W + 1, &err);
    printf("wider than the buffer: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    bad = image_of(ctx, 0, ba, 0, &err);
    printf("width 0: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    bad = image_of(ctx, CL_MEM_USE_HOST_PTR, ba, W, &err);
    printf("CL_MEM_USE_HOST_PTR: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    bad = image_of(ctx, CL_MEM_COPY_HOST_PTR, ba, W, &err);
    printf("CL_MEM_COPY_HOST_PTR: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    cl_mem ro = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CHECK(err);
    bad = image_of(ctx, CL_MEM_WRITE_ONLY, ro, W, &err);
    printf("write-only image of a read-only buffer: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    bad = image_of(ctx, 0, ro, W, &err);
    CHECK(err);
    CHECK(clGetMemObjectInfo(bad, CL_MEM_FLAGS, sizeof flags, &flags, NULL));
    printf("image of a read-only buffer: flags %#llx\n", (unsigned long long)flags);
    CHECK(clReleaseMemObject(bad));
    bad = image_of(ctx, 0, ia, W, &err);
    printf("image of an image: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    cl_image_format f = {CL_RGBA, CL_FLOAT};
    cl_image_desc d2d = {
        .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 10, .image_height = 10, .buffer = ba};
    bad = clCreateImage(ctx, 0, &f, &d2d, NULL, &err);
    printf("2D image of a buffer: %d\n", err == CL_SUCCESS ? 0 : err);
    if (bad)
        clReleaseMemObject(bad);
    cl_image_desc dh = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = W, .buffer = ba};
    bad = clCreateImage(ctx, 0, &f, &dh, host, &err);
    printf("host pointer: %d\n", err);
    if (bad)
        clReleaseMemObject(bad);
    CHECK(clReleaseMemObject(ro));

    CHECK(clReleaseMemObject(ia));
    CHECK(clReleaseMemObject(ib));
    CHECK(clReleaseMemObject(ba));
    CHECK(clReleaseKernel(scale));
    CHECK(clReleaseKernel(bump));
    CHECK(clReleaseProgram(prog));
    release_queues_context(ctx, nd, q);
    free(host);
    free(got);
    printf("done\n");
    return 0;
}
