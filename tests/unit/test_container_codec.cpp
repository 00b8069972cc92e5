/* SPDX-License-Identifier: MIT */
// Container encoder/decoder round trips: what a writer encodes with the primitives
// (encode_header, layout, encode_tail) or with sluice_container_write() is exactly what the
// reader decodes, for 0 members, 0-byte members, many members, long paths, several extents
// per member (holes, domain-split layouts), from memory and from real files. Also: the
// encoder refuses what the decoder would reject, random-access pread, copy into a descriptor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "ckpt/container/container.h"

namespace
{

struct Seg {
    uint64_t logical, length;
};

struct TM {
    std::string path;
    int32_t rank;
    std::string content;   // logical bytes; holes are zeros here
    std::vector<Seg> segs; // data segments; empty: one segment over everything (if non-empty)
};

sluice_container_meta make_meta(const char *key, uint32_t block = 4096, uint64_t version = 1)
{
    sluice_container_meta m{};
    m.set_key = key;
    m.block_size = block;
    m.version = version;
    m.created_ns = 1700000000123456789LL;
    m.writer_nprocs = 4;
    m.writer_pid = 4242;
    strcpy(m.writer_host, "node17");
    strcpy(m.writer_software, "sluice test");
    return m;
}

uint64_t up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// Builds an image with the primitives, the way the commit engine does. Each member starts on
// a block boundary; with `scatter`, extents of a member are placed in reverse order (file
// order unrelated to logical order, as a domain-split two-phase layout may produce).
// With `chunk`, each member carries its chunk checksums (format 1.3).
std::vector<unsigned char> build(const sluice_container_meta &meta, const std::vector<TM> &ms,
                                 bool scatter = false, uint32_t chunk = 0)
{
    uint64_t pos = sluice_container_data_start(meta.set_key, meta.block_size);
    std::vector<std::vector<sluice_extent>> ext(ms.size());
    std::vector<std::vector<uint32_t>> chunks(ms.size());
    std::vector<sluice_member> members(ms.size());
    std::vector<unsigned char> img(pos, 0);
    for (size_t i = 0; i < ms.size(); i++) {
        std::vector<Seg> segs = ms[i].segs;
        if (segs.empty() && !ms[i].content.empty())
            segs.push_back({0, ms[i].content.size()});
        std::vector<size_t> order(segs.size());
        for (size_t k = 0; k < order.size(); k++)
            order[k] = scatter ? order.size() - 1 - k : k;
        ext[i].resize(segs.size());
        for (size_t k : order) {
            pos = up(pos, meta.block_size);
            ext[i][k] = {segs[k].logical, pos, segs[k].length};
            img.resize(pos + segs[k].length, 0);
            memcpy(img.data() + pos, ms[i].content.data() + segs[k].logical, segs[k].length);
            pos += segs[k].length;
        }
        members[i].path = ms[i].path.c_str();
        members[i].member_rank = ms[i].rank;
        members[i].writer_rank = ms[i].rank + 100;
        members[i].size = ms[i].content.size();
        members[i].mtime_ns = 1600000000000000000LL + i;
        members[i].crc32c = sluice_crc32c_update(0, ms[i].content.data(), ms[i].content.size());
        members[i].n_extents = (uint32_t)segs.size();
        members[i].extents = ext[i].data();
        for (size_t at = 0; chunk && at < ms[i].content.size(); at += chunk)
            chunks[i].push_back(sluice_crc32c_update(0, ms[i].content.data() + at,
                                                     std::min<size_t>(chunk, ms[i].content.size() - at)));
        members[i].chunk_size = chunks[i].empty() ? 0 : chunk;
        members[i].n_chunks = (uint32_t)chunks[i].size();
        members[i].chunk_crc = chunks[i].data();
    }
    uint64_t index_offset = up(pos, 8);
    img.resize(index_offset, 0);
    size_t ts = sluice_container_tail_size(members.data(), (uint32_t)members.size());
    img.resize(index_offset + ts);
    long n = sluice_container_encode_tail(&meta, members.data(), (uint32_t)members.size(), index_offset,
                                          img.data() + index_offset, ts);
    EXPECT_EQ(n, (long)ts);
    long hs = sluice_container_encode_header(&meta, img.data(), img.size());
    EXPECT_EQ(hs, (long)sluice_container_header_size(meta.set_key));
    return img;
}

std::string random_bytes(std::mt19937 &rng, size_t n)
{
    std::string s(n, 0);
    for (auto &c : s)
        c = (char)rng();
    return s;
}

std::string read_all(const sluice_container *c, uint32_t i)
{
    std::string out(c->members[i].size, '\x55');
    long n = sluice_container_pread(c, i, out.data(), out.size(), 0);
    EXPECT_EQ(n, (long)out.size());
    return out;
}

void expect_same(const sluice_container *c, const sluice_container_meta &meta, const std::vector<TM> &ms)
{
    EXPECT_STREQ(c->meta.set_key, meta.set_key);
    EXPECT_EQ(c->meta.version, meta.version);
    EXPECT_EQ(c->meta.block_size, meta.block_size);
    EXPECT_EQ(c->meta.created_ns, meta.created_ns);
    EXPECT_EQ(c->meta.writer_pid, meta.writer_pid);
    EXPECT_EQ(c->meta.writer_nprocs, meta.writer_nprocs);
    EXPECT_STREQ(c->meta.writer_host, meta.writer_host);
    EXPECT_STREQ(c->meta.writer_software, meta.writer_software);
    EXPECT_EQ(c->format_major, SLUICE_CONTAINER_FORMAT_MAJOR);
    ASSERT_EQ(c->n_members, ms.size());
    for (uint32_t i = 0; i < c->n_members; i++) {
        const sluice_member &m = c->members[i];
        EXPECT_EQ(m.path, ms[i].path);
        EXPECT_EQ(m.member_rank, ms[i].rank);
        EXPECT_EQ(m.size, ms[i].content.size());
        char err[4096];
        EXPECT_EQ(sluice_container_verify_member(c, i, err, sizeof err), 0) << err;
        EXPECT_TRUE(read_all(c, i) == ms[i].content) << "member " << i;
        for (uint32_t e = 0; e < m.n_extents; e++)
            EXPECT_EQ(m.extents[e].file_offset % (e == 0 ? meta.block_size : 1), 0u);
    }
}

TEST(ContainerCodec, ZeroMembers)
{
    auto meta = make_meta("/run/ckpt.%r");
    auto img = build(meta, {});
    sluice_container *c = nullptr;
    char err[4096] = "";
    ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "mem", &c, err, sizeof err), 0) << err;
    expect_same(c, meta, {});
    EXPECT_EQ(c->file_size, img.size());
    sluice_container_close(c);
}

TEST(ContainerCodec, ZeroByteAndOneByteMembersAndOddSizes)
{
    std::mt19937 rng(1);
    auto meta = make_meta("/run/chk_10/rank_%r.bin", 512);
    std::vector<TM> ms = {{"/run/chk_10/rank_0.bin", 0, "", {}},
                          {"/run/chk_10/rank_1.bin", 1, "x", {}},
                          {"/run/chk_10/rank_2.bin", 2, random_bytes(rng, 3 * 1024 * 1024 + 17), {}},
                          {"/run/chk_10/rank_3.bin", 3, "", {}}};
    auto img = build(meta, ms);
    sluice_container *c = nullptr;
    char err[4096] = "";
    ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "mem", &c, err, sizeof err), 0) << err;
    expect_same(c, meta, ms);
    EXPECT_EQ(c->members[0].n_extents, 0u);
    EXPECT_EQ(c->members[0].crc32c, 0u);
    EXPECT_EQ(sluice_container_find(c, "/run/chk_10/rank_2.bin"), 2);
    EXPECT_EQ(sluice_container_find(c, "/run/chk_10/rank_9.bin"), -1);
    EXPECT_EQ(sluice_container_find_rank(c, 3), 3);
    EXPECT_EQ(sluice_container_find_rank(c, 7), -1);
    sluice_container_close(c);
}

TEST(ContainerCodec, ManyMembers)
{
    std::mt19937 rng(2);
    auto meta = make_meta("/scratch/job/restart_0042_%r.dat", 4096, 42);
    std::vector<TM> ms;
    for (int r = 0; r < 2000; r++)
        ms.push_back({"/scratch/job/restart_0042_" + std::to_string(r) + ".dat",
                      r,
                      random_bytes(rng, rng() % 300),
                      {}});
    auto img = build(meta, ms);
    sluice_container *c = nullptr;
    char err[4096] = "";
    ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "mem", &c, err, sizeof err), 0) << err;
    expect_same(c, meta, ms);
    sluice_container_close(c);
}

TEST(ContainerCodec, LongestPathsAndKey)
{
    std::string dir = "/";
    while (dir.size() < SLUICE_CONTAINER_KEY_MAX)
        dir += "abcdefghi/";
    dir.resize(SLUICE_CONTAINER_KEY_MAX - 8);
    std::string key = dir + "/ckpt.%r";
    ASSERT_EQ(key.size(), (size_t)SLUICE_CONTAINER_KEY_MAX);
    auto meta = make_meta(key.c_str());
    std::string p0 = key.substr(0, key.size() - 2) + "0";
    std::string p1 = std::string(1, '/') + std::string(SLUICE_CONTAINER_KEY_MAX - 1, 'x');
    std::vector<TM> ms = {{p0, 0, "zero", {}}, {p1, 1, "one", {}}};
    auto img = build(meta, ms);
    sluice_container *c = nullptr;
    char err[4096] = "";
    ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "mem", &c, err, sizeof err), 0) << err;
    expect_same(c, meta, ms);
    sluice_container_close(c);

    // One byte more is refused by the encoder, not silently cut.
    std::string too_long = std::string(1, '/') + std::string(SLUICE_CONTAINER_KEY_MAX, 'x');
    sluice_member m{};
    m.path = too_long.c_str();
    std::vector<unsigned char> buf(16384);
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 8192, buf.data(), buf.size()), -EINVAL);
}

TEST(ContainerCodec, SeveralExtentsHolesAndScatteredPlacement)
{
    std::mt19937 rng(3);
    // Member with holes at the start, middle and end; another split in 5 pieces whose file
    // order is the reverse of their logical order (a domain-split layout).
    std::string sparse(1 << 20, '\0');
    std::string a = random_bytes(rng, 5000), b = random_bytes(rng, 70000);
    memcpy(&sparse[100000], a.data(), a.size());
    memcpy(&sparse[600000], b.data(), b.size());
    std::string split = random_bytes(rng, 5 * 65536 + 3);
    std::vector<Seg> pieces;
    for (uint64_t o = 0; o < split.size(); o += 65536)
        pieces.push_back({o, std::min<uint64_t>(65536, split.size() - o)});
    std::vector<TM> ms = {{"/d/rank0/ckpt.dat", 0, sparse, {{100000, 5000}, {600000, 70000}}},
                          {"/d/rank1/ckpt.dat", 1, split, pieces},
                          {"/d/rank2/ckpt.dat", 2, std::string(12345, '\0'), {{0, 1}}}};
    for (bool scatter : {false, true}) {
        auto meta = make_meta("/d/rank%r/ckpt.dat", 4096);
        auto img = build(meta, ms, scatter);
        sluice_container *c = nullptr;
        char err[4096] = "";
        ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "mem", &c, err, sizeof err), 0) << err;
        expect_same(c, meta, ms);
        EXPECT_EQ(c->members[0].n_extents, 2u);
        EXPECT_EQ(c->members[1].n_extents, 6u);
        // Random access across hole/extent boundaries.
        for (int k = 0; k < 2000; k++) {
            uint32_t i = rng() % 3;
            uint64_t size = ms[i].content.size();
            uint64_t off = rng() % (size + 10), len = rng() % 200000;
            std::string got(len, '\x77');
            long n = sluice_container_pread(c, i, got.data(), len, off);
            uint64_t want = off >= size ? 0 : std::min(len, size - off);
            ASSERT_EQ(n, (long)want);
            ASSERT_TRUE(want == 0 || got.compare(0, want, ms[i].content, off, want) == 0)
                << "member " << i << " off " << off << " len " << len;
        }
        sluice_container_close(c);
    }
}

TEST(ContainerCodec, LayoutAlignsEveryNonEmptyMember)
{
    uint64_t sizes[] = {0, 1, 4096, 4097, 0, 10};
    uint64_t off[6], end = 0;
    ASSERT_EQ(sluice_container_layout(sizes, 6, 4096, 184, off, &end), 0);
    uint64_t want[] = {4096, 4096, 8192, 12288, 20480, 20480};
    for (int i = 0; i < 6; i++)
        EXPECT_EQ(off[i], want[i]) << i;
    EXPECT_EQ(end, 20480u + 16);
    EXPECT_EQ(sluice_container_layout(sizes, 6, 1000, 0, off, &end), -EINVAL);
    EXPECT_EQ(sluice_container_layout(sizes, 6, 256, 0, off, &end), -EINVAL);
    uint64_t huge[] = {UINT64_MAX - 100};
    EXPECT_EQ(sluice_container_layout(huge, 1, 4096, 4096, off, &end), -EOVERFLOW);
    EXPECT_EQ(sluice_container_data_start("/a/%r", 65536), 65536u);
    EXPECT_EQ(sluice_container_header_size("/a/%r"), SLUICE_CONTAINER_HEADER_FIXED + 8);
}

TEST(ContainerCodec, EncoderRefusesWhatTheReaderWouldReject)
{
    std::vector<unsigned char> buf(1 << 16);
    auto meta = make_meta("/run/ckpt.%r");
    EXPECT_EQ(sluice_container_encode_header(&meta, buf.data(), 10), -ENOSPC);
    auto bad = make_meta("/run/ckpt.0");
    EXPECT_EQ(sluice_container_encode_header(&bad, buf.data(), buf.size()), -EINVAL);
    bad = make_meta("relative/ckpt.%r");
    EXPECT_EQ(sluice_container_encode_header(&bad, buf.data(), buf.size()), -EINVAL);
    bad = make_meta("/run/ckpt.%r", 3000);
    EXPECT_EQ(sluice_container_encode_header(&bad, buf.data(), buf.size()), -EINVAL);

    sluice_extent x{0, 4096, 10};
    sluice_member m{};
    m.path = "/run/ckpt.0";
    m.size = 10;
    m.n_extents = 1;
    m.extents = &x;
    EXPECT_GT(sluice_container_encode_tail(&meta, &m, 1, 4112, buf.data(), buf.size()), 0);
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 4100, buf.data(), buf.size()), -EINVAL)
        << "index offset not a multiple of 8";
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 4104, buf.data(), buf.size()), -EINVAL)
        << "extent runs into the index";
    x.file_offset = 100;
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 8192, buf.data(), buf.size()), -EINVAL)
        << "extent inside the header";
    x = {5, 4096, 10};
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 8192, buf.data(), buf.size()), -EINVAL)
        << "extent past the member's size";
    sluice_extent two[2] = {{0, 4096, 6}, {5, 8192, 5}};
    m.n_extents = 2;
    m.extents = two;
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 16384, buf.data(), buf.size()), -EINVAL)
        << "overlapping extents";
    m.n_extents = 1;
    m.extents = &x;
    x = {0, 4096, 10};
    m.path = "ckpt.0";
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 8192, buf.data(), buf.size()), -EINVAL)
        << "relative member path";
}

// Format 1.3: chunk checksums round-trip, say minor 3 in the footer, and a record whose chunk
// count is not its member's is a corrupt index (checksums recomputed, so that only the count
// is wrong); the encoder refuses such a member.
TEST(ContainerCodec, ChunkChecksums)
{
    std::mt19937 rng(7);
    auto meta = make_meta("/run/ckpt.%r");
    std::vector<TM> ms = {{"/run/ckpt.0", 0, random_bytes(rng, 5000), {}},
                          {"/run/ckpt.1", 1, random_bytes(rng, 1024), {}},
                          {"/run/ckpt.2", 2, "", {}}};
    auto img = build(meta, ms, false, 1024);
    sluice_container *c = nullptr;
    char err[512];
    ASSERT_EQ(sluice_container_parse(img.data(), img.size(), "c.sluice", &c, err, sizeof err), 0) << err;
    EXPECT_EQ(img[img.size() - 64 + 10], 3) << "footer minor";
    uint32_t want_n[] = {5, 1, 0};
    for (uint32_t i = 0; i < 3; i++) {
        const sluice_member *m = &c->members[i];
        ASSERT_EQ(m->n_chunks, want_n[i]) << m->path;
        EXPECT_EQ(m->chunk_size, m->n_chunks ? 1024u : 0u);
        for (uint32_t k = 0; k < m->n_chunks; k++) {
            size_t len = std::min<size_t>(1024, m->size - k * 1024);
            EXPECT_EQ(m->chunk_crc[k], sluice_crc32c_update(0, ms[i].content.data() + k * 1024, len));
        }
    }
    sluice_container_close(c);

    // Member 0's count says 6 (5 chunks of 1 KiB hold its 5000 bytes), in both index copies.
    unsigned char *f = img.data() + img.size() - 64;
    uint64_t io = 0, il = 0;
    memcpy(&io, f + 16, 8);
    memcpy(&il, f + 24, 8);
    for (size_t at = 0; at + 12 <= img.size() - 64; at++)
        if (memcmp(img.data() + at, "CHNK", 4) == 0 && img[at + 8] == 5)
            img[at + 8] = 6;
    uint32_t icrc = sluice_crc32c_update(0, img.data() + io, il);
    for (unsigned char *ft : {f, img.data() + io - 64}) {
        memcpy(ft + 48, &icrc, 4);
        uint32_t fcrc = sluice_crc32c_update(0, ft, 60);
        memcpy(ft + 60, &fcrc, 4);
    }
    ASSERT_NE(sluice_container_parse(img.data(), img.size(), "c.sluice", &c, err, sizeof err), 0);
    EXPECT_NE(std::string(err).find("chunk checksums do not fit the member"), std::string::npos) << err;

    std::vector<unsigned char> buf(1 << 16);
    sluice_extent x{0, 4096, 10};
    uint32_t crcs[2] = {0, 0};
    sluice_member m{};
    m.path = "/run/ckpt.0";
    m.size = 10;
    m.n_extents = 1;
    m.extents = &x;
    m.chunk_size = 512;
    m.n_chunks = 2;
    m.chunk_crc = crcs;
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 4112, buf.data(), buf.size()), -EINVAL)
        << "two chunks for 10 bytes";
    m.n_chunks = 1;
    EXPECT_GT(sluice_container_encode_tail(&meta, &m, 1, 4112, buf.data(), buf.size()), 0);
    m.chunk_size = 100;
    EXPECT_EQ(sluice_container_encode_tail(&meta, &m, 1, 4112, buf.data(), buf.size()), -EINVAL)
        << "chunk size not a power of two";
}

// Real files: sluice_container_write from descriptors (with a sparse source) and buffers,
// then open/verify/copy from the file system.
class ContainerFile : public ::testing::Test
{
  protected:
    std::string dir;
    void SetUp() override
    {
        char tmpl[] = "/tmp/sluice-test-container-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { (void)!system(("rm -rf '" + dir + "'").c_str()); }
};

TEST_F(ContainerFile, WriteFromDescriptorsAndBuffersThenOpenAndCopy)
{
    std::mt19937 rng(4);
    std::string key = dir + "/ckpt.%r";
    // A sparse source: 1 MiB hole, 3 bytes, 2 MiB hole, 8 KiB, ends in a hole.
    std::string sparse_path = dir + "/stage-sparse";
    int sfd = open(sparse_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(sfd, 0);
    std::string p1 = "abc", p2 = random_bytes(rng, 8192);
    ASSERT_EQ(pwrite(sfd, p1.data(), 3, 1 << 20), 3);
    ASSERT_EQ(pwrite(sfd, p2.data(), p2.size(), 3 << 20), (ssize_t)p2.size());
    uint64_t sparse_size = (4 << 20) + 5;
    ASSERT_EQ(ftruncate(sfd, (off_t)sparse_size), 0);
    std::string sparse(sparse_size, '\0');
    memcpy(&sparse[1 << 20], p1.data(), 3);
    memcpy(&sparse[3 << 20], p2.data(), p2.size());
    std::string dense = random_bytes(rng, 1000003);

    sluice_container_source src[3] = {};
    std::string n0 = dir + "/ckpt.0", n1 = dir + "/ckpt.1", n2 = dir + "/ckpt.2";
    src[0] = {n0.c_str(), 0, 0, 123, sfd, nullptr, sparse_size};
    src[1] = {n1.c_str(), 1, 1, 456, -1, dense.data(), dense.size()};
    src[2] = {n2.c_str(), 2, 2, 789, -1, nullptr, 0};
    auto meta = make_meta(key.c_str(), 65536, 7);
    char name[4096], tmp[4096], err[4096] = "";
    ASSERT_EQ(sluice_container_name(key.c_str(), name, sizeof name), 0);
    ASSERT_EQ(sluice_container_temp_name(name, 99, tmp, sizeof tmp), 0);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(sluice_container_write(fd, &meta, src, 3, err, sizeof err), 0) << err;
    close(fd);
    close(sfd);
    ASSERT_EQ(rename(tmp, name), 0);

    sluice_container *c = nullptr;
    ASSERT_EQ(sluice_container_open(name, &c, err, sizeof err), 0) << err;
    expect_same(c, meta, {{n0, 0, sparse, {}}, {n1, 1, dense, {}}, {n2, 2, "", {}}});
    EXPECT_EQ(c->members[0].mtime_ns, 123);
    EXPECT_EQ(c->members[0].n_extents, 2u) << "holes of the source stay holes";
    EXPECT_LT(c->file_size, 2u << 20) << "the container does not store the source's holes";

    // Copy out into a descriptor that already holds junk: exactly the member's bytes remain.
    std::string out = dir + "/out";
    int ofd = open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(ofd, 0);
    std::string junk(8 << 20, 'J');
    ASSERT_EQ(write(ofd, junk.data(), junk.size()), (ssize_t)junk.size());
    ASSERT_EQ(sluice_container_copy_member(c, 0, ofd, err, sizeof err), 0) << err;
    struct stat st;
    ASSERT_EQ(fstat(ofd, &st), 0);
    ASSERT_EQ((uint64_t)st.st_size, sparse_size);
    std::string back(sparse_size, 'Q');
    ASSERT_EQ(pread(ofd, back.data(), back.size(), 0), (ssize_t)back.size());
    EXPECT_TRUE(back == sparse);
    close(ofd);
    sluice_container_close(c);
}

TEST_F(ContainerFile, OpenErrorsKeepTheirErrno)
{
    sluice_container *c = nullptr;
    char err[4096] = "";
    std::string missing = dir + "/nothing.sluice";
    EXPECT_EQ(sluice_container_open(missing.c_str(), &c, err, sizeof err), -ENOENT);
    EXPECT_NE(strstr(err, missing.c_str()), nullptr) << err;
    EXPECT_EQ(sluice_container_open(dir.c_str(), &c, err, sizeof err), -EIO);
    EXPECT_NE(strstr(err, "not a sluice container"), nullptr) << err;
    std::string text = dir + "/text.sluice";
    FILE *f = fopen(text.c_str(), "w");
    fputs("hello, this is not a container at all, just some text that is long enough", f);
    fclose(f);
    EXPECT_EQ(sluice_container_open(text.c_str(), &c, err, sizeof err), -EIO);
    EXPECT_NE(strstr(err, "bad magic"), nullptr) << err;
}

struct Seen {
    std::vector<std::string> ok, bad;
};

TEST_F(ContainerFile, ScanDirListsContainersSortedAndSkipsTempNames)
{
    std::string keys[] = {dir + "/b.%r", dir + "/a.%r"};
    for (auto &k : keys) {
        char name[4096], err[4096];
        ASSERT_EQ(sluice_container_name(k.c_str(), name, sizeof name), 0);
        auto meta = make_meta(k.c_str());
        int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        ASSERT_EQ(sluice_container_write(fd, &meta, nullptr, 0, err, sizeof err), 0) << err;
        close(fd);
    }
    for (const char *junk : {"/.a.@r.sluice.tmp.123", "/zz.sluice", "/ckpt.0", "/notes.txt"}) {
        FILE *f = fopen((dir + junk).c_str(), "w");
        fputs("junk", f);
        fclose(f);
    }
    Seen seen;
    int rc = sluice_container_scan_dir(
        dir.c_str(),
        [](void *ctx, const char *path, const sluice_container *c, int rc, const char *msg) {
            auto *s = static_cast<Seen *>(ctx);
            (c ? s->ok : s->bad).push_back(path);
            if (!c && (rc != -EIO || !strstr(msg, "zz.sluice")))
                return 1;
            return 0;
        },
        &seen);
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(seen.ok.size(), 2u);
    EXPECT_EQ(seen.ok[0], dir + "/a.@r.sluice");
    EXPECT_EQ(seen.ok[1], dir + "/b.@r.sluice");
    ASSERT_EQ(seen.bad.size(), 1u);
    EXPECT_EQ(seen.bad[0], dir + "/zz.sluice");
    EXPECT_EQ(sluice_container_scan_dir((dir + "/missing").c_str(), nullptr, nullptr), -ENOENT);
}

} // namespace

// Inside libsluice.so the engine routes the container code's system calls to the real libc
// functions (sluice_container_set_io), so that they never re-enter sluice's own wrappers. That
// only works if every call goes through the table: count them.
namespace counting
{
int opens, closes, preads, pwrites, fstats, lseeks, ftruncates, opendirs, readdirs, closedirs;
int open_(const char *p, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    opens++;
    return open(p, flags, mode);
}
int close_(int fd)
{
    return closes++, close(fd);
}
ssize_t pread_(int fd, void *b, size_t n, off_t o)
{
    return preads++, pread(fd, b, n, o);
}
ssize_t pwrite_(int fd, const void *b, size_t n, off_t o)
{
    return pwrites++, pwrite(fd, b, n, o);
}
int fstat_(int fd, struct stat *st)
{
    return fstats++, fstat(fd, st);
}
off_t lseek_(int fd, off_t o, int w)
{
    return lseeks++, lseek(fd, o, w);
}
int ftruncate_(int fd, off_t l)
{
    return ftruncates++, ftruncate(fd, l);
}
DIR *opendir_(const char *p)
{
    return opendirs++, opendir(p);
}
struct dirent *readdir_(DIR *d)
{
    return readdirs++, readdir(d);
}
int closedir_(DIR *d)
{
    return closedirs++, closedir(d);
}
} // namespace counting

TEST_F(ContainerFile, EverySystemCallGoesThroughTheIoTable)
{
    using namespace counting;
    const sluice_container_io counted = {open_,  close_,     pread_,   pwrite_,  fstat_,
                                         lseek_, ftruncate_, opendir_, readdir_, closedir_};
    const sluice_container_io libc = {open,  close,     pread,   pwrite,  fstat,
                                      lseek, ftruncate, opendir, readdir, closedir};
    sluice_container_set_io(&counted);
    std::string key = dir + "/ckpt.%r", m0 = dir + "/ckpt.0";
    std::string stage = dir + "/stage";
    int sfd = ::open(stage.c_str(), O_RDWR | O_CREAT, 0600);
    ASSERT_EQ(::pwrite(sfd, "data", 4, 0), 4);
    sluice_container_source src{m0.c_str(), 0, 0, 0, sfd, nullptr, 4};
    auto meta = make_meta(key.c_str());
    char name[4096], err[4096];
    ASSERT_EQ(sluice_container_name(key.c_str(), name, sizeof name), 0);
    int fd = ::open(name, O_RDWR | O_CREAT, 0600);
    ASSERT_EQ(sluice_container_write(fd, &meta, &src, 1, err, sizeof err), 0) << err;
    ::close(fd);
    EXPECT_GT(lseeks, 0);
    EXPECT_GT(preads, 0);
    EXPECT_GT(pwrites, 0);
    EXPECT_GT(ftruncates, 0);
    int found = 0;
    sluice_container_scan_dir(
        dir.c_str(),
        [](void *ctx, const char *, const sluice_container *c, int, const char *) {
            char e[4096];
            int out = ::open("/dev/null", O_WRONLY);
            (void)!sluice_container_copy_member(c, 0, out, e, sizeof e);
            ::close(out);
            ++*static_cast<int *>(ctx);
            return 0;
        },
        &found);
    sluice_container_set_io(&libc);
    ::close(sfd);
    EXPECT_EQ(found, 1);
    EXPECT_EQ(opens, 1);
    EXPECT_EQ(closes, 1);
    EXPECT_EQ(fstats, 1);
    EXPECT_EQ(opendirs, 1);
    EXPECT_GE(readdirs, 3);
    EXPECT_EQ(closedirs, 1);
}

namespace
{

// Members of a global array's shape: many extents each, chunk checksums on some, a 0-byte one.
struct Shaped {
    std::vector<std::string> paths;
    std::vector<std::vector<sluice_extent>> ext;
    std::vector<std::vector<uint32_t>> chunks, zeros;
    std::vector<sluice_member> m;
};

Shaped shaped(std::mt19937 &rng)
{
    Shaped s;
    const int n = 5;
    s.paths.resize(n);
    s.ext.resize(n);
    s.chunks.resize(n);
    s.zeros.resize(n);
    s.m.resize(n);
    uint64_t file = 8192;
    for (int i = 0; i < n; i++) {
        s.paths[i] = "/ckpt/run/ckpt." + std::to_string(i);
        uint64_t size = i == 3 ? 0 : 64 + 512 * (100 + i * 37);
        for (uint64_t at = 0; at < size; at += at ? 512 : 64) {
            s.ext[i].push_back({at, file + 2 * at, at ? uint64_t{512} : uint64_t{64}});
        }
        file += 4 * size + 4096;
        if (i != 1) // member 1: no chunk checksums
            for (uint64_t at = 0; at < size; at += 16384)
                s.chunks[i].push_back((uint32_t)rng());
        s.zeros[i].assign(s.chunks[i].size(), 0);
        s.m[i] = sluice_member{};
        s.m[i].path = s.paths[i].c_str();
        s.m[i].member_rank = i;
        s.m[i].writer_rank = i;
        s.m[i].size = size;
        s.m[i].mtime_ns = 1600000000000000000LL + i;
        s.m[i].crc32c = (uint32_t)rng();
        s.m[i].n_extents = (uint32_t)s.ext[i].size();
        s.m[i].extents = s.ext[i].data();
        s.m[i].chunk_size = s.chunks[i].empty() ? 0 : 16384;
        s.m[i].n_chunks = (uint32_t)s.chunks[i].size();
        s.m[i].chunk_crc = s.chunks[i].data();
    }
    return s;
}

} // namespace

// A tail encoded while the data moves (checksums zero, the description as planned), then
// patched with the checksums and the final description, is byte for byte the tail encoded at
// the end; a tail of another shape is refused, never patched into a wrong index.
TEST(ContainerCodec, PatchedTailEqualsTheTailEncodedAtTheEnd)
{
    std::mt19937 rng(7);
    Shaped s = shaped(rng);
    const uint32_t n = (uint32_t)s.m.size();
    const uint64_t index_offset = 1u << 22;
    sluice_container_meta planned = make_meta("/ckpt/run/ckpt.%r"), final_meta = planned;
    final_meta.flags = SLUICE_CONTAINER_F_PARTIAL; // a member vanished meanwhile: the header changed
    size_t ts = sluice_container_tail_size(s.m.data(), n);
    std::vector<unsigned char> want(ts), ahead(ts);
    ASSERT_EQ(sluice_container_encode_tail(&final_meta, s.m.data(), n, index_offset, want.data(), ts),
              (long)ts);

    std::vector<sluice_member> blank = s.m;
    for (uint32_t i = 0; i < n; i++) {
        blank[i].crc32c = 0;
        blank[i].chunk_crc = s.zeros[i].data();
    }
    ASSERT_EQ(sluice_container_encode_tail(&planned, blank.data(), n, index_offset, ahead.data(), ts),
              (long)ts);
    EXPECT_NE(want, ahead);
    std::vector<unsigned char> other = ahead;
    ASSERT_EQ(sluice_container_patch_tail(&final_meta, s.m.data(), n, index_offset, ahead.data(), ts),
              (long)ts);
    EXPECT_EQ(want, ahead);

    // Other shapes: a member fewer, a member without its chunk checksums, another path, another
    // size; the tail is left for a fresh encoding.
    std::vector<sluice_member> m = s.m;
    EXPECT_EQ(sluice_container_patch_tail(&final_meta, m.data(), n - 1, index_offset, other.data(), ts),
              -EINVAL);
    m[2].n_chunks = 0;
    m[2].chunk_size = 0;
    EXPECT_EQ(sluice_container_patch_tail(&final_meta, m.data(), n, index_offset, other.data(),
                                          sluice_container_tail_size(m.data(), n)),
              -EINVAL);
    m = s.m;
    std::string moved = "/ckpt/run/ckpt.9";
    m[4].path = moved.c_str();
    EXPECT_EQ(sluice_container_patch_tail(&final_meta, m.data(), n, index_offset, other.data(), ts), -EINVAL);
    m = s.m;
    m[0].size -= 1;
    EXPECT_EQ(sluice_container_patch_tail(&final_meta, m.data(), n, index_offset, other.data(), ts), -EINVAL);
    m = s.m;
    m[4].member_rank = 7;
    EXPECT_EQ(sluice_container_patch_tail(&final_meta, m.data(), n, index_offset, other.data(), ts), -EINVAL);
}
