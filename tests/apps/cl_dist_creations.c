/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): creates many objects and uses each at once, as
 * programs written around a per-device loop do. On every device of the first platform: a queue
 * (profiling on), N buffers each written from the host and filled in part, a sub-buffer of each,
 * and, where images are supported, N 2D images each written, plus a sampler; queries of what was
 * created (memory sizes and flags, the queue's properties, image pitches, the sampler's modes);
 * then every buffer, sub-buffer and image read back and hashed, and the codes of invalid creations
 * (a size above CL_DEVICE_MAX_MEM_ALLOC_SIZE, unsupported queue properties, a misaligned
 * sub-buffer). With --copy2d ITER, then (alone: instead) the loop of the conformance suite's copy_2D
 * (cl_copy2d.h): per iteration and device, a source image of changing size written, a destination image, a
 * copy between them and a blocking read checked against the source, both released; --time prints the loop's
 * seconds. Output: the same with N local devices and on N ranks. With --oversize MIB, one buffer of MIB MiB,
 * filled on every device and read back there: each step's code and event status (a device that cannot hold it
 * fails its commands). */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "cl_copy2d.h"
#include "cl_test_util.h"
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXD = 8, BUF = 4096, IW = 19, IH = 7 };

static void creations(cl_context ctx, cl_uint nd, const cl_device_id *dev, int n)
{
    cl_int err;
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    uint64_t h = 1469598103934665603ull, hk[3] = {h, h, h}; /* buffers, sub-buffers, images */
    for (cl_uint d = 0; d < nd; d++) {
        cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev[d], qp, &err);
        CHECK(err);
        cl_command_queue_properties got = 0;
        CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL));
        cl_uint align = 0;
        cl_bool images = CL_FALSE;
        CHECK(clGetDeviceInfo(dev[d], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL));
        CHECK(clGetDeviceInfo(dev[d], CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
        size_t sub_at = align / 8;
        cl_mem *buf = calloc((size_t)n, sizeof *buf), *sub = calloc((size_t)n, sizeof *sub);
        cl_mem *img = calloc((size_t)n, sizeof *img);
        /* Each object's own host bytes: a non-blocking write may read them until it completes. */
        unsigned char *hosts = malloc((size_t)n * BUF), *pxs = malloc((size_t)n * IW * IH * 4);
        unsigned char *host = malloc(BUF), *px = malloc(IW * IH * 4);
        size_t sizes = 0, pitches = 0;
        for (int i = 0; i < n; i++) {
            buf[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BUF + (size_t)i, NULL, &err);
            CHECK(err);
            unsigned char *hb = hosts + (size_t)i * BUF;
            for (size_t k = 0; k < BUF; k++)
                hb[k] = (unsigned char)(k * 7 + (size_t)i * 13 + d);
            CHECK(clEnqueueWriteBuffer(q, buf[i], CL_FALSE, 0, BUF, hb, 0, NULL, NULL));
            unsigned char pat = (unsigned char)(i + 1);
            CHECK(clEnqueueFillBuffer(q, buf[i], &pat, 1, (size_t)i % 64, 64, 0, NULL, NULL));
            cl_buffer_region r = {sub_at, 256};
            sub[i] = clCreateSubBuffer(buf[i], 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
            CHECK(err);
            sizes += mem_info_size(buf[i], CL_MEM_SIZE) + mem_info_size(sub[i], CL_MEM_SIZE);
            if (images) {
                cl_image_desc desc = {
                    .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IW, .image_height = IH};
                img[i] = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
                CHECK(err);
                unsigned char *hp = pxs + (size_t)i * IW * IH * 4;
                for (size_t k = 0; k < IW * IH * 4; k++)
                    hp[k] = (unsigned char)(k * 3 + (size_t)i + d * 5);
                size_t o[3] = {0, 0, 0}, reg[3] = {IW, IH, 1};
                CHECK(clEnqueueWriteImage(q, img[i], CL_FALSE, o, reg, 0, 0, hp, 0, NULL, NULL));
                pitches += image_info_size(img[i], CL_IMAGE_ROW_PITCH);
            }
        }
        CHECK(clFinish(q));
        for (int i = 0; i < n; i++) {
            CHECK(clEnqueueReadBuffer(q, buf[i], CL_TRUE, 0, BUF, host, 0, NULL, NULL));
            hk[0] = fnv1a(host, BUF) ^ (hk[0] * 1099511628211ull);
            CHECK(clEnqueueReadBuffer(q, sub[i], CL_TRUE, 0, 256, host, 0, NULL, NULL));
            hk[1] = fnv1a(host, 256) ^ (hk[1] * 1099511628211ull);
            if (images) {
                size_t o[3] = {0, 0, 0}, reg[3] = {IW, IH, 1};
                CHECK(clEnqueueReadImage(q, img[i], CL_TRUE, o, reg, 0, 0, px, 0, NULL, NULL));
                hk[2] = fnv1a(px, IW * IH * 4) ^ (hk[2] * 1099511628211ull);
            }
        }
        printf(
            "device %u: queue properties %llu, %d buffers and sub-buffers of %zu bytes in all, %d images of "
            "row pitches %zu in all\n",
            d, (unsigned long long)got, n, sizes, images ? n : 0, pitches);
        if (images) {
            cl_sampler s = clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err);
            CHECK(err);
            cl_addressing_mode am = 0;
            cl_filter_mode fm = 0;
            CHECK(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL));
            CHECK(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
            printf("device %u: sampler addressing %#x, filter %#x\n", d, am, fm);
            CHECK(clReleaseSampler(s));
        }
        for (int i = 0; i < n; i++) {
            CHECK(clReleaseMemObject(sub[i]));
            CHECK(clReleaseMemObject(buf[i]));
            if (images)
                CHECK(clReleaseMemObject(img[i]));
        }
        cl_ulong max_alloc = 0;
        CHECK(clGetDeviceInfo(dev[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL));
        cl_mem bad = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)max_alloc * 2 + 1, NULL, &err);
        printf("device %u: a buffer above every device's largest allocation: %d%s\n", d, err,
               bad == NULL ? "" : " (created)");
        if (align > 8 && buf != NULL) {
            cl_mem whole = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BUF, NULL, &err);
            CHECK(err);
            cl_buffer_region r = {1, 16};
            cl_mem mis = clCreateSubBuffer(whole, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
            printf("device %u: a sub-buffer at offset 1: %d\n", d, err);
            if (mis != NULL)
                CHECK(clReleaseMemObject(mis));
            CHECK(clReleaseMemObject(whole));
        }
        free(buf), free(sub), free(img), free(host), free(px), free(hosts), free(pxs);
        CHECK(clReleaseCommandQueue(q));
    }
    printf("hash: buffers %016llx, sub-buffers %016llx, images %016llx\n", (unsigned long long)hk[0],
           (unsigned long long)hk[1], (unsigned long long)hk[2]);
}

static void oversize(cl_context ctx, cl_uint nd, const cl_device_id *dev, size_t mib)
{
    cl_int err;
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, mib << 20, NULL, &err);
    printf("a buffer of %zu MiB: %d\n", mib, err);
    if (b == NULL)
        return;
    printf("its CL_MEM_SIZE: %zu\n", mem_info_size(b, CL_MEM_SIZE));
    for (cl_uint d = 0; d < nd; d++) {
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev[d], NULL, &err);
        CHECK(err);
        unsigned char pat = (unsigned char)(0x40 + d), got[4096];
        cl_event e = NULL;
        err = clEnqueueFillBuffer(q, b, &pat, 1, 0, sizeof got, 0, NULL, &e);
        cl_int waited = e != NULL ? clWaitForEvents(1, &e) : err, status = 0;
        if (e != NULL)
            CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        cl_int read = clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        printf("device %u: fill %d, wait %d, status %d; blocking read %d%s\n", d, err, waited, status, read,
               read == CL_SUCCESS && got[0] == pat && got[4095] == pat ? ", the pattern" : "");
        if (e != NULL)
            CHECK(clReleaseEvent(e));
        clFinish(q);
        CHECK(clReleaseCommandQueue(q));
    }
    CHECK(clReleaseMemObject(b));
}

int main(int argc, char **argv)
{
    int n = -1, iters = 0, timed = 0; /* n: 100 unless given, 0 with --copy2d alone */
    size_t mib = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--copy2d") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--oversize") == 0 && i + 1 < argc)
            mib = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--time") == 0)
            timed = 1;
        else
            n = atoi(argv[i]);
    }
    cl_platform_id platform;
    cl_device_id dev[MAXD];
    cl_uint nd = 0;
    first_platform_devices(&platform, MAXD, dev, &nd);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, nd, dev, NULL, NULL, &err);
    CHECK(err);
    int rc = 0;
    if (n < 0)
        n = iters > 0 || mib > 0 ? 0 : 100;
    if (mib > 0)
        oversize(ctx, nd, dev, mib);
    if (n > 0)
        creations(ctx, nd, dev, n);
    if (iters > 0)
        rc = copy2d(ctx, nd, dev, iters, timed);
    CHECK(clReleaseContext(ctx));
    return rc;
}
