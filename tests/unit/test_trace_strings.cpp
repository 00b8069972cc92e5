/* SPDX-License-Identifier: MIT */
// String interning: one id per distinct string, stable across threads, readable back.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "trace/core.h"
}

namespace {
struct DebugOnlySession { // strings need tracing on; the debug stream to a file keeps it cheap
    DebugOnlySession()
    {
        sluice_trace_options opt{};
        opt.debug = "/dev/null";
        opt.size = 1;
        EXPECT_EQ(sluice_trace_start(&opt), 0);
    }
    ~DebugOnlySession() { sluice_trace_stop(); }
};
} // namespace

TEST(TraceStrings, SameStringSameIdDifferentStringDifferentId)
{
    DebugOnlySession s;
    uint32_t a = sluice_trace_string("/scratch/ckpt.0");
    uint32_t b = sluice_trace_string("/scratch/ckpt.1");
    std::string copy = "/scratch/ckpt.0";
    EXPECT_NE(a, 0u);
    EXPECT_NE(b, 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(sluice_trace_string(copy.c_str()), a);
    uint32_t len = 0;
    const char *back = sluice_trace_strings_get(b, &len);
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(std::string(back, len), "/scratch/ckpt.1");
    EXPECT_EQ(sluice_trace_string(nullptr), 0u);
    EXPECT_NE(sluice_trace_string(""), 0u);  // the empty string is a string
    EXPECT_EQ(sluice_trace_strings_get(0, &len), nullptr);
    EXPECT_EQ(sluice_trace_strings_get(999999, &len), nullptr);
}

TEST(TraceStrings, ConcurrentInterningAgreesOnIds)
{
    DebugOnlySession s;
    const int threads = 8, names = 2000;
    std::vector<std::vector<uint32_t>> ids(threads, std::vector<uint32_t>(names));
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
        ts.emplace_back([t, &ids] {
            for (int i = 0; i < names; i++) {
                int n = (i * 7 + t * 131) % names;  // every thread, every name, different orders
                ids[t][n] = sluice_trace_string(("clEnqueue_" + std::to_string(n)).c_str());
            }
        });
    for (auto &t : ts)
        t.join();
    std::set<uint32_t> distinct;
    for (int i = 0; i < names; i++) {
        for (int t = 1; t < threads; t++)
            ASSERT_EQ(ids[t][i], ids[0][i]) << "name " << i;
        ASSERT_NE(ids[0][i], 0u);
        distinct.insert(ids[0][i]);
        uint32_t len;
        const char *s = sluice_trace_strings_get(ids[0][i], &len);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(std::string(s, len), "clEnqueue_" + std::to_string(i));
    }
    EXPECT_EQ(distinct.size(), (size_t)names);
    EXPECT_EQ(sluice_trace_strings_count(), (uint32_t)names);
    EXPECT_EQ(sluice_trace_strings_dropped(), 0u);
}
