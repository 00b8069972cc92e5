/* SPDX-License-Identifier: MIT */
// The DSM's symbol table (runtime/dsm/symbols.c): where names live (64 bucket chunks at the top
// of the address space, FNV-1a of the name picks one), the bucket's encoding (a 64-bit count,
// then entries of a 64-byte name, base and size), the address symbol_put gives a symbol, and the
// errors (bad names, a full bucket, sizes). One process, no MPI (dsm_world.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dsm_world.h"

extern "C" {
#include "common/hash.h"
}

namespace
{

uint64_t fnv1a(const std::string &s)
{
    return sluice_fnv1a_str(s.c_str()); /* the runtime's own (common/hash.h) */
}

unsigned long bucket_of(const std::string &name)
{
    return DSM_SYM_BASE + (unsigned long)(fnv1a(name) % DSM_SYM_BUCKETS);
}

struct Entry {
    char name[64];
    uint64_t base, size;
};

// The bucket as stored in the DSM, read through a chain like any other chunk.
std::vector<Entry> bucket(unsigned long addr)
{
    size_t sz = 8192;
    int err = 0;
    sluice_dsm_chain *ch = dsm_chain_make(&addr, &sz, 1, SLUICE_DSM_MESI, &err);
    const unsigned char *p = static_cast<const unsigned char *>(dsm_scope_begin(ch, MODE_READ, true, &err));
    std::vector<Entry> v;
    if (!p)
        return v;
    uint64_t count;
    memcpy(&count, p, 8);
    for (uint64_t i = 0; i < count; i++) {
        Entry e;
        memcpy(&e, p + 8 + i * sizeof e, sizeof e);
        v.push_back(e);
    }
    dsm_scope_end(ch);
    return v;
}

TEST(DsmSymbols, BucketsAreTheTop64AddressesAndPutAddressesLieInTheReservedRange)
{
    EXPECT_EQ(DSM_SYM_BASE, ~0ul - 63);
    EXPECT_EQ(dsm_symbol_address("frame.in"),
              DSM_SYMDATA_BASE + ((unsigned long)(fnv1a("frame.in") & 0xffffffffful) << 20));
    for (const char *n :
         {"a", "frame.in", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}) {
        unsigned long a = dsm_symbol_address(n);
        EXPECT_GE(a, DSM_RESERVED) << n;
        EXPECT_LT(a + (1ul << 20), DSM_SYM_BASE) << n << ": 2^20 chunks of room below the buckets";
    }
}

TEST(DsmSymbols, ADefinitionIsAnEntryOfItsBucketAndLookupMakesItsChain)
{
    DsmWorld w(1, 0, 256);
    ASSERT_EQ(sluice_dsm_symbol_define("grid", 4000, 1000), 0);
    std::vector<Entry> b = bucket(bucket_of("grid"));
    ASSERT_EQ(b.size(), 1u);
    EXPECT_STREQ(b[0].name, "grid");
    EXPECT_EQ(b[0].base, 4000u);
    EXPECT_EQ(b[0].size, 1000u);
    sluice_dsm_chain *c = sluice_dsm_symbol_lookup("grid");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(sluice_dsm_chain_base(c), 4000u);
    EXPECT_EQ(sluice_dsm_chain_size(c), 1000u);
    EXPECT_EQ(c->n, 4u);
    // A redefinition replaces the entry, it does not add one.
    ASSERT_EQ(sluice_dsm_symbol_define("grid", 5000, 10), 0);
    b = bucket(bucket_of("grid"));
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].base, 5000u);
    EXPECT_EQ(sluice_dsm_chain_base(sluice_dsm_symbol_lookup("grid")), 5000u);
}

TEST(DsmSymbols, PutPlacesAnUndefinedSymbolByItsNameAndGetReadsItBack)
{
    DsmWorld w(1, 0, 256);
    const char data[] = "eleven bytes and more";
    ASSERT_EQ(sluice_dsm_symbol_put("params", data, sizeof data), 0);
    std::vector<Entry> b = bucket(bucket_of("params"));
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].base, dsm_symbol_address("params"));
    EXPECT_EQ(b[0].size, sizeof data);
    char back[sizeof data] = {};
    ASSERT_EQ(sluice_dsm_symbol_get("params", back, sizeof back), 0);
    EXPECT_STREQ(back, data);
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_symbol_get("params", back, 4), SLUICE_DSM_ESIZE);
    EXPECT_EQ(sluice_dsm_symbol_get("nothing.here", back, 4), SLUICE_DSM_ENOENT);
    EXPECT_EQ(sluice_dsm_symbol_lookup("nothing.here"), nullptr);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sluice_dsm_last_error(), SLUICE_DSM_ENOENT);
    EXPECT_NE(err.find("symbol params is 22 bytes, not 4"), std::string::npos) << err;
    EXPECT_NE(err.find("symbol nothing.here is not defined"), std::string::npos) << err;
}

TEST(DsmSymbols, BadNamesAndAFullBucketAreRefusedWithALine)
{
    DsmWorld w(1, 0, 256);
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_symbol_define("", 1, 1), SLUICE_DSM_EINVAL);
    EXPECT_EQ(sluice_dsm_symbol_define(std::string(64, 'n').c_str(), 1, 1), SLUICE_DSM_EINVAL);
    EXPECT_EQ(sluice_dsm_symbol_define("ok", 1, 0), SLUICE_DSM_EINVAL);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("symbol name must be 1 to 63 characters"), std::string::npos) << err;
    EXPECT_NE(err.find("symbol ok: size 0"), std::string::npos) << err;
    EXPECT_EQ(sluice_dsm_symbol_define(std::string(63, 'n').c_str(), 1, 1), 0) << "63 characters fit";
    // Names of one bucket until it is full: (8192 - 8) / 80 = 102 entries.
    std::vector<std::string> same;
    unsigned long target = bucket_of("s0");
    for (int i = 0; same.size() < 103; i++)
        if (bucket_of("s" + std::to_string(i)) == target)
            same.push_back("s" + std::to_string(i));
    for (size_t i = 0; i < 102; i++)
        ASSERT_EQ(sluice_dsm_symbol_define(same[i].c_str(), 10 * i, 8), 0) << i;
    testing::internal::CaptureStderr();
    EXPECT_EQ(sluice_dsm_symbol_define(same[102].c_str(), 7, 8), SLUICE_DSM_ENOMEM);
    err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("its bucket of the symbol table is full (102 symbols)"), std::string::npos) << err;
    EXPECT_EQ(bucket(target).size(), 102u) << "nothing lost";
    unsigned long base = 0;
    size_t size = 0;
    EXPECT_EQ(dsm_symbol_find(same[101].c_str(), &base, &size), 0);
    EXPECT_EQ(base, 1010u);
}

} // namespace
