/* SPDX-License-Identifier: MIT */
/* The video pipeline's edge stencil (video_edges in mpi_dsm_video.h) as an OpenCL kernel on the
 * process role's own device: the first device of the first platform, which under sluice is the
 * rank's local device through sluice's OpenCL layer (SLUICE_OPENCL=on). Integer arithmetic, so
 * the kernel's bytes are the host's. Header-only, like the other sample helpers. */
#ifndef MPI_DSM_VIDEO_CL_H
#define MPI_DSM_VIDEO_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *video_cl_source =
    "__kernel void edges(__global const uchar *in, __global uchar *out, uint w, uint h)\n"
    "{\n"
    "    uint x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x >= w || y >= h)\n"
    "        return;\n"
    "    uint i = y * w + x;\n"
    "    uchar v = 0;\n"
    "    if (x >= 1 && y >= 1 && x + 1 < w && y + 1 < h) {\n"
    "        int gx = -in[i - w - 1] - 2 * in[i - 1] - in[i + w - 1] + in[i - w + 1] + 2 * in[i + 1] +\n"
    "                 in[i + w + 1];\n"
    "        int gy = -in[i - w - 1] - 2 * in[i - w] - in[i - w + 1] + in[i + w - 1] + 2 * in[i + w] +\n"
    "                 in[i + w + 1];\n"
    "        if (abs(gx) + abs(gy) > 200)\n"
    "            v = 128;\n"
    "    }\n"
    "    out[i] = v;\n"
    "}\n";

struct video_cl {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem in, out;
    uint32_t w, h;
    char device[128];
};

static void video_cl_check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "mpi_dsm_video: %s failed: OpenCL error %d\n", what, err);
        exit(1);
    }
}

static void video_cl_init(struct video_cl *cl, uint32_t w, uint32_t h)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err = clGetPlatformIDs(1, &plat, NULL);
    video_cl_check(err, "clGetPlatformIDs");
    video_cl_check(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    video_cl_check(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof cl->device, cl->device, NULL),
                   "clGetDeviceInfo");
    cl->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    video_cl_check(err, "clCreateContext");
    cl->q = clCreateCommandQueue(cl->ctx, dev, 0, &err);
    video_cl_check(err, "clCreateCommandQueue");
    cl->prog = clCreateProgramWithSource(cl->ctx, 1, &video_cl_source, NULL, &err);
    video_cl_check(err, "clCreateProgramWithSource");
    err = clBuildProgram(cl->prog, 1, &dev, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(cl->prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "mpi_dsm_video: edge kernel build failed: %s\n", log);
        exit(1);
    }
    cl->k = clCreateKernel(cl->prog, "edges", &err);
    video_cl_check(err, "clCreateKernel");
    cl->in = clCreateBuffer(cl->ctx, CL_MEM_READ_ONLY, (size_t)w * h, NULL, &err);
    video_cl_check(err, "clCreateBuffer");
    cl->out = clCreateBuffer(cl->ctx, CL_MEM_WRITE_ONLY, (size_t)w * h, NULL, &err);
    video_cl_check(err, "clCreateBuffer");
    cl->w = w;
    cl->h = h;
    video_cl_check(clSetKernelArg(cl->k, 0, sizeof cl->in, &cl->in), "clSetKernelArg");
    video_cl_check(clSetKernelArg(cl->k, 1, sizeof cl->out, &cl->out), "clSetKernelArg");
    video_cl_check(clSetKernelArg(cl->k, 2, sizeof w, &w), "clSetKernelArg");
    video_cl_check(clSetKernelArg(cl->k, 3, sizeof h, &h), "clSetKernelArg");
}

/* video_edges on the device: out gets the edge image; returns the edge count. */
static uint32_t video_cl_edges(struct video_cl *cl, const unsigned char *in, unsigned char *out)
{
    size_t n = (size_t)cl->w * cl->h, global[2] = {cl->w, cl->h};
    video_cl_check(clEnqueueWriteBuffer(cl->q, cl->in, CL_FALSE, 0, n, in, 0, NULL, NULL),
                   "clEnqueueWriteBuffer");
    video_cl_check(clEnqueueNDRangeKernel(cl->q, cl->k, 2, NULL, global, NULL, 0, NULL, NULL),
                   "clEnqueueNDRangeKernel");
    video_cl_check(clEnqueueReadBuffer(cl->q, cl->out, CL_TRUE, 0, n, out, 0, NULL, NULL),
                   "clEnqueueReadBuffer");
    uint32_t edges = 0;
    for (size_t i = 0; i < n; i++)
        edges += out[i] == 128;
    return edges;
}

static void video_cl_free(struct video_cl *cl)
{
    clReleaseMemObject(cl->in);
    clReleaseMemObject(cl->out);
    clReleaseKernel(cl->k);
    clReleaseProgram(cl->prog);
    clReleaseCommandQueue(cl->q);
    clReleaseContext(cl->ctx);
}

#endif
