/* SPDX-License-Identifier: MIT */
// The block-aligned layout has one definition (sluice_container_place) and three callers:
// sluice_container_layout (the format's primitive), sluice_plan_direct (the commit planner) and
// sluice_container_write (whole containers: recovery, pack, single-process commits). These tests
// check the rule itself and that the three callers place the same members at the same offsets
// and put the index at the same place: odd sizes, 0-byte members, sizes exactly on a block, at
// the smallest, usual and a large block size.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "ckpt/container/container.h"
#include "ckpt/twophase/planner.h"

namespace {

const char *const kKey = "/scratch/run/ckpt_%r.bin";

struct Layout {
    std::vector<uint64_t> offsets;
    uint64_t index_offset = 0; // where the index goes: the data end rounded up to 8
};

Layout by_layout(const std::vector<uint64_t> &sizes, uint32_t block)
{
    Layout l;
    l.offsets.resize(sizes.size());
    uint64_t end = 0;
    EXPECT_EQ(sluice_container_layout(sizes.data(), (uint32_t)sizes.size(), block,
                                      sluice_container_data_start(kKey, block), l.offsets.data(), &end),
              0);
    l.index_offset = end;
    return l;
}

// Ranks in input order, so that the planner's rank order is the input order.
Layout by_planner(const std::vector<uint64_t> &sizes, uint32_t block)
{
    std::vector<sluice_plan_member> pm;
    for (size_t i = 0; i < sizes.size(); i++)
        pm.push_back({sizes[i], (int)(i % 3), (int)i});
    sluice_plan p{};
    EXPECT_EQ(sluice_plan_direct(pm.data(), pm.size(), sluice_container_data_start(kKey, block), block, &p), 0);
    Layout l;
    EXPECT_EQ(p.nwrites, sizes.size());
    for (size_t k = 0; k < p.nwrites; k++) {
        EXPECT_EQ(p.writes[k].member, k);
        EXPECT_EQ(p.writes[k].size, sizes[k]);
        l.offsets.push_back(p.writes[k].offset);
    }
    uint64_t data = 0;
    for (uint64_t s : sizes)
        data += s;
    EXPECT_EQ(p.data_end - p.data_begin, data + p.padding);
    l.index_offset = (p.data_end + 7) & ~UINT64_C(7);
    sluice_plan_free(&p);
    return l;
}

// A real container written from buffers into a memfd, decoded again: each member's extent
// offset and the bytes, and the offset where the writer started the index.
Layout by_writer(const std::vector<uint64_t> &sizes, uint32_t block)
{
    std::vector<std::string> paths, bytes;
    for (size_t i = 0; i < sizes.size(); i++) {
        paths.push_back("/scratch/run/ckpt_" + std::to_string(i) + ".bin");
        bytes.push_back(std::string(sizes[i], (char)('a' + i % 26)));
    }
    std::vector<sluice_container_source> src;
    for (size_t i = 0; i < sizes.size(); i++)
        src.push_back({paths[i].c_str(), (int32_t)i, 0, 0, -1, bytes[i].data(), sizes[i]});
    sluice_container_meta meta{};
    meta.set_key = kKey;
    meta.block_size = block;
    meta.version = 1;
    int fd = memfd_create("layout", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    char err[4096] = "";
    EXPECT_EQ(sluice_container_write(fd, &meta, src.data(), (uint32_t)src.size(), err, sizeof err), 0) << err;
    struct stat st;
    EXPECT_EQ(fstat(fd, &st), 0);
    std::string img((size_t)st.st_size, '\0');
    EXPECT_EQ(pread(fd, &img[0], img.size(), 0), (ssize_t)img.size());
    close(fd);
    sluice_container *c = nullptr;
    Layout l;
    EXPECT_EQ(sluice_container_parse(img.data(), img.size(), "memfd", &c, err, sizeof err), 0) << err;
    if (!c)
        return l;
    EXPECT_EQ(c->n_members, sizes.size());
    for (uint32_t i = 0; i < c->n_members; i++) {
        const sluice_member &m = c->members[i];
        EXPECT_EQ(m.size, sizes[i]);
        EXPECT_EQ(m.n_extents, sizes[i] ? 1u : 0u) << "member " << i;
        // A 0-byte member has no extent: its place is "no place", marked here as UINT64_MAX.
        l.offsets.push_back(m.n_extents ? m.extents[0].file_offset : UINT64_MAX);
        std::string back(sizes[i], '\0');
        EXPECT_EQ(sluice_container_pread(c, i, &back[0], back.size(), 0), (long)sizes[i]);
        EXPECT_EQ(back, bytes[i]) << "member " << i;
    }
    // The tail starts at the writer's index offset with the index copy and its footer; the
    // reader's index_offset is the primary's, right after them.
    EXPECT_EQ(c->index_from_copy, 0);
    l.index_offset = c->index_offset - c->index_length - SLUICE_CONTAINER_FOOTER_SIZE;
    sluice_container_close(c);
    return l;
}

const std::vector<std::vector<uint64_t>> kSets = {
    {1, 4097, 12345, 3, 511, 513},           // odd sizes
    {0, 0, 7, 0, 4096, 0},                   // 0-byte members, first, between and last
    {512, 4096, 8192, 65536, 131072},        // sizes exactly on a block (of some block sizes)
    {0, 0, 0},                               // nothing but 0-byte members
    {65536},                                 // one member exactly one large block
    {4095, 1, 4096, 0, 1, 65535, 65537, 2}, // just under, on and over block boundaries
};
const uint32_t kBlocks[] = {SLUICE_CONTAINER_BLOCK_MIN, 4096, 65536};

TEST(ContainerLayout, ThreeCallersAgree)
{
    for (uint32_t block : kBlocks) {
        for (const auto &sizes : kSets) {
            SCOPED_TRACE("block " + std::to_string(block) + ", " + std::to_string(sizes.size()) + " members");
            Layout a = by_layout(sizes, block), b = by_planner(sizes, block), w = by_writer(sizes, block);
            ASSERT_EQ(a.offsets.size(), sizes.size());
            ASSERT_EQ(b.offsets.size(), sizes.size());
            ASSERT_EQ(w.offsets.size(), sizes.size());
            EXPECT_EQ(a.offsets, b.offsets);
            for (size_t i = 0; i < sizes.size(); i++) {
                if (sizes[i]) {
                    EXPECT_EQ(w.offsets[i], a.offsets[i]) << "member " << i;
                }
            }
            EXPECT_EQ(a.index_offset, b.index_offset);
            EXPECT_EQ(a.index_offset, w.index_offset);
        }
    }
}

// The rule, checked against its statement rather than against another copy of it: each member
// with bytes starts at the first block boundary at or after the previous member's end; a
// 0-byte member sits at the current (aligned) position and takes nothing.
TEST(ContainerLayout, PlaceFollowsTheRule)
{
    for (uint32_t block : kBlocks) {
        for (const auto &sizes : kSets) {
            uint64_t start = sluice_container_data_start(kKey, block);
            std::vector<uint64_t> off(sizes.size());
            uint64_t end = 0;
            ASSERT_EQ(sluice_container_place(sizes.data(), sizes.size(), block, start, off.data(), &end), 0);
            uint64_t pos = (start + block - 1) / block * block, last = pos;
            for (size_t i = 0; i < sizes.size(); i++) {
                EXPECT_EQ(off[i], pos) << "block " << block << " member " << i;
                EXPECT_EQ(off[i] % block, 0u);
                if (sizes[i]) {
                    last = off[i] + sizes[i];
                    pos = (last + block - 1) / block * block;
                }
            }
            EXPECT_EQ(end, last);
        }
    }
}

TEST(ContainerLayout, WorkedExample)
{
    // Header of 184 bytes, 4 KiB blocks: data starts at 4096.
    std::vector<uint64_t> sizes = {0, 1, 4096, 4097, 0, 10};
    std::vector<uint64_t> off(sizes.size());
    uint64_t end = 0;
    ASSERT_EQ(sluice_container_place(sizes.data(), sizes.size(), 4096, 184, off.data(), &end), 0);
    EXPECT_EQ(off, (std::vector<uint64_t>{4096, 4096, 8192, 12288, 20480, 20480}));
    EXPECT_EQ(end, 20490u);
    // Block size 1 is dense: no padding at all.
    ASSERT_EQ(sluice_container_place(sizes.data(), sizes.size(), 1, 10, off.data(), &end), 0);
    EXPECT_EQ(off, (std::vector<uint64_t>{10, 10, 11, 4107, 8204, 8204}));
    EXPECT_EQ(end, 8214u);
    // No members: the data ends where it starts, rounded up.
    ASSERT_EQ(sluice_container_place(nullptr, 0, 4096, 100, nullptr, &end), 0);
    EXPECT_EQ(end, 4096u);
}

TEST(ContainerLayout, PlaceRefusesBadBlocksAndOffTOverflow)
{
    uint64_t sizes[] = {1}, off[1], end;
    EXPECT_EQ(sluice_container_place(sizes, 1, 0, 0, off, &end), -EINVAL);
    EXPECT_EQ(sluice_container_place(sizes, 1, 3000, 0, off, &end), -EINVAL);
    EXPECT_EQ(sluice_container_place(sizes, 1, 4096, 0, nullptr, &end), -EINVAL);
    uint64_t big[] = {UINT64_C(1) << 62, UINT64_C(1) << 62};
    uint64_t off2[2];
    EXPECT_EQ(sluice_container_place(big, 2, 4096, 4096, off2, &end), -EOVERFLOW);
    EXPECT_EQ(sluice_container_place(sizes, 1, 4096, UINT64_C(1) << 63, off, &end), -EOVERFLOW);
    // The last byte may end right below 2^63 only if its block boundary does too.
    uint64_t edge[] = {(UINT64_C(1) << 63) - 8192};
    EXPECT_EQ(sluice_container_place(edge, 1, 4096, 4096, off, &end), 0);
    EXPECT_EQ(end, (UINT64_C(1) << 63) - 4096);
    uint64_t over[] = {(UINT64_C(1) << 63) - 4096};
    EXPECT_EQ(sluice_container_place(over, 1, 4096, 4096, off, &end), -EOVERFLOW);
}

} // namespace
