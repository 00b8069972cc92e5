/* SPDX-License-Identifier: MIT */
// How distributed OpenCL cuts bulk data into pieces (cl/serve/remote_transport.c): both end points
// must cut at the same offsets, the pieces tile the transfer exactly, and SLUICE_DIST_CHUNK as
// rank 0 sets it (sluice_remote_set_chunk, from its PING) overrides this process's own value.
#include <gtest/gtest.h>

#include <cstdint>

extern "C" {
#include "cl/serve/remote_proto.h"
#include "config/config.h"
}

namespace
{

const size_t KiB = 1024, MiB = 1024 * 1024;

// The pieces of len bytes cover [0, len) in order, without gaps or overlaps.
void expect_tiles(size_t len)
{
    size_t n = sluice_remote_pieces(len), at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        EXPECT_EQ(at, sluice_remote_piece(len, i, &k)) << "len " << len << " piece " << i;
        EXPECT_GT(k + (len == 0), 0u) << "len " << len << " piece " << i;
        EXPECT_LE(k, sluice_remote_chunk(len));
        at += k;
    }
    EXPECT_EQ(len, at) << "len " << len;
}

struct ChunkSetting : ::testing::Test {
    void TearDown() override { sluice_remote_set_chunk(SIZE_MAX); } // back to this process's own
};

} // namespace

TEST_F(ChunkSetting, AutoIsASixteenthBetween256KAnd8M)
{
    sluice_remote_set_chunk(0);
    EXPECT_EQ(1u, sluice_remote_pieces(0));
    EXPECT_EQ(1u, sluice_remote_pieces(1));
    EXPECT_EQ(1u, sluice_remote_pieces(64 * KiB));
    EXPECT_EQ(1u, sluice_remote_pieces(256 * KiB));
    EXPECT_EQ(2u, sluice_remote_pieces(256 * KiB + 1));
    EXPECT_EQ(4u, sluice_remote_pieces(1 * MiB)); // was 1 piece: no overlap at all
    EXPECT_EQ(256 * KiB, sluice_remote_chunk(4 * MiB));
    EXPECT_EQ(16u, sluice_remote_pieces(4 * MiB));
    EXPECT_EQ(1 * MiB, sluice_remote_chunk(16 * MiB));
    EXPECT_EQ(16u, sluice_remote_pieces(16 * MiB));
    EXPECT_EQ(8 * MiB, sluice_remote_chunk(256 * MiB));
    EXPECT_EQ(32u, sluice_remote_pieces(256 * MiB));
    for (size_t len : {size_t(0), size_t(1), 300 * KiB, 1 * MiB + 3, 17 * MiB - 5, 256 * MiB + 1})
        expect_tiles(len);
}

TEST_F(ChunkSetting, AFixedSizeCutsEveryTransferIntoPiecesOfThatSize)
{
    sluice_remote_set_chunk(64 * KiB);
    EXPECT_EQ(64 * KiB, sluice_remote_chunk(256 * MiB));
    EXPECT_EQ(4u, sluice_remote_pieces(256 * KiB));
    EXPECT_EQ(5u, sluice_remote_pieces(256 * KiB + 1));
    size_t k = 0;
    EXPECT_EQ(256 * KiB, sluice_remote_piece(256 * KiB + 1, 4, &k));
    EXPECT_EQ(1u, k);
    for (size_t len : {size_t(0), size_t(7), 1 * MiB, 3 * MiB + 11})
        expect_tiles(len);
}

TEST_F(ChunkSetting, RankZerosValueOverridesThisProcesssOwn)
{
    uint64_t own = sluice_config.DIST_CHUNK;
    sluice_config.DIST_CHUNK = 2 * MiB;
    sluice_remote_set_chunk(SIZE_MAX); // not set: this process's own value
    EXPECT_EQ(2 * MiB, sluice_remote_chunk_setting());
    EXPECT_EQ(2 * MiB, sluice_remote_chunk(1 * MiB));
    sluice_remote_set_chunk(0); // rank 0 said: by transfer size
    EXPECT_EQ(0u, sluice_remote_chunk_setting());
    EXPECT_EQ(256 * KiB, sluice_remote_chunk(1 * MiB));
    sluice_config.DIST_CHUNK = own;
}
