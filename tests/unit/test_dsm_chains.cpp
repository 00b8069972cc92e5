/* SPDX-License-Identifier: MIT */
// DSM chunks and chains (runtime/dsm/chunk.c, api.c): the address maths of MALLOC (chunks at
// base, base+1, ..., the remainder last), MALLOC_LST's round-robin sizes, homes by address
// modulo the server list, a chunk in two chains kept equal, and the LRU eviction order under a
// chunk limit (home copies kept). One process, no MPI (dsm_world.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dsm_world.h"

namespace
{

std::vector<unsigned long> addrs_of(const sluice_dsm_chain *ch)
{
    std::vector<unsigned long> v;
    for (size_t i = 0; i < ch->n; i++)
        v.push_back(ch->chunks[i]->addr);
    return v;
}

std::vector<size_t> sizes_of(const sluice_dsm_chain *ch)
{
    std::vector<size_t> v;
    for (size_t i = 0; i < ch->n; i++)
        v.push_back(ch->chunks[i]->size);
    return v;
}

std::vector<size_t> offsets_of(const sluice_dsm_chain *ch)
{
    return std::vector<size_t>(ch->offsets, ch->offsets + ch->n);
}

TEST(DsmChunkMaths, MallocCutsTheSizeIntoChunksAtConsecutiveAddressesRemainderLast)
{
    DsmWorld w(1, 0, 256);
    sluice_dsm_chain *c = sluice_dsm_malloc(100, 1000, SLUICE_DSM_MESI);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(addrs_of(c), (std::vector<unsigned long>{100, 101, 102, 103}));
    EXPECT_EQ(sizes_of(c), (std::vector<size_t>{256, 256, 256, 232}));
    EXPECT_EQ(offsets_of(c), (std::vector<size_t>{0, 256, 512, 768}));
    EXPECT_EQ(sluice_dsm_chain_size(c), 1000u);
    EXPECT_EQ(sluice_dsm_chain_base(c), 100u);
    // An exact multiple has no short chunk; one byte is one chunk.
    sluice_dsm_chain *e = sluice_dsm_malloc(200, 512, SLUICE_DSM_MESI);
    EXPECT_EQ(sizes_of(e), (std::vector<size_t>{256, 256}));
    sluice_dsm_chain *one = sluice_dsm_malloc(300, 1, SLUICE_DSM_MESI);
    EXPECT_EQ(sizes_of(one), (std::vector<size_t>{1}));
}

TEST(DsmChunkMaths, TheSameBaseAndSizeIsTheSameChainAnotherSizeOfAChunkIsRefused)
{
    DsmWorld w(1, 0, 256);
    sluice_dsm_chain *a = sluice_dsm_malloc(100, 1000, SLUICE_DSM_MESI);
    EXPECT_EQ(sluice_dsm_malloc(100, 1000, SLUICE_DSM_MESI), a);
    // A chain over the first three chunks shares them (same sizes): another chain.
    sluice_dsm_chain *b = sluice_dsm_malloc(100, 768, SLUICE_DSM_MESI);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(b, a);
    EXPECT_EQ(b->chunks[0], a->chunks[0]);
    EXPECT_EQ(a->chunks[0]->ninst, 2u);
    // Chunk 103 is 232 bytes here: 1024 bytes from 100 would make it 256.
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_malloc(100, 1024, SLUICE_DSM_MESI), nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_ESIZE);
    EXPECT_NE(err.find("chunk @103 is 232 bytes here, not 256"), std::string::npos) << err;
}

TEST(DsmChunkMaths, HomeIsTheAddressModuloTheServerList)
{
    DsmWorld w(4, 0);
    EXPECT_EQ(dsm_home_of(0), 0);
    EXPECT_EQ(dsm_home_of(5), 1);
    EXPECT_EQ(dsm_home_of(7), 3);
    int servers[] = {3, 1};
    int *all = D.servers;
    D.servers = servers;
    D.nservers = 2;
    EXPECT_EQ(dsm_home_of(10), 3);
    EXPECT_EQ(dsm_home_of(11), 1);
    EXPECT_EQ(dsm_home_of(~0ul), 1); // odd
    D.servers = all;
    D.nservers = 4;
}

TEST(DsmChunkMaths, MallocLstTakesTheSizesRoundRobin)
{
    DsmWorld w(1, 0);
    const unsigned long a[] = {7, 9, 11, 13, 15};
    const size_t s[] = {10, 20};
    sluice_dsm_chain *c = sluice_dsm_malloc_lst(a, 5, s, 2, SLUICE_DSM_MESI);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(addrs_of(c), (std::vector<unsigned long>{7, 9, 11, 13, 15}));
    EXPECT_EQ(sizes_of(c), (std::vector<size_t>{10, 20, 10, 20, 10}));
    EXPECT_EQ(offsets_of(c), (std::vector<size_t>{0, 10, 30, 40, 60}));
    EXPECT_EQ(sluice_dsm_chain_size(c), 70u);
    // The order given is the chain's order, whatever the addresses.
    const unsigned long r[] = {30, 20, 25};
    const size_t one[] = {4};
    sluice_dsm_chain *d = sluice_dsm_malloc_lst(r, 3, one, 1, SLUICE_DSM_MESI);
    EXPECT_EQ(addrs_of(d), (std::vector<unsigned long>{30, 20, 25}));
}

TEST(DsmChunkMaths, BadAllocationsAreRefusedWithALine)
{
    DsmWorld w(1, 0);
    struct Case {
        std::function<sluice_dsm_chain *()> call;
        int code;
        const char *line;
    } cases[] = {
        {[] { return sluice_dsm_malloc(5, 0, SLUICE_DSM_MESI); }, SLUICE_DSM_EINVAL, "malloc at @5: size 0"},
        {[] { return sluice_dsm_malloc(DSM_RESERVED + 4, 8, SLUICE_DSM_MESI); }, SLUICE_DSM_EINVAL,
         "reserved for symbols"},
        {[] { return sluice_dsm_malloc(DSM_RESERVED - 1, 3 * 256, SLUICE_DSM_MESI); }, SLUICE_DSM_EINVAL,
         "reserved for symbols"},
        {[] { return sluice_dsm_malloc(~0ul - 1, 3 * 256, SLUICE_DSM_MESI); }, SLUICE_DSM_EINVAL,
         "run past the address space"},
        {[] { return sluice_dsm_malloc(5, 8, 99); }, SLUICE_DSM_EINVAL, "unknown protocol 99"},
        {[] {
             const unsigned long a[] = {1, 2};
             const size_t s[] = {8, 0};
             return sluice_dsm_malloc_lst(a, 2, s, 2, SLUICE_DSM_MESI);
         },
         SLUICE_DSM_EINVAL, "malloc_lst: chunk @2 of size 0"},
        {[] {
             const unsigned long a[] = {1, 2, 1};
             const size_t s[] = {8};
             return sluice_dsm_malloc_lst(a, 3, s, 1, SLUICE_DSM_MESI);
         },
         SLUICE_DSM_EINVAL, "chunk @1 twice in one chain"},
        {[] { return sluice_dsm_malloc_lst(nullptr, 0, nullptr, 0, SLUICE_DSM_MESI); }, SLUICE_DSM_EINVAL,
         "empty address or size list"},
    };
    for (const Case &c : cases) {
        testing::internal::CaptureStderr();
        EXPECT_EQ(c.call(), nullptr) << c.line;
        std::string err = testing::internal::GetCapturedStderr();
        EXPECT_EQ(sluice_dsm_last_error(), c.code) << c.line;
        EXPECT_NE(err.find(c.line), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
    }
    EXPECT_EQ(D.all, nullptr) << "nothing allocated by a refused call";
}

TEST(DsmChains, AChunkInTwoChainsIsKeptEqualInBoth)
{
    DsmWorld w(1, 0, 256);
    sluice_dsm_chain *big = sluice_dsm_malloc(500, 512, SLUICE_DSM_MESI); // chunks 500, 501
    unsigned char *p = static_cast<unsigned char *>(sluice_dsm_write(big));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 512; i++)
        p[i] = (unsigned char)i;
    ASSERT_EQ(sluice_dsm_release(big), 0);
    // A new chain over 501 and 502 is filled from the copy of 501 that exists here.
    const unsigned long a[] = {501, 502};
    const size_t s[] = {256};
    sluice_dsm_chain *lst = sluice_dsm_malloc_lst(a, 2, s, 1, SLUICE_DSM_MESI);
    const unsigned char *q = static_cast<const unsigned char *>(sluice_dsm_read(lst));
    ASSERT_NE(q, nullptr);
    for (int i = 0; i < 256; i++)
        ASSERT_EQ(q[i], (unsigned char)(256 + i)) << i;
    for (int i = 256; i < 512; i++)
        ASSERT_EQ(q[i], 0) << "chunk 502 was never written";
    // Both chains cannot be in scopes at once: they share 501.
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_read(big), nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_EBUSY);
    EXPECT_NE(err.find("its chunk @501 is in a scope of another chain"), std::string::npos) << err;
    ASSERT_EQ(sluice_dsm_release(lst), 0);
    // A write through the second chain reaches the first.
    unsigned char *r = static_cast<unsigned char *>(sluice_dsm_write(lst));
    memset(r, 0xab, 512);
    ASSERT_EQ(sluice_dsm_release(lst), 0);
    q = static_cast<const unsigned char *>(sluice_dsm_read(big));
    EXPECT_EQ(q[0], 0);
    EXPECT_EQ(q[255], 255);
    EXPECT_EQ(q[256], 0xab);
    EXPECT_EQ(q[511], 0xab);
    EXPECT_EQ(sluice_dsm_release(big), 0);
    EXPECT_EQ(sluice_dsm_version(big), 1u) << "chunk 500: one write";
    EXPECT_EQ(sluice_dsm_version(lst), 2u) << "chunk 501: two writes";
}

// Four one-chunk chains, room for three: the least recently used chain outside a scope goes.
TEST(DsmEviction, LeastRecentlyUsedChainGoesFirstAndComesBackFromItsHome)
{
    DsmWorld w(1, 0, 64);
    D.cache_limit = 3;
    sluice_dsm_chain *c[4];
    for (int i = 0; i < 4; i++)
        c[i] = sluice_dsm_malloc(10 + (unsigned long)i, 64, SLUICE_DSM_MESI);
    auto put = [&](int i) {
        unsigned char *p = static_cast<unsigned char *>(sluice_dsm_write(c[i]));
        ASSERT_NE(p, nullptr);
        memset(p, 'a' + i, 64);
        ASSERT_EQ(sluice_dsm_release(c[i]), 0);
    };
    auto kept = [&] {
        std::string s;
        for (int i = 0; i < 4; i++)
            s += c[i]->buf ? (char)('a' + i) : '-';
        return s;
    };
    put(0);
    put(1);
    put(2);
    EXPECT_EQ(kept(), "abc-");
    ASSERT_NE(sluice_dsm_read(c[0]), nullptr); // a is now the most recent
    sluice_dsm_release(c[0]);
    put(3);
    EXPECT_EQ(kept(), "a-cd") << "b was the least recently used";
    EXPECT_EQ(D.footprint, 3u);
    // b comes back from its home (this rank), intact; c is the oldest now.
    const unsigned char *p = static_cast<const unsigned char *>(sluice_dsm_read(c[1]));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(p), 64), std::string(64, 'b'));
    // In its scope, b is safe; c went when b came back.
    EXPECT_EQ(kept(), "ab-d");
    sluice_dsm_release(c[1]);
    // A chain in a scope is never evicted, even when it is the oldest.
    ASSERT_NE(sluice_dsm_read(c[0]), nullptr);
    ASSERT_NE(sluice_dsm_read(c[3]), nullptr);
    ASSERT_NE(sluice_dsm_read(c[2]), nullptr); // over the limit: b, the only one outside, goes
    EXPECT_EQ(kept(), "a-cd");
    for (int i : {0, 3, 2})
        sluice_dsm_release(c[i]);
    EXPECT_EQ(D.footprint, 3u);
}

TEST(DsmEviction, MappedChainsAreNeverEvicted)
{
    DsmWorld w(1, 0, 64);
    D.cache_limit = 1;
    std::vector<unsigned char> mine(64, 'm');
    sluice_dsm_chain *m = sluice_dsm_malloc(20, 64, SLUICE_DSM_MESI);
    ASSERT_EQ(sluice_dsm_map(m, mine.data()), 0);
    ASSERT_EQ(sluice_dsm_put(m), 0);
    sluice_dsm_chain *o = sluice_dsm_malloc(21, 64, SLUICE_DSM_MESI);
    memset(sluice_dsm_write(o), 'o', 64);
    sluice_dsm_release(o);
    sluice_dsm_chain *o2 = sluice_dsm_malloc(22, 64, SLUICE_DSM_MESI);
    memset(sluice_dsm_write(o2), 'p', 64);
    sluice_dsm_release(o2);
    EXPECT_EQ(m->buf, mine.data()) << "the caller's memory stays the chain's";
    EXPECT_EQ(o->buf, nullptr);
    EXPECT_EQ(o2->buf, nullptr);
    const unsigned char *p = static_cast<const unsigned char *>(sluice_dsm_read(o));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[63], 'o') << "fetched again from its home";
    sluice_dsm_release(o);
}

} // namespace
