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
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_write(c), nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_ETIMEDOUT);
    EXPECT_NE(err.find("write of chunk @2: no answer within SLUICE_DSM_TIMEOUT"), std::string::npos) << err;
    EXPECT_EQ(DsmWorld::take(), "WR_REQ>2");
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

TEST_F(DsmMesiHome, AWriteInvalidatesEverySharerAndIsGrantedWhenAllHaveAnswered)
{
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::take();
    DsmWorld::deliver(2, msg(M_WR_REQ, 3, 0));
    EXPECT_EQ(DsmWorld::take(), "INV>1") << "the requester is not invalidated";
    EXPECT_EQ(home3()->busy_type, (int)M_WR_REQ);
    // Another request meanwhile waits in the queue.
    DsmWorld::deliver(1, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "");
    DsmWorld::deliver(1, msg(M_ACK, 3));
    ASSERT_GE(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.type, (uint32_t)M_WR_GRANT);
    EXPECT_EQ(DsmWorld::sent[0].dst, 2);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_CONTENDED)
        << "rank 2 was a sharer of the current version: no data; rank 1's copy was taken";
    EXPECT_EQ(home3()->owner, 2);
    // The queued read runs next: the owner is recalled (keep), then the reader gets its data.
    EXPECT_EQ(DsmWorld::take(), "WR_GRANT>2 RECALL>2");
    DsmWorld::deliver(2, msg(M_WB, 3), std::string(CS, 'n'));
    EXPECT_EQ(home3()->version, 1u);
    dsm_msg ack = msg(M_ACK, 3, 0, DSM_F_KEEP);
    DsmWorld::deliver(2, ack);
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
    DsmWorld::take(); // INV>1
    DsmWorld::deliver(1, msg(M_ACK, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_DATA | DSM_F_CONTENDED) << "version 0 is not the current 1";
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'a'));
    DsmWorld::take();
    // PUT: never data.
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX, DSM_F_NODATA));
    EXPECT_EQ(DsmWorld::take(), "RECALL>2");
    DsmWorld::deliver(2, msg(M_ACK, 3));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].m.flags, DSM_F_CONTENDED) << "no data; the owner's copy was taken";
    EXPECT_EQ(DsmWorld::sent[0].payload, "");
}

TEST_F(DsmMesiHome, AWriterThatGivesUpOwnershipWithItsWriteBackLetsTheNextReaderInAtOnce)
{
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    DsmWorld::deliver(1, msg(M_WR_REQ, 3, UINT64_MAX));
    DsmWorld::deliver(2, msg(M_ACK, 3));
    DsmWorld::take(); // RD_DATA>2 INV>2 WR_GRANT>1 (contended)
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
    DsmWorld::take(); // INV>2
    DsmWorld::deliver(2, msg(M_ACK, 3));
    DsmWorld::take(); // WR_GRANT>1
    DsmWorld::deliver(2, msg(M_RD_REQ, 3));
    EXPECT_EQ(DsmWorld::take(), "RECALL>1");
    DsmWorld::deliver(1, msg(M_WB, 3, 0, DSM_F_DOWNGRADE), std::string(CS, 'e'));
    EXPECT_EQ(home3()->owner, 1) << "busy: left to the ACK";
    DsmWorld::deliver(1, msg(M_ACK, 3, 0, DSM_F_KEEP));
    ASSERT_EQ(DsmWorld::sent.size(), 1u);
    EXPECT_EQ(DsmWorld::sent[0].payload, std::string(CS, 'e'));
    EXPECT_EQ(home3()->owner, -1);
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
