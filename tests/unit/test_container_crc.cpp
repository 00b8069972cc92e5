/* SPDX-License-Identifier: MIT */
// CRC32C: published test vectors (RFC 3720 B.4 and the classic "123456789" check value),
// agreement of the hardware and slicing-by-8 paths on every length and alignment, incremental
// use, and the O(log n) zero extension used for holes against a real buffer of zeros.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ckpt/container/container.h"

namespace {

uint32_t crc(const void *p, size_t n) { return sluice_crc32c_update(0, p, n); }
uint32_t crc_sw(const void *p, size_t n) { return sluice_crc32c_update_sw(0, p, n); }

TEST(ContainerCrc32c, CheckValueOf123456789)
{
    EXPECT_EQ(crc("123456789", 9), 0xE3069283u);
    EXPECT_EQ(crc_sw("123456789", 9), 0xE3069283u);
}

TEST(ContainerCrc32c, EmptyInputIsZeroAndUpdateIsIdentity)
{
    EXPECT_EQ(crc("", 0), 0u);
    EXPECT_EQ(sluice_crc32c_update(0x12345678u, "", 0), 0x12345678u);
}

TEST(ContainerCrc32c, Rfc3720Vectors)
{
    unsigned char buf[32];
    memset(buf, 0, sizeof buf);
    EXPECT_EQ(crc(buf, 32), 0x8A9136AAu);
    EXPECT_EQ(crc_sw(buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, sizeof buf);
    EXPECT_EQ(crc(buf, 32), 0x62A8AB43u);
    EXPECT_EQ(crc_sw(buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)i;
    EXPECT_EQ(crc(buf, 32), 0x46DD794Eu);
    EXPECT_EQ(crc_sw(buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)(31 - i);
    EXPECT_EQ(crc(buf, 32), 0x113FDB5Cu);
    EXPECT_EQ(crc_sw(buf, 32), 0x113FDB5Cu);
}

TEST(ContainerCrc32c, HardwareAndSoftwareAgreeOnEveryLengthAndAlignment)
{
    std::mt19937 rng(7);
    std::vector<unsigned char> buf(4096 + 16);
    for (auto &b : buf)
        b = (unsigned char)rng();
    for (size_t align = 0; align < 8; align++)
        for (size_t len = 0; len <= 300; len++)
            ASSERT_EQ(crc(buf.data() + align, len), crc_sw(buf.data() + align, len))
                << "align " << align << " len " << len;
    EXPECT_EQ(crc(buf.data() + 3, 4096), crc_sw(buf.data() + 3, 4096));
}

TEST(ContainerCrc32c, HardwareAndSoftwareAgreeAcrossTheInterleavedBlockSizes)
{
    // The hardware path switches between 3 x 8 KiB, 3 x 256 B and single-stream steps.
    std::mt19937 rng(8);
    std::vector<unsigned char> buf(200000);
    for (auto &b : buf)
        b = (unsigned char)rng();
    std::vector<size_t> lens = {767, 768, 769, 24575, 24576, 24577, 24576 + 768, 49152 + 767,
                                199990};
    for (int i = 0; i < 200; i++)
        lens.push_back(rng() % 199990);
    for (size_t len : lens)
        for (size_t align : {0, 1, 5})
            ASSERT_EQ(crc(buf.data() + align, len), crc_sw(buf.data() + align, len))
                << "align " << align << " len " << len;
}

TEST(ContainerCrc32c, IncrementalEqualsOneShotAtEverySplit)
{
    std::string s = "The quick brown fox jumps over the lazy dog, then checkpoints its state.";
    uint32_t whole = crc(s.data(), s.size());
    for (size_t cut = 0; cut <= s.size(); cut++) {
        uint32_t a = sluice_crc32c_update(0, s.data(), cut);
        ASSERT_EQ(sluice_crc32c_update(a, s.data() + cut, s.size() - cut), whole) << cut;
        ASSERT_EQ(sluice_crc32c_update_sw(sluice_crc32c_update_sw(0, s.data(), cut),
                                          s.data() + cut, s.size() - cut),
                  whole);
    }
}

TEST(ContainerCrc32c, ZeroExtensionMatchesARealBufferOfZeros)
{
    std::vector<unsigned char> zeros(1 << 20, 0);
    for (uint32_t start : {0u, 0xE3069283u, 0xFFFFFFFFu, 0x1u})
        for (uint64_t n : std::vector<uint64_t>{0, 1, 2, 3, 7, 8, 31, 4096, 65537, 1 << 20})
            ASSERT_EQ(sluice_crc32c_zeros(start, n), sluice_crc32c_update(start, zeros.data(), n))
                << "start " << start << " n " << n;
}

TEST(ContainerCrc32c, CombineJoinsPiecesChecksummedSeparately)
{
    std::mt19937 rng(9);
    std::vector<unsigned char> buf(70000);
    for (auto &b : buf)
        b = (unsigned char)rng();
    uint32_t whole = crc(buf.data(), buf.size());
    for (size_t cut : {0ul, 1ul, 7ul, 4096ul, 33333ul, 69999ul, 70000ul}) {
        uint32_t a = crc(buf.data(), cut), b = crc(buf.data() + cut, buf.size() - cut);
        ASSERT_EQ(sluice_crc32c_combine(a, b, buf.size() - cut), whole) << cut;
    }
    // Three pieces, as three aggregators would produce them.
    uint32_t p1 = crc(buf.data(), 1000), p2 = crc(buf.data() + 1000, 50000),
             p3 = crc(buf.data() + 51000, 19000);
    EXPECT_EQ(sluice_crc32c_combine(sluice_crc32c_combine(p1, p2, 50000), p3, 19000), whole);
    // A hole piece: crc of n zeros combined equals extending by zeros.
    std::vector<unsigned char> zeros(5000, 0);
    EXPECT_EQ(sluice_crc32c_combine(whole, crc(zeros.data(), zeros.size()), zeros.size()),
              sluice_crc32c_zeros(whole, zeros.size()));
}

TEST(ContainerCrc32c, ZeroExtensionOfHugeHolesIsConsistent)
{
    // zeros(a + b) == zeros(zeros(a), b) for sizes far beyond memory (a 1 TiB hole).
    uint64_t tib = 1ull << 40;
    uint32_t one = sluice_crc32c_zeros(0x1234u, tib + 12345);
    uint32_t two = sluice_crc32c_zeros(sluice_crc32c_zeros(0x1234u, tib), 12345);
    EXPECT_EQ(one, two);
    EXPECT_NE(one, sluice_crc32c_zeros(0x1234u, tib + 12344));
}

} // namespace
