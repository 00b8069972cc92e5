/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): images and samplers across devices. Device 1
 * gets a 2D image written with a host row pitch; a kernel on device 2 reads it through a sampler
 * and writes another image and a buffer; device 0 reads the results. Then copies (image to image,
 * image to buffer, buffer to image), a fill, a map for reading and one for writing, a 3D image
 * written on one device and read in part with host pitches on another, a linear-filtering
 * sampler, image and sampler queries, and the error codes of invalid calls. Prints every value
 * and return code, and an FNV-1a hash of each result: the same with N local devices and on N
 * ranks. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clCreateImage2D, as old programs call it */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateSampler */
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 37, H = 23, PITCH = 4 * W + 12, D3 = 5 };

static const char *source =
    "__kernel void shift(read_only image2d_t in, sampler_t s, write_only image2d_t out,\n"
    "                    __global uint *sums) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    uint4 p = read_imageui(in, s, (int2)(x - 1, y + 1));\n"
    "    write_imageui(out, (int2)(x, y), p + (uint4)(1, 2, 3, 4));\n"
    "    sums[y * get_global_size(0) + x] = p.x + p.y + p.z + p.w;\n"
    "}\n"
    "__kernel void blur(read_only image2d_t in, sampler_t s, __global float *out) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float2 c = (float2)((x + 0.25f) / get_global_size(0), (y + 0.75f) / get_global_size(1));\n"
    "    out[y * get_global_size(0) + x] = read_imagef(in, s, c).x;\n"
    "}\n";

static void hash(const char *what, const void *p, size_t n)
{
    printf("%s: %zu bytes, fnv %016llx\n", what, n, (unsigned long long)fnv1a(p, n));
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev[3];
    cl_uint nd = 0;
    cl_int err;
    first_platform_devices(&platform, 3, dev, &nd);
    printf("devices: %u\n", nd);
    for (cl_uint i = 0; i < nd; i++) {
        cl_bool images = CL_FALSE;
        size_t w2 = 0;
        cl_uint samplers = 0;
        CHECK(clGetDeviceInfo(dev[i], CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
        CHECK(clGetDeviceInfo(dev[i], CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof w2, &w2, NULL));
        CHECK(clGetDeviceInfo(dev[i], CL_DEVICE_MAX_SAMPLERS, sizeof samplers, &samplers, NULL));
        printf("device %u: image support %u, 2D max width %zu, samplers %u\n", i, images, w2, samplers);
    }
    cl_command_queue q[3];
    cl_context ctx = context_with_queues(nd, dev, q);
    cl_uint a = 1 % nd, b = 2 % nd, c = 0;

    cl_uint nfmt = 0;
    CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &nfmt));
    cl_image_format *fmts = calloc(nfmt, sizeof *fmts);
    CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, nfmt, fmts, NULL));
    printf("2D read-write formats: %u, hash %016llx\n", nfmt,
           (unsigned long long)fnv1a(fmts, nfmt * sizeof *fmts));
    free(fmts);

    /* 2D RGBA8 (uint) image from padded host rows. */
    cl_image_format rgba = {CL_RGBA, CL_UNSIGNED_INT8};
    unsigned char *host = calloc(H, PITCH);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < 4 * W; x++)
            host[y * PITCH + x] = (unsigned char)(x * 7 + y * 13);
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = H};
    cl_mem in = clCreateImage(ctx, CL_MEM_READ_ONLY, &rgba, &desc, NULL, &err);
    CHECK(err);
    cl_mem out = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &rgba, &desc, NULL, &err);
    CHECK(err);
    printf("element size %zu", image_info_size(in, CL_IMAGE_ELEMENT_SIZE));
    printf(", width %zu", image_info_size(in, CL_IMAGE_WIDTH));
    printf(", height %zu", image_info_size(in, CL_IMAGE_HEIGHT));
    printf(", row pitch %zu", image_info_size(in, CL_IMAGE_ROW_PITCH));
    cl_image_format f;
    CHECK(clGetImageInfo(in, CL_IMAGE_FORMAT, sizeof f, &f, NULL));
    cl_mem_object_type t;
    CHECK(clGetMemObjectInfo(in, CL_MEM_TYPE, sizeof t, &t, NULL));
    printf(", format %#x/%#x, type %#x\n", f.image_channel_order, f.image_channel_data_type, t);

    size_t o0[3] = {0, 0, 0}, full[3] = {W, H, 1};
    CHECK(clEnqueueWriteImage(q[a], in, CL_FALSE, o0, full, PITCH, 0, host, 0, NULL, NULL));
    CHECK(clFinish(q[a]));

    cl_sampler s = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "shift", &err);
    CHECK(err);
    cl_mem sums = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * H * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof in, &in));
    CHECK(clSetKernelArg(k, 1, sizeof s, &s));
    CHECK(clSetKernelArg(k, 2, sizeof out, &out));
    CHECK(clSetKernelArg(k, 3, sizeof sums, &sums));
    size_t gws[2] = {W, H};
    cl_event ran;
    CHECK(clEnqueueNDRangeKernel(q[b], k, 2, NULL, gws, NULL, 0, NULL, &ran));
    unsigned char *pix = calloc(W * H, 4);
    cl_uint *sv = calloc(W * H, sizeof *sv);
    CHECK(clEnqueueReadImage(q[c], out, CL_TRUE, o0, full, 0, 0, pix, 1, &ran, NULL));
    CHECK(clEnqueueReadBuffer(q[c], sums, CL_TRUE, 0, W * H * sizeof *sv, sv, 0, NULL, NULL));
    hash("kernel output image", pix, W * H * 4);
    hash("kernel sums", sv, W * H * sizeof *sv);
    printf("pixel (5,3): %u %u %u %u, sum (0,0) %u\n", pix[(3 * W + 5) * 4], pix[(3 * W + 5) * 4 + 1],
           pix[(3 * W + 5) * 4 + 2], pix[(3 * W + 5) * 4 + 3], sv[0]);

    /* A sub-region read back on another device with a host row pitch. */
    size_t so[3] = {3, 4, 0}, sr[3] = {11, 9, 1};
    unsigned char sub[9][11 * 4 + 5];
    memset(sub, 0xEE, sizeof sub);
    CHECK(clEnqueueReadImage(q[b], in, CL_TRUE, so, sr, sizeof sub[0], 0, sub, 0, NULL, NULL));
    hash("sub-region read with pitch", sub, sizeof sub);

    /* Copies: image to image (device b), image to buffer (a), buffer to image (c), fill (b). */
    cl_mem copy = clCreateImage2D(ctx, CL_MEM_READ_WRITE, &rgba, W, H, 0, NULL, &err);
    CHECK(err);
    size_t co[3] = {2, 1, 0}, cr[3] = {W - 4, H - 3, 1};
    CHECK(clEnqueueFillImage(q[a], copy, (cl_uint[4]){9, 8, 7, 6}, o0, full, 0, NULL, NULL));
    CHECK(clFinish(q[a]));
    CHECK(clEnqueueCopyImage(q[b], out, copy, o0, co, cr, 0, NULL, NULL));
    CHECK(clFinish(q[b]));
    cl_mem lin = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * H * 4 + 16, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueCopyImageToBuffer(q[a], copy, lin, o0, full, 16, 0, NULL, NULL));
    CHECK(clFinish(q[a]));
    cl_mem back = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &desc, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueFillImage(q[b], back, (cl_uint[4]){1, 2, 3, 4}, o0, full, 0, NULL, NULL));
    CHECK(clFinish(q[b]));
    size_t bo[3] = {5, 6, 0}, br[3] = {20, 10, 1};
    CHECK(clEnqueueCopyBufferToImage(q[c], lin, back, 16 + 4 * (W * 2 + 3), bo, br, 0, NULL, NULL));
    CHECK(clFinish(q[c]));
    CHECK(clEnqueueReadImage(q[b], back, CL_TRUE, o0, full, 0, 0, pix, 0, NULL, NULL));
    hash("copy, fill, image-buffer copies", pix, W * H * 4);

    /* Maps: read the copy on device a, write a block of it through a map on device b. */
    size_t rp = 0, mo[3] = {1, 2, 0}, mr[3] = {7, 5, 1};
    unsigned char *m =
        clEnqueueMapImage(q[a], back, CL_TRUE, CL_MAP_READ, mo, mr, &rp, NULL, 0, NULL, NULL, &err);
    CHECK(err);
    printf("map for reading: row pitch %zu, first pixel %u %u %u %u\n", rp, m[0], m[1], m[2], m[3]);
    uint64_t mh = 0;
    for (size_t y = 0; y < mr[1]; y++)
        mh ^= fnv1a(m + y * rp, mr[0] * 4) + y;
    printf("mapped block hash %016llx\n", (unsigned long long)mh);
    CHECK(clEnqueueUnmapMemObject(q[a], back, m, 0, NULL, NULL));
    m = clEnqueueMapImage(q[b], back, CL_TRUE, CL_MAP_WRITE, mo, mr, &rp, NULL, 0, NULL, NULL, &err);
    CHECK(err);
    for (size_t y = 0; y < mr[1]; y++)
        memset(m + y * rp, (int)(0x40 + y), mr[0] * 4);
    CHECK(clEnqueueUnmapMemObject(q[b], back, m, 0, NULL, NULL));
    CHECK(clFinish(q[b]));
    CHECK(clEnqueueReadImage(q[c], back, CL_TRUE, o0, full, 0, 0, pix, 0, NULL, NULL));
    hash("after a map for writing", pix, W * H * 4);

    /* 3D image, float: written on device a with host pitches, read in part on device b. */
    cl_image_format rf = {CL_R, CL_FLOAT};
    cl_image_desc d3 = {
        .image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = W, .image_height = H, .image_depth = D3};
    cl_mem vol = clCreateImage(ctx, CL_MEM_READ_WRITE, &rf, &d3, NULL, &err);
    CHECK(err);
    size_t hrp = (W + 3) * sizeof(float), hsp = hrp * (H + 1);
    float *fh = calloc(D3, hsp);
    for (int z = 0; z < D3; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                *(float *)((char *)fh + z * hsp + y * hrp + x * sizeof(float)) = x * 0.5f + y * 0.25f - z;
    size_t f3[3] = {W, H, D3}, vo[3] = {4, 3, 1}, vr[3] = {9, 6, 3};
    CHECK(clEnqueueWriteImage(q[a], vol, CL_TRUE, o0, f3, hrp, hsp, fh, 0, NULL, NULL));
    float part[3][6][10];
    memset(part, 0, sizeof part);
    CHECK(clEnqueueReadImage(q[b], vol, CL_TRUE, vo, vr, 10 * sizeof(float), sizeof part[0], part, 0, NULL,
                             NULL));
    hash("3D sub-volume", part, sizeof part);
    printf("3D value (4,3,1): %g\n", part[0][0][0]);

    /* Linear filtering with normalized coordinates on a float 2D image, on device b. */
    cl_image_desc d2f = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 8};
    float ramp[64];
    for (int i = 0; i < 64; i++)
        ramp[i] = (float)(i * i % 17);
    cl_mem fimg = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rf, &d2f, ramp, &err);
    CHECK(err);
    cl_sampler_properties sp[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                  CL_TRUE,
                                  CL_SAMPLER_ADDRESSING_MODE,
                                  CL_ADDRESS_REPEAT,
                                  CL_SAMPLER_FILTER_MODE,
                                  CL_FILTER_LINEAR,
                                  0};
    cl_sampler ls = clCreateSamplerWithProperties(ctx, sp, &err);
    CHECK(err);
    cl_kernel kb = clCreateKernel(prog, "blur", &err);
    CHECK(err);
    cl_mem fout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, 64 * sizeof(float), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kb, 0, sizeof fimg, &fimg));
    CHECK(clSetKernelArg(kb, 1, sizeof ls, &ls));
    CHECK(clSetKernelArg(kb, 2, sizeof fout, &fout));
    size_t g8[2] = {8, 8};
    CHECK(clEnqueueNDRangeKernel(q[b], kb, 2, NULL, g8, NULL, 0, NULL, NULL));
    float fr[64];
    CHECK(clEnqueueReadBuffer(q[b], fout, CL_TRUE, 0, sizeof fr, fr, 0, NULL, NULL));
    hash("linear sampling", fr, sizeof fr);
    printf("linear sample (1,2): %.6f\n", fr[2 * 8 + 1]);

    /* CL_MEM_USE_HOST_PTR: a map is the program's own memory; a 2D array written on device a, a
     * slice read back on device c. */
    cl_image_desc da = {.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY,
                        .image_width = W,
                        .image_height = H,
                        .image_array_size = 3,
                        .image_row_pitch = PITCH,
                        .image_slice_pitch = PITCH * H};
    unsigned char *arr = calloc(3, PITCH * H);
    for (int i = 0; i < 3 * PITCH * H; i++)
        arr[i] = (unsigned char)(i * 31 + 7);
    cl_mem ua = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &rgba, &da, arr, &err);
    CHECK(err);
    size_t ao[3] = {2, 3, 1}, ar[3] = {6, 4, 2}, asp = 0;
    unsigned char *am_ = clEnqueueMapImage(q[a], ua, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, ao, ar, &rp, &asp,
                                           0, NULL, NULL, &err);
    CHECK(err);
    printf("array map: at host_ptr + offset %s, row pitch %zu, slice pitch %zu\n",
           am_ == arr + PITCH * H + 3 * PITCH + 8 ? "yes" : "no", rp, asp);
    for (size_t z = 0; z < ar[2]; z++)
        for (size_t y = 0; y < ar[1]; y++)
            memset(am_ + z * asp + y * rp, (int)(0x80 + z * 8 + y), ar[0] * 4);
    CHECK(clEnqueueUnmapMemObject(q[a], ua, am_, 0, NULL, NULL));
    CHECK(clFinish(q[a]));
    unsigned char slice[H][W * 4];
    size_t so2[3] = {0, 0, 2}, sr2[3] = {W, H, 1};
    CHECK(clEnqueueReadImage(q[c], ua, CL_TRUE, so2, sr2, 0, 0, slice, 0, NULL, NULL));
    hash("array slice 2", slice, sizeof slice);
    cl_uint asize = 0;
    size_t as = image_info_size(ua, CL_IMAGE_ARRAY_SIZE);
    size_t urp = image_info_size(ua, CL_IMAGE_ROW_PITCH);
    size_t usp = image_info_size(ua, CL_IMAGE_SLICE_PITCH);
    printf("USE_HOST_PTR array: row pitch %zu, slice pitch %zu\n", urp, usp);
    CHECK(clGetMemObjectInfo(ua, CL_MEM_MAP_COUNT, sizeof asize, &asize, NULL));
    printf("array size %zu\n", as);

    /* A 1D image array (its images are rows, a slice pitch apart on the host) and a 1D image:
     * written on device b, read back in part on device a; the 1D image filled on device c. */
    cl_image_format r16 = {CL_RGBA, CL_UNSIGNED_INT16};
    cl_image_desc d1a = {.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY, .image_width = 29, .image_array_size = 6};
    cl_mem a1 = clCreateImage(ctx, CL_MEM_READ_WRITE, &r16, &d1a, NULL, &err);
    CHECK(err);
    unsigned short rows1[6][29 * 4 + 6];
    for (int i = 0; i < 6; i++)
        for (int x = 0; x < 29 * 4 + 6; x++)
            rows1[i][x] = (unsigned short)(i * 1000 + x * 3);
    size_t f1a[3] = {29, 6, 1}, o1a[3] = {5, 2, 0}, r1a[3] = {11, 3, 1};
    /* Packed host rows: PoCL 3.1 takes a 1D array's host rows a row pitch apart (the
     * specification: a slice pitch), so only packed ones mean the same everywhere. */
    CHECK(clEnqueueWriteImage(q[b], a1, CL_TRUE, o0, f1a, 0, 0, rows1, 0, NULL, NULL));
    unsigned short got1[3][11 * 4];
    memset(got1, 0, sizeof got1);
    CHECK(clEnqueueReadImage(q[a], a1, CL_TRUE, o1a, r1a, 0, 0, got1, 0, NULL, NULL));
    hash("1D array part", got1, sizeof got1);
    cl_image_desc d1 = {.image_type = CL_MEM_OBJECT_IMAGE1D, .image_width = 100};
    cl_mem i1 = clCreateImage(ctx, CL_MEM_READ_WRITE, &r16, &d1, NULL, &err);
    CHECK(err);
    size_t f1[3] = {100, 1, 1}, o1[3] = {10, 0, 0}, r1[3] = {50, 1, 1};
    CHECK(clEnqueueFillImage(q[c], i1, (cl_uint[4]){3, 4, 0, 0}, o0, f1, 0, NULL, NULL));
    CHECK(clFinish(q[c]));
    CHECK(clEnqueueWriteImage(q[b], i1, CL_TRUE, o1, r1, 0, 0, rows1[1], 0, NULL, NULL));
    unsigned short all1[400];
    CHECK(clEnqueueReadImage(q[a], i1, CL_TRUE, o0, f1, 0, 0, all1, 0, NULL, NULL));
    hash("1D image", all1, sizeof all1);
    clReleaseMemObject(i1);
    clReleaseMemObject(a1);

    /* Sampler queries. */
    cl_bool norm;
    cl_addressing_mode am;
    cl_filter_mode fm;
    cl_uint refs;
    size_t psize = 0;
    CHECK(clGetSamplerInfo(ls, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL));
    CHECK(clGetSamplerInfo(ls, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL));
    CHECK(clGetSamplerInfo(ls, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
    CHECK(clRetainSampler(ls));
    CHECK(clGetSamplerInfo(ls, CL_SAMPLER_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(clReleaseSampler(ls));
    CHECK(clGetSamplerInfo(ls, CL_SAMPLER_PROPERTIES, 0, NULL, &psize));
    cl_context sctx;
    CHECK(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof sctx, &sctx, NULL));
    printf("sampler: normalized %u, addressing %#x, filter %#x, references %u, properties %zu bytes, context "
           "%s\n",
           norm, am, fm, refs, psize, sctx == ctx ? "same" : "other");

    /* Errors, as the driver gives them. */
    cl_image_desc zero = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 0, .image_height = 4};
    cl_mem bad = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &zero, NULL, &err);
    printf("width 0: %d%s\n", err, bad ? " (an image)" : "");
    size_t maxw = 0;
    CHECK(clGetDeviceInfo(dev[0], CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof maxw, &maxw, NULL));
    cl_image_desc wide = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = maxw + 1, .image_height = 1};
    bad = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &wide, NULL, &err);
    printf("width above the maximum: %d%s\n", err, bad ? " (an image)" : "");
    cl_image_format odd = {CL_RGB, CL_FLOAT};
    bad = clCreateImage(ctx, CL_MEM_READ_WRITE, &odd, &desc, NULL, &err);
    printf("CL_RGB float: %d%s\n", err, bad ? " (an image)" : "");
    bad = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &rgba, &desc, NULL, &err);
    printf("COPY_HOST_PTR without a pointer: %d%s\n", err, bad ? " (an image)" : "");
    cl_image_desc pitched = desc;
    pitched.image_row_pitch = 4 * W - 4;
    bad = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &rgba, &pitched, host, &err);
    printf("row pitch below the width: %d%s\n", err, bad ? " (an image)" : "");
    size_t past[3] = {W - 2, 0, 0}, three[3] = {3, 1, 1};
    printf("read past the edge: %d\n",
           clEnqueueReadImage(q[a], in, CL_TRUE, past, three, 0, 0, pix, 0, NULL, NULL));
    size_t deep[3] = {1, 1, 2};
    printf("2D region of depth 2: %d\n",
           clEnqueueReadImage(q[a], in, CL_TRUE, o0, deep, 0, 0, pix, 0, NULL, NULL));
    printf("copy between formats: %d\n", clEnqueueCopyImage(q[a], in, vol, o0, o0, three, 0, NULL, NULL));
    printf("copy onto itself, overlapping: %d\n",
           clEnqueueCopyImage(q[a], copy, copy, o0, three, full, 0, NULL, NULL));
    size_t at3[3] = {3, 1, 0}, r10[3] = {10, 5, 1};
    printf("copy onto itself, overlapping inside: %d\n",
           clEnqueueCopyImage(q[a], copy, copy, o0, at3, r10, 0, NULL, NULL));
    printf("map without a row pitch: ");
    m = clEnqueueMapImage(q[a], back, CL_TRUE, CL_MAP_READ, o0, three, NULL, NULL, 0, NULL, NULL, &err);
    printf("%d%s\n", err, m ? " (a pointer)" : "");
    printf("image to a buffer too small: %d\n",
           clEnqueueCopyImageToBuffer(q[a], in, sums, o0, full, W * H * 4, 0, NULL, NULL));
    cl_uint nsmall = 0;
    printf("formats with num 0 and a list: %d\n",
           clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, &rgba, &nsmall));

    clReleaseMemObject(ua);
    free(arr);
    clReleaseMemObject(fout);
    clReleaseKernel(kb);
    clReleaseSampler(ls);
    clReleaseMemObject(fimg);
    clReleaseMemObject(vol);
    clReleaseMemObject(back);
    clReleaseMemObject(lin);
    clReleaseMemObject(copy);
    clReleaseMemObject(sums);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseSampler(s);
    clReleaseMemObject(out);
    clReleaseMemObject(in);
    for (cl_uint i = 0; i < nd; i++)
        clReleaseCommandQueue(q[i]);
    clReleaseContext(ctx);
    free(fh);
    free(sv);
    free(pix);
    free(host);
    return 0;
}
