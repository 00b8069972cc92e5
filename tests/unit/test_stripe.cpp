/* SPDX-License-Identifier: MIT */
// Stripe unit detection (runtime/ckpt/twophase/stripe.h): precedence of SLUICE_STRIPING_UNIT, the Lustre
// layout attribute decoder (v1, v3, composite, hostile input) and clamping to the block size.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "ckpt/twophase/stripe.h"
}

namespace {

void Put32(std::vector<unsigned char> &v, size_t at, uint32_t x)
{
    if (v.size() < at + 4)
        v.resize(at + 4);
    for (int i = 0; i < 4; i++)
        v[at + i] = (unsigned char)(x >> (8 * i));
}

std::vector<unsigned char> Lov(uint32_t magic, uint32_t stripe_size)
{
    std::vector<unsigned char> v(32 + 24, 0); // header plus one lov_user_ost_data
    Put32(v, 0, magic);
    Put32(v, 4, 1);                           // RAID0
    Put32(v, 24, stripe_size);
    v[28] = 4;                                // stripe count
    return v;
}

} // namespace

TEST(Stripe, DecodesLovUserMdV1AndV3)
{
    uint64_t unit = 0;
    auto v1 = Lov(0x0BD10BD0, 4u << 20);
    ASSERT_EQ(sluice_stripe_from_lov(v1.data(), v1.size(), &unit), 0);
    EXPECT_EQ(unit, 4u << 20);
    auto v3 = Lov(0x0BD30BD0, 1u << 16);
    v3.resize(32 + 16 + 24); // pool name
    ASSERT_EQ(sluice_stripe_from_lov(v3.data(), v3.size(), &unit), 0);
    EXPECT_EQ(unit, 1u << 16);
}

TEST(Stripe, DecodesTheFirstComponentOfACompositeLayout)
{
    std::vector<unsigned char> v(32 + 2 * 48, 0);
    Put32(v, 0, 0x0BD60BD0);
    Put32(v, 4, 0); // size, not used
    Put32(v, 32 + 24, (uint32_t)v.size());        // entry 0's layout goes after both entries
    Put32(v, 32 + 48 + 24, (uint32_t)v.size() + 56);
    auto first = Lov(0x0BD10BD0, 2u << 20), second = Lov(0x0BD10BD0, 16u << 20);
    v.insert(v.end(), first.begin(), first.end());
    v.insert(v.end(), second.begin(), second.end());
    uint64_t unit = 0;
    ASSERT_EQ(sluice_stripe_from_lov(v.data(), v.size(), &unit), 0);
    EXPECT_EQ(unit, 2u << 20);
}

TEST(Stripe, RejectsHostileLayouts)
{
    uint64_t unit = 77;
    auto bad_magic = Lov(0x12345678, 1u << 20);
    EXPECT_EQ(sluice_stripe_from_lov(bad_magic.data(), bad_magic.size(), &unit), -EINVAL);
    auto zero = Lov(0x0BD10BD0, 0);
    EXPECT_EQ(sluice_stripe_from_lov(zero.data(), zero.size(), &unit), -EINVAL);
    auto v1 = Lov(0x0BD10BD0, 1u << 20);
    for (size_t len = 0; len < 32; len++)
        EXPECT_EQ(sluice_stripe_from_lov(v1.data(), len, &unit), -EINVAL) << "length " << len;
    std::vector<unsigned char> comp(32 + 48, 0);
    Put32(comp, 0, 0x0BD60BD0);
    Put32(comp, 32 + 24, 0xFFFFFF00u); // component offset past the end
    EXPECT_EQ(sluice_stripe_from_lov(comp.data(), comp.size(), &unit), -EINVAL);
    Put32(comp, 32 + 24, 0); // points at itself: magic is composite again, not a plain layout
    EXPECT_EQ(sluice_stripe_from_lov(comp.data(), comp.size(), &unit), -EINVAL);
    EXPECT_EQ(sluice_stripe_from_lov(nullptr, 100, &unit), -EINVAL);
    EXPECT_EQ(unit, 77u) << "no output on failure";
}

TEST(Stripe, ClampsToTheBlockSize)
{
    EXPECT_EQ(sluice_stripe_clamp(1u << 20, 4096), 1u << 20);
    EXPECT_EQ(sluice_stripe_clamp(1000, 4096), 4096u) << "never below a block";
    EXPECT_EQ(sluice_stripe_clamp(5000, 4096), 8192u) << "a whole number of blocks";
    EXPECT_EQ(sluice_stripe_clamp(196608, 4096), 196608u) << "192 KiB is not 2^k but is fine";
    EXPECT_EQ(sluice_stripe_clamp(7, 0), 7u);
}

TEST(Stripe, PrecedenceEnvThenFileSystemThenDefault)
{
    enum sluice_stripe_source src;
    EXPECT_EQ(sluice_stripe_unit("/tmp", 4u << 20, 4096, &src), 4u << 20);
    EXPECT_EQ(src, SLUICE_STRIPE_FROM_ENV);
    EXPECT_EQ(sluice_stripe_unit("/tmp", 0, 4096, &src), SLUICE_STRIPE_DEFAULT);
    EXPECT_EQ(src, SLUICE_STRIPE_FROM_DEFAULT) << "/tmp is not Lustre here";
    EXPECT_EQ(sluice_stripe_unit("/no/such/dir", 0, 2u << 20, &src), 2u << 20)
        << "a block larger than the default wins";
    EXPECT_EQ(src, SLUICE_STRIPE_FROM_DEFAULT);
    EXPECT_EQ(sluice_stripe_unit(nullptr, 100, 4096, nullptr), 4096u);
    EXPECT_STREQ(sluice_stripe_source_name(SLUICE_STRIPE_FROM_LUSTRE), "lustre layout");
}
