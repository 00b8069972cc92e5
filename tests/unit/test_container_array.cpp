/* SPDX-License-Identifier: MIT */
// Array layouts: the SLUICE_LAYOUT parser, MPI_Dims_create's choice, blocks and their runs
// (runtime/ckpt/container/container_array.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "ckpt/container/container_array.h"
}

namespace
{

sluice_array Parse(const char *s)
{
    sluice_array a{};
    char err[256] = "";
    EXPECT_EQ(sluice_array_parse(s, &a, err, sizeof err), 0) << s << ": " << err;
    return a;
}

std::string Error(const char *s)
{
    sluice_array a{};
    char err[256] = "";
    EXPECT_EQ(sluice_array_parse(s, &a, err, sizeof err), -EINVAL) << s;
    return err;
}

std::vector<uint32_t> Dims(uint32_t n, int nd)
{
    std::vector<uint32_t> d(3, 0);
    sluice_array_dims_create(n, nd, d.data());
    d.resize((size_t)nd);
    return d;
}

} // namespace

TEST(ContainerArray, ParsesTheIssueForm)
{
    sluice_array a = Parse("header=64,dtype=f8,shape=48x48x48,grid=auto");
    EXPECT_EQ(a.header, 64u);
    EXPECT_EQ(a.elem, 8u);
    EXPECT_EQ(a.ndims, 3);
    EXPECT_EQ(a.shape[0], 48u);
    EXPECT_EQ(a.shape[2], 48u);
    EXPECT_EQ(a.grid[0], 0u);
    EXPECT_EQ(a.fortran, 0);
    EXPECT_EQ(sluice_array_bytes(&a), 48u * 48 * 48 * 8);
}

TEST(ContainerArray, ParsesOrderGridAndSizes)
{
    sluice_array a = Parse("shape=10x20,size=3,order=F,grid=2x3");
    EXPECT_EQ(a.elem, 3u);
    EXPECT_EQ(a.dtype[0], 0);
    EXPECT_EQ(a.fortran, 1);
    EXPECT_EQ(a.grid[0], 2u);
    EXPECT_EQ(a.grid[1], 3u);
    EXPECT_EQ(a.header, 0u);
    EXPECT_EQ(Parse("dtype=i2,shape=5").elem, 2u);
    EXPECT_EQ(Parse("dtype=u1,shape=5").elem, 1u);
    EXPECT_EQ(Parse("dtype=f4,shape=5").elem, 4u);
}

TEST(ContainerArray, RejectsBadSpecsInOneLine)
{
    EXPECT_NE(Error("dtype=f8").find("no shape"), std::string::npos);
    EXPECT_NE(Error("shape=4x4").find("no element type"), std::string::npos);
    EXPECT_NE(Error("dtype=f16,shape=4").find("dtype=f16"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4x0").find("shape=4x0"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4x4x4x4").find("shape="), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4x4,grid=2").find("grid"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4,order=X").find("order=X"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4,colour=red").find("unknown key 'colour'"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4x").find("shape=4x"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=4,header=-1").find("header=-1"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,shape=99999999999x99999999999").find("larger"), std::string::npos);
    EXPECT_NE(Error("").find("empty"), std::string::npos);
    EXPECT_NE(Error("dtype=f8,,shape=4").find("key=value"), std::string::npos);
}

TEST(ContainerArray, FormatRoundTripsAsARecord)
{
    sluice_array a = Parse("header=16,dtype=i4,shape=6x7x8,grid=1x2x3,order=F");
    a.nprocs = 6;
    a.array_offset = 8192;
    a.header_offset = 4096;
    char buf[SLUICE_ARRAY_RECORD_MAX];
    ASSERT_GT(sluice_array_format(&a, buf, sizeof buf), 0);
    EXPECT_STREQ(buf, "header=16,dtype=i4,shape=6x7x8,grid=1x2x3,order=F,nprocs=6,headers=4096,array=8192");
    sluice_array b = Parse(buf);
    EXPECT_EQ(b.nprocs, 6u);
    EXPECT_EQ(b.array_offset, 8192u);
    EXPECT_EQ(b.header_offset, 4096u);
    EXPECT_EQ(b.grid[2], 3u);
    EXPECT_EQ(sluice_array_format(&a, buf, 10), -ENOSPC);
}

// The choices MPICH's MPI_Dims_create makes (checked for 1..128 ranks, 1..3 dimensions).
TEST(ContainerArray, DimsCreateMatchesMpi)
{
    EXPECT_EQ(Dims(1, 3), (std::vector<uint32_t>{1, 1, 1}));
    EXPECT_EQ(Dims(2, 3), (std::vector<uint32_t>{2, 1, 1}));
    EXPECT_EQ(Dims(3, 3), (std::vector<uint32_t>{3, 1, 1}));
    EXPECT_EQ(Dims(4, 3), (std::vector<uint32_t>{2, 2, 1}));
    EXPECT_EQ(Dims(6, 3), (std::vector<uint32_t>{3, 2, 1}));
    EXPECT_EQ(Dims(8, 3), (std::vector<uint32_t>{2, 2, 2}));
    EXPECT_EQ(Dims(12, 3), (std::vector<uint32_t>{3, 2, 2}));
    EXPECT_EQ(Dims(16, 3), (std::vector<uint32_t>{4, 2, 2}));
    EXPECT_EQ(Dims(27, 3), (std::vector<uint32_t>{3, 3, 3}));
    EXPECT_EQ(Dims(64, 3), (std::vector<uint32_t>{4, 4, 4}));
    EXPECT_EQ(Dims(6, 2), (std::vector<uint32_t>{3, 2}));
    EXPECT_EQ(Dims(7, 2), (std::vector<uint32_t>{7, 1}));
    EXPECT_EQ(Dims(5, 1), (std::vector<uint32_t>{5}));
    EXPECT_EQ(Dims(72, 2), (std::vector<uint32_t>{9, 8})); // Open MPI 4.1: 12x6
    EXPECT_EQ(Dims(72, 3), (std::vector<uint32_t>{6, 4, 3}));
}

TEST(ContainerArray, ExplicitGridMustMatchTheJob)
{
    sluice_array a = Parse("dtype=f8,shape=8x8,grid=2x2");
    uint32_t g[3];
    char err[128];
    EXPECT_EQ(sluice_array_grid(&a, 4, g, err, sizeof err), 0);
    EXPECT_EQ(sluice_array_grid(&a, 3, g, err, sizeof err), -EINVAL);
    EXPECT_NE(std::string(err).find("grid of 4 ranks for a job of 3"), std::string::npos);
}

// Every element of the array belongs to exactly one block, at the offset its runs say, in
// both orders and for uneven splits.
TEST(ContainerArray, BlocksTileTheArrayExactly)
{
    const char *specs[] = {"size=1,shape=7x5x3", "size=2,shape=7x5x3,order=F", "size=1,shape=13",
                           "size=1,shape=9x4"};
    for (const char *spec : specs) {
        sluice_array a = Parse(spec);
        uint64_t total = sluice_array_bytes(&a);
        for (uint32_t n : {1u, 2u, 3u, 4u, 6u, 8u}) {
            uint32_t g[3];
            ASSERT_EQ(sluice_array_grid(&a, n, g, nullptr, 0), 0);
            std::vector<int> owner(total, -1);
            for (uint32_t r = 0; r < n; r++) {
                struct sluice_array_block b;
                sluice_array_block(&a, g, r, &b);
                uint64_t elems = 1;
                for (int d = 0; d < a.ndims; d++)
                    elems *= b.n[d];
                EXPECT_EQ(b.nrows * b.row_len, elems * a.elem);
                for (uint64_t k = 0; k < b.nrows; k++) {
                    uint64_t off = sluice_array_row_offset(&a, &b, k);
                    for (uint64_t x = 0; x < b.row_len; x++) {
                        ASSERT_LT(off + x, total) << spec << " n=" << n;
                        EXPECT_EQ(owner[off + x], -1) << spec << " n=" << n << " byte " << off + x;
                        owner[off + x] = (int)r;
                    }
                }
            }
            for (uint64_t i = 0; i < total; i++)
                EXPECT_NE(owner[i], -1) << spec << " n=" << n << " byte " << i << " has no owner";
        }
    }
}

// Rank 5 of a 2x2x2 grid sits at (1,0,1): its block of 48^3 starts at (24,0,24), and its run
// k = (z,y) is row y of plane z of the block.
TEST(ContainerArray, CoordinatesAreRowMajor)
{
    sluice_array a = Parse("dtype=f8,shape=48x48x48");
    uint32_t g[3];
    ASSERT_EQ(sluice_array_grid(&a, 8, g, nullptr, 0), 0);
    struct sluice_array_block b;
    sluice_array_block(&a, g, 5, &b);
    EXPECT_EQ(b.lo[0], 24u);
    EXPECT_EQ(b.lo[1], 0u);
    EXPECT_EQ(b.lo[2], 24u);
    EXPECT_EQ(b.nrows, 24u * 24);
    EXPECT_EQ(b.row_len, 24u * 8);
    EXPECT_EQ(sluice_array_row_offset(&a, &b, 25), ((24u + 1) * 48 * 48 + 1 * 48 + 24) * 8);
}
