/* SPDX-License-Identifier: MIT */
// Two-phase planner (runtime/ckpt/twophase/planner_twophase.h): direct-versus-shuffle choice, aggregator
// selection, stripe-aligned file domains, rounds, pieces and file-system requests. Every plan
// is checked against invariants that the executor relies on (each shuffled byte sent exactly
// once, to the aggregator that owns it, inside one round window; requests inside runs and
// whole-stripe except at the two ends of a domain) before the case-specific assertions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <vector>

extern "C" {
#include "ckpt/twophase/planner.h"
#include "ckpt/twophase/planner_twophase.h"
}

namespace
{

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

struct TpPlan {
    sluice_tp_plan p{};
    ~TpPlan() { sluice_tp_plan_free(&p); }
};

// Lays members out as the commit engine does (block-aligned, in rank order) from their sizes;
// member i is staged on rank src[i] (default: rank i).
std::vector<sluice_tp_member> Layout(const std::vector<uint64_t> &sizes, uint64_t data_start, uint64_t block,
                                     std::vector<int> src = {})
{
    std::vector<sluice_plan_member> pm;
    for (size_t i = 0; i < sizes.size(); i++)
        pm.push_back({sizes[i], src.empty() ? (int)i : src[i], (int)i});
    sluice_plan p{};
    EXPECT_EQ(sluice_plan_direct(pm.data(), pm.size(), data_start, block, &p), 0);
    std::vector<sluice_tp_member> out(sizes.size());
    for (size_t w = 0; w < p.nwrites; w++)
        out[p.writes[w].member] = {p.writes[w].offset, p.writes[w].size, pm[p.writes[w].member].writer_rank};
    sluice_plan_free(&p);
    return out;
}

sluice_tp_params Params(uint64_t unit, uint64_t block, uint64_t buffer, sluice_cb_write mode,
                        const std::vector<int> &aggr)
{
    return sluice_tp_params{unit, block, buffer, mode, aggr.data(), aggr.size(), nullptr, nullptr};
}

// Invariants of any plan.
void CheckInvariants(const std::vector<sluice_tp_member> &m, const sluice_tp_params &prm,
                     const sluice_tp_plan &p)
{
    const uint64_t unit = prm.stripe_unit;
    ASSERT_EQ(p.nmembers, m.size());
    ASSERT_GT(p.round_size, 0u);
    EXPECT_EQ(p.round_size % unit, 0u) << "a round is a whole number of stripes";
    // Domains: ordered, disjoint, owned by distinct aggregators, and never sharing a stripe.
    for (size_t d = 0; d < p.ndomains; d++) {
        const auto &dom = p.domains[d];
        EXPECT_LT(dom.begin, dom.end);
        EXPECT_EQ(dom.base % unit, 0u);
        EXPECT_LE(dom.base, dom.begin);
        EXPECT_GE(dom.base + unit, dom.begin + 1);
        EXPECT_EQ(dom.nrounds, (dom.end - dom.base + p.round_size - 1) / p.round_size);
        EXPECT_LE(dom.nrounds, p.max_rounds);
        EXPECT_TRUE(std::find(prm.aggregators, prm.aggregators + prm.naggr, dom.aggregator) !=
                    prm.aggregators + prm.naggr);
        if (d > 0) {
            EXPECT_LE((p.domains[d - 1].end - 1) / unit, dom.begin / unit - 1)
                << "domains " << d - 1 << " and " << d << " share a stripe";
        }
        for (size_t e = 0; e < d; e++)
            EXPECT_NE(p.domains[e].aggregator, dom.aggregator) << "an aggregator owns one domain";
    }
    // Every byte of every shuffled member is in exactly one piece, sent by its owner, in the
    // domain and round window that hold its file offset.
    std::map<size_t, uint64_t> covered;
    uint64_t shuffled = 0;
    for (size_t i = 0; i < m.size(); i++)
        if (!p.direct[i]) {
            EXPECT_GE(m[i].src, 0) << "member " << i << " carried over but shuffled";
            EXPECT_GT(m[i].size, 0u);
            shuffled += m[i].size;
        }
    EXPECT_EQ(p.shuffled_bytes, shuffled);
    for (size_t k = 0; k < p.npieces; k++) {
        const auto &pc = p.pieces[k];
        ASSERT_LT(pc.member, m.size());
        ASSERT_LT(pc.domain, p.ndomains);
        EXPECT_FALSE(p.direct[pc.member]);
        EXPECT_EQ(pc.src, m[pc.member].src);
        EXPECT_EQ(pc.file_off, m[pc.member].offset + pc.member_off);
        EXPECT_EQ(pc.member_off, covered[pc.member]) << "pieces of a member in order, no gap";
        covered[pc.member] += pc.size;
        const auto &dom = p.domains[pc.domain];
        uint64_t wb = dom.base + pc.round * p.round_size;
        EXPECT_LT(pc.round, dom.nrounds);
        EXPECT_GE(pc.file_off, std::max(wb, dom.begin));
        EXPECT_LE(pc.file_off + pc.size, std::min(wb + p.round_size, dom.end));
        if (k > 0) {
            const auto &q = p.pieces[k - 1];
            EXPECT_TRUE(q.domain < pc.domain || (q.domain == pc.domain && q.round < pc.round) ||
                        (q.domain == pc.domain && q.round == pc.round && q.file_off < pc.file_off))
                << "pieces sorted by (domain, round, offset)";
        }
    }
    for (size_t i = 0; i < m.size(); i++) {
        if (!p.direct[i]) {
            EXPECT_EQ(covered[i], m[i].size) << "member " << i << " fully shuffled";
        }
    }
    // Requests: inside their domain and round, never over a byte of a member that is not
    // shuffled, covering every shuffled byte, sorted, disjoint.
    uint64_t req_member_bytes = 0, data_end = 0;
    for (const auto &mm : m)
        data_end = std::max(data_end, mm.offset + mm.size);
    for (size_t k = 0; k < p.nrequests; k++) {
        const auto &rq = p.requests[k];
        EXPECT_LE(rq.offset + rq.size, data_end) << "request " << k << " runs into the index";
        ASSERT_LT(rq.domain, p.ndomains);
        const auto &dom = p.domains[rq.domain];
        uint64_t wb = dom.base + rq.round * p.round_size;
        EXPECT_GE(rq.offset, std::max(wb, dom.begin));
        EXPECT_LE(rq.offset + rq.size, std::min(wb + p.round_size, dom.end));
        EXPECT_EQ(rq.full, int(rq.offset % unit == 0 && rq.size % unit == 0));
        if (k > 0) {
            EXPECT_LE(p.requests[k - 1].offset + p.requests[k - 1].size, rq.offset);
        }
        for (size_t i = 0; i < m.size(); i++) {
            uint64_t a = std::max(rq.offset, m[i].offset);
            uint64_t b = std::min(rq.offset + rq.size, m[i].offset + m[i].size);
            if (a < b) {
                EXPECT_FALSE(p.direct[i]) << "request " << k << " overwrites member " << i;
                req_member_bytes += b - a;
            }
        }
    }
    EXPECT_EQ(req_member_bytes, shuffled);
}

// In a domain whose runs are contiguous, only its first and last request may be partial.
void ExpectPartialOnlyAtDomainEnds(const sluice_tp_plan &p)
{
    for (size_t d = 0; d < p.ndomains; d++) {
        std::vector<const sluice_tp_request *> rq;
        for (size_t k = 0; k < p.nrequests; k++)
            if (p.requests[k].domain == d)
                rq.push_back(&p.requests[k]);
        for (size_t k = 1; k + 1 < rq.size(); k++)
            EXPECT_TRUE(rq[k]->full) << "domain " << d << " request " << k << " is partial";
    }
}

// Bytes of shuffled members that go to an aggregator on another node than their own.
uint64_t CrossNodeBytes(const sluice_tp_plan &p, const std::vector<int> &aggr,
                        const std::vector<uint64_t> &aggr_node, const std::vector<uint64_t> &member_node)
{
    uint64_t b = 0;
    for (size_t k = 0; k < p.npieces; k++) {
        const auto &pc = p.pieces[k];
        size_t a = std::find(aggr.begin(), aggr.end(), p.domains[pc.domain].aggregator) - aggr.begin();
        b += aggr_node[a] != member_node[pc.member] ? pc.size : 0;
    }
    return b;
}

uint64_t FullBytes(const sluice_tp_plan &p)
{
    uint64_t b = 0;
    for (size_t k = 0; k < p.nrequests; k++)
        b += p.requests[k].full ? p.requests[k].size : 0;
    return b;
}

// Members in any order plan alike (the planner merges their ascending runs, as an array's rows
// come one run per rank): the same pieces, domains and requests as in file order, the pieces
// naming the same members through the permutation, for members given as k interleaved runs
// (k = 2..9) and fully reversed.
TEST(TwophasePlan, MembersInAnyOrderPlanAlike)
{
    uint64_t state = 0xa11ce;
    auto next = [&state](uint64_t mod) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % mod;
    };
    for (int iter = 0; iter < 100; iter++) {
        size_t n = 2 + next(60);
        std::vector<uint64_t> sizes;
        for (size_t i = 0; i < n; i++)
            sizes.push_back(next(4) == 0 ? 0 : 1 + next(3 * MiB));
        auto m = Layout(sizes, 4096, 4096);
        std::vector<int> aggr = {0, 2, 5};
        auto prm = Params(MiB, 4096, 4 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
        TpPlan want;
        ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &want.p), 0);
        size_t k = 2 + (size_t)(iter % 9);
        for (int reversed : {0, 1}) {
            std::vector<size_t> perm; // perm[j]: the member given j-th
            if (reversed) {
                for (size_t i = n; i-- > 0;)
                    perm.push_back(i);
            } else {
                for (size_t r = 0; r < k; r++)
                    for (size_t i = r; i < n; i += k)
                        perm.push_back(i);
            }
            std::vector<sluice_tp_member> pm;
            std::vector<size_t> at(n);
            for (size_t j = 0; j < n; j++) {
                pm.push_back(m[perm[j]]);
                at[perm[j]] = j;
            }
            TpPlan got;
            ASSERT_EQ(sluice_tp_plan_make(pm.data(), pm.size(), &prm, &got.p), 0);
            CheckInvariants(pm, prm, got.p);
            ASSERT_EQ(want.p.npieces, got.p.npieces) << "iteration " << iter;
            ASSERT_EQ(want.p.ndomains, got.p.ndomains);
            ASSERT_EQ(want.p.nrequests, got.p.nrequests);
            for (size_t x = 0; x < want.p.npieces; x++) {
                const auto &a = want.p.pieces[x], &b = got.p.pieces[x];
                EXPECT_EQ(at[a.member], b.member) << "piece " << x;
                EXPECT_EQ(a.file_off, b.file_off);
                EXPECT_EQ(a.size, b.size);
                EXPECT_EQ(a.member_off, b.member_off);
                EXPECT_EQ(a.domain, b.domain);
                EXPECT_EQ(a.round, b.round);
            }
            for (size_t q = 0; q < want.p.nrequests; q++)
                EXPECT_EQ(want.p.requests[q].offset, got.p.requests[q].offset);
            if (HasFailure()) {
                ADD_FAILURE() << "iteration " << iter << (reversed ? " reversed" : " runs ") << k;
                return;
            }
        }
    }
}

} // namespace

TEST(TwophaseCbWrite, ParsesRomioNames)
{
    sluice_cb_write m;
    ASSERT_EQ(sluice_cb_write_parse("auto", &m), 0);
    EXPECT_EQ(m, SLUICE_CB_WRITE_AUTO);
    ASSERT_EQ(sluice_cb_write_parse("automatic", &m), 0);
    EXPECT_EQ(m, SLUICE_CB_WRITE_AUTO);
    ASSERT_EQ(sluice_cb_write_parse("enable", &m), 0);
    EXPECT_EQ(m, SLUICE_CB_WRITE_ENABLE);
    ASSERT_EQ(sluice_cb_write_parse("disable", &m), 0);
    EXPECT_EQ(m, SLUICE_CB_WRITE_DISABLE);
    EXPECT_EQ(sluice_cb_write_parse("sometimes", &m), -EINVAL);
    EXPECT_STREQ(sluice_cb_write_name(SLUICE_CB_WRITE_ENABLE), "enable");
}

TEST(TwophaseAggregators, OnePerNodeByDefault)
{
    int ranks[] = {0, 1, 2, 3, 4, 5};
    uint64_t nodes[] = {7, 7, 7, 9, 9, 9};
    int out[6];
    ASSERT_EQ(sluice_tp_pick_aggregators(ranks, nodes, 6, 0, out), 2u);
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(out[1], 3);
}

TEST(TwophaseAggregators, CbNodesSpreadsOverNodesRoundRobin)
{
    int ranks[] = {5, 4, 3, 2, 1, 0}; // any input order
    uint64_t nodes[] = {9, 9, 9, 7, 7, 7};
    int out[6];
    ASSERT_EQ(sluice_tp_pick_aggregators(ranks, nodes, 6, 3, out), 3u);
    EXPECT_EQ(std::vector<int>(out, out + 3), (std::vector<int>{0, 1, 3}));
    ASSERT_EQ(sluice_tp_pick_aggregators(ranks, nodes, 6, 4, out), 4u);
    EXPECT_EQ(std::vector<int>(out, out + 4), (std::vector<int>{0, 1, 3, 4}));
}

TEST(TwophaseAggregators, CbNodesAboveRankCountTakesEveryRank)
{
    int ranks[] = {0, 1, 2};
    uint64_t nodes[] = {1, 1, 1};
    int out[3];
    ASSERT_EQ(sluice_tp_pick_aggregators(ranks, nodes, 3, 64, out), 3u);
    EXPECT_EQ(std::vector<int>(out, out + 3), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(sluice_tp_pick_aggregators(ranks, nodes, 0, 0, out), 0u);
}

TEST(TwophasePlan, AllZeroByteMembersNeedNoDomain)
{
    auto m = Layout({0, 0, 0, 0}, 4096, 4096);
    std::vector<int> aggr{0, 2};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_EQ(p.p.ndomains, 0u);
    EXPECT_EQ(p.p.npieces, 0u);
    EXPECT_EQ(p.p.nrequests, 0u);
    for (size_t i = 0; i < m.size(); i++)
        EXPECT_TRUE(p.p.direct[i]);
}

TEST(TwophasePlan, ZeroByteMembersAmongDataAreSkipped)
{
    auto m = Layout({0, 3 * MiB + 17, 0, 1, 5 * MiB, 0}, 4096, 4096);
    std::vector<int> aggr{0, 3};
    auto prm = Params(MiB, 4096, 2 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ExpectPartialOnlyAtDomainEnds(p.p);
    EXPECT_EQ(p.p.ndomains, 2u);
    for (size_t k = 0; k < p.p.npieces; k++)
        EXPECT_NE(m[p.p.pieces[k].member].size, 0u);
}

TEST(TwophasePlan, OneHugeMemberIsSplitOverEveryAggregator)
{
    const uint64_t huge = 2048 * MiB + 12345;
    auto m = Layout({huge}, 4096, 4096);
    std::vector<int> aggr{0, 1, 2, 3};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ExpectPartialOnlyAtDomainEnds(p.p);
    ASSERT_EQ(p.p.ndomains, 4u);
    // Balanced to within a stripe, and only the two ends of the data region are partial.
    for (size_t d = 0; d < 4; d++) {
        uint64_t len = p.p.domains[d].end - p.p.domains[d].begin;
        EXPECT_NEAR(double(len), double(huge) / 4, double(MiB)) << "domain " << d;
    }
    size_t partial = 0;
    for (size_t k = 0; k < p.p.nrequests; k++)
        partial += !p.p.requests[k].full;
    EXPECT_EQ(partial, 2u);
    EXPECT_GE(double(FullBytes(p.p)) / double(huge), 0.99);
    EXPECT_EQ(p.p.max_rounds, 33u); // 512 MiB + a stripe of misalignment over 16 MiB rounds
}

TEST(TwophasePlan, MoreAggregatorsThanDataLeavesSomeWithoutDomain)
{
    auto m = Layout({100, 5000, 7}, 4096, 4096);
    std::vector<int> aggr{0, 1, 2, 3, 4, 5, 6, 7};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ASSERT_EQ(p.p.ndomains, 1u) << "all the data is in one stripe";
    EXPECT_EQ(p.p.nrequests, 1u) << "one request for the whole set";
    EXPECT_EQ(sluice_tp_domain_of(&p.p, p.p.domains[0].aggregator), 0);
    EXPECT_EQ(sluice_tp_domain_of(&p.p, 7), -1);
}

TEST(TwophasePlan, AutoWritesStripeOwningMembersDirect)
{
    // The data starts on a stripe and every member is a whole number of stripes: no stripe is
    // shared, so auto shuffles nothing and enable shuffles everything.
    auto m = Layout({2 * MiB, 4 * MiB, MiB}, MiB, 4096);
    std::vector<int> aggr{0};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_AUTO, aggr);
    TpPlan a;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &a.p), 0);
    CheckInvariants(m, prm, a.p);
    for (size_t i = 0; i < m.size(); i++)
        EXPECT_TRUE(a.p.direct[i]) << "member " << i;
    EXPECT_EQ(a.p.ndomains, 0u);

    prm.mode = SLUICE_CB_WRITE_ENABLE;
    TpPlan e;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &e.p), 0);
    CheckInvariants(m, prm, e.p);
    for (size_t i = 0; i < m.size(); i++)
        EXPECT_FALSE(e.p.direct[i]) << "member " << i;
    EXPECT_EQ(FullBytes(e.p), 7 * MiB);
}

TEST(TwophasePlan, AutoShufflesMembersThatShareStripes)
{
    // A stripe unit that does not divide the sizes: neighbours share stripes. The big member
    // in the middle still owns none of its stripes alone at its ends, so everything shuffles.
    auto m = Layout({MiB + 1000, 10 * MiB + 3, 700 * KiB}, 8192, 4096);
    std::vector<int> aggr{0, 2};
    auto prm = Params(MiB, 4096, 4 * MiB, SLUICE_CB_WRITE_AUTO, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ExpectPartialOnlyAtDomainEnds(p.p);
    for (size_t i = 0; i < m.size(); i++)
        EXPECT_FALSE(p.p.direct[i]) << "member " << i;
}

TEST(TwophasePlan, AutoMixesDirectAndShuffledMembers)
{
    // Member 1 starts and ends on stripe boundaries with nothing else in its stripes.
    std::vector<sluice_tp_member> m{
        {4096, 100, 0}, {MiB, 3 * MiB, 1}, {4 * MiB, 5000, 2}, {4 * MiB + 8192, 20, 3}};
    std::vector<int> aggr{0, 1};
    auto prm = Params(MiB, 4096, MiB, SLUICE_CB_WRITE_AUTO, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_TRUE(p.p.direct[0]) << "alone in its stripe: nothing to gain from a shuffle";
    EXPECT_TRUE(p.p.direct[1]);
    EXPECT_FALSE(p.p.direct[2]);
    EXPECT_FALSE(p.p.direct[3]);
}

TEST(TwophasePlan, DisableShufflesNothing)
{
    auto m = Layout({MiB + 1, 3, 9 * MiB}, 4096, 4096);
    std::vector<int> aggr{0};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_DISABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_EQ(p.p.ndomains, 0u);
    EXPECT_EQ(p.p.npieces, 0u);
}

TEST(TwophasePlan, CarriedMembersAreNeverOverwritten)
{
    // Member 1 comes from the previous version (src -1): the aggregator must write around it.
    auto m = Layout({MiB + 5, 2 * MiB + 7, MiB + 9}, 4096, 4096, {0, -1, 2});
    std::vector<int> aggr{0};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_TRUE(p.p.direct[1]);
    // Two runs, one on each side of member 1 (cut further only where a round ends).
    size_t runs = 0;
    for (size_t i = 0; i < p.p.nrequests; i++) {
        const auto &rq = p.p.requests[i];
        EXPECT_TRUE(rq.offset + rq.size <= m[1].offset || rq.offset >= m[1].offset + m[1].size);
        if (i == 0 || p.p.requests[i - 1].offset + p.p.requests[i - 1].size != rq.offset)
            runs++;
        else
            EXPECT_EQ(rq.offset % p.p.round_size, 0u) << "a run is cut only at a round's end";
    }
    EXPECT_EQ(runs, 2u);
}

TEST(TwophasePlan, TheLargestDomainIsPipelinedInRounds)
{
    // 21 MiB per aggregator with a 16 MiB buffer: rounds of 6 MiB (4 for the largest domain), not
    // one 16 MiB round that would be all received before any of it is written.
    auto m = Layout({21 * MiB, 21 * MiB, 21 * MiB + 5}, MiB, 4096);
    std::vector<int> aggr{0, 1, 2};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_EQ(p.p.round_size, 6 * MiB);
    EXPECT_EQ(p.p.max_rounds, (uint32_t)SLUICE_TP_PIPELINE_ROUNDS);

    // A domain of fewer stripes than that: one stripe per round, never less.
    auto small = Layout({3 * MiB}, MiB, 4096);
    std::vector<int> one{0};
    auto prm1 = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, one);
    TpPlan q;
    ASSERT_EQ(sluice_tp_plan_make(small.data(), small.size(), &prm1, &q.p), 0);
    CheckInvariants(small, prm1, q.p);
    EXPECT_EQ(q.p.max_rounds, 3u);
    EXPECT_EQ(q.p.round_size, MiB);
}

TEST(TwophasePlan, RoundsAreWholeStripesOfTheBuffer)
{
    auto m = Layout({40 * MiB}, MiB, 4096);
    std::vector<int> aggr{0};
    auto prm = Params(MiB, 4096, 3 * MiB + 5, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_EQ(p.p.round_size, 3 * MiB);
    EXPECT_EQ(p.p.max_rounds, 14u);
    EXPECT_EQ(p.p.nrequests, 14u);
    EXPECT_EQ(FullBytes(p.p), 40 * MiB);

    prm.buffer_size = 100 * KiB; // below a stripe: one stripe per round
    TpPlan q;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &q.p), 0);
    CheckInvariants(m, prm, q.p);
    EXPECT_EQ(q.p.round_size, MiB);
    EXPECT_EQ(q.p.max_rounds, 40u);
}

TEST(TwophasePlan, StripeUnitThatIsNotAPowerOfTwo)
{
    const uint64_t unit = 192 * KiB;
    auto m = Layout({1, 500 * KiB, 3 * MiB + 1, 0, 64 * KiB, 7 * MiB + 333}, 4096, 4096);
    std::vector<int> aggr{0, 1, 2};
    auto prm = Params(unit, 4096, MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ExpectPartialOnlyAtDomainEnds(p.p);
    EXPECT_EQ(p.p.round_size, 5 * unit);
    EXPECT_EQ(p.p.ndomains, 3u);
}

TEST(TwophasePlan, ManyMembersManyAggregatorsHighAlignedShare)
{
    // 16 uneven members, 4 aggregators: at least 95% of the bytes go in whole-stripe requests.
    std::vector<uint64_t> sizes;
    uint64_t total = 0;
    for (int r = 0; r < 16; r++) {
        sizes.push_back(4 * MiB + uint64_t(r) * 123457);
        total += sizes.back();
    }
    auto m = Layout(sizes, 4096, 4096);
    std::vector<int> aggr{0, 4, 8, 12};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_AUTO, aggr);
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ExpectPartialOnlyAtDomainEnds(p.p);
    EXPECT_EQ(p.p.ndomains, 4u);
    EXPECT_GE(double(FullBytes(p.p)) / double(total), 0.95);
}

TEST(TwophasePlan, NodeDomainsFollowEachNodesData)
{
    // bench/ckpt_io.c's uneven shares of 64 MiB over 3 ranks, one per node: cut by bytes, a
    // third of the data crosses links; cut by node, at most a stripe per boundary.
    std::vector<uint64_t> sizes{14913080, 22365522, 29830262};
    auto m = Layout(sizes, 4096, 4096);
    std::vector<int> aggr{0, 1, 2};
    std::vector<uint64_t> an{70, 71, 72}, mn{70, 71, 72};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_AUTO, aggr);
    TpPlan bytes;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &bytes.p), 0);
    CheckInvariants(m, prm, bytes.p);
    EXPECT_GT(CrossNodeBytes(bytes.p, aggr, an, mn), 10 * MiB);

    prm.aggr_node = an.data();
    prm.member_node = mn.data();
    TpPlan node;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &node.p), 0);
    CheckInvariants(m, prm, node.p);
    ExpectPartialOnlyAtDomainEnds(node.p);
    ASSERT_EQ(node.p.ndomains, 3u);
    for (size_t d = 0; d < 3; d++)
        EXPECT_EQ(node.p.domains[d].aggregator, int(d));
    EXPECT_LE(CrossNodeBytes(node.p, aggr, an, mn), 2 * MiB / 2) << "half a stripe per boundary at most";
    EXPECT_GE(double(FullBytes(node.p)) / double(14913080 + 22365522 + 29830262), 0.95);
}

TEST(TwophasePlan, NodeDomainsWithSeveralRanksPerNode)
{
    // Ranks 0-2 on node 5, 3-5 on node 9 (block placement), the home's node's aggregator is
    // rank 1: each node's aggregator gets its node's stretch, whatever the rank order.
    std::vector<uint64_t> sizes{3 * MiB + 7, 5 * MiB + 4099, 2 * MiB + 1, 4 * MiB + 3, 1000, 6 * MiB + 77};
    auto m = Layout(sizes, 4096, 4096);
    std::vector<int> aggr{3, 1};
    std::vector<uint64_t> an{9, 5}, mn{5, 5, 5, 9, 9, 9};
    auto prm = Params(MiB, 4096, 4 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    prm.aggr_node = an.data();
    prm.member_node = mn.data();
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ASSERT_EQ(p.p.ndomains, 2u);
    EXPECT_EQ(p.p.domains[0].aggregator, 1);
    EXPECT_EQ(p.p.domains[1].aggregator, 3);
    EXPECT_LE(CrossNodeBytes(p.p, aggr, an, mn), MiB / 2);
}

TEST(TwophasePlan, NodeDomainsFallBackToBytesWhenNodesInterleave)
{
    // Round-robin placement: node 1 holds ranks 0 and 2, node 2 ranks 1 and 3, so a node's data
    // is not one stretch; domains are cut by bytes, in aggregator order. Likewise when a node
    // has two aggregators (SLUICE_CB_NODES above the node count).
    auto m = Layout({4 * MiB + 5, 4 * MiB + 9, 4 * MiB + 1, 4 * MiB + 3}, 4096, 4096);
    std::vector<int> aggr{0, 1};
    std::vector<uint64_t> an{1, 2}, mn{1, 2, 1, 2};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    TpPlan bytes;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &bytes.p), 0);
    prm.aggr_node = an.data();
    prm.member_node = mn.data();
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    ASSERT_EQ(p.p.ndomains, bytes.p.ndomains);
    for (size_t d = 0; d < p.p.ndomains; d++) {
        EXPECT_EQ(p.p.domains[d].begin, bytes.p.domains[d].begin);
        EXPECT_EQ(p.p.domains[d].aggregator, bytes.p.domains[d].aggregator);
    }
    std::vector<uint64_t> two{1, 1}, same{1, 1, 1, 1};
    prm.aggr_node = two.data();
    prm.member_node = same.data();
    TpPlan q;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &q.p), 0);
    CheckInvariants(m, prm, q.p);
    ASSERT_EQ(q.p.ndomains, bytes.p.ndomains);
    EXPECT_EQ(q.p.domains[0].end, bytes.p.domains[0].end);
}

TEST(TwophasePlan, NodeDomainsGiveAStretchInsideOneStripeToANeighbour)
{
    // Node 2's stretch lies inside one stripe: it gets no domain, its bytes go to a neighbour's
    // aggregator, and no stripe is written by two aggregators.
    auto m = Layout({MiB + 300 * KiB, 200 * KiB, 3 * MiB}, 4096, 4096);
    std::vector<int> aggr{0, 1, 2};
    std::vector<uint64_t> an{1, 2, 3}, mn{1, 2, 3};
    auto prm = Params(MiB, 4096, 16 * MiB, SLUICE_CB_WRITE_AUTO, aggr);
    prm.aggr_node = an.data();
    prm.member_node = mn.data();
    TpPlan p;
    ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0);
    CheckInvariants(m, prm, p.p);
    EXPECT_EQ(sluice_tp_domain_of(&p.p, 1), -1);
    EXPECT_EQ(p.p.ndomains, 2u);
}

TEST(TwophasePlan, RejectsBadParameters)
{
    auto m = Layout({5000}, 4096, 4096);
    std::vector<int> aggr{0};
    TpPlan p;
    auto prm = Params(MiB, 3000, MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    EXPECT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), -EINVAL) << "block not 2^k";
    prm = Params(2048, 4096, MiB, SLUICE_CB_WRITE_ENABLE, aggr);
    EXPECT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), -EINVAL) << "unit < block";
    std::vector<int> none;
    prm = Params(MiB, 4096, MiB, SLUICE_CB_WRITE_ENABLE, none);
    EXPECT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), -EINVAL) << "no aggregator";
    EXPECT_EQ(sluice_tp_plan_make(nullptr, 1, &prm, &p.p), -EINVAL);
}

TEST(TwophasePlan, RandomLayoutsKeepEveryInvariant)
{
    // Many layouts with a fixed seed: member counts, sizes (zero, tiny, around a stripe, many
    // stripes), carried-over members, stripe units (powers of two or not), buffer sizes,
    // aggregator counts and modes. The invariants are checked on each plan.
    uint64_t state = 0x5eed;
    auto next = [&state](uint64_t mod) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % mod;
    };
    const uint64_t units[] = {4096, 8192, 64 * KiB, 192 * KiB, MiB, 3 * MiB};
    for (int iter = 0; iter < 300; iter++) {
        size_t n = 1 + next(40);
        uint64_t unit = units[next(6)];
        std::vector<uint64_t> sizes;
        std::vector<int> src;
        for (size_t i = 0; i < n; i++) {
            switch (next(5)) {
            case 0:
                sizes.push_back(0);
                break;
            case 1:
                sizes.push_back(1 + next(100));
                break;
            case 2:
                sizes.push_back(unit - 50 + next(100));
                break;
            case 3:
                sizes.push_back(next(5 * unit));
                break;
            default:
                sizes.push_back(unit * (1 + next(4)));
                break;
            }
            src.push_back(next(8) == 0 ? -1 : int(i % 7));
        }
        auto m = Layout(sizes, 4096 * (1 + next(3)), 4096, src);
        std::vector<int> aggr;
        for (int a = 0, na = 1 + int(next(9)); a < na; a++)
            aggr.push_back(a * 3);
        auto prm = Params(unit, 4096, unit / 2 + next(8 * unit), sluice_cb_write(next(3)), aggr);
        // Half the layouts with nodes: ranks in blocks of 1-3 per node (often one stretch per
        // node), or at random.
        std::vector<uint64_t> an, mn;
        if (next(2)) {
            uint64_t per = 1 + next(3), random = next(3) == 0;
            for (int a : aggr)
                an.push_back(random ? next(4) : uint64_t(a) / per);
            for (const auto &mm : m)
                mn.push_back(mm.src < 0 ? 0 : random ? next(4) : uint64_t(mm.src) / per);
            prm.aggr_node = an.data();
            prm.member_node = mn.data();
        }
        TpPlan p;
        ASSERT_EQ(sluice_tp_plan_make(m.data(), m.size(), &prm, &p.p), 0) << "iteration " << iter;
        CheckInvariants(m, prm, p.p);
        if (HasFailure()) {
            ADD_FAILURE() << "iteration " << iter << ": n=" << n << " unit=" << unit;
            return;
        }
    }
}
