// SPDX-License-Identifier: MIT
// Sample OpenCL C++ program (knows nothing of sluice), written as common benchmarks are: with the
// Khronos C++ bindings and exceptions, a program per device built with Program::build({device})
// (which asks the build log of every device of the program and throws if any query fails), then
// one program built for every device with Program::build(); a kernel of each runs on its device.
#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#include <CL/opencl.hpp>
#include <cstdio>
#include <vector>

static const char *src = "__kernel void k(__global int *v, int x) { v[get_global_id(0)] = x; }\n";

static void run(const cl::Context &ctx, const cl::Device &dev, const cl::Program &prog, int x,
                const char *what)
{
    cl::CommandQueue q(ctx, dev);
    cl::Buffer buf(ctx, CL_MEM_READ_WRITE, 4 * sizeof(cl_int));
    cl::Kernel k(prog, "k");
    k.setArg(0, buf);
    k.setArg(1, x);
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(4));
    std::vector<cl_int> out(4);
    q.enqueueReadBuffer(buf, CL_TRUE, 0, 4 * sizeof(cl_int), out.data());
    std::printf("%s: %d %d %d %d\n", what, out[0], out[1], out[2], out[3]);
}

int main()
{
    try {
        std::vector<cl::Platform> platforms;
        cl::Platform::get(&platforms);
        std::vector<cl::Device> devs;
        platforms.at(0).getDevices(CL_DEVICE_TYPE_ALL, &devs);
        cl::Context ctx(devs);
        for (size_t d = 0; d < devs.size(); d++) {
            cl::Program prog(ctx, src);
            prog.build(std::vector<cl::Device>{devs[d]}, "-DPER_DEVICE");
            auto logs = prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>();
            std::printf("device %zu built alone: %zu logs, status %d\n", d, logs.size(),
                        (int)prog.getBuildInfo<CL_PROGRAM_BUILD_STATUS>(devs[d]));
            char what[64];
            std::snprintf(what, sizeof what, "kernel of device %zu's program", d);
            run(ctx, devs[d], prog, (int)d + 1, what);
        }
        cl::Program all(ctx, src);
        all.build();
        for (size_t d = 0; d < devs.size(); d++) {
            char what[64];
            std::snprintf(what, sizeof what, "kernel of the common program on device %zu", d);
            run(ctx, devs[d], all, 10 + (int)d, what);
        }
    } catch (const cl::Error &e) {
        std::fprintf(stderr, "cl::Error %s: %d\n", e.what(), e.err());
        return 1;
    }
    return 0;
}
