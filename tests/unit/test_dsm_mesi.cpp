/* SPDX-License-Identifier: MIT */
// The home-based MESI protocol behind its ops table (runtime/dsm/mesi.c, home.c): client state
// transitions (I, S, E, M) and the messages each step sends, deferred answers inside scopes,
// and the home side (sharers, owner, one request at a time, grants with or without data,
// write-backs, publication once per write). This process is rank 0 of 3; the test plays
// ranks 1 and 2 (dsm_world.h). Chunk a has its home on rank a % 3.
#include <gtest/gtest.h>

#include <string>

#include "dsm_world.h"

namespace
{

const size_t CS = 64;

dsm_msg msg(uint32_t type, unsigned long addr, uint64_t version = 0, uint32_t flags = 0)
{
    dsm_msg m{};
    m.type = type;
    m.proto = SLUICE_DSM_MESI;
    m.addr = addr;
    m.size = CS;
    m.version = version;
    m.flags = flags;
    return m;
}

dsm_chunk *chunk(unsigned long a)
{
    return dsm_chunk_find(a);
}

const char *state(unsigned long a)
{
    static const char *n[] = {"I", "S", "E", "M"};
    return n[chunk(a)->state];
}

// A WRITE scope of c that gets no (complete) answer: it fails with ETIMEDOUT and one line naming
// chunk @addr.
void expectWriteTimesOut(sluice_dsm_chain *c, unsigned long addr, const char *why = "")
{
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_write(c), nullptr) << why;
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_ETIMEDOUT);
    std::string want = "write of chunk @" + std::to_string(addr) + ": no answer within SLUICE_DSM_TIMEOUT";
    EXPECT_NE(err.find(want), std::string::npos) << err;
}

// Every client and home test is rank 0 of 3 in a world of its own (dsm_world.h).
class DsmMesi : public testing::Test
{
  protected:
    DsmWorld world{3, 0};
};
class DsmMesiClient : public DsmMesi
{
};
class DsmMesiHome : public DsmMesi
{
};

// A READ (WRITE) scope opened and released at once: the messages it sent ("TYPE>dst ...").
std::string readScope(sluice_dsm_chain *c)
{
    sluice_dsm_read(c);
    sluice_dsm_release(c);
    return DsmWorld::take();
}

std::string writeScope(sluice_dsm_chain *c)
{
    sluice_dsm_write(c);
    sluice_dsm_release(c);
    return DsmWorld::take();
}

// Rank 1 as the home of chunk 1 (and 4, 7...): it answers reads with data and writes with a
// grant, the way home.c does when nobody else holds the chunk.
struct Home1 {
    std::string data = std::string(CS, 'h');
    uint64_t version = 5;
    bool answer = true;
    Home1()
    {
        DsmWorld::responder = [this](const DsmSent &s) {
            if (!answer || s.dst != 1)
                return;
            if (s.m.type == M_RD_REQ)
                DsmWorld::deliver(1, msg(M_RD_DATA, s.m.addr, version), data);
            if (s.m.type == M_WR_REQ) {
                bool send = s.m.version != version && !(s.m.flags & DSM_F_NODATA);
                DsmWorld::deliver(1, msg(M_WR_GRANT, s.m.addr, version, send ? DSM_F_DATA : 0),
                                  send ? data : "");
            }
        };
    }
};

TEST_F(DsmMesiClient, ReadMissAsksTheHomeThenReadsHitInShared)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    const char *p = static_cast<const char *>(sluice_dsm_read(c));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(DsmWorld::take(), "RD_REQ>1");
    EXPECT_EQ(std::string(p, CS), home.data);
    EXPECT_STREQ(state(1), "S");
    EXPECT_EQ(sluice_dsm_version(c), 5u);
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "") << "RELEASE of a READ scope sends nothing";
    ASSERT_NE(sluice_dsm_read(c), nullptr);
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "") << "read hit in S";
}

TEST_F(DsmMesiClient, WriteFromACurrentSharedCopyGetsOwnershipWithoutDataThenHitsInExclusive)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    readScope(c);
    char *p = static_cast<char *>(sluice_dsm_write(c));
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_REQ);
    EXPECT_EQ(DsmWorld::sent[0].m.version, 5u) << "the version held, so that the home can omit the data";
    DsmWorld::take();
    EXPECT_STREQ(state(1), "M");
    EXPECT_EQ(std::string(p, CS), home.data) << "the read copy is still the data";
    memset(p, 'w', CS);
    sluice_dsm_release(c);
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WB);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'w'));
    DsmWorld::take();
    EXPECT_STREQ(state(1), "E");
    EXPECT_EQ(chunk(1)->version, 6u);
    // Write hit in E: only the write-back at RELEASE.
    sluice_dsm_write(c);
    EXPECT_STREQ(state(1), "M");
    EXPECT_EQ(DsmWorld::take(), "");
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "WB>1");
    // Read hit in E.
    EXPECT_EQ(readScope(c), "");
}

TEST_F(DsmMesiClient, WriteFromInvalidGetsTheDataWithTheGrantPutAsksForNone)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(4, CS, SLUICE_DSM_MESI);
    const char *p = static_cast<const char *>(sluice_dsm_write(c));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.version, UINT64_MAX) << "no copy: any version is newer";
    EXPECT_EQ(DsmWorld::sent[0].m.flags & DSM_F_NODATA, 0u);
    EXPECT_EQ(std::string(p, CS), home.data) << "WRITE fetches the data (a partial update is safe)";
    sluice_dsm_release(c);
    DsmWorld::take();
    // PUT: an empty WRITE scope asks for no data.
    std::string mine(CS, 'm');
    sluice_dsm_chain *d = sluice_dsm_malloc(7, CS, SLUICE_DSM_MESI);
    ASSERT_EQ(sluice_dsm_map(d, mine.data()), 0);
    ASSERT_EQ(sluice_dsm_put(d), 0);
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags & DSM_F_NODATA, DSM_F_NODATA);
    EXPECT_EQ(DsmWorld::sent[1].m.type, (uint32_t)M_WB);
    EXPECT_EQ(DsmWorld::sent[1].payload, std::string(CS, 'm'));
}

TEST_F(DsmMesiClient, AContendedGrantIsGivenUpWithTheWriteBackAnUncontendedOneKept)
{
    DsmWorld::responder = [](const DsmSent &s) {
        if (s.m.type == M_WR_REQ)
            DsmWorld::deliver(
                1, msg(M_WR_GRANT, s.m.addr, 0, DSM_F_DATA | (s.m.addr == 1 ? DSM_F_CONTENDED : 0)),
                std::string(CS, 'g'));
    };
    sluice_dsm_chain *shared = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    sluice_dsm_chain *mine = sluice_dsm_malloc(4, CS, SLUICE_DSM_MESI);
    sluice_dsm_write(shared);
    sluice_dsm_release(shared);
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[1].m.type, (uint32_t)M_WB);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DOWNGRADE);
    EXPECT_STREQ(state(1), "S") << "a read copy kept: reads hit, the next write asks";
    DsmWorld::take();
    EXPECT_EQ(readScope(shared), "");
    sluice_dsm_write(mine);
    sluice_dsm_release(mine);
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, 0u);
    EXPECT_STREQ(state(4), "E");
    DsmWorld::take();
    EXPECT_EQ(writeScope(mine), "WB>1") << "uncontended: write hits";
}

TEST_F(DsmMesiClient, AMigratoryGrantIsDroppedWithTheWriteBackSoTheNextReadMisses)
{
    DsmWorld::responder = [](const DsmSent &s) {
        if (s.m.type == M_WR_REQ)
            DsmWorld::deliver(1, msg(M_WR_GRANT, s.m.addr, 0, DSM_F_DATA | DSM_F_CONTENDED | DSM_F_MIGRATORY),
                              std::string(CS, 'g'));
        if (s.m.type == M_RD_REQ)
            DsmWorld::deliver(1, msg(M_RD_DATA, s.m.addr, 1), std::string(CS, 'w'));
    };
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    char *p = static_cast<char *>(sluice_dsm_write(c));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(chunk(1)->migratory);
    memset(p, 'w', CS);
    // An invalidation inside the scope is answered after the write-back, as for any write.
    DsmWorld::deliver(1, msg(M_INV, 1));
    sluice_dsm_release(c);
    ASSERT_EQ(DsmWorld::sent.size(), 3u) << DsmWorld::take();
    EXPECT_EQ(DsmWorld::sent[1].m.type, (uint32_t)M_WB);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DROP) << "migratory wins over the contended downgrade";
    EXPECT_EQ(DsmWorld::sent[1].payload, std::string(CS, 'w'));
    EXPECT_EQ(DsmWorld::sent[2].m.type, (uint32_t)M_ACK);
    EXPECT_EQ(DsmWorld::sent[2].m.flags, 0u) << "no copy kept";
    DsmWorld::take();
    EXPECT_STREQ(state(1), "I") << "no copy: the next writer finds nothing to invalidate";
    EXPECT_EQ(readScope(c), "RD_REQ>1") << "its own read misses: the price of the guess";
    EXPECT_STREQ(state(1), "S");
}

TEST_F(DsmMesiClient, InvalidationAndRecallOutsideAScopeAreAnsweredAtOnce)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    readScope(c);
    DsmWorld::deliver(1, msg(M_INV, 1));
    EXPECT_EQ(DsmWorld::take(), "ACK>1");
    EXPECT_STREQ(state(1), "I");
    // Owner (E) recalled with keep: stays a sharer, says so in the ACK.
    writeScope(c);
    DsmWorld::deliver(1, msg(M_RECALL, 1, 0, DSM_F_KEEP));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_ACK);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_KEEP);
    DsmWorld::take();
    EXPECT_STREQ(state(1), "S");
    // Recalled without keep: invalid.
    writeScope(c);
    DsmWorld::deliver(1, msg(M_RECALL, 1));
    EXPECT_EQ(DsmWorld::take(), "ACK>1");
    EXPECT_STREQ(state(1), "I");
    // The next read misses again.
    EXPECT_EQ(readScope(c), "RD_REQ>1");
}

TEST_F(DsmMesiClient, InsideAScopeTheAnswerWaitsForReleaseAfterTheWriteBack)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    char *p = static_cast<char *>(sluice_dsm_write(c));
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_RECALL, 1, 0, DSM_F_KEEP));
    EXPECT_EQ(DsmWorld::take(), "") << "a WRITE scope is exclusive until RELEASE";
    memset(p, 'x', CS);
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "WB>1 ACK>1") << "the data reaches the home before the acknowledgement";
    EXPECT_STREQ(state(1), "S");
    // A READ scope: an invalidation waits (the reader's copy must not change under it), a recall
    // that keeps the copy does not.
    sluice_dsm_read(c);
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_INV, 1));
    EXPECT_EQ(DsmWorld::take(), "");
    EXPECT_STREQ(state(1), "S");
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "ACK>1");
    EXPECT_STREQ(state(1), "I");
    sluice_dsm_write(c);
    sluice_dsm_release(c);
    sluice_dsm_read(c);
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_RECALL, 1, 0, DSM_F_KEEP));
    EXPECT_EQ(DsmWorld::take(), "ACK>1") << "readers in parallel: answered inside the READ scope";
    EXPECT_STREQ(state(1), "S");
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "");
}

TEST_F(DsmMesiClient, TheHomesSizeMismatchIsAnErrorNamingBothSizes)
{
    DsmWorld::responder = [](const DsmSent &s) {
        dsm_msg e = msg(M_ERROR, s.m.addr);
        e.arg = SLUICE_DSM_ESIZE;
        e.size = 128;
        DsmWorld::deliver(1, e);
    };
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_read(c), nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_ESIZE);
    EXPECT_NE(err.find("chunk @1 is 128 bytes at its home (rank 1), this chain says 64"), std::string::npos)
        << err;
    EXPECT_EQ(c->scope, MODE_NONE) << "a failed acquire leaves no scope open";
    EXPECT_EQ(chunk(1)->scope, MODE_NONE);
}

TEST_F(DsmMesiClient, NoAnswerTimesOutNamingTheChunk)
{
    D.timeout_ns = 20000000ull; // 20 ms
    sluice_dsm_chain *c = sluice_dsm_malloc(2, CS, SLUICE_DSM_MESI);
    expectWriteTimesOut(c, 2);
    EXPECT_EQ(DsmWorld::take(), "WR_REQ>2");
}

// A grant naming k acknowledgements (the home invalidated k sharers for this rank, which answer
// here): the acquire completes when the grant and all k are in, in any order.
TEST_F(DsmMesiClient, AWriteGrantNamingAcknowledgementsCompletesWhenAllHaveArrivedInAnyOrder)
{
    DsmWorld::responder = [](const DsmSent &s) {
        if (s.m.type != M_WR_REQ)
            return;
        DsmWorld::deliver(1, msg(M_INV_ACK, s.m.addr)); // before the grant
        dsm_msg g = msg(M_WR_GRANT, s.m.addr, 3, DSM_F_DATA | DSM_F_CONTENDED);
        g.arg = 2;
        DsmWorld::deliver(2, g, std::string(CS, 'g'));
        DsmWorld::deliver(2, msg(M_INV_ACK, s.m.addr)); // the home was a sharer too
    };
    sluice_dsm_chain *c = sluice_dsm_malloc(2, CS, SLUICE_DSM_MESI);
    char *p = static_cast<char *>(sluice_dsm_write(c));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::string(p, CS), std::string(CS, 'g'));
    EXPECT_STREQ(state(2), "M");
    EXPECT_EQ(chunk(2)->acks_owed, 0);
    EXPECT_EQ(DsmWorld::take(), "WR_REQ>2");
    sluice_dsm_release(c);
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DOWNGRADE) << "contended: given up with the write-back";
    DsmWorld::take();
}

// One acknowledgement never comes: the acquire times out; the home already made this rank the
// owner, so the next request's recall is answered only once the late acknowledgement is in
// (until then the other copy may still be read), even after the chain's copy was evicted.
TEST_F(DsmMesiClient, AMissingAcknowledgementTimesOutAndHoldsBackTheAnswerToTheNextRecall)
{
    DsmWorld::responder = [](const DsmSent &s) {
        if (s.m.type == M_RD_REQ)
            DsmWorld::deliver(2, msg(M_RD_DATA, s.m.addr, 3), std::string(CS, 'r'));
        if (s.m.type != M_WR_REQ)
            return;
        dsm_msg g = msg(M_WR_GRANT, s.m.addr, 3, DSM_F_CONTENDED);
        g.arg = 2;
        DsmWorld::deliver(2, g);
        DsmWorld::deliver(1, msg(M_INV_ACK, s.m.addr));
    };
    sluice_dsm_chain *c = sluice_dsm_malloc(2, CS, SLUICE_DSM_MESI);
    readScope(c);
    D.timeout_ns = 20000000ull; // 20 ms
    expectWriteTimesOut(c, 2);
    EXPECT_EQ(DsmWorld::take(), "WR_REQ>2");
    EXPECT_EQ(c->scope, MODE_NONE) << "no scope left open";
    EXPECT_EQ(chunk(2)->acks_owed, 1);
    EXPECT_EQ(readScope(c), "") << "reading the copy is safe meanwhile";
    // The chain's copy is evicted (cache of one chunk, another chain read).
    D.cache_limit = 1;
    sluice_dsm_chain *other = sluice_dsm_malloc(5, CS, SLUICE_DSM_MESI);
    readScope(other);
    EXPECT_EQ(c->buf, nullptr) << "evicted";
    DsmWorld::deliver(2, msg(M_RECALL, 2, 0, DSM_F_KEEP));
    EXPECT_EQ(DsmWorld::take(), "") << "rank 2's acknowledgement is still owed";
    DsmWorld::deliver(2, msg(M_INV_ACK, 2));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_ACK);
    EXPECT_EQ(DsmWorld::sent[0].dst, 2);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, 0u) << "evicted: no copy kept";
    DsmWorld::take();
    EXPECT_STREQ(state(2), "I");
    EXPECT_EQ(chunk(2)->acks_owed, 0);
}

TEST_F(DsmMesiClient, AnInvalidationNamingTheWriterIsAcknowledgedToItAtOnceOrAtTheEndOfAReadScope)
{
    Home1 home;
    sluice_dsm_chain *c = sluice_dsm_malloc(1, CS, SLUICE_DSM_MESI);
    dsm_msg inv = msg(M_INV, 1, 0, DSM_F_FWD);
    inv.arg = 2;
    readScope(c);
    DsmWorld::deliver(1, inv);
    EXPECT_EQ(DsmWorld::take(), "INV_ACK>2") << "to the writer, not to the home";
    EXPECT_STREQ(state(1), "I");
    ASSERT_NE(sluice_dsm_read(c), nullptr);
    EXPECT_EQ(DsmWorld::take(), "RD_REQ>1");
    DsmWorld::deliver(1, inv);
    EXPECT_EQ(DsmWorld::take(), "") << "the reader's copy must not change under it";
    EXPECT_STREQ(state(1), "S");
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "INV_ACK>2");
    EXPECT_STREQ(state(1), "I");
    // A copy evicted before the invalidation arrives: acknowledged all the same.
    D.cache_limit = 1;
    sluice_dsm_chain *other = sluice_dsm_malloc(4, CS, SLUICE_DSM_MESI);
    EXPECT_EQ(readScope(c), "RD_REQ>1");
    EXPECT_EQ(readScope(other), "RD_REQ>1");
    EXPECT_EQ(c->buf, nullptr) << "evicted";
    DsmWorld::deliver(1, inv);
    EXPECT_EQ(DsmWorld::take(), "INV_ACK>2");
}

// ---- home side: chunk 3 has its home here (rank 0) ------------------------------------------

dsm_home *home3()
{
    return dsm_home_get(3, K_CHUNK, false);
}

TEST_F(DsmMesiHome, AReadIsGrantedWithTheDataAndTheReaderBecomesASharer)
{
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_RD_DATA);
    EXPECT_EQ(DsmWorld::sent[0].dst, 1);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, '\0')) << "a chunk nobody wrote is zeros";
    EXPECT_EQ(DsmWorld::sent[0].m.version, 0u);
    DsmWorld::take();
    ASSERT_NE(home3(), nullptr);
    EXPECT_EQ(home3()->sharers[1], 1);
    EXPECT_EQ(home3()->owner, -1);
    EXPECT_EQ(home3()->busy_type, 0);
}

TEST_F(DsmMesiHome, AWriteWithoutAnOwnerIsGrantedAtOnceAndTheSharersAcknowledgeToTheWriter)
{
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::take();
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, 0));
    // Three hops on the critical path (WR_REQ, INV, INV_ACK), not four (no ACK back here first).
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_INV)
        << "the invalidation first: it is on the critical path";
    EXPECT_EQ(DsmWorld::sent[0].dst, 1) << "the requester is not invalidated";
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_FWD);
    EXPECT_EQ(DsmWorld::sent[0].m.arg, 2) << "rank 1 acknowledges to the writer";
    EXPECT_EQ(DsmWorld::sent[1].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[1].dst, 2);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_CONTENDED)
        << "rank 2 was a sharer of the current version: no data; rank 1's copy was taken";
    EXPECT_EQ(DsmWorld::sent[1].payload, "");
    EXPECT_EQ(DsmWorld::sent[1].m.arg, 1) << "the writer waits for one acknowledgement";
    DsmWorld::take();
    EXPECT_EQ(home3()->owner, 2) << "owner at grant time";
    EXPECT_EQ(home3()->busy_type, 0) << "the home serves the next request at once";
    EXPECT_EQ(home3()->sharers[1], 0);
    EXPECT_EQ(home3()->sharers[2], 0);
    // The next request recalls the new owner (which answers once its acquire and scope are over).
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "RECALL>2");
    EXPECT_EQ(home3()->busy_type, (int)M_RD_REQ);
    DsmWorld::deliver(2, msg(M_WB, 3), std::string(CS, 'n'));
    EXPECT_EQ(home3()->version, 1u);
    DsmWorld::deliver(2, msg(M_ACK, 3, 0, DSM_F_KEEP));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_RD_DATA);
    EXPECT_EQ(DsmWorld::sent[0].dst, 1);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'n')) << "the last released write";
    EXPECT_EQ(DsmWorld::sent[0].m.version, 1u);
    DsmWorld::take();
    EXPECT_EQ(home3()->owner, -1);
    EXPECT_EQ(home3()->sharers[1], 1);
    EXPECT_EQ(home3()->sharers[2], 1) << "the recalled owner kept a read copy";
}

TEST_F(DsmMesiHome, AWriteOfAnOwnedChunkRecallsTheOwnerAndGrantsWithItsDataWhenItHasAnswered)
{
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA) << "nobody else held it: not contended";
    EXPECT_EQ(DsmWorld::sent[0].m.arg, 0);
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, 'o'));
    // Rank 1 (E) may have written since: its copy can be newer than the home's until its
    // write-back, so the grant waits for the recall (four hops).
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    EXPECT_EQ(DsmWorld::take(), "RECALL>1");
    EXPECT_EQ(home3()->busy_type, (int)M_WR_REQ);
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "") << "another request meanwhile waits in the queue";
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, 'p'));
    DsmWorld::deliver(1, msg(M_ACK, 3));
    ASSERT_GE(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[0].dst, 2);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA | DSM_F_CONTENDED | DSM_F_MIGRATORY)
        << "the only other copy was the last writer's: migratory";
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'p')) << "the owner's last write";
    EXPECT_EQ(DsmWorld::sent[0].m.arg, 0) << "every acknowledgement came here";
    EXPECT_EQ(DsmWorld::take(), "WR_GRANT>2 RECALL>2") << "then the queued read";
}

TEST_F(DsmMesiHome, AGrantCarriesTheDataUnlessTheRequesterStillHoldsTheCurrentVersion)
{
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA) << "not a sharer: data";
    EXPECT_EQ(DsmWorld::sent[0].payload.size(), CS);
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, 'a'));
    // Rank 2 asks with a stale version while being a sharer: data.
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::take(); // RECALL>1
    DsmWorld::deliver(1, msg(M_ACK, 3, 0, DSM_F_KEEP));
    DsmWorld::take(); // RD_DATA>2
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, 0));
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_INV);
    // Every write here takes the chunk from the last writer's only copy: migratory grants.
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DATA | DSM_F_CONTENDED | DSM_F_MIGRATORY)
        << "version 0 is not the current 1";
    EXPECT_EQ(DsmWorld::sent[1].payload, std::string(CS, 'a'));
    DsmWorld::take();
    // A requester that is no sharer any more (its copy was invalidated for rank 2): data.
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'b'));
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, 1));
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DATA | DSM_F_CONTENDED | DSM_F_MIGRATORY);
    EXPECT_EQ(DsmWorld::sent[1].payload, std::string(CS, 'b'));
    DsmWorld::take();
    // PUT: never data.
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX, DSM_F_NODATA));
    EXPECT_EQ(DsmWorld::take(), "RECALL>1");
    DsmWorld::deliver(1, msg(M_ACK, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_CONTENDED | DSM_F_MIGRATORY)
        << "no data; the owner's copy was taken";
    EXPECT_EQ(DsmWorld::sent[0].payload, "");
}

// Rank 2 reads, rank 1 writes (contended: it downgrades to S), then rank 2 writes: the only other
// copy is the last writer's, so the chunk is marked migratory and the grant says so.
void markMigratory()
{
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 3u);
    EXPECT_EQ(DsmWorld::sent[2].m.flags, DSM_F_DATA | DSM_F_CONTENDED) << "no last writer yet: not marked";
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'a'));
    EXPECT_FALSE(home3()->migratory);
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_INV);
    EXPECT_EQ(DsmWorld::sent[0].dst, 1);
    EXPECT_EQ(DsmWorld::sent[1].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DATA | DSM_F_CONTENDED | DSM_F_MIGRATORY);
    EXPECT_TRUE(home3()->migratory);
    EXPECT_EQ(home3()->last_writer, 2);
    DsmWorld::take();
}

TEST_F(DsmMesiHome, AChunkThatRanksTakeTurnsWritingIsGrantedToTheNextWriterAtOnce)
{
    markMigratory();
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'b'));
    EXPECT_EQ(home3()->owner, -1) << "dropped: no owner";
    EXPECT_EQ(home3()->sharers[1] + home3()->sharers[2], 0) << "and no sharer";
    EXPECT_EQ(home3()->version, 2u);
    // Rank 1's turn: no copy anywhere, WR_REQ and WR_GRANT only (one round trip).
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, 1));
    ASSERT_EQ(DsmWorld::sent.size(), 1u) << DsmWorld::take();
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[0].dst, 1);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA | DSM_F_MIGRATORY) << "not a sharer: the home's data";
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'b'));
    EXPECT_EQ(DsmWorld::sent[0].m.arg, 0) << "nothing to acknowledge";
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'c'));
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    EXPECT_EQ(DsmWorld::take(), "WR_GRANT>2") << "and rank 2's turn again";
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'd'));
    // A reader after it is served by the home at once, with the last write; the mark stays.
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_RD_DATA);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'd'));
    DsmWorld::take();
    EXPECT_TRUE(home3()->migratory) << "one reader, the next writer perhaps";
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, 4));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_MIGRATORY) << "a current sharer: no data, still migratory";
    DsmWorld::take();
}

TEST_F(DsmMesiHome, TheMarkIsClearedWhenTheLastWriterWritesAgain)
{
    markMigratory();
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'b'));
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA) << "its own chunk again: kept (E), its writes hit";
    EXPECT_FALSE(home3()->migratory);
}

TEST_F(DsmMesiHome, TheMarkIsClearedWhenTheLastWriterReadsItsChunkAgainAndHeldOff)
{
    markMigratory();
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'b'));
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "RD_DATA>2");
    EXPECT_FALSE(home3()->migratory) << "the last writer re-read: a wrong guess";
    // Rank 1 writes, finding only the last writer's copy: not marked again for a while.
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 2u);
    EXPECT_EQ(DsmWorld::sent[1].m.flags, DSM_F_DATA | DSM_F_CONTENDED) << "downgrade, as before";
    EXPECT_FALSE(home3()->migratory);
    DsmWorld::take();
}

TEST_F(DsmMesiHome, TheMarkIsClearedWhenSeveralRanksReadBetweenTwoWrites)
{
    markMigratory();
    DsmWorld::deliver(2, msg(M_WB, 3, 0, DSM_F_DROP), std::string(CS, 'b'));
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    DsmWorld::take();
    EXPECT_TRUE(home3()->migratory);
    sluice_dsm_chain *c = sluice_dsm_malloc(3, CS, SLUICE_DSM_MESI);
    readScope(c); // this rank reads too (its own home, through the FIFO)
    EXPECT_FALSE(home3()->migratory) << "producer-consumer";
    EXPECT_STREQ(state(3), "S");
    // The next writer invalidates both readers and keeps a read copy (DSM_F_DOWNGRADE).
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    DsmWorld::poll();
    EXPECT_EQ(DsmWorld::take(), "INV>1 WR_GRANT>2 INV_ACK>2");
    EXPECT_FALSE(home3()->migratory);
}

TEST_F(DsmMesiHome, AWriterThatGivesUpOwnershipWithItsWriteBackLetsTheNextReaderInAtOnce)
{
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    EXPECT_EQ(DsmWorld::take(), "RD_DATA>2 INV>2 WR_GRANT>1"); // contended; rank 2 acknowledges to rank 1
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'd'));
    EXPECT_EQ(home3()->owner, -1);
    EXPECT_EQ(home3()->sharers[1], 1);
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u) << "no recall first";
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_RD_DATA);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'd'));
    DsmWorld::take();
    // While a recall is in flight, the write-back does not settle ownership: the ACK does.
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, 1));
    EXPECT_EQ(DsmWorld::take(), "INV>2 WR_GRANT>1");
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "RECALL>1");
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'e'));
    EXPECT_EQ(home3()->owner, 1) << "busy: left to the ACK";
    DsmWorld::deliver(1, msg(M_ACK, 3, 0, DSM_F_KEEP));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'e'));
    EXPECT_EQ(home3()->owner, -1);
}

// This rank is the home of chunk 3 and the writer: the request and the grant go through its own
// queue, the invalidations to the sharers through "MPI", and their acknowledgements come back here.
TEST_F(DsmMesiHome, AWriterThatIsTheHomeWaitsForTheAcknowledgementsOfTheSharersItInvalidated)
{
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::take();
    bool ack2 = false;
    DsmWorld::responder = [&ack2](const DsmSent &s) {
        if (s.m.type == M_INV && (s.dst == 1 || ack2))
            DsmWorld::deliver(s.dst, msg(M_INV_ACK, s.m.addr));
    };
    D.timeout_ns = 20000000ull; // 20 ms
    sluice_dsm_chain *c = sluice_dsm_malloc(3, CS, SLUICE_DSM_MESI);
    expectWriteTimesOut(c, 3, "rank 2 never acknowledged");
    EXPECT_EQ(DsmWorld::take(), "INV>1 INV>2");
    EXPECT_EQ(home3()->owner, 0);
    EXPECT_EQ(chunk(3)->acks_owed, 1);
    // The next request's recall waits for the missing acknowledgement (rank 2 may still read).
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    DsmWorld::poll();
    EXPECT_EQ(DsmWorld::take(), "") << "recalled, not answered yet";
    EXPECT_EQ(home3()->busy_type, (int)M_WR_REQ);
    DsmWorld::deliver(2, msg(M_INV_ACK, 3));
    DsmWorld::poll();
    ASSERT_EQ(DsmWorld::sent.size(), 1u) << DsmWorld::take();
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_GRANT) << "the late acknowledgement let the recall go";
    EXPECT_EQ(DsmWorld::sent[0].dst, 1);
    DsmWorld::take();
    EXPECT_STREQ(state(3), "I");
    // Rank 1 writes, rank 2 reads (rank 1 stays a sharer); then both answer this rank's write.
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, 'q'));
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "RECALL>1");
    DsmWorld::deliver(1, msg(M_ACK, 3, 0, DSM_F_KEEP));
    EXPECT_EQ(DsmWorld::take(), "RD_DATA>2");
    ack2 = true;
    D.timeout_ns = 2000000000ull;
    char *p = static_cast<char *>(sluice_dsm_write(c));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::string(p, CS), std::string(CS, 'q'));
    EXPECT_EQ(DsmWorld::take(), "INV>1 INV>2");
    EXPECT_EQ(chunk(3)->acks_owed, 0);
    sluice_dsm_release(c);
    DsmWorld::poll();
    EXPECT_EQ(home3()->version, 2u);
}

// This rank is the home of chunk 3 and a sharer: its invalidation goes through its own queue,
// the acknowledgement to the writer through "MPI", at the end of its READ scope.
TEST_F(DsmMesiHome, AHomeThatIsASharerAcknowledgesToTheWriterAfterItsReadScope)
{
    sluice_dsm_chain *c = sluice_dsm_malloc(3, CS, SLUICE_DSM_MESI);
    ASSERT_NE(sluice_dsm_read(c), nullptr);
    EXPECT_EQ(DsmWorld::take(), "") << "its own home: no message through MPI";
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[0].m.arg, 1) << "rank 1 waits for this rank's acknowledgement";
    DsmWorld::take();
    DsmWorld::poll();
    EXPECT_EQ(DsmWorld::take(), "") << "inside the READ scope";
    sluice_dsm_release(c);
    EXPECT_EQ(DsmWorld::take(), "INV_ACK>1");
    EXPECT_STREQ(state(3), "I");
    // Outside a scope: at once.
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'r'));
    readScope(c);
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, UINT64_MAX));
    EXPECT_EQ(DsmWorld::take(), "INV>1 WR_GRANT>2");
    DsmWorld::poll();
    EXPECT_EQ(DsmWorld::take(), "INV_ACK>2");
}

TEST_F(DsmMesiHome, ASizeOtherThanTheFirstIsRefusedWithTheHomesSize)
{
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    DsmWorld::take();
    dsm_msg m = msg(M_WR_REQ, 3);
    m.size = 128;
    DsmWorld::deliver(2, m);
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_ERROR);
    EXPECT_EQ(DsmWorld::sent[0].m.arg, SLUICE_DSM_ESIZE);
    EXPECT_EQ(DsmWorld::sent[0].m.size, CS);
    EXPECT_EQ(home3()->owner, -1) << "nothing granted";
}

TEST_F(DsmMesiHome, EveryWriteBackIsPublishedOnceToEachSubscribedRankAndAnswersWaitingLookups)
{
    DsmWorld::deliver(1, msg(M_LOOKUP, 3));
    EXPECT_EQ(DsmWorld::take(), "") << "a lookup waits for the first write";
    dsm_msg sub = msg(M_SUB, 3);
    sub.kind = K_CHUNK;
    DsmWorld::deliver(2, sub);
    EXPECT_EQ(DsmWorld::take(), "SUB_ACK>2");
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    DsmWorld::take();
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, '1'));
    EXPECT_EQ(DsmWorld::take(), "LOOKUP_REPLY>1 PUBLISH>2");
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, '2'));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_PUBLISH);
    EXPECT_EQ(DsmWorld::sent[0].m.version, 2u);
    DsmWorld::take();
    dsm_msg unsub = sub;
    unsub.type = M_UNSUB;
    DsmWorld::deliver(2, unsub);
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS, '3'));
    EXPECT_EQ(DsmWorld::take(), "") << "unsubscribed";
    // A wrong-sized write-back is dropped, not torn into the home copy.
    DsmWorld::deliver(1, msg(M_WB, 3), std::string(CS / 2, '4'));
    EXPECT_EQ(home3()->version, 3u);
    EXPECT_EQ(std::string(reinterpret_cast<char *>(home3()->data), CS), std::string(CS, '3'));
}

TEST(DsmMesiOps, TheProtocolIsATableChosenByTheChunksProtocol)
{
    const dsm_protocol_ops *ops = dsm_protocol(SLUICE_DSM_MESI);
    ASSERT_NE(ops, nullptr);
    EXPECT_STREQ(ops->name, "mesi");
    EXPECT_NE(ops->acquire, nullptr);
    EXPECT_NE(ops->release, nullptr);
    EXPECT_NE(ops->client_msg, nullptr);
    EXPECT_NE(ops->home_msg, nullptr);
}

} // namespace
