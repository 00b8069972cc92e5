/* SPDX-License-Identifier: MIT */
// A set laid out as a global array is planned by the home over its (at most two) regions, and
// each participant cuts its own pieces from the layout record (planner_array.h). Both must give
// exactly what planning every row of every rank gives: the same domains, rounds and requests,
// and for every rank the same pieces in the same order. Checked over many random layouts
// (1-3 dimensions, C and Fortran order, headers or none, odd element sizes, members staged on
// other ranks, several aggregators, rounds smaller than a domain).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" {
#include "ckpt/twophase/planner_array.h"
#include "ckpt/twophase/planner_twophase.h"
}

namespace
{

struct TpPlan {
    sluice_tp_plan p{};
    ~TpPlan() { sluice_tp_plan_free(&p); }
};

uint64_t RoundUp(uint64_t v, uint64_t unit)
{
    return (v + unit - 1) / unit * unit;
}

struct Case {
    sluice_array a{};
    std::vector<int> src; // member i (rank i's) staged on src[i]
    std::vector<int> aggr;
    uint64_t unit = 0, block = 0, buffer = 0;
};

Case RandomCase(std::mt19937 &rng)
{
    auto pick = [&](int lo, int hi) { return (int)(rng() % (unsigned)(hi - lo + 1)) + lo; };
    Case c;
    sluice_array &a = c.a;
    a.ndims = pick(1, 3);
    const uint32_t elems[] = {1, 2, 3, 4, 8};
    a.elem = elems[pick(0, 4)];
    const uint64_t headers[] = {0, 0, 5, 64, 100};
    a.header = headers[pick(0, 4)];
    a.fortran = pick(0, 1);
    a.nprocs = (uint32_t)pick(2, 12);
    for (int d = 0; d < a.ndims; d++)
        a.shape[d] = (uint64_t)pick(1, a.ndims == 1 ? 3000 : a.ndims == 2 ? 90 : 30);
    // An explicit grid now and then (any factorization of nprocs), else MPI_Dims_create's.
    if (pick(0, 2) == 0) {
        uint32_t left = a.nprocs;
        for (int d = 0; d < a.ndims; d++) {
            uint32_t f = 1;
            if (d == a.ndims - 1)
                f = left;
            else
                for (uint32_t t = 1; t <= left; t++)
                    if (left % t == 0 && pick(0, 1))
                        f = t;
            a.grid[d] = f;
            left /= f;
        }
    }
    c.block = (uint64_t)1 << pick(3, 9);
    c.unit = c.block << pick(0, 3);
    c.buffer = c.unit * (uint64_t)pick(1, 6);
    uint64_t start = RoundUp((uint64_t)pick(64, 5000), c.block);
    a.header_offset = RoundUp(start, c.unit);
    a.array_offset = RoundUp(a.header_offset + a.header * a.nprocs, c.unit);
    for (uint32_t r = 0; r < a.nprocs; r++)
        c.src.push_back(pick(0, 3) == 0 ? pick(0, (int)a.nprocs - 1) : (int)r);
    int naggr = pick(1, 4);
    for (int r = 0; r < (int)a.nprocs && (int)c.aggr.size() < naggr; r++)
        if (pick(0, 1) || (int)a.nprocs - r <= naggr - (int)c.aggr.size())
            c.aggr.push_back(r);
    return c;
}

sluice_tp_params Params(const Case &c)
{
    return sluice_tp_params{c.unit,        c.block,       c.buffer, SLUICE_CB_WRITE_ENABLE,
                            c.aggr.data(), c.aggr.size(), nullptr,  nullptr};
}

// The plan of every row, pieces folded back into member numbering (as the home did).
void PlanEveryRow(const Case &c, TpPlan &plan)
{
    std::vector<int> rank(c.a.nprocs);
    for (uint32_t r = 0; r < c.a.nprocs; r++)
        rank[r] = (int)r;
    sluice_tp_member *tm = nullptr;
    sluice_tp_array_range *rs = nullptr;
    size_t nx = 0;
    ASSERT_EQ(sluice_tp_array_expand(&c.a, rank.data(), c.src.data(), rank.size(), &tm, &rs, &nx), 0);
    sluice_tp_params prm = Params(c);
    ASSERT_EQ(sluice_tp_plan_make(tm, nx, &prm, &plan.p), 0);
    for (size_t k = 0; k < plan.p.npieces; k++) {
        sluice_tp_piece &pc = plan.p.pieces[k];
        pc.member_off += rs[pc.member].logical;
        pc.member = rs[pc.member].member;
    }
    free(tm);
    free(rs);
}

void CheckCase(const Case &c, const std::string &what)
{
    TpPlan full, regions;
    PlanEveryRow(c, full);
    if (::testing::Test::HasFatalFailure())
        return;
    sluice_tp_member reg[2];
    size_t nreg = sluice_tp_array_regions(&c.a, 0, reg);
    sluice_tp_params prm = Params(c);
    ASSERT_EQ(sluice_tp_plan_make(reg, nreg, &prm, &regions.p), 0) << what;

    // The home's plan of the regions: the same domains, rounds and requests.
    ASSERT_EQ(regions.p.ndomains, full.p.ndomains) << what;
    ASSERT_EQ(regions.p.round_size, full.p.round_size) << what;
    for (size_t g = 0; g < full.p.ndomains; g++) {
        const sluice_tp_domain &x = full.p.domains[g], &y = regions.p.domains[g];
        ASSERT_EQ(x.aggregator, y.aggregator) << what;
        ASSERT_EQ(x.begin, y.begin) << what;
        ASSERT_EQ(x.end, y.end) << what;
        ASSERT_EQ(x.base, y.base) << what;
        ASSERT_EQ(x.nrounds, y.nrounds) << what;
    }
    ASSERT_EQ(regions.p.nrequests, full.p.nrequests) << what;
    for (size_t q = 0; q < full.p.nrequests; q++) {
        const sluice_tp_request &x = full.p.requests[q], &y = regions.p.requests[q];
        ASSERT_TRUE(x.domain == y.domain && x.round == y.round && x.offset == y.offset && x.size == y.size &&
                    x.full == y.full)
            << what << " request " << q;
    }

    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    ASSERT_EQ(sluice_array_grid(&c.a, c.a.nprocs, grid, nullptr, 0), 0);
    for (int r = 0; r < (int)c.a.nprocs; r++) {
        // Rank r's own members, numbered in member order, as a share lists them.
        std::vector<sluice_tp_array_who> mine;
        std::vector<size_t> local(c.a.nprocs, SIZE_MAX);
        for (uint32_t i = 0; i < c.a.nprocs; i++)
            if (c.src[i] == r) {
                local[i] = mine.size();
                mine.push_back({(int)i, r, mine.size()});
            }
        long own = sluice_tp_domain_of(&regions.p, r);
        // The members that touch its domain, found from their bounds as the home finds them.
        std::vector<sluice_tp_array_who> who;
        for (uint32_t i = 0; own >= 0 && i < c.a.nprocs; i++) {
            uint64_t head, lo, hi;
            sluice_tp_array_bounds(&c.a, grid, (int)i, &head, &lo, &hi);
            const sluice_tp_domain &d = regions.p.domains[own];
            bool h = c.a.header && head < d.end && head + c.a.header > d.begin;
            bool rows = lo < hi && lo < d.end && hi > d.begin;
            if (h || rows)
                who.push_back({(int)i, c.src[i], c.src[i] == r ? local[i] : SIZE_MAX});
        }
        sluice_tp_piece *got = nullptr;
        size_t ngot = 0, got_bytes = 0;
        ASSERT_EQ(sluice_tp_array_share(&c.a, regions.p.domains, regions.p.ndomains, regions.p.round_size,
                                        mine.data(), mine.size(), own, who.data(), who.size(), &got, &ngot,
                                        &got_bytes),
                  0)
            << what;
        std::vector<sluice_tp_piece> want;
        for (size_t k = 0; k < full.p.npieces; k++) {
            sluice_tp_piece pc = full.p.pieces[k];
            if (pc.src != r && (long)pc.domain != own)
                continue;
            pc.member = pc.src == r ? local[pc.member] : SIZE_MAX;
            want.push_back(pc);
        }
        ASSERT_EQ(ngot, want.size()) << what << " rank " << r;
        for (size_t k = 0; k < ngot; k++) {
            const sluice_tp_piece &x = want[k], &y = got[k];
            ASSERT_TRUE(x.member == y.member && x.member_off == y.member_off && x.file_off == y.file_off &&
                        x.size == y.size && x.src == y.src && x.domain == y.domain && x.round == y.round)
                << what << " rank " << r << " piece " << k << ": want file " << x.file_off << "+" << x.size
                << " member " << x.member << "@" << x.member_off << " src " << x.src << " domain " << x.domain
                << " round " << x.round << "; got file " << y.file_off << "+" << y.size << " member "
                << y.member << "@" << y.member_off << " src " << y.src << " domain " << y.domain << " round "
                << y.round;
        }
        sluice_tp_pieces_free(got, got_bytes);
    }
}

std::string Describe(const Case &c)
{
    char buf[512];
    sluice_array_format(&c.a, buf, sizeof buf);
    return std::string(buf) + " unit " + std::to_string(c.unit) + " buffer " + std::to_string(c.buffer) +
           " aggregators " + std::to_string(c.aggr.size());
}

} // namespace

TEST(TwophaseArrayShare, TheSeedsCubeOnEightRanks)
{
    Case c;
    char err[256];
    ASSERT_EQ(sluice_array_parse("header=64,dtype=f8,shape=48x48x48,grid=auto", &c.a, err, sizeof err), 0)
        << err;
    c.a.nprocs = 8;
    c.block = 4096;
    c.unit = 65536;
    c.buffer = 16 << 20;
    c.a.header_offset = 65536;
    c.a.array_offset = 131072;
    for (int r = 0; r < 8; r++)
        c.src.push_back(r);
    c.aggr = {0, 4};
    CheckCase(c, Describe(c));
}

TEST(TwophaseArrayShare, EqualsThePlanOfEveryRow)
{
    std::mt19937 rng(20261207);
    for (int i = 0; i < 400; i++) {
        Case c = RandomCase(rng);
        CheckCase(c, "case " + std::to_string(i) + ": " + Describe(c));
        if (::testing::Test::HasFatalFailure())
            return;
    }
}

TEST(TwophaseArrayShare, RejectsARankOutsideTheJob)
{
    Case c;
    char err[256];
    ASSERT_EQ(sluice_array_parse("dtype=f4,shape=16x16,grid=auto", &c.a, err, sizeof err), 0) << err;
    c.a.nprocs = 4;
    c.a.array_offset = 4096;
    sluice_tp_domain d{0, 4096, 4096 + 1024, 4096, 1};
    sluice_tp_array_who bad{4, 0, 0};
    sluice_tp_piece *out = nullptr;
    size_t n = 0, bytes = 0;
    EXPECT_EQ(sluice_tp_array_share(&c.a, &d, 1, 4096, &bad, 1, -1, nullptr, 0, &out, &n, &bytes), -EINVAL);
    EXPECT_EQ(out, nullptr);
}
