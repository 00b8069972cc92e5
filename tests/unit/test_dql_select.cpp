/* SPDX-License-Identifier: MIT */
// DQL evaluation over a table of device descriptors: FROM NODE, WHERE, ORDER BY (stable,
// default order node then index), ALL / TOP k / POS i.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "cl/dql/dql.h"
}

namespace
{

sluice_dql_device dev(uint64_t node, uint64_t index, uint64_t type, const char *vendor, const char *name,
                      uint64_t cus, uint64_t clock, uint64_t mem, bool fp64 = true)
{
    sluice_dql_device d;
    memset(&d, 0, sizeof d);
    d.node = node;
    d.index = index;
    d.type = type;
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.version, sizeof d.version, "OpenCL 3.0");
    d.compute_units = cus;
    d.clock = clock;
    d.global_mem = mem;
    d.available = true;
    d.fp64 = fp64;
    return d;
}

const uint64_t G = 1ull << 30;

// A cluster given out of order on purpose: the default order must come from (node, index).
std::vector<sluice_dql_device> cluster()
{
    return {
        dev(2, 1, SLUICE_DQL_TYPE_GPU, "NVIDIA Corporation", "NVIDIA H200", 132, 1980, 140 * G),
        dev(0, 0, SLUICE_DQL_TYPE_CPU | SLUICE_DQL_TYPE_DEFAULT, "AuthenticAMD", "cpu-haswell-AMD EPYC", 2,
            3000, 20 * G),
        dev(1, 0, SLUICE_DQL_TYPE_CPU, "AuthenticAMD", "basic-AMD EPYC", 2, 3000, 20 * G, false),
        dev(2, 0, SLUICE_DQL_TYPE_GPU, "NVIDIA Corporation", "Tesla V100", 80, 1530, 16 * G),
        dev(1, 1, SLUICE_DQL_TYPE_CPU, "AuthenticAMD", "basic-AMD EPYC", 2, 3000, 20 * G, false),
        dev(3, 0, SLUICE_DQL_TYPE_ACCELERATOR, "Xilinx", "u280", 1, 300, 8 * G),
    };
}

// Runs a query; returns the selected devices as "node.index" strings.
std::vector<std::string> select(const std::string &query,
                                const std::vector<sluice_dql_device> &devs = cluster())
{
    sluice_dql_query *q = nullptr;
    char err[1024];
    if (sluice_dql_parse(query.c_str(), &q, err, sizeof err) != 0) {
        ADD_FAILURE() << query << ": " << err;
        return {};
    }
    std::vector<size_t> out(devs.size() + 1, (size_t)-1);
    size_t n = 12345;
    EXPECT_EQ(sluice_dql_select(q, devs.data(), devs.size(), out.data(), &n), 0);
    sluice_dql_free(q);
    std::vector<std::string> r;
    for (size_t i = 0; i < n; i++)
        r.push_back(std::to_string(devs[out[i]].node) + "." + std::to_string(devs[out[i]].index));
    return r;
}

using V = std::vector<std::string>;

} // namespace

TEST(DqlSelect, AllInDefaultOrder)
{
    EXPECT_EQ(select("SELECT ALL"), (V{"0.0", "1.0", "1.1", "2.0", "2.1", "3.0"}));
}

TEST(DqlSelect, TopAndPos)
{
    EXPECT_EQ(select("SELECT TOP 2"), (V{"0.0", "1.0"}));
    EXPECT_EQ(select("SELECT TOP 100"), (V{"0.0", "1.0", "1.1", "2.0", "2.1", "3.0"}));
    EXPECT_EQ(select("SELECT POS 0"), (V{"0.0"}));
    EXPECT_EQ(select("SELECT POS 4"), (V{"2.1"}));
    EXPECT_EQ(select("SELECT POS 6"), V{}); // past the end: nothing, as OpenCL's CL_DEVICE_NOT_FOUND
    EXPECT_EQ(select("SELECT POS 1 WHERE type = gpu"), (V{"2.1"}));
}

TEST(DqlSelect, FromNode)
{
    EXPECT_EQ(select("SELECT ALL FROM NODE 1"), (V{"1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL FROM NODE 3, 0"), (V{"0.0", "3.0"})); // the list filters, it does not order
    EXPECT_EQ(select("SELECT ALL FROM NODE 7"), V{});
    EXPECT_EQ(select("SELECT TOP 1 FROM NODE 2 WHERE type = gpu"), (V{"2.0"}));
}

TEST(DqlSelect, WhereConditions)
{
    EXPECT_EQ(select("SELECT ALL WHERE type = gpu"), (V{"2.0", "2.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE type != cpu"), (V{"2.0", "2.1", "3.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE type = default"),
              (V{"0.0"})); // types are bits: a device may be several
    EXPECT_EQ(select("SELECT ALL WHERE type = cpu AND type = default"), (V{"0.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE vendor = 'nvidia corporation'"), (V{"2.0", "2.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE vendor = nvidia"), V{}); // = is whole-value equality
    EXPECT_EQ(select("SELECT ALL WHERE vendor LIKE 'nvidia*'"), (V{"2.0", "2.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE name LIKE '*epyc'"), (V{"0.0", "1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE name LIKE 'basic-??\?-EPYC'"), V{});
    EXPECT_EQ(select("SELECT ALL WHERE name LIKE 'basic-??\? EPYC'"), (V{"1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE compute_units >= 80"), (V{"2.0", "2.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE clock < 1000 OR global_mem > 100G"), (V{"2.1", "3.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE global_mem >= 16GiB AND global_mem <= 20G"),
              (V{"0.0", "1.0", "1.1", "2.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE NOT fp64"), (V{"1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE fp64 = false OR NOT (type = cpu OR type = gpu)"),
              (V{"1.0", "1.1", "3.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE node = 1 AND index = 1"), (V{"1.1"}));
    EXPECT_EQ(select("SELECT ALL WHERE pos >= 3"), (V{"2.0", "2.1", "3.0"}));
    EXPECT_EQ(select("SELECT ALL WHERE version = 'opencl 3.0'"),
              (V{"0.0", "1.0", "1.1", "2.0", "2.1", "3.0"}));
}

TEST(DqlSelect, OrderByIsStableOverTheDefaultOrder)
{
    EXPECT_EQ(select("SELECT ALL ORDER BY clock DESC"), (V{"0.0", "1.0", "1.1", "2.1", "2.0", "3.0"}));
    EXPECT_EQ(select("SELECT ALL ORDER BY clock"), (V{"3.0", "2.0", "2.1", "0.0", "1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL ORDER BY type DESC, compute_units DESC"),
              (V{"3.0", "2.1", "2.0", "0.0", "1.0", "1.1"}));
    EXPECT_EQ(select("SELECT ALL ORDER BY name"),
              (V{"1.0", "1.1", "0.0", "2.1", "2.0", "3.0"})); // case-insensitive
    EXPECT_EQ(select("SELECT ALL ORDER BY node DESC, index DESC"),
              (V{"3.0", "2.1", "2.0", "1.1", "1.0", "0.0"}));
    EXPECT_EQ(select("SELECT TOP 2 WHERE type = gpu OR type = accelerator ORDER BY global_mem DESC"),
              (V{"2.1", "2.0"}));
    EXPECT_EQ(select("SELECT POS 0 ORDER BY compute_units DESC"), (V{"2.1"}));
}

TEST(DqlSelect, UnterminatedDescriptorStringsAreRead)
{
    // A runtime that fills a text field to the last byte must not make the evaluator overrun it.
    auto devs = cluster();
    memset(devs[0].name, 'a', sizeof devs[0].name);
    EXPECT_EQ(select("SELECT ALL WHERE name LIKE 'aaa*'", devs), (V{"2.1"}));
    EXPECT_EQ(select("SELECT TOP 1 ORDER BY name", devs), (V{"2.1"}));
}

TEST(DqlSelect, EmptyTableAndMatchOne)
{
    sluice_dql_query *q = nullptr;
    char err[256];
    ASSERT_EQ(sluice_dql_parse("SELECT ALL WHERE pos = 3 AND type = gpu", &q, err, sizeof err), 0) << err;
    size_t n = 99, out[1];
    EXPECT_EQ(sluice_dql_select(q, nullptr, 0, out, &n), 0);
    EXPECT_EQ(n, 0u);
    auto devs = cluster();
    EXPECT_TRUE(sluice_dql_match(q, &devs[0], 3));
    EXPECT_FALSE(sluice_dql_match(q, &devs[0], 2));
    EXPECT_FALSE(sluice_dql_match(q, &devs[1], 3));
    sluice_dql_free(q);
}

TEST(DqlSelect, CutTextIsNeverCompared)
{
    // A device whose name was longer than its field (dql_device.c marks it): a query that reads
    // the name, in WHERE or ORDER BY, is refused with that device and attribute; others are not.
    auto devs = cluster();
    devs[3].cut = 1u << SLUICE_DQL_ATTR_name;
    const struct {
        const char *query;
        size_t device;
    } cases[] = {{"SELECT ALL WHERE name LIKE 'Tesla*'", 3},
                 {"SELECT ALL WHERE type = gpu AND NOT name = 'x'", 3},
                 {"SELECT ALL ORDER BY name", 3},
                 {"SELECT ALL WHERE vendor LIKE 'nvidia*' ORDER BY clock", devs.size()},
                 {"SELECT ALL", devs.size()}};
    for (const auto &c : cases) {
        sluice_dql_query *q = nullptr;
        char err[256];
        ASSERT_EQ(sluice_dql_parse(c.query, &q, err, sizeof err), 0) << err;
        int attr = -1;
        EXPECT_EQ(sluice_dql_reads_cut(q, devs.data(), devs.size(), &attr), c.device) << c.query;
        if (c.device < devs.size()) {
            EXPECT_EQ(attr, SLUICE_DQL_ATTR_name) << c.query;
        }
        sluice_dql_free(q);
    }
}

TEST(DqlSelect, ManyDevices)
{
    // 4096 devices on 512 nodes: selection and sorting stay exact (and quick).
    std::vector<sluice_dql_device> devs;
    for (uint64_t n = 0; n < 512; n++)
        for (uint64_t i = 0; i < 8; i++)
            devs.push_back(dev(511 - n, 7 - i, i % 2 ? SLUICE_DQL_TYPE_GPU : SLUICE_DQL_TYPE_CPU, "v", "d", i,
                               1000 + n % 7, G));
    V r = select("SELECT TOP 3 WHERE type = gpu ORDER BY clock DESC, compute_units", devs);
    EXPECT_EQ(r, (V{"1.6", "8.6",
                    "15.6"})); // clock 1006 on nodes 511-n with n % 7 == 6; GPUs with 1 CU have index 6
    EXPECT_EQ(select("SELECT ALL", devs).size(), 4096u);
    EXPECT_EQ(select("SELECT POS 4095", devs), (V{"511.7"}));
}
