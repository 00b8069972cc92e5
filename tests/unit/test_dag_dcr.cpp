/* SPDX-License-Identifier: MIT */
// Dynamic Collective Replacement on synthetic DAGs: broadcasts (from the host and from a
// device), allgather, gather, direct device-to-device copies (halo exchange through the host),
// and what must not be replaced.
#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
#include "cl/rank0/dag_dcr.h"
}

namespace
{

struct Dag {
    sluice_dag *d = sluice_dag_create();
    uint64_t next = 1;
    ~Dag() { sluice_dag_destroy(d); }

    // A transfer between host range [host, host+size) and (buffer, offset) on `rank`, in its own
    // out-of-order queue so that nothing orders it but its wait list.
    uint64_t xfer(bool read, int rank, uint64_t buffer, uint64_t offset, uint64_t host, uint64_t size,
                  std::vector<uint64_t> wait = {})
    {
        sluice_dag_access a{buffer, offset, size, read ? SLUICE_DAG_READS : SLUICE_DAG_WRITES};
        sluice_dag_cmd c{};
        c.id = next;
        c.queue = 100 + (uint64_t)rank;
        c.out_of_order = true;
        c.rank = rank;
        c.kind = read ? SLUICE_DAG_READ : SLUICE_DAG_WRITE;
        c.wait = wait.data();
        c.nwait = wait.size();
        c.access = &a;
        c.naccess = 1;
        c.host_addr = host;
        c.host_size = size;
        EXPECT_EQ(sluice_dag_add(d, &c, 0, nullptr), 0);
        return next++;
    }
    uint64_t read(int rank, uint64_t buffer, uint64_t offset, uint64_t host, uint64_t size,
                  std::vector<uint64_t> w = {})
    {
        return xfer(true, rank, buffer, offset, host, size, w);
    }
    uint64_t write(int rank, uint64_t buffer, uint64_t offset, uint64_t host, uint64_t size,
                   std::vector<uint64_t> w = {})
    {
        return xfer(false, rank, buffer, offset, host, size, w);
    }
    std::string plan(sluice_dcr_plan *keep = nullptr)
    {
        sluice_dcr_plan p{};
        EXPECT_EQ(sluice_dcr_find(d, &p), 0);
        std::string s(sluice_dcr_format(&p, nullptr, 0), '\0');
        std::vector<char> buf(s.size() + 1);
        sluice_dcr_format(&p, buf.data(), buf.size());
        if (keep)
            *keep = p;
        else
            sluice_dcr_plan_free(&p);
        return buf.data();
    }
};

} // namespace

TEST(DagDcr, SameHostRangeToSeveralDevicesIsABroadcastFromTheHost)
{
    Dag g;
    for (int r = 1; r <= 3; r++)
        g.write(r, 10 + r, 0, 0x1000, 4096);
    EXPECT_EQ(g.plan(), "bcast root 0 host 0x1000+4096: host[0+4096] -> 1:#1 2:#2 3:#3\n");
}

TEST(DagDcr, ReadThenWriteToAnotherDeviceIsADirectCopy)
{
    Dag g;
    uint64_t r = g.read(1, 11, 0, 0x2000, 1 << 20);
    g.write(2, 12, 0, 0x2000, 1 << 20, {r});
    sluice_dcr_plan p{};
    EXPECT_EQ(g.plan(&p), "p2p root 1 host 0x2000+1048576: 1:#1[0+1048576] -> 2:#2\n");
    ASSERT_EQ(p.nops, 1u);
    EXPECT_EQ(p.ops[0].sources[0].buffer, 11u);
    EXPECT_EQ(p.ops[0].receivers[0].buffer, 12u);
    EXPECT_EQ(p.ops[0].receivers[0].node, 2u);
    sluice_dcr_plan_free(&p);
}

TEST(DagDcr, HaloExchangeThroughTheHostBecomesRankToRank)
{
    // Rank 1 reads its whole 1000-byte tile into host[0, 1000); the last 100 bytes (its bottom
    // halo) are written to rank 2's buffer at offset 0, the first 100 to rank 3's at offset 900.
    Dag g;
    uint64_t r = g.read(1, 11, 0, 0x10000, 1000);
    g.write(2, 12, 0, 0x10000 + 900, 100, {r});
    g.write(3, 13, 900, 0x10000, 100, {r});
    sluice_dcr_plan p{};
    EXPECT_EQ(g.plan(&p), "p2p root 1 host 0x10384+100: 1:#1[0+100] -> 2:#2\n"
                          "p2p root 1 host 0x10000+100: 1:#1[0+100] -> 3:#3\n");
    ASSERT_EQ(p.nops, 2u);
    EXPECT_EQ(p.ops[0].sources[0].offset, 900u); // from rank 1's buffer at offset 900
    EXPECT_EQ(p.ops[1].sources[0].offset, 0u);
    EXPECT_EQ(p.ops[1].receivers[0].offset, 900u);
    sluice_dcr_plan_free(&p);
}

TEST(DagDcr, ReadOnceWriteToManyIsABroadcastFromTheReader)
{
    Dag g;
    uint64_t r = g.read(2, 12, 0, 0x3000, 512);
    g.write(1, 11, 0, 0x3000, 512, {r});
    g.write(3, 13, 0, 0x3000, 512, {r});
    g.write(0, 10, 0, 0x3000, 512, {r});
    EXPECT_EQ(g.plan(), "bcast root 2 host 0x3000+512: 2:#1[0+512] -> 1:#2 3:#3 0:#4\n");
}

TEST(DagDcr, DisjointReadsThenWholeWritesAreAnAllgather)
{
    // The n-body pattern: each device computes a slice, the host gathers all slices, then sends
    // the whole array to every device.
    Dag g;
    std::vector<uint64_t> reads;
    for (int r = 0; r < 3; r++)
        reads.push_back(g.read(r + 1, 10 + r, 0, 0x8000 + 300 * r, 300));
    for (int r = 0; r < 3; r++)
        g.write(r + 1, 20 + r, 0, 0x8000, 900, reads);
    sluice_dcr_plan p{};
    EXPECT_EQ(g.plan(&p),
              "allgather host 0x8000+900: 1:#1[0+300] 2:#2[300+300] 3:#3[600+300] -> 1:#4 2:#5 3:#6\n");
    ASSERT_EQ(p.nops, 1u);
    EXPECT_EQ(p.ops[0].root, -1);
    EXPECT_EQ(p.ops[0].nsources, 3u);
    EXPECT_EQ(p.ops[0].nreceivers, 3u);
    sluice_dcr_plan_free(&p);
}

TEST(DagDcr, GapsComeFromTheHostAndNewerReadsWin)
{
    Dag g;
    uint64_t a = g.read(1, 11, 0, 0x100, 100);      // host[0, 100)
    uint64_t b = g.read(2, 12, 0, 0x100 + 50, 100); // host[50, 150): newer, overwrites [50, 100)
    g.write(3, 13, 0, 0x100, 300, {a, b});          // [150, 300) was never read: the host's
    EXPECT_EQ(g.plan(), "gather host 0x100+300: 1:#1[0+50] 2:#2[50+100] host[150+150] -> 3:#3\n");
}

TEST(DagDcr, AReadIntoTheRangeSplitsTheGroup)
{
    Dag g;
    g.write(1, 11, 0, 0x500, 64);             // host data to rank 1
    uint64_t r = g.read(2, 12, 0, 0x500, 64); // then rank 2's data lands in the same host bytes
    g.write(3, 13, 0, 0x500, 64, {r});        // so rank 3 gets rank 2's data, not the host's
    g.write(4, 14, 0, 0x500, 64, {r});
    EXPECT_EQ(g.plan(), "bcast root 2 host 0x500+64: 2:#2[0+64] -> 3:#3 4:#4\n");
}

TEST(DagDcr, NothingToReplace)
{
    Dag g;
    g.write(1, 11, 0, 0x100, 64); // a single host write
    g.write(2, 12, 0, 0x200, 64); // another range
    g.write(3, 13, 0, 0x100, 32); // overlapping but not the same range
    g.read(1, 11, 0, 0x900, 64);  // a read nobody writes on
    EXPECT_EQ(g.plan(), "");
}

TEST(DagDcr, OnlyPendingCommandsAreConsidered)
{
    Dag g;
    uint64_t w1 = g.write(1, 11, 0, 0x100, 64);
    g.write(2, 12, 0, 0x100, 64);
    g.write(3, 13, 0, 0x100, 64);
    ASSERT_EQ(sluice_dag_dispatch(g.d, w1, 1), 0); // already on its way: not part of the collective
    EXPECT_EQ(g.plan(), "bcast root 0 host 0x100+64: host[0+64] -> 2:#2 3:#3\n");
    const uint64_t *r;
    size_t n;
    ASSERT_EQ(sluice_dag_complete(g.d, w1, 0, 1, 2, &r, &n), 0);
    ASSERT_EQ(sluice_dag_dispatch(g.d, 2, 3), 0);
    EXPECT_EQ(g.plan(), "");
    EXPECT_STREQ(sluice_dcr_kind_name(SLUICE_DCR_ALLGATHER), "allgather");
}

// --- the window of rank 0's scheduler (sluice_dcr_window) -------------------------------------

namespace
{

struct Win {
    std::vector<sluice_dcr_item> v;
    void write(int rank, uint64_t host, uint64_t size, uint64_t content)
    {
        v.push_back({SLUICE_DCR_ITEM_WRITE, rank, -1, host, size, content, 0, 0});
    }
    void staged(int rank, uint64_t host, uint64_t size, uint64_t content) // a blocking write's copy
    {
        v.push_back({SLUICE_DCR_ITEM_WRITE, rank, -1, host, size, content, 1, 0});
    }
    void read(int rank, uint64_t host, uint64_t size)
    {
        v.push_back({SLUICE_DCR_ITEM_READ, rank, -1, host, size, 0, 0, 0});
    }
    void tiled(int rank, uint64_t host, uint64_t size, uint64_t content, uint64_t tiles) // sources' mask
    {
        v.push_back({SLUICE_DCR_ITEM_WRITE, rank, -1, host, size, content, 0, tiles});
    }
    void peer(int a, int b) { v.push_back({SLUICE_DCR_ITEM_PEER, a, b, 0, 0, 0, 0, 0}); }
    void other(int rank) { v.push_back({SLUICE_DCR_ITEM_OTHER, rank, -1, 0, 0, 0, 0, 0}); }
    void fence() { v.push_back({SLUICE_DCR_ITEM_FENCE, 0, -1, 0, 0, 0, 0, 0}); }
    std::vector<sluice_dcr_kind> kinds; // of the groups found by the last groups()
    std::vector<uint32_t> groups(uint32_t *n = nullptr)
    {
        std::vector<uint32_t> g(v.size() + 1, 99);
        std::vector<sluice_dcr_kind> k(v.size() + 1, SLUICE_DCR_P2P);
        uint32_t ng = sluice_dcr_window(v.data(), v.size(), g.data(), k.data());
        if (n)
            *n = ng;
        g.pop_back();
        kinds.assign(k.begin(), k.begin() + ng);
        return g;
    }
};

} // namespace

TEST(DcrWindow, SameBytesToThreeRanksIsOneBroadcast)
{
    Win w;
    w.write(1, 0x1000, 4096, 7);
    w.other(1); // kernels in between do not matter
    w.write(2, 0x1000, 4096, 7);
    w.write(3, 0x9000, 4096, 7); // another pointer, same bytes (the runtime compared them)
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{1, 0, 1, 1}));
    EXPECT_EQ(n, 1u);
}

TEST(DcrWindow, HostBytesChangedBetweenWritesAreNotABroadcast)
{
    Win w;
    w.write(1, 0x1000, 4096, 1);
    w.write(2, 0x1000, 4096, 2); // a blocking write, then the program changed the memory
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, DifferentSizesAreNotABroadcast)
{
    Win w;
    w.write(1, 0x1000, 4096, 1);
    w.write(2, 0x1000, 2048, 1);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, RankZeroAndOneRankTwiceStayPlain)
{
    Win w;
    w.write(0, 0x1000, 64, 1); // rank 0's own device: an in-process write
    w.write(1, 0x1000, 64, 1);
    w.write(1, 0x1000, 64, 1); // a second buffer on rank 1: not in the same broadcast (alone: plain)
    w.write(2, 0x1000, 64, 1);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 1, 0, 1}));
}

TEST(DcrWindow, AnEventWaitedOnInBetweenEndsTheGroup)
{
    Win w;
    w.write(1, 0x1000, 64, 1);
    w.fence(); // clWaitForEvents: the first write had to go
    w.write(2, 0x1000, 64, 1);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(DcrWindow, AReadIntoTheHostRangeEndsTheGroupAndItsWritesAreNotCandidates)
{
    Win w;
    w.write(1, 0x1000, 64, 1);
    w.read(3, 0x1010, 16); // a device's bytes land in the range: later writes carry them
    w.write(2, 0x1000, 64, 1);
    w.write(4, 0x1000, 64, 1);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0, 0}));
}

TEST(DcrWindow, OverlappingButNotEqualRangesAreNotABroadcast)
{
    Win w;
    w.write(1, 0x1000, 64, 1);
    w.write(2, 0x1020, 64, 2); // overlapping slice: other bytes
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, ARankToRankTransferOnAMemberForbidsTheReordering)
{
    // Rank 2's transfer to rank 1 would come after rank 1's part of the broadcast and before
    // rank 2's: a broadcast that needs rank 2 could wait for a transfer waiting for it.
    Win w;
    w.write(1, 0x1000, 64, 1);
    w.peer(2, 1);
    w.write(2, 0x1000, 64, 1);
    w.write(3, 0x1000, 64, 1);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 1, 1}));
}

TEST(DcrWindow, EveryRankMeetsItsBroadcastsInOneOrder)
{
    Win w;
    w.write(1, 0x1000, 64, 1); // A
    w.write(1, 0x2000, 64, 2); // B
    w.write(2, 0x2000, 64, 2); // B
    w.write(2, 0x1000, 64, 1); // A after B on rank 2 but B after A on rank 1: not in A (alone: plain)
    w.write(3, 0x1000, 64, 1); // A
    uint32_t n = 0;
    auto g = w.groups(&n);
    EXPECT_EQ(g, (std::vector<uint32_t>{1, 2, 2, 0, 1}));
    EXPECT_EQ(n, 2u);
}

// --- scatter: adjacent slices of one host range to several ranks ---------------------------------

using Kinds = std::vector<sluice_dcr_kind>;

TEST(DcrWindow, AdjacentSlicesOfOddSizesToThreeRanksAreOneScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.other(1);
    w.write(2, 0x1064, 101, 2); // starts where the first ended, other bytes, other size
    w.write(3, 0x10c9, 99, 3);
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{1, 0, 1, 1}));
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_SCATTER}));
}

TEST(DcrWindow, OverlappingSlicesAreNotAScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.write(2, 0x1050, 100, 2); // overlaps the first
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, SlicesWithAGapOrOutOfOrderAreNotAScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.write(2, 0x1068, 100, 2); // 4 bytes after the first ended
    w.write(3, 0x0f9c, 100, 3); // ends where the first starts: before it, not after
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(DcrWindow, AStagedSliceIsNotInAScatter)
{
    // A blocking write's bytes are its copy: the program may have changed the memory since, and
    // a scatter sends from the program's memory.
    Win w;
    w.staged(1, 0x1000, 100, 1);
    w.write(2, 0x1064, 100, 2);
    w.write(3, 0x10c8, 100, 3);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 1, 1}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_SCATTER}));
}

TEST(DcrWindow, OneRankTwiceIsNotInOneScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.write(1, 0x1064, 100, 2);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, AnEventWaitedOnInBetweenEndsTheScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.fence();
    w.write(2, 0x1064, 100, 2);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(DcrWindow, ARankToRankTransferOnAMemberForbidsReorderingTheScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.peer(2, 1);
    w.write(2, 0x1064, 100, 2); // would have to wait for rank 1's part
    w.write(3, 0x10c8, 100, 3);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 1, 1}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_SCATTER}));
}

TEST(DcrWindow, AReadIntoTheSlicesEndsTheScatter)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.write(2, 0x1064, 100, 2);
    w.read(3, 0x1010, 8); // lands in the first slice: the group's range has other bytes now
    w.write(3, 0x10c8, 100, 3);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 0, 0}));
}

TEST(DcrWindow, ABroadcastAndAScatterOnTheSameRanksKeepTheirOrder)
{
    Win w;
    w.write(1, 0x9000, 64, 7); // broadcast
    w.write(2, 0x9000, 64, 7);
    w.write(1, 0x1000, 100, 1); // scatter
    w.write(2, 0x1064, 100, 2);
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{1, 1, 2, 2}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST, SLUICE_DCR_SCATTER}));
}

TEST(DcrWindow, EqualSlicesAreABroadcastNotAScatter)
{
    // Adjacent slices with equal bytes: one broadcast of the first carries both.
    Win w;
    w.write(1, 0x1000, 64, 5);
    w.write(2, 0x1040, 64, 5);
    w.write(3, 0x1080, 64, 6); // other bytes: not in the broadcast, and the group is no scatter
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 0}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
}

// --- gather: adjacent slices of one host range read from several ranks ----------------------------

TEST(DcrWindow, AdjacentReadsFromThreeRanksAreOneGather)
{
    Win w;
    w.read(1, 0x1000, 100);
    w.other(2);
    w.read(2, 0x1064, 101);
    w.read(3, 0x10c9, 99);
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{1, 0, 1, 1}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_GATHER}));
}

TEST(DcrWindow, OverlappingOrGappedReadsAreNotAGather)
{
    Win w;
    w.read(1, 0x1000, 100);
    w.read(2, 0x1050, 100); // overlaps the first (and closes its group)
    w.read(3, 0x10b8, 100); // 4 bytes after the second
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(DcrWindow, ARectReadOrAMapIsNotInAGather)
{
    Win w;
    w.read(1, 0x1000, 100);
    w.v.push_back({SLUICE_DCR_ITEM_READ, 2, -1, 0x1064, 100, 0, 1, 0}); // not a plain read
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0}));
}

TEST(DcrWindow, AWaitOrAMoveOnAMemberEndsTheGather)
{
    Win w;
    w.read(1, 0x1000, 100);
    w.fence();
    w.read(2, 0x1064, 100);
    w.peer(2, 3);
    w.read(3, 0x10c8, 100);
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 0, 0, 0}));
}

TEST(DcrWindow, ReadsAndWritesDoNotShareAGroup)
{
    Win w;
    w.write(1, 0x1000, 100, 1);
    w.read(2, 0x1064, 100); // adjacent to the write, but a read
    w.read(3, 0x10c8, 100);
    w.write(4, 0x2000, 100, 3);
    w.write(5, 0x2064, 100, 2);
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{0, 1, 1, 2, 2}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_GATHER, SLUICE_DCR_SCATTER}));
}

// --- allgather: a host range tiled by slices of several serving ranks, written whole to them ----

namespace
{
uint64_t tiling(const std::vector<sluice_dcr_slice> &s, uint64_t addr, uint64_t size,
                std::vector<size_t> *order = nullptr)
{
    std::vector<size_t> o(s.size() + 1, 99);
    uint64_t m = sluice_dcr_tiling(s.data(), s.size(), addr, size, o.data());
    if (order)
        order->assign(o.begin(), o.begin() + (long)s.size());
    return m;
}
} // namespace

TEST(DcrTiling, SlicesOfThreeRanksInAnyOrderTileTheRange)
{
    std::vector<size_t> order;
    // n-body's odd split: 1001 bodies of 16 bytes as 334 + 334 + 333, listed out of host order
    std::vector<sluice_dcr_slice> s = {
        {0x1000 + 5344, 5344, 2, 1}, {0x1000, 5344, 1, 1}, {0x1000 + 10688, 5328, 3, 1}};
    EXPECT_EQ(tiling(s, 0x1000, 16016, &order), 0xEull);
    EXPECT_EQ(order, (std::vector<size_t>{1, 0, 2}));
}

TEST(DcrTiling, NearMissesAreNotATiling)
{
    std::vector<sluice_dcr_slice> ok = {{0x1000, 100, 1, 1}, {0x1064, 100, 2, 1}, {0x10c8, 100, 3, 1}};
    ASSERT_EQ(tiling(ok, 0x1000, 300), 0xEull);
    auto gap = ok;
    gap[1].host_size = 96; // 4 bytes nobody brought
    gap[2].host_addr = 0x10c8;
    EXPECT_EQ(tiling(gap, 0x1000, 300), 0u);
    auto overlap = ok;
    overlap[1].host_size = 104; // the last 4 bytes are also the third slice's
    EXPECT_EQ(tiling(overlap, 0x1000, 300), 0u);
    auto changed = ok;
    changed[2].unchanged = 0; // the program changed the host copy of rank 3's slice
    EXPECT_EQ(tiling(changed, 0x1000, 300), 0u);
    auto rank0 = ok;
    rank0[0].rank = 0; // rank 0's own device: its bytes move by no MPI
    EXPECT_EQ(tiling(rank0, 0x1000, 300), 0u);
    auto twice = ok;
    twice[2].rank = 1; // one rank two slices: one part per rank
    EXPECT_EQ(tiling(twice, 0x1000, 300), 0u);
    EXPECT_EQ(tiling(ok, 0x1000, 400), 0u);                    // the range is larger
    EXPECT_EQ(tiling(ok, 0x1000, 200), 0u);                    // a slice sticks out
    EXPECT_EQ(tiling({{0x1000, 300, 1, 1}}, 0x1000, 300), 0u); // one source: copy removal
    EXPECT_EQ(tiling({{0x1000, 100, 1, 1}, {0x1064, 200, 2, 1}}, 0x1000, 300), 6u); // two of any size
}

TEST(DcrWindow, TheTiledRangeWrittenToEverySourceIsOneAllgather)
{
    Win w;
    w.tiled(1, 0x8000, 900, 5, 0xE);
    w.other(1); // the next step's kernel
    w.tiled(2, 0x8000, 900, 5, 0xE);
    w.tiled(3, 0x8000, 900, 5, 0xE);
    w.read(1, 0x9000, 300); // the next step's reads go elsewhere: a gather
    w.read(2, 0x912c, 300);
    uint32_t n = 0;
    EXPECT_EQ(w.groups(&n), (std::vector<uint32_t>{1, 0, 1, 1, 2, 2}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_ALLGATHER, SLUICE_DCR_GATHER}));
}

TEST(DcrWindow, AReceiverWithoutASliceStillMakesAnAllgather)
{
    Win w;
    w.tiled(1, 0x8000, 600, 5, 0x6);
    w.tiled(2, 0x8000, 600, 5, 0x6);
    w.tiled(3, 0x8000, 600, 5, 0x6); // rank 3 gives nothing (count 0) and gets the whole range
    EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 1}));
    EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_ALLGATHER}));
}

TEST(DcrWindow, AllgatherNearMissesStayBroadcasts)
{
    { // a destination missing: rank 3 brought a slice but does not receive the range
        Win w;
        w.tiled(1, 0x8000, 900, 5, 0xE);
        w.tiled(2, 0x8000, 900, 5, 0xE);
        EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1}));
        EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
    }
    { // a wait in between: the first write went already, the others are a broadcast of two
        Win w;
        w.tiled(1, 0x8000, 900, 5, 0xE);
        w.fence();
        w.tiled(2, 0x8000, 900, 5, 0xE);
        w.tiled(3, 0x8000, 900, 5, 0xE);
        EXPECT_EQ(w.groups(), (std::vector<uint32_t>{0, 0, 1, 1}));
        EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
    }
    { // one write's range is not tiled (a slice changed on the host, a gap: tiles 0)
        Win w;
        w.tiled(1, 0x8000, 900, 5, 0xE);
        w.tiled(2, 0x8000, 900, 5, 0);
        w.tiled(3, 0x8000, 900, 5, 0xE);
        EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 1}));
        EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
    }
    { // equal bytes from another host range, tiled by other reads: not one allgather
        Win w;
        w.tiled(1, 0x8000, 900, 5, 0xE);
        w.tiled(2, 0xa000, 900, 5, 0xE);
        w.tiled(3, 0x8000, 900, 5, 0xE);
        EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 1}));
        EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
    }
    { // a move on a member in between closes the group: rank 3 is missing from it
        Win w;
        w.tiled(1, 0x8000, 900, 5, 0xE);
        w.tiled(2, 0x8000, 900, 5, 0xE);
        w.peer(3, 1);
        w.tiled(3, 0x8000, 900, 5, 0xE);
        EXPECT_EQ(w.groups(), (std::vector<uint32_t>{1, 1, 0, 0}));
        EXPECT_EQ(w.kinds, (Kinds{SLUICE_DCR_BCAST}));
    }
}
