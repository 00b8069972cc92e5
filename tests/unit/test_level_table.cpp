/* SPDX-License-Identifier: MIT */
// Unit tests of the node-local versions agreed over nodes (runtime/ckpt/redundancy/level_table.h,
// docs/REDUNDANCY.md "Across nodes"): two stage folders (two nodes) each holding the records of
// some ranks; the merged summaries say which version is complete over both, the newest recorded,
// and which host holds a member; a record whose staging file is gone is left out; a summary
// sent twice (two ranks of one node) counts once; a truncated or damaged summary is skipped
// whole, never misread.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/level_table.h"
}

namespace
{

const char *kKey = "/run/ckpt.%r";

struct Node {
    std::string dir;
    Node()
    {
        char t[] = "/tmp/sluice-ltable-XXXXXX";
        dir = mkdtemp(t);
    }
    ~Node() { std::system(("rm -rf '" + dir + "'").c_str()); }
    // rank's record of version with one member, /run/ckpt.<rank>, staged as 3 bytes.
    void record(uint64_t version, int rank, int nprocs)
    {
        sluice_level_record r;
        memset(&r, 0, sizeof r);
        snprintf(r.set_key, sizeof r.set_key, "%s", kKey);
        r.version = version;
        r.nprocs = nprocs;
        r.rank = rank;
        r.pid = 1;
        r.level = SLUICE_LEVEL_STAGED;
        r.m = static_cast<sluice_level_member *>(calloc(1, sizeof *r.m));
        sluice_level_member &m = r.m[r.n++];
        m.member_rank = rank;
        m.size = 3;
        snprintf(m.data, sizeof m.data, "d-%d-%llu.data", rank, (unsigned long long)version);
        snprintf(m.path, sizeof m.path, "/run/ckpt.%d", rank);
        FILE *f = fopen((dir + "/" + m.data).c_str(), "w");
        fputs("abc", f);
        fclose(f);
        ASSERT_EQ(0, sluice_level_record_write(dir.c_str(), &r));
        free(r.m);
    }
    std::vector<unsigned char> summary(const char *host)
    {
        unsigned char *p = nullptr;
        size_t n = 0;
        EXPECT_EQ(0, sluice_level_table_encode(dir.c_str(), host, &p, &n));
        std::vector<unsigned char> v(p, p + n);
        free(p);
        return v;
    }
};

const char *kHostA = "aaaaaaaaaaaaaaaa", *kHostB = "bbbbbbbbbbbbbbbb";

sluice_level_table *merge(const std::vector<std::vector<unsigned char>> &parts)
{
    std::vector<unsigned char> all;
    std::vector<size_t> lens;
    for (const auto &p : parts) {
        all.insert(all.end(), p.begin(), p.end());
        lens.push_back(p.size());
    }
    return sluice_level_table_merge(all.data(), lens.data(), (int)lens.size());
}

// 4 ranks: 0 and 2 on node A, 1 and 3 on node B; versions 6 and 7.
void four_ranks(Node &a, Node &b)
{
    for (uint64_t v : {6, 7}) {
        a.record(v, 0, 4);
        a.record(v, 2, 4);
        b.record(v, 1, 4);
        b.record(v, 3, 4);
    }
}

TEST(LevelTable, CompleteOnlyOverBothNodes)
{
    Node a, b;
    four_ranks(a, b);
    EXPECT_EQ(0u, sluice_level_complete(a.dir.c_str(), kKey, 0)); // neither node alone
    sluice_level_table *t = merge({a.summary(kHostA), a.summary(kHostA), b.summary(kHostB)});
    ASSERT_NE(nullptr, t);
    EXPECT_EQ(7u, sluice_level_table_complete(t, kKey, 0));
    EXPECT_EQ(0u, sluice_level_table_complete(t, kKey, 7));
    EXPECT_EQ(7u, sluice_level_table_max(t, kKey));
    EXPECT_EQ(8u, sluice_level_table_size(t)); // the second copy of A's summary added nothing
    char host[17];
    EXPECT_EQ(7u, sluice_level_table_holder(t, kKey, "/run/ckpt.3", 0, 7, host));
    EXPECT_STREQ(kHostB, host);
    EXPECT_EQ(6u, sluice_level_table_holder(t, kKey, "/run/ckpt.2", 0, 6, host));
    EXPECT_STREQ(kHostA, host);
    EXPECT_EQ(0u, sluice_level_table_holder(t, kKey, "/run/ckpt.9", 0, 7, host));
    EXPECT_EQ(0u, sluice_level_table_complete(t, "/other.%r", 0));
    sluice_level_table_free(t);
}

TEST(LevelTable, MissingStagingFileOrNodeMakesVersionIncomplete)
{
    Node a, b;
    four_ranks(a, b);
    std::remove((b.dir + "/d-3-7.data").c_str());
    sluice_level_table *t = merge({a.summary(kHostA), b.summary(kHostB)});
    EXPECT_EQ(6u, sluice_level_table_complete(t, kKey, 0));
    EXPECT_EQ(7u, sluice_level_table_max(t, kKey));
    sluice_level_table_free(t);
    t = merge({a.summary(kHostA)}); // node B lost
    EXPECT_EQ(0u, sluice_level_table_complete(t, kKey, 0));
    EXPECT_EQ(7u, sluice_level_table_max(t, kKey));
    sluice_level_table_free(t);
}

TEST(LevelTable, EmptyFolderSendsNothing)
{
    Node a;
    EXPECT_TRUE(a.summary(kHostA).empty());
    unsigned char *p = reinterpret_cast<unsigned char *>(1);
    size_t n = 1;
    EXPECT_EQ(0, sluice_level_table_encode("/nonexistent/sluice", kHostA, &p, &n));
    EXPECT_EQ(nullptr, p);
    EXPECT_EQ(0u, n);
}

TEST(LevelTable, DamagedSummarySkippedWhole)
{
    Node a, b;
    four_ranks(a, b);
    std::vector<unsigned char> sa = a.summary(kHostA), sb = b.summary(kHostB);
    for (size_t cut = 0; cut < sb.size(); cut++) { // every truncation of B's
        std::vector<unsigned char> part(sb.begin(), sb.begin() + (long)cut);
        sluice_level_table *t = merge({sa, part});
        ASSERT_NE(nullptr, t);
        EXPECT_EQ(4u, sluice_level_table_size(t)) << "cut at " << cut;
        EXPECT_EQ(0u, sluice_level_table_complete(t, kKey, 0));
        sluice_level_table_free(t);
    }
    for (size_t i = 16; i < sb.size(); i++) { // every byte after the host flipped: never a crash
        std::vector<unsigned char> bad = sb;
        bad[i] ^= 0xff;
        sluice_level_table *t = merge({sa, bad});
        ASSERT_NE(nullptr, t);
        EXPECT_LE(sluice_level_table_size(t), 8u);
        sluice_level_table_free(t);
    }
}

} // namespace
