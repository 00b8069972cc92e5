/* SPDX-License-Identifier: MIT */
// DQL descriptors filled from a real OpenCL platform (PoCL with POCL_DEVICES="pthread basic
// basic", loaded with dlopen as the runtime does), and queries over them select what they say.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

extern "C" {
#include "cl/dql/dql_device.h"
}

namespace
{

struct Loader {
    void *h = nullptr;
    cl_int (*get_platforms)(cl_uint, cl_platform_id *, cl_uint *) = nullptr;
    cl_int (*get_devices)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *) = nullptr;
    sluice_dql_device_info_fn device_info = nullptr;
    sluice_dql_platform_info_fn platform_info = nullptr;
    Loader()
    {
        // PoCL reads these when the platform is first queried.
        setenv("POCL_DEVICES", "pthread basic basic", 1);
        setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
        h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
            return;
        get_platforms = (decltype(get_platforms))dlsym(h, "clGetPlatformIDs");
        get_devices = (decltype(get_devices))dlsym(h, "clGetDeviceIDs");
        device_info = (sluice_dql_device_info_fn)dlsym(h, "clGetDeviceInfo");
        platform_info = (sluice_dql_platform_info_fn)dlsym(h, "clGetPlatformInfo");
    }
};

Loader &loader()
{
    static Loader l;
    return l;
}

std::vector<cl_device_id> pocl_devices()
{
    Loader &l = loader();
    std::vector<cl_device_id> out;
    if (!l.h || !l.get_platforms)
        return out;
    cl_uint n = 0;
    if (l.get_platforms(0, nullptr, &n) != CL_SUCCESS || n == 0)
        return out;
    std::vector<cl_platform_id> ps(n);
    l.get_platforms(n, ps.data(), nullptr);
    for (cl_platform_id p : ps) {
        char name[256] = "";
        l.platform_info(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
        if (std::string(name) != "Portable Computing Language")
            continue;
        cl_uint nd = 0;
        l.get_devices(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
        out.resize(nd);
        l.get_devices(p, CL_DEVICE_TYPE_ALL, nd, out.data(), nullptr);
    }
    return out;
}

std::vector<std::string> run(const char *query, const std::vector<sluice_dql_device> &devs)
{
    sluice_dql_query *q = nullptr;
    char err[1024];
    if (sluice_dql_parse(query, &q, err, sizeof err) != 0) {
        ADD_FAILURE() << err;
        return {};
    }
    std::vector<size_t> out(devs.size());
    size_t n = 0;
    EXPECT_EQ(sluice_dql_select(q, devs.data(), devs.size(), out.data(), &n), 0);
    sluice_dql_free(q);
    std::vector<std::string> r;
    for (size_t i = 0; i < n; i++)
        r.push_back(std::to_string(devs[out[i]].node) + ":" + std::string(devs[out[i]].name).substr(0, 5));
    return r;
}

using V = std::vector<std::string>;

} // namespace

TEST(DqlDevice, DescribesRealPoclDevices)
{
    std::vector<cl_device_id> ids = pocl_devices();
    ASSERT_EQ(ids.size(), 3u) << "needs PoCL (pocl-opencl-icd) with POCL_DEVICES='pthread basic basic'";
    Loader &l = loader();
    // Two "ranks" with the same three devices, as rank 0 would gather them.
    std::vector<sluice_dql_device> devs;
    for (uint64_t node = 0; node < 2; node++)
        for (size_t i = 0; i < ids.size(); i++) {
            sluice_dql_device d;
            ASSERT_EQ(sluice_dql_describe(ids[i], node, i, l.device_info, l.platform_info, &d), CL_SUCCESS);
            char name[1024];
            ASSERT_EQ(l.device_info(ids[i], CL_DEVICE_NAME, sizeof name, name, nullptr), CL_SUCCESS);
            EXPECT_EQ(std::string(d.name), std::string(name).substr(0, SLUICE_DQL_STR_MAX - 1));
            cl_ulong mem = 0;
            l.device_info(ids[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, nullptr);
            EXPECT_EQ(d.global_mem, mem);
            cl_uint cus = 0;
            l.device_info(ids[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr);
            EXPECT_EQ(d.compute_units, cus);
            EXPECT_TRUE(d.type & SLUICE_DQL_TYPE_CPU);
            EXPECT_TRUE(d.available);
            EXPECT_TRUE(d.compiler_available);
            EXPECT_GT(d.max_work_group_size, 0u);
            EXPECT_EQ(d.max_work_item_dimensions, 3u);
            EXPECT_EQ(std::string(d.platform), "Portable Computing Language");
            EXPECT_EQ(std::string(d.version).rfind("OpenCL ", 0), 0u) << d.version;
            EXPECT_EQ(d.node, node);
            EXPECT_EQ(d.index, i);
            devs.push_back(d);
        }
    EXPECT_EQ(run("SELECT ALL WHERE name LIKE 'basic*'", devs).size(), 4u);
    EXPECT_EQ(run("SELECT ALL FROM NODE 1 WHERE name LIKE 'pthread*'", devs), (V{"1:pthre"}));
    EXPECT_EQ(run("SELECT ALL WHERE type = gpu", devs), V{});
    EXPECT_EQ(run("SELECT ALL WHERE platform = 'portable computing language' AND type = cpu", devs).size(),
              6u);
    EXPECT_EQ(run("SELECT TOP 2 WHERE name LIKE 'pthread*' ORDER BY node DESC", devs),
              (V{"1:pthre", "0:pthre"}));
    std::string third = std::string(devs[2].name).substr(0, 5);
    EXPECT_EQ(run("SELECT POS 2", devs), (V{"0:" + third}));
    EXPECT_EQ(run("SELECT POS 0 FROM NODE 1 WHERE index >= 1", devs),
              (V{"1:" + std::string(devs[1].name).substr(0, 5)}));
}

namespace
{
cl_int fake_info(cl_device_id dev, cl_device_info what, size_t size, void *value, size_t *ret)
{
    static const std::string long_name(1000, 'n');
    if (dev == nullptr)
        return CL_INVALID_DEVICE;
    if (what == CL_DEVICE_TYPE) {
        cl_device_type t = CL_DEVICE_TYPE_ACCELERATOR;
        if (ret)
            *ret = sizeof t;
        if (value)
            memcpy(value, &t, sizeof t);
        return CL_SUCCESS;
    }
    if (what == CL_DEVICE_NAME || what == CL_DEVICE_VENDOR || what == CL_DEVICE_VERSION) {
        if (ret)
            *ret = long_name.size() + 1;
        if (value) {
            if (size < long_name.size() + 1)
                return CL_INVALID_VALUE;
            memcpy(value, long_name.c_str(), long_name.size() + 1);
        }
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE; // everything optional fails
}
} // namespace

TEST(DqlDevice, LongTextIsTruncatedAndOptionalFailuresReadAsZero)
{
    sluice_dql_device d;
    ASSERT_EQ(sluice_dql_describe((cl_device_id)1, 3, 4, fake_info, nullptr, &d), CL_SUCCESS);
    EXPECT_EQ(std::string(d.name), std::string(SLUICE_DQL_STR_MAX - 1, 'n'));
    // Marked cut (a query reading them is refused: test_dql_select.cpp); the rest is not.
    EXPECT_EQ(d.cut, (1u << SLUICE_DQL_ATTR_name) | (1u << SLUICE_DQL_ATTR_vendor) |
                         (1u << SLUICE_DQL_ATTR_version));
    EXPECT_EQ(d.type, (uint64_t)CL_DEVICE_TYPE_ACCELERATOR);
    EXPECT_EQ(d.global_mem, 0u);
    EXPECT_FALSE(d.available);
    EXPECT_STREQ(d.driver_version, "");
    EXPECT_STREQ(d.platform, "");
    EXPECT_EQ(d.node, 3u);
    EXPECT_EQ(d.index, 4u);
    EXPECT_EQ(sluice_dql_describe(nullptr, 0, 0, fake_info, nullptr, &d), CL_INVALID_DEVICE);
}
