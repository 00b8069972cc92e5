/* SPDX-License-Identifier: MIT */
// Commit planner: block-aligned direct layout (runtime/ckpt/twophase/planner.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

extern "C" {
#include "ckpt/twophase/planner.h"
}

namespace {

struct Plan {
    sluice_plan p{};
    ~Plan() { sluice_plan_free(&p); }
};

void ExpectNoOverlapAligned(const sluice_plan &p, uint64_t block)
{
    uint64_t prev_end = p.data_begin;
    for (size_t k = 0; k < p.nwrites; k++) {
        const auto &w = p.writes[k];
        EXPECT_EQ(w.offset % block, 0u) << "write " << k;
        EXPECT_GE(w.offset, prev_end) << "write " << k << " overlaps its predecessor";
        if (w.size)
            prev_end = w.offset + w.size;
    }
    EXPECT_EQ(p.data_end, prev_end);
}

} // namespace

TEST(Planner, EmptySetHasNoWritesAndAlignedDataStart)
{
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(nullptr, 0, 100, 4096, &plan.p), 0);
    EXPECT_EQ(plan.p.nwrites, 0u);
    EXPECT_EQ(plan.p.data_begin, 4096u);
    EXPECT_EQ(plan.p.data_end, 4096u);
}

TEST(Planner, MembersStartOnBlockBoundariesInRankOrder)
{
    std::vector<sluice_plan_member> m = {{5000, 2, 2}, {1, 0, 0}, {4096, 1, 1}};
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), m.size(), 64, 4096, &plan.p), 0);
    ASSERT_EQ(plan.p.nwrites, 3u);
    // Layout follows member rank, not input order.
    EXPECT_EQ(plan.p.writes[0].member, 1u);
    EXPECT_EQ(plan.p.writes[0].offset, 4096u);
    EXPECT_EQ(plan.p.writes[0].size, 1u);
    EXPECT_EQ(plan.p.writes[1].member, 2u);
    EXPECT_EQ(plan.p.writes[1].offset, 8192u);
    EXPECT_EQ(plan.p.writes[2].member, 0u);
    EXPECT_EQ(plan.p.writes[2].offset, 12288u);
    EXPECT_EQ(plan.p.writes[2].writer_rank, 2);
    EXPECT_EQ(plan.p.data_end, 12288u + 5000u);
    EXPECT_EQ(plan.p.padding, 4095u);   // only the gap after the 1-byte member
    ExpectNoOverlapAligned(plan.p, 4096);
}

TEST(Planner, ZeroByteMembersTakeNoSpace)
{
    std::vector<sluice_plan_member> m = {{0, 0, 0}, {10, 1, 1}, {0, 2, 2}, {0, 3, 3}, {7, 4, 4}};
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), m.size(), 0, 512, &plan.p), 0);
    ASSERT_EQ(plan.p.nwrites, 5u);
    EXPECT_EQ(plan.p.writes[0].size, 0u);
    EXPECT_EQ(plan.p.writes[1].offset, 0u);
    EXPECT_EQ(plan.p.writes[2].size, 0u);
    EXPECT_EQ(plan.p.writes[4].offset, 512u);
    EXPECT_EQ(plan.p.data_end, 519u);
    ExpectNoOverlapAligned(plan.p, 512);
}

TEST(Planner, AllZeroByteMembers)
{
    std::vector<sluice_plan_member> m(8, sluice_plan_member{0, 0, 0});
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), m.size(), 4096, 4096, &plan.p), 0);
    EXPECT_EQ(plan.p.nwrites, 8u);
    EXPECT_EQ(plan.p.data_end, 4096u);
    EXPECT_EQ(plan.p.padding, 0u);
}

TEST(Planner, OneHugeMember)
{
    const uint64_t huge = UINT64_C(1) << 45;   // 32 TiB: layout only, nothing is allocated
    std::vector<sluice_plan_member> m = {{huge + 3, 0, 0}, {1, 1, 1}};
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), m.size(), 4096, 1 << 20, &plan.p), 0);
    EXPECT_EQ(plan.p.writes[0].offset, 1u << 20);
    EXPECT_EQ(plan.p.writes[1].offset, (1u << 20) + huge + (1u << 20));
    ExpectNoOverlapAligned(plan.p, 1 << 20);
}

TEST(Planner, LayoutPastOffTRangeIsRefused)
{
    std::vector<sluice_plan_member> m = {{UINT64_C(1) << 62, 0, 0}, {UINT64_C(1) << 62, 1, 1}};
    Plan plan;
    EXPECT_EQ(sluice_plan_direct(m.data(), m.size(), 4096, 4096, &plan.p), -EOVERFLOW);
    EXPECT_EQ(plan.p.writes, nullptr);
    std::vector<sluice_plan_member> one = {{UINT64_MAX, 0, 0}};
    EXPECT_EQ(sluice_plan_direct(one.data(), 1, 0, 4096, &plan.p), -EOVERFLOW);
}

TEST(Planner, BadBlockSizeIsRefused)
{
    sluice_plan_member m{1, 0, 0};
    Plan plan;
    EXPECT_EQ(sluice_plan_direct(&m, 1, 0, 0, &plan.p), -EINVAL);
    EXPECT_EQ(sluice_plan_direct(&m, 1, 0, 3000, &plan.p), -EINVAL);
    EXPECT_EQ(sluice_plan_direct(&m, 1, 0, 4096, nullptr), -EINVAL);
}

TEST(Planner, ManyMembersUnevenSizes)
{
    const size_t n = 10000;
    std::vector<sluice_plan_member> m(n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        // Reverse rank order in the input, sizes around the block size.
        m[i] = {(i * 7919) % 9000, static_cast<int>(i % 17), static_cast<int>(n - 1 - i)};
        total += m[i].size;
    }
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), n, 4096, 4096, &plan.p), 0);
    ASSERT_EQ(plan.p.nwrites, n);
    uint64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        EXPECT_EQ(m[plan.p.writes[k].member].member_rank, static_cast<int>(k));
        EXPECT_EQ(plan.p.writes[k].writer_rank, m[plan.p.writes[k].member].writer_rank);
        sum += plan.p.writes[k].size;
    }
    EXPECT_EQ(sum, total);
    EXPECT_EQ(plan.p.data_end - plan.p.data_begin, total + plan.p.padding);
    ExpectNoOverlapAligned(plan.p, 4096);
}

TEST(Planner, BlockSizeOneIsDense)
{
    std::vector<sluice_plan_member> m = {{3, 0, 0}, {5, 0, 1}, {2, 0, 2}};
    Plan plan;
    ASSERT_EQ(sluice_plan_direct(m.data(), m.size(), 10, 1, &plan.p), 0);
    EXPECT_EQ(plan.p.writes[0].offset, 10u);
    EXPECT_EQ(plan.p.writes[1].offset, 13u);
    EXPECT_EQ(plan.p.writes[2].offset, 18u);
    EXPECT_EQ(plan.p.padding, 0u);
}
