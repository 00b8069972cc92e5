/* SPDX-License-Identifier: MIT */
/* Buffers of odd sizes written and read back through one device, the way distributed OpenCL cuts
 * them into pieces (docs/ENV.md, SLUICE_DIST_CHUNK): for each size, a host pattern is written
 * (blocking, then as several non-blocking writes of slices), a kernel adds 1 to every byte on the
 * device, and the buffer is read back (blocking, then non-blocking slices). Every byte is checked;
 * one line per size and queue kind gives the size and a checksum, so that the output is the same
 * wherever the device is. An in-order queue, then an out-of-order one (where the events order
 * the commands). Exit status 1 with the first wrong byte on stderr. */
#include <stdint.h>
#include <string.h>

#include "cl_test_util.h"

static const char *src = "__kernel void inc(__global uchar *b) { size_t i = get_global_id(0); b[i] += 1; }\n";

static unsigned char pattern(size_t i, size_t size)
{
    return (unsigned char)((i * 131u + size * 7u + (i >> 9)) & 0xff);
}

static int check(const char *what, const unsigned char *got, size_t size, int plus)
{
    for (size_t i = 0; i < size; i++)
        if (got[i] != (unsigned char)(pattern(i, size) + plus)) {
            fprintf(stderr, "%s of %zu bytes: byte %zu is %u, expected %u\n", what, size, i, got[i],
                    (unsigned char)(pattern(i, size) + plus));
            return 1;
        }
    return 0;
}

int main(void)
{
    static const size_t sizes[] = {1, 4097, 262144, 262145, 777777, 1048576, 3145733};
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    int bad = 0;
    for (int ooo = 0; ooo < 2; ooo++) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0,
                                       0};
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
        CHECK(err);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t size = sizes[s];
            unsigned char *host = malloc(size), *back = malloc(size);
            if (host == NULL || back == NULL)
                return 1;
            for (size_t i = 0; i < size; i++)
                host[i] = pattern(i, size);
            cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
            CHECK(err);
            CHECK(clSetKernelArg(k, 0, sizeof b, &b));
            /* blocking write, kernel, blocking read */
            cl_event w, kev, r[3];
            CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, size, host, 0, NULL, &w));
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &size, NULL, 1, &w, &kev));
            memset(back, 0, size);
            CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, size, back, 1, &kev, NULL));
            bad |= check(ooo ? "blocking read (out of order)" : "blocking read", back, size, 1);
            CHECK(clReleaseEvent(w));
            CHECK(clReleaseEvent(kev));
            /* three non-blocking slices each way, the kernel between them */
            size_t cut[4] = {0, size / 3, size - size / 5, size};
            cl_event ws[3];
            for (int i = 0; i < 3; i++)
                CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, cut[i], cut[i + 1] - cut[i], host + cut[i], 0,
                                           NULL, &ws[i]));
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &size, NULL, 3, ws, &kev));
            memset(back, 0, size);
            for (int i = 0; i < 3; i++)
                CHECK(clEnqueueReadBuffer(q, b, CL_FALSE, cut[i], cut[i + 1] - cut[i], back + cut[i], 1, &kev,
                                          &r[i]));
            CHECK(clWaitForEvents(3, r));
            bad |= check(ooo ? "sliced read (out of order)" : "sliced read", back, size, 1);
            uint64_t sum = 0;
            for (size_t i = 0; i < size; i++)
                sum = sum * 31 + back[i];
            printf("%s size %zu: ok, checksum %016llx\n", ooo ? "out-of-order" : "in-order", size,
                   (unsigned long long)sum);
            for (int i = 0; i < 3; i++) {
                CHECK(clReleaseEvent(ws[i]));
                CHECK(clReleaseEvent(r[i]));
            }
            CHECK(clReleaseEvent(kev));
            CHECK(clReleaseMemObject(b));
            free(host);
            free(back);
            if (bad)
                return 1;
        }
        CHECK(clReleaseCommandQueue(q));
    }
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
