/* SPDX-License-Identifier: MIT */
// Unit tests of the large-buffer pool (runtime/common/bufpool.h): a buffer given back is handed
// out again for a request it fits (not one it would waste more than half of); small and huge
// buffers are never kept (a request of MIN never gets the smaller one back); each size class keeps at most
// its slots and bytes, so many parity blocks do not crowd out the larger pieces; threads get and give back at
// once without loss.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <sys/mman.h>
#include <thread>
#include <vector>

extern "C" {
#include "common/bufpool.h"
#include "common/hugebuf.h"
}

namespace
{

// Empties the pool (whatever earlier tests left): takes buffers out until fresh ones come.
void drain(size_t n)
{
    std::vector<std::pair<void *, size_t>> got;
    for (int i = 0; i < 64; i++) {
        size_t cap = 0;
        got.push_back({sluice_bufpool_get(n, &cap), cap});
    }
    for (auto &g : got)
        free(g.first);
}

TEST(BufPool, ABufferGivenBackIsReusedForWhatItFits)
{
    drain(256 << 10);
    drain(1 << 20);
    size_t cap = 0;
    void *p = sluice_bufpool_get(300 << 10, &cap);
    ASSERT_NE(nullptr, p);
    EXPECT_EQ((size_t)300 << 10, cap);
    memset(p, 1, cap);
    sluice_bufpool_put(p, cap);
    size_t cap2 = 0;
    void *q = sluice_bufpool_get(200 << 10, &cap2); // fits, wastes less than half
    EXPECT_EQ(p, q);
    EXPECT_EQ(cap, cap2);
    sluice_bufpool_put(q, cap2);
    size_t cap3 = 0;
    void *r = sluice_bufpool_get(140 << 10, &cap3); // would waste more than it uses: a new one
    EXPECT_NE(p, r);
    EXPECT_EQ((size_t)140 << 10, cap3);
    free(r);
    void *s = sluice_bufpool_get(310 << 10, &cap3); // larger than kept: a new one
    EXPECT_NE(p, s);
    free(s);
    drain(200 << 10);
}

TEST(BufPool, SmallAndHugeBuffersAreNotKept)
{
    drain(SLUICE_BUFPOOL_MIN);
    size_t cap = 0;
    void *small = sluice_bufpool_get(SLUICE_BUFPOOL_MIN - 1, &cap);
    sluice_bufpool_put(small, cap); // freed: the pool asks malloc for anything below MIN
    size_t c1 = 0;
    void *kept = sluice_bufpool_get(SLUICE_BUFPOOL_MIN, &c1);
    EXPECT_EQ((size_t)SLUICE_BUFPOOL_MIN, c1); // not the small one, whose capacity is less
    free(kept);
    void *huge = sluice_bufpool_get(SLUICE_BUFPOOL_MAX + 1, &cap);
    ASSERT_NE(nullptr, huge);
    sluice_bufpool_put(huge, cap);
    size_t c2 = 0;
    void *h2 = sluice_bufpool_get(SLUICE_BUFPOOL_MAX, &c2);
    EXPECT_EQ((size_t)SLUICE_BUFPOOL_MAX, c2); // not the huge one (its capacity was not kept)
    free(h2);
}

TEST(BufPool, EachClassKeepsAtMostItsSlotsAndBytes)
{
    drain(256 << 10);
    drain(1 << 20);
    const int n = SLUICE_BUFPOOL_SMALL_SLOTS + 8;
    std::vector<void *> blocks(n);
    for (auto &b : blocks) {
        size_t cap = 0;
        b = sluice_bufpool_get(256 << 10, &cap);
    }
    for (auto &b : blocks)
        sluice_bufpool_put(b, 256 << 10);
    // The large class is untouched by the blocks: a piece given back is kept.
    size_t cap = 0;
    void *piece = sluice_bufpool_get(1200 << 10, &cap);
    sluice_bufpool_put(piece, cap);
    size_t c2 = 0;
    EXPECT_EQ(piece, sluice_bufpool_get(1100 << 10, &c2));
    free(piece);
    // The small class kept only what its limits allow.
    std::set<void *> back;
    for (int i = 0; i < n; i++) {
        size_t c = 0;
        back.insert(sluice_bufpool_get(256 << 10, &c));
    }
    int reused = 0;
    for (void *b : blocks)
        reused += back.count(b) != 0;
    size_t by_bytes = SLUICE_BUFPOOL_SMALL_KEEP / (256 << 10);
    EXPECT_EQ((int)std::min<size_t>(SLUICE_BUFPOOL_SMALL_SLOTS, by_bytes), reused);
    for (void *b : back)
        free(b);
}

// 4 threads x 5,000 rounds: 0.1 s plain, 34 s under ASan on the 2 shared cores with another
// suite running, whose large allocations (the sizes above the pool's classes) are poisoned and
// quarantined one by one; at 20,000 rounds the ASan job took 83 s, and 104 s so loaded, of the
// test's 120 s limit.
TEST(BufPool, ThreadsGetAndGiveBackAtOnce)
{
    std::vector<std::thread> t;
    for (int k = 0; k < 4; k++)
        t.emplace_back([k] {
            for (int i = 0; i < 5000; i++) {
                size_t cap = 0;
                size_t n = (size_t)(128 + (i * 7 + k * 13) % 2048) << 10;
                unsigned char *p = static_cast<unsigned char *>(sluice_bufpool_get(n, &cap));
                ASSERT_NE(nullptr, p);
                ASSERT_GE(cap, n);
                p[0] = (unsigned char)k; // a buffer two threads held at once would show here
                p[n - 1] = (unsigned char)k;
                ASSERT_EQ(k, p[0]);
                ASSERT_EQ(k, p[n - 1]);
                sluice_bufpool_put(p, cap);
            }
        });
    for (auto &x : t)
        x.join();
}

// Pages of [p, p + n) in place (mincore), the interior's whole pages.
static bool resident(const void *p, size_t n)
{
    const uintptr_t page = 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    std::vector<unsigned char> v((hi - lo) / page);
    if (mincore(reinterpret_cast<void *>(lo), hi - lo, v.data()) != 0)
        return false;
    for (unsigned char c : v)
        if (!(c & 1))
            return false;
    return true;
}

// Warmed: the next requests of that size get the warmed buffers, every page already in place (a
// stream's first pieces fault no more than its later ones); never more than the class keeps.
TEST(BufPool, WarmedBuffersAreKeptWithTheirPagesInPlace)
{
    const size_t n = (1200u << 10);
    drain(n);
    sluice_bufpool_warm(n, 3);
    std::set<void *> got;
    std::vector<std::pair<void *, size_t>> held;
    for (int i = 0; i < 3; i++) {
        size_t cap = 0;
        void *p = sluice_bufpool_get(n, &cap);
        ASSERT_NE(nullptr, p);
        EXPECT_GE(cap, n);
        EXPECT_TRUE(resident(p, cap)) << "warmed buffer " << i << " has pages not in place";
        got.insert(p);
        held.push_back({p, cap});
    }
    EXPECT_EQ(3u, got.size());
    size_t cap = 0;
    void *fresh = sluice_bufpool_get(n, &cap); // the pool holds no more of them
    EXPECT_EQ(0u, got.count(fresh));
    free(fresh);
    for (auto &h : held)
        sluice_bufpool_put(h.first, h.second);
    sluice_bufpool_warm(n, 1000); // at most the class's slots and bytes
    int kept = 0;
    for (int i = 0; i < 2 * SLUICE_BUFPOOL_LARGE_SLOTS; i++) {
        void *p = sluice_bufpool_get(n, &cap);
        kept += resident(p, cap);
        held.push_back({p, cap});
    }
    EXPECT_LE(kept * n, SLUICE_BUFPOOL_LARGE_KEEP + n);
    EXPECT_GE(kept, 3);
    for (size_t i = 3; i < held.size(); i++)
        free(held[i].first);
    sluice_bufpool_warm(SLUICE_BUFPOOL_MIN - 1, 4); // below the pool's sizes: nothing kept
    void *small = sluice_bufpool_get(SLUICE_BUFPOOL_MIN - 1, &cap);
    EXPECT_EQ(SLUICE_BUFPOOL_MIN - 1, cap);
    free(small);
}

// Round buffers: on a 2 MiB boundary, every byte usable, sizes that are not whole huge pages
// included; the mapping (fault counts are the kernel's business) checked by writing all of it.
TEST(HugeBuf, AlignedAndUsableAtAnySize)
{
    for (size_t n :
         {(size_t)1, (size_t)4096, (size_t)(1 << 20) + 17, (size_t)(2 << 20), (size_t)(5 << 20) + 3}) {
        unsigned char *p = static_cast<unsigned char *>(sluice_hugebuf_alloc(n));
        ASSERT_NE(nullptr, p) << n;
        EXPECT_EQ(0u, (uintptr_t)p % (2u << 20)) << n;
        memset(p, 0xA5, n);
        EXPECT_EQ(0xA5, p[0]);
        EXPECT_EQ(0xA5, p[n - 1]);
        sluice_hugebuf_free(p, n);
    }
    EXPECT_EQ(nullptr, sluice_hugebuf_alloc(0));
    sluice_hugebuf_free(nullptr, 0); // ignored
}

static bool mapped(const void *p, size_t n)
{
    unsigned char v[1];
    return mincore(const_cast<void *>(p), n < 4096 ? n : 4096, v) == 0 || errno != ENOMEM;
}

// A freed buffer is kept and handed out again for the next buffer of its size, or for a
// smaller one (at least half its size) with the excess unmapped: the next version's round
// buffers and index fault nothing in. (Sizes no other test here keeps.)
TEST(HugeBuf, FreedBuffersAreReusedAndTrimmed)
{
    const size_t mib = 1u << 20;
    unsigned char *a = static_cast<unsigned char *>(sluice_hugebuf_alloc(10 * mib));
    ASSERT_NE(nullptr, a);
    memset(a, 1, 10 * mib);
    sluice_hugebuf_free(a, 10 * mib);
    unsigned char *b = static_cast<unsigned char *>(sluice_hugebuf_alloc(8 * mib - 5)); // 8 MiB mapped
    EXPECT_EQ(a, b);
    EXPECT_TRUE(mapped(b + 8 * mib - 4096, 1));
    EXPECT_FALSE(mapped(b + 8 * mib, 1)); // the kept 10 MiB trimmed to the 8 asked for
    memset(b, 2, 8 * mib - 5);
    EXPECT_EQ(2, b[8 * mib - 6]);
    sluice_hugebuf_free(b, 8 * mib - 5);
    // Less than half of the kept 8 MiB: a mapping of its own.
    unsigned char *c = static_cast<unsigned char *>(sluice_hugebuf_alloc(2 * mib));
    ASSERT_NE(nullptr, c);
    EXPECT_NE(b, c);
    unsigned char *d = static_cast<unsigned char *>(sluice_hugebuf_alloc(8 * mib));
    EXPECT_EQ(b, d);
    sluice_hugebuf_free(c, 2 * mib);
    sluice_hugebuf_free(d, 8 * mib);
}

// At most 6 mappings and 64 MiB are kept: past that, freed buffers are unmapped.
TEST(HugeBuf, KeepsAtMostItsSlotsAndBytes)
{
    const size_t mib = 1u << 20;
    std::vector<void *> v;
    for (int i = 0; i < 10; i++)
        v.push_back(sluice_hugebuf_alloc(2 * mib));
    for (void *p : v)
        sluice_hugebuf_free(p, 2 * mib);
    int kept = 0;
    for (void *p : v)
        kept += mapped(p, 1);
    EXPECT_LE(kept, 6);
    void *big = sluice_hugebuf_alloc(40 * mib), *big2 = sluice_hugebuf_alloc(40 * mib);
    ASSERT_NE(nullptr, big);
    ASSERT_NE(nullptr, big2);
    sluice_hugebuf_free(big, 40 * mib);
    sluice_hugebuf_free(big2, 40 * mib); // both would exceed the 64 MiB kept
    EXPECT_FALSE(mapped(big, 1) && mapped(big2, 1));
}

} // namespace
