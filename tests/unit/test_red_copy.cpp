/* SPDX-License-Identifier: MIT */
// Unit tests of the redundancy copies (runtime/ckpt/redundancy/red_copy.h, docs/FORMAT.md
// "Redundancy copies"): a node's part (two ranks' level records and staging files, one of
// several chunks, one empty) streamed as the encoder does, restored byte for byte (all ranks,
// or the chosen ones); every truncation and a flipped byte anywhere in the copy (every byte of the
// first 700, which hold the header, the record and the first chunk heads, then every 8191st) is refused with
// nothing left behind, never restored wrong; the protection marks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" {
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"
}

namespace
{

const char *kKey = "/run/ckpt.%r";

std::string tmpdir()
{
    char t[] = "/dev/shm/sluice-redcopy-XXXXXX"; // memory: the loops below write ~1000 copies
    return mkdtemp(t);
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const std::string &path, const std::string &data)
{
    std::ofstream(path, std::ios::binary) << data;
}

int count_files(const std::string &dir)
{
    DIR *d = opendir(dir.c_str());
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != nullptr;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

struct Part {
    std::string src, copy;
    std::vector<std::string> names; // every file of the part
    Part()
    {
        src = tmpdir();
        std::string bytes;
        sluice_red_header *h = static_cast<sluice_red_header *>(calloc(1, sizeof *h));
        h->version = 7;
        h->nprocs = 3;
        snprintf(h->host, sizeof h->host, "0123456789abcdef");
        snprintf(h->key, sizeof h->key, "%s", kKey);
        h->nranks = 2;
        h->ranks[0] = 0;
        h->ranks[1] = 1;
        std::vector<unsigned char> buf(SLUICE_RED_CHUNK + 4096);
        bytes.append((char *)buf.data(), sluice_red_put_header(buf.data(), buf.size(), h));
        free(h);
        uint32_t entries = 0;
        for (int rank = 0; rank < 2; rank++) {
            // rank 0: one member of 300001 bytes (2 chunks); rank 1: an empty one and 5 bytes
            std::vector<size_t> sizes = rank == 0 ? std::vector<size_t>{300001} : std::vector<size_t>{0, 5};
            sluice_level_record r;
            memset(&r, 0, sizeof r);
            snprintf(r.set_key, sizeof r.set_key, "%s", kKey);
            r.version = 7;
            r.nprocs = 3;
            r.rank = rank;
            r.pid = 1;
            r.level = SLUICE_LEVEL_STAGED;
            r.m = static_cast<sluice_level_member *>(calloc(sizes.size(), sizeof *r.m));
            std::vector<std::string> data;
            for (size_t i = 0; i < sizes.size(); i++) {
                sluice_level_member &m = r.m[r.n++];
                m.member_rank = rank;
                m.size = sizes[i];
                snprintf(m.data, sizeof m.data, "stage-%d-%zu.data", rank, i);
                snprintf(m.path, sizeof m.path, "/run/ckpt.%d.%zu", rank, i);
                std::string content(sizes[i], '\0');
                for (size_t k = 0; k < sizes[i]; k++)
                    content[k] = (char)(k * 31 + rank * 7 + i);
                spit(src + "/" + m.data, content);
                data.push_back(m.data);
            }
            EXPECT_EQ(0, sluice_level_record_write(src.c_str(), &r));
            char rp[PATH_MAX];
            sluice_level_record_path(src.c_str(), kKey, 7, rank, rp, sizeof rp);
            free(r.m);
            std::vector<std::string> group{strrchr(rp, '/') + 1};
            group.insert(group.end(), data.begin(), data.end());
            for (size_t g = 0; g < group.size(); g++) {
                std::string content = slurp(src + "/" + group[g]);
                names.push_back(group[g]);
                bytes.append(
                    (char *)buf.data(),
                    sluice_red_put_entry(buf.data(), buf.size(), group[g].c_str(), content.size(), g == 0));
                for (size_t off = 0; off < content.size(); off += SLUICE_RED_CHUNK) {
                    uint32_t len = (uint32_t)std::min<size_t>(SLUICE_RED_CHUNK, content.size() - off);
                    bytes.append((char *)buf.data(),
                                 sluice_red_put_chunk(buf.data(), buf.size(), content.data() + off, len));
                }
                entries++;
            }
        }
        bytes.append((char *)buf.data(), sluice_red_put_end(buf.data(), buf.size(), entries));
        copy = src + "/copy.red";
        spit(copy, bytes);
    }
    ~Part() { std::system(("rm -rf '" + src + "'").c_str()); }
};

TEST(RedCopy, RestoresEveryFileByteForByte)
{
    Part p;
    sluice_red_header h;
    ASSERT_EQ(0, sluice_red_copy_header(p.copy.c_str(), &h));
    EXPECT_EQ(7u, h.version);
    EXPECT_EQ(3, h.nprocs);
    EXPECT_STREQ(kKey, h.key);
    EXPECT_EQ(2, h.nranks);
    std::string dst = tmpdir();
    char err[512];
    int64_t n = sluice_red_copy_restore(p.copy.c_str(), dst.c_str(), nullptr, 0, err, sizeof err);
    ASSERT_GT(n, 300006) << err;
    for (const std::string &name : p.names)
        EXPECT_EQ(slurp(p.src + "/" + name), slurp(dst + "/" + name)) << name;
    EXPECT_EQ((int)p.names.size(), count_files(dst)); // no temporary left
    char rp[PATH_MAX];
    sluice_level_record_path(dst.c_str(), kKey, 7, 1, rp, sizeof rp);
    sluice_level_record r;
    ASSERT_EQ(0, sluice_level_record_read(rp, &r));
    EXPECT_EQ(2u, r.n);
    sluice_level_record_free(&r);
    std::system(("rm -rf '" + dst + "'").c_str());
}

TEST(RedCopy, RestoresOnlyTheChosenRanks)
{
    Part p;
    std::string dst = tmpdir();
    char err[512];
    int one = 1;
    ASSERT_EQ(5 + (int64_t)slurp(p.src + "/" + p.names[2]).size(),
              sluice_red_copy_restore(p.copy.c_str(), dst.c_str(), &one, 1, err, sizeof err))
        << err;
    EXPECT_EQ(3, count_files(dst)); // rank 1's record and its two staging files
    EXPECT_EQ(slurp(p.src + "/stage-1-1.data"), slurp(dst + "/stage-1-1.data"));
    EXPECT_NE(0, access((dst + "/stage-0-0.data").c_str(), F_OK));
    std::system(("rm -rf '" + dst + "'").c_str());
}

TEST(RedCopy, EveryTruncationAndFlippedByteIsRefusedLeavingNothing)
{
    Part p;
    std::string whole = slurp(p.copy), dst = tmpdir(), bad = p.src + "/bad.red";
    char err[512];
    for (size_t cut = 0; cut < whole.size(); cut += cut < 700 ? 1 : 8191) {
        spit(bad, whole.substr(0, cut));
        ASSERT_LT(sluice_red_copy_restore(bad.c_str(), dst.c_str(), nullptr, 0, err, sizeof err), 0) << cut;
        ASSERT_EQ(0, count_files(dst)) << "cut at " << cut;
    }
    for (size_t at = 0; at < whole.size(); at += at < 700 ? 1 : 8191) {
        std::string b = whole;
        b[at] = (char)(b[at] ^ 0x40);
        spit(bad, b);
        ASSERT_LT(sluice_red_copy_restore(bad.c_str(), dst.c_str(), nullptr, 0, err, sizeof err), 0) << at;
        ASSERT_EQ(0, count_files(dst)) << "flipped byte " << at;
    }
    // A flipped data byte is named as a checksum mismatch.
    std::string b = whole;
    b[whole.size() / 3] ^= 1;
    spit(bad, b);
    EXPECT_LT(sluice_red_copy_restore(bad.c_str(), dst.c_str(), nullptr, 0, err, sizeof err), 0);
    EXPECT_NE(nullptr, strstr(err, "crc32c mismatch")) << err;
    std::system(("rm -rf '" + dst + "'").c_str());
}

TEST(RedCopy, MarksAndRemoval)
{
    std::string dir = tmpdir();
    EXPECT_EQ(0, sluice_red_marked(dir.c_str(), kKey, 5));
    EXPECT_EQ(0, sluice_red_mark_write(dir.c_str(), kKey, 5, "partner", 2));
    EXPECT_EQ(0, sluice_red_mark_write(dir.c_str(), kKey, 6, "partner", 2));
    EXPECT_EQ(1, sluice_red_marked(dir.c_str(), kKey, 5));
    EXPECT_EQ(0, sluice_red_marked(dir.c_str(), "/other/%r", 5));
    char cp[PATH_MAX];
    ASSERT_EQ(0, sluice_red_copy_path(dir.c_str(), kKey, 5, "0123456789abcdef", cp, sizeof cp));
    spit(cp, "x");
    EXPECT_EQ(2, sluice_red_remove(dir.c_str(), kKey, 5)); // version 5's mark and copy
    EXPECT_EQ(0, sluice_red_marked(dir.c_str(), kKey, 5));
    EXPECT_EQ(1, sluice_red_marked(dir.c_str(), kKey, 6));
    std::system(("rm -rf '" + dir + "'").c_str());
}

} // namespace
