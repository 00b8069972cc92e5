/* SPDX-License-Identifier: MIT */
// Coherence directory: MESI transitions per chunk, rank-to-rank transfer plans that avoid
// rank 0, partial writes and sub-ranges, and a property test that checks the directory against
// a model of the data (which version each rank's copy holds) after every operation.
#include <gtest/gtest.h>

#include <CL/cl.h>
#include <cerrno>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "cl/rank0/coherence.h"
}

namespace
{

const uint64_t MiB = 1ull << 20;

struct Dir {
    sluice_coh_dir *d;
    Dir(int nranks, uint64_t chunk = 0) : d(sluice_coh_create(nranks, chunk)) {}
    ~Dir() { sluice_coh_destroy(d); }
    operator sluice_coh_dir *() { return d; }
};

struct Plan {
    sluice_coh_plan p{};
    ~Plan() { sluice_coh_plan_free(&p); }
    sluice_coh_plan *operator&() { return &p; }
    // "src->dst@offset+size" per transfer, then empties the plan.
    std::string take()
    {
        std::string s;
        for (size_t i = 0; i < p.n; i++) {
            if (i)
                s += " ";
            s += std::to_string(p.v[i].src) + "->" + std::to_string(p.v[i].dst) + "@" +
                 std::to_string(p.v[i].offset) + "+" + std::to_string(p.v[i].size);
        }
        p.n = 0;
        return s;
    }
};

std::string states(sluice_coh_dir *d, uint64_t buf, uint64_t chunk, int nranks)
{
    std::string s;
    for (int r = 0; r < nranks; r++)
        s += "IESM"[sluice_coh_state_of(d, buf, chunk, r) == SLUICE_COH_INVALID     ? 0
                    : sluice_coh_state_of(d, buf, chunk, r) == SLUICE_COH_EXCLUSIVE ? 1
                    : sluice_coh_state_of(d, buf, chunk, r) == SLUICE_COH_SHARED    ? 2
                                                                                    : 3];
    return s;
}

void expect_invariants(sluice_coh_dir *d)
{
    char err[256] = "";
    EXPECT_EQ(sluice_coh_check(d, err, sizeof err), 0) << err;
}

} // namespace

TEST(Coherence, InitialStateFromMemoryFlags)
{
    EXPECT_EQ(sluice_coh_init_from_flags(CL_MEM_READ_WRITE), SLUICE_COH_INIT_NONE);
    EXPECT_EQ(sluice_coh_init_from_flags(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR), SLUICE_COH_INIT_HOST);
    EXPECT_EQ(sluice_coh_init_from_flags(CL_MEM_USE_HOST_PTR), SLUICE_COH_INIT_HOST);
    EXPECT_EQ(sluice_coh_init_from_flags(CL_MEM_ALLOC_HOST_PTR), SLUICE_COH_INIT_NONE);

    Dir d(4);
    Plan p;
    ASSERT_EQ(sluice_coh_add_buffer(d, 1, 3 * MiB, SLUICE_COH_INIT_HOST), 0);
    ASSERT_EQ(sluice_coh_add_buffer(d, 2, 3 * MiB, SLUICE_COH_INIT_NONE), 0);
    EXPECT_EQ(states(d, 1, 0, 4), "EIII");
    EXPECT_EQ(states(d, 2, 0, 4), "IIII");
    // Host data is fetched from rank 0, the only holder; uninitialized data moves nothing.
    ASSERT_EQ(sluice_coh_read(d, 1, 0, 3 * MiB, 2, &p), 0);
    EXPECT_EQ(p.take(), "0->2@0+3145728");
    ASSERT_EQ(sluice_coh_read(d, 2, 0, 3 * MiB, 2, &p), 0);
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 2, 0, 4), "IIII");
    // The first write of an uninitialized buffer needs no fetch even without WRITE_ALL.
    ASSERT_EQ(sluice_coh_write(d, 2, 0, 100, 3, 0, &p), 0);
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 2, 0, 4), "IIIM");
    EXPECT_FALSE(sluice_coh_initialized(d, 2, 1));
    expect_invariants(d);
}

TEST(Coherence, MesiTransitions)
{
    Dir d(4);
    Plan p;
    ASSERT_EQ(sluice_coh_add_buffer(d, 7, MiB, SLUICE_COH_INIT_HOST), 0);
    EXPECT_EQ(states(d, 7, 0, 4), "EIII");
    ASSERT_EQ(sluice_coh_read(d, 7, 0, MiB, 1, &p), 0); // E -> S, I -> S
    EXPECT_EQ(p.take(), "0->1@0+1048576");
    EXPECT_EQ(states(d, 7, 0, 4), "SSII");
    ASSERT_EQ(sluice_coh_write(d, 7, 0, MiB, 2, SLUICE_COH_WRITE_ALL, &p), 0); // others invalidated
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 7, 0, 4), "IIMI");
    ASSERT_EQ(sluice_coh_read(d, 7, 0, MiB, 2, &p), 0); // a read at the owner is a hit: stays M
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 7, 0, 4), "IIMI");
    ASSERT_EQ(sluice_coh_read(d, 7, 0, 10, 3, &p), 0); // M -> S at the owner, reader S
    EXPECT_EQ(p.take(), "2->3@0+1048576");
    EXPECT_EQ(states(d, 7, 0, 4), "IISS");
    ASSERT_EQ(sluice_coh_write(d, 7, 0, 10, 3, 0, &p), 0); // S -> M: already valid, nothing to fetch
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 7, 0, 4), "IIIM");
    ASSERT_EQ(sluice_coh_host_read(d, 7, 0, MiB, &p), 0); // host read: rank 0 becomes a sharer
    EXPECT_EQ(p.take(), "3->0@0+1048576");
    EXPECT_EQ(states(d, 7, 0, 4), "SIIS");
    ASSERT_EQ(sluice_coh_host_write(d, 7, 0, MiB, SLUICE_COH_WRITE_ALL, &p), 0); // host write: rank 0 M
    EXPECT_EQ(p.take(), "");
    EXPECT_EQ(states(d, 7, 0, 4), "MIII");
    sluice_coh_stats st;
    sluice_coh_get_stats(d, &st);
    EXPECT_EQ(st.chunk_misses, 3u);
    EXPECT_EQ(st.bytes_planned, 3 * MiB);
    EXPECT_EQ(st.bytes_from_host, MiB); // rank 1's first read
    EXPECT_EQ(st.invalidations, 4u);    // 0 and 1 by rank 2's write, 2 by rank 3's, 3 by the host write
    expect_invariants(d);
}

TEST(Coherence, WrittenOnOneRankReadOnTwoOthersMovesRankToRankNeverThroughZero)
{
    Dir d(4);
    Plan p;
    ASSERT_EQ(sluice_coh_add_buffer(d, 1, 4 * MiB, SLUICE_COH_INIT_HOST), 0);
    ASSERT_EQ(sluice_coh_write(d, 1, 0, 4 * MiB, 1, 0, &p), 0); // a kernel on rank 1 writes it all
    EXPECT_EQ(p.take(), "0->1@0+4194304");                      // (it needed the host data first)
    ASSERT_EQ(sluice_coh_read(d, 1, 0, 4 * MiB, 2, &p), 0);
    EXPECT_EQ(p.take(), "1->2@0+4194304");
    ASSERT_EQ(sluice_coh_read(d, 1, 0, 4 * MiB, 3, &p), 0);
    // Rank 1 has already sent 4 MiB, rank 2 nothing: the load goes to rank 2 (1 -> 2 -> 3).
    EXPECT_EQ(p.take(), "2->3@0+4194304");
    for (uint64_t c = 0; c < 4; c++)
        EXPECT_EQ(states(d, 1, c, 4), "ISSS");
    sluice_coh_stats st;
    sluice_coh_get_stats(d, &st);
    EXPECT_EQ(st.bytes_from_host, 4 * MiB); // only the initial host data
    expect_invariants(d);
}

TEST(Coherence, RankZeroIsTheSourceOnlyWhenItHoldsTheOnlyCopy)
{
    Dir d(3);
    Plan p;
    ASSERT_EQ(sluice_coh_add_buffer(d, 1, MiB, SLUICE_COH_INIT_HOST), 0);
    ASSERT_EQ(sluice_coh_read(d, 1, 0, MiB, 1, &p), 0);
    EXPECT_EQ(p.take(), "0->1@0+1048576");
    // Rank 0 has sent the most already, but even if it had sent nothing, a non-zero holder wins.
    ASSERT_EQ(sluice_coh_read(d, 1, 0, MiB, 2, &p), 0);
    EXPECT_EQ(p.take(), "1->2@0+1048576");
}

TEST(Coherence, ChunksSubRangesAndPartialWrites)
{
    Dir d(3, 1000); // chunk 1000 bytes; buffer 3500 bytes = 4 chunks, the last one 500
    Plan p;
    ASSERT_EQ(sluice_coh_add_buffer(d, 5, 3500, SLUICE_COH_INIT_HOST), 0);
    EXPECT_EQ(sluice_coh_chunk_size(d), 1000u);
    // A sub-buffer [1500, 3500) read on rank 1 fetches chunks 1..3, merged into one transfer,
    // the last chunk clipped to the buffer's end.
    ASSERT_EQ(sluice_coh_read(d, 5, 1500, 2000, 1, &p), 0);
    EXPECT_EQ(p.take(), "0->1@1000+2500");
    EXPECT_EQ(states(d, 5, 0, 3), "EII");
    EXPECT_EQ(states(d, 5, 1, 3), "SSI");
    // Rank 2 overwrites [1000, 2500) entirely (clEnqueueWriteBuffer): chunk 1 is whole (no fetch),
    // chunk 2 is partly covered: it must be fetched so that its other bytes stay valid.
    ASSERT_EQ(sluice_coh_write(d, 5, 1000, 1500, 2, SLUICE_COH_WRITE_ALL, &p), 0);
    EXPECT_EQ(p.take(), "1->2@2000+1000");
    EXPECT_EQ(states(d, 5, 1, 3), "IIM");
    EXPECT_EQ(states(d, 5, 2, 3), "IIM");
    EXPECT_EQ(states(d, 5, 3, 3), "SSI");
    // A kernel on rank 1 writing [0, 1000) may write only some bytes: the whole chunk is fetched.
    ASSERT_EQ(sluice_coh_write(d, 5, 0, 1000, 1, 0, &p), 0);
    EXPECT_EQ(p.take(), "0->1@0+1000");
    // Reading everything on rank 0 pulls each chunk from whoever holds it.
    ASSERT_EQ(sluice_coh_host_read(d, 5, 0, 3500, &p), 0);
    EXPECT_EQ(p.take(), "1->0@0+1000 2->0@1000+2000");
    EXPECT_EQ(states(d, 5, 3, 3), "SSI");
    expect_invariants(d);
}

TEST(Coherence, BadArguments)
{
    EXPECT_EQ(sluice_coh_create(0, 0), nullptr);
    EXPECT_EQ(sluice_coh_create(SLUICE_COH_MAX_RANKS + 1, 0), nullptr);
    Dir d(2);
    Plan p;
    EXPECT_EQ(sluice_coh_add_buffer(d, 1, 0, SLUICE_COH_INIT_NONE), -EINVAL);
    ASSERT_EQ(sluice_coh_add_buffer(d, 1, 100, SLUICE_COH_INIT_NONE), 0);
    EXPECT_EQ(sluice_coh_add_buffer(d, 1, 100, SLUICE_COH_INIT_NONE), -EEXIST);
    EXPECT_EQ(sluice_coh_read(d, 2, 0, 1, 0, &p), -ENOENT);
    EXPECT_EQ(sluice_coh_read(d, 1, 0, 1, 2, &p), -EINVAL);
    EXPECT_EQ(sluice_coh_read(d, 1, 0, 1, -1, &p), -EINVAL);
    EXPECT_EQ(sluice_coh_read(d, 1, 50, 51, 0, &p), -ERANGE);
    EXPECT_EQ(sluice_coh_write(d, 1, UINT64_MAX, 2, 0, 0, &p), -ERANGE);
    EXPECT_EQ(sluice_coh_read(d, 1, 100, 0, 0, &p), 0); // empty range at the end: nothing
    EXPECT_EQ(sluice_coh_remove_buffer(d, 1), 0);
    EXPECT_EQ(sluice_coh_remove_buffer(d, 1), -ENOENT);
    EXPECT_EQ(sluice_coh_state_of(d, 1, 0, 0), SLUICE_COH_INVALID);
    EXPECT_EQ(p.p.n, 0u);
}

TEST(Coherence, HomesSpreadOverRanks)
{
    Dir d(8);
    std::vector<int> count(8);
    for (uint64_t b = 0; b < 64; b++)
        for (uint64_t c = 0; c < 16; c++) {
            int h = sluice_coh_home(d, b, c);
            ASSERT_GE(h, 0);
            ASSERT_LT(h, 8);
            count[h]++;
        }
    for (int r = 0; r < 8; r++)
        EXPECT_GT(count[r], 64) << "rank " << r; // 1024 entries, 128 expected per rank
}

// Property test: random reads and writes (devices and host, whole and partial, with and without
// WRITE_ALL) on several buffers, with a model of the data: every write makes a new version of
// each chunk it touches; every planned transfer copies the source's version to the destination.
// After every operation: the invariants hold, the holders are exactly the ranks whose copy is
// the newest version, and a command always finds the newest version where it runs.
TEST(Coherence, PropertyRandomOperationsKeepCopiesCoherent)
{
    const int nranks = 5;
    const uint64_t chunk = 256;
    const uint64_t sizes[] = {256, 1000, 4096, 77};
    Dir d(nranks, chunk);
    std::mt19937_64 rng(20260601);
    struct Model {
        std::vector<uint64_t> latest;            // per chunk; 0: never initialized
        std::vector<std::vector<uint64_t>> copy; // [rank][chunk]
    };
    std::vector<Model> model(4);
    for (uint64_t b = 0; b < 4; b++) {
        bool host = b % 2 == 0;
        ASSERT_EQ(sluice_coh_add_buffer(d, b, sizes[b], host ? SLUICE_COH_INIT_HOST : SLUICE_COH_INIT_NONE),
                  0);
        uint64_t n = (sizes[b] + chunk - 1) / chunk;
        model[b].latest.assign(n, host ? 1 : 0);
        model[b].copy.assign(nranks, std::vector<uint64_t>(n, 0));
        if (host)
            model[b].copy[0].assign(n, 1);
    }
    uint64_t version = 1, transfers = 0, through_zero = 0;
    Plan p;
    for (int step = 0; step < 20000; step++) {
        uint64_t b = rng() % 4;
        Model &m = model[b];
        uint64_t off = rng() % sizes[b], len = 1 + rng() % (sizes[b] - off);
        int rank = (int)(rng() % nranks);
        int kind = (int)(rng() % 3); // 0 read, 1 write, 2 write with WRITE_ALL
        int rc = kind == 0 ? sluice_coh_read(d, b, off, len, rank, &p)
                           : sluice_coh_write(d, b, off, len, rank, kind == 2 ? SLUICE_COH_WRITE_ALL : 0, &p);
        ASSERT_EQ(rc, 0);
        for (size_t i = 0; i < p.p.n; i++) {
            const sluice_coh_transfer &t = p.p.v[i];
            ASSERT_EQ(t.buffer, b);
            ASSERT_EQ(t.dst, rank);
            ASSERT_NE(t.src, rank);
            ASSERT_EQ(t.offset % chunk, 0u);
            for (uint64_t c = t.offset / chunk; c < (t.offset + t.size + chunk - 1) / chunk; c++) {
                ASSERT_EQ(m.copy[t.src][c], m.latest[c]) << "step " << step << ": source holds a stale copy";
                if (t.src == 0) {
                    through_zero++;
                    for (int r = 1; r < nranks; r++) {
                        ASSERT_TRUE(r == rank || m.copy[r][c] != m.latest[c])
                            << "step " << step << ": fetched from rank 0 while rank " << r
                            << " held a valid copy";
                    }
                }
                m.copy[t.dst][c] = m.latest[c];
            }
            transfers++;
        }
        p.take();
        uint64_t first = off / chunk, last = (off + len - 1) / chunk;
        for (uint64_t c = first; c <= last; c++) {
            bool whole = off <= c * chunk && off + len >= std::min((c + 1) * chunk, sizes[b]);
            // The command runs: it must see the newest data unless the chunk is uninitialized or
            // entirely overwritten.
            if (m.latest[c] != 0 && !(kind == 2 && whole)) {
                ASSERT_EQ(m.copy[rank][c], m.latest[c])
                    << "step " << step << ": rank " << rank << " runs on stale data";
            }
            if (kind != 0)
                m.latest[c] = m.copy[rank][c] = ++version;
        }
        char err[256] = "";
        ASSERT_EQ(sluice_coh_check(d, err, sizeof err), 0) << "step " << step << ": " << err;
        for (uint64_t c = 0; c < m.latest.size(); c++)
            for (int r = 0; r < nranks; r++) {
                bool valid = m.latest[c] != 0 && m.copy[r][c] == m.latest[c];
                ASSERT_EQ(sluice_coh_state_of(d, b, c, r) != SLUICE_COH_INVALID, valid)
                    << "step " << step << " buffer " << b << " chunk " << c << " rank " << r;
            }
    }
    EXPECT_GT(transfers, 1000u); // the sequence exercised the planner
    EXPECT_GT(through_zero, 0u);
}
