/* SPDX-License-Identifier: MIT */
// Misuse of the DSM API is refused with an error code and one line naming the problem, and
// leaves the chain usable (runtime/dsm/api.c); a write inside a READ scope stops the program at
// the faulting instruction with a line naming the chain (chunk.c's guard). One process, no MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dsm_world.h"

namespace
{

// Runs f, expects code and exactly one line on stderr containing line.
void expect_refused(const std::function<int()> &f, int code, const std::string &line)
{
    testing::internal::CaptureStderr();
    int rc = f();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, code) << line;
    EXPECT_EQ(sluice_dsm_last_error(), code) << line;
    EXPECT_NE(err.find(line), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

int as_code(void *p)
{
    return p ? 0 : sluice_dsm_last_error();
}

TEST(DsmMisuse, ScopesOutOfOrderAreRefusedAndTheChainStaysUsable)
{
    DsmWorld w(1, 0, 256);
    sluice_dsm_chain *c = sluice_dsm_malloc(800, 100, SLUICE_DSM_MESI);
    expect_refused([&] { return sluice_dsm_release(c); }, SLUICE_DSM_ESCOPE,
                   "RELEASE of chain @800 without a scope (no READ, WRITE or READWRITE open) (scope misuse)");
    ASSERT_NE(sluice_dsm_read(c), nullptr);
    expect_refused([&] { return as_code(sluice_dsm_write(c)); }, SLUICE_DSM_ESCOPE,
                   "WRITE scope on chain @800, which is already in a READ scope");
    expect_refused([&] { return as_code(sluice_dsm_read(c)); }, SLUICE_DSM_ESCOPE,
                   "READ scope on chain @800, which is already in a READ scope");
    expect_refused([&] { return sluice_dsm_free(c); }, SLUICE_DSM_ESCOPE,
                   "free of chain @800 inside its scope (RELEASE first)");
    std::string mine(100, 'x');
    expect_refused([&] { return sluice_dsm_map(c, mine.data()); }, SLUICE_DSM_ESCOPE,
                   "map of chain @800 inside its scope");
    EXPECT_EQ(sluice_dsm_release(c), 0);
    // Usable after all that.
    char *p = static_cast<char *>(sluice_dsm_readwrite(c));
    ASSERT_NE(p, nullptr);
    p[0] = 'k';
    EXPECT_EQ(sluice_dsm_release(c), 0);
    EXPECT_EQ(sluice_dsm_version(c), 1u);
    expect_refused([&] { return sluice_dsm_release(c); }, SLUICE_DSM_ESCOPE, "RELEASE of chain @800 without");
}

TEST(DsmMisuse, NullChainsUnmappedPutAndBadCountsAreRefused)
{
    DsmWorld w(1, 0, 256);
    expect_refused([] { return as_code(sluice_dsm_read(nullptr)); }, SLUICE_DSM_EINVAL,
                   "READ scope on a NULL chain");
    expect_refused([] { return sluice_dsm_release(nullptr); }, SLUICE_DSM_EINVAL, "RELEASE of a NULL chain");
    expect_refused([] { return sluice_dsm_free(nullptr); }, SLUICE_DSM_EINVAL, "free of a NULL chain");
    sluice_dsm_chain *c = sluice_dsm_malloc(900, 64, SLUICE_DSM_MESI);
    expect_refused([&] { return sluice_dsm_put(c); }, SLUICE_DSM_EINVAL,
                   "put of chain @900, which is not mapped (sluice_dsm_map first)");
    expect_refused([&] { return sluice_dsm_map(c, nullptr); }, SLUICE_DSM_EINVAL,
                   "map: NULL chain or pointer");
    expect_refused([] { return sluice_dsm_barrier(3, 2); }, SLUICE_DSM_EINVAL,
                   "barrier 3: count 2 is not between 1 and the 1 ranks");
    expect_refused([] { return sluice_dsm_barrier(3, 0); }, SLUICE_DSM_EINVAL, "count 0 is not between");
    EXPECT_EQ(sluice_dsm_barrier(3, 1), 0) << "a barrier of one passes";
    EXPECT_EQ(sluice_dsm_wakeup(4), 0);
    EXPECT_EQ(sluice_dsm_sleep(4), 0) << "the wake-up sent before the sleep is not lost";
}

TEST(DsmMisuse, CallsBeforeInitAreRefusedNamingTheFunction)
{
    ASSERT_FALSE(D.up);
    expect_refused([] { return as_code(sluice_dsm_malloc(1, 8, SLUICE_DSM_MESI)); }, SLUICE_DSM_ENOINIT,
                   "sluice_dsm_malloc before sluice_dsm_init() (DSM not initialized)");
    expect_refused([] { return sluice_dsm_barrier(1, 1); }, SLUICE_DSM_ENOINIT,
                   "sluice_dsm_barrier before sluice_dsm_init()");
    EXPECT_EQ(sluice_dsm_rank(), -1);
    EXPECT_EQ(sluice_dsm_size(), 0);
}

TEST(DsmMisuse, EveryErrorCodeHasAName)
{
    for (int code :
         {SLUICE_DSM_EINVAL, SLUICE_DSM_ENOINIT, SLUICE_DSM_ESCOPE, SLUICE_DSM_EBUSY, SLUICE_DSM_ETIMEDOUT,
          SLUICE_DSM_ESIZE, SLUICE_DSM_ENOENT, SLUICE_DSM_ENOMEM, SLUICE_DSM_EMPI})
        EXPECT_STRNE(sluice_dsm_strerror(code), "unknown error") << code;
    EXPECT_STREQ(sluice_dsm_strerror(SLUICE_DSM_OK), "success");
    EXPECT_STREQ(sluice_dsm_strerror(12345), "unknown error");
}

// The chain's pages are read-only during a READ scope: the write faults, the guard names the
// chain, and the program dies of the signal (not silently writing shared data).
TEST(DsmMisuseDeathTest, AWriteInsideAReadScopeStopsTheProgramNamingTheChain)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            DsmWorld w(1, 0, 256);
            dsm_guard_install();
            sluice_dsm_chain *c = sluice_dsm_malloc(42, 64, SLUICE_DSM_MESI);
            volatile char *p = static_cast<volatile char *>(sluice_dsm_read(c));
            p[3] = 'x';
            fprintf(stderr, "the write went through\n");
        },
        "write to DSM chain @42 inside a READ scope \\(use sluice_dsm_write or sluice_dsm_readwrite\\)");
    // The same write inside a WRITE scope is fine, and a READ scope's pages are writable again
    // after RELEASE.
    DsmWorld w(1, 0, 256);
    dsm_guard_install();
    sluice_dsm_chain *c = sluice_dsm_malloc(42, 64, SLUICE_DSM_MESI);
    ASSERT_NE(sluice_dsm_read(c), nullptr);
    sluice_dsm_release(c);
    char *p = static_cast<char *>(sluice_dsm_write(c));
    p[3] = 'x';
    EXPECT_EQ(sluice_dsm_release(c), 0);
}

// The permissions of the mapping holding p, from /proc/self/maps ("r--", "rw-"; "" if none).
std::string perms(const void *p)
{
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], mode[8];
    unsigned long lo, hi;
    std::string found;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, mode) == 3 && a >= lo && a < hi) {
            found = std::string(mode, 3);
            break;
        }
    if (f)
        fclose(f);
    return found;
}

// 's' for a shared mapping, 'p' for a private one (the 4th letter of its permissions).
char mapping_kind(const void *p)
{
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], mode[8];
    unsigned long lo, hi;
    char kind = '?';
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, mode) == 3 && a >= lo && a < hi) {
            kind = mode[3];
            break;
        }
    if (f)
        fclose(f);
    return kind;
}

// A read hit costs no system call: the pages stay read-only from one READ scope to the next,
// and become writable only for a WRITE scope; the runtime fills them (from a message, from
// another chain of the same chunk) through its own writable view, without unprotecting them.
TEST(DsmGuard, PagesStayReadOnlyBetweenReadScopesUntilSomethingWrites)
{
    DsmWorld w(1, 0, 256);
    dsm_guard_install();
    sluice_dsm_chain *c = sluice_dsm_malloc(42, 64, SLUICE_DSM_MESI);
    const char *p = static_cast<const char *>(sluice_dsm_read(c));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(perms(p), "r--") << "inside a READ scope";
    ASSERT_EQ(sluice_dsm_release(c), 0);
    EXPECT_EQ(perms(p), "r--") << "left read-only after RELEASE";
    ASSERT_EQ(sluice_dsm_read(c), p);
    EXPECT_EQ(perms(p), "r--") << "a hit";
    ASSERT_EQ(sluice_dsm_release(c), 0);
    char *q = static_cast<char *>(sluice_dsm_write(c));
    ASSERT_EQ(q, p);
    EXPECT_EQ(perms(q), "rw-") << "a WRITE scope writes";
    q[0] = 'a';
    ASSERT_EQ(sluice_dsm_release(c), 0);
    ASSERT_EQ(sluice_dsm_read(c), p);
    ASSERT_EQ(sluice_dsm_release(c), 0);
    ASSERT_EQ(perms(p), "r--");
    // A write released through another chain of chunk 42 is copied into c's read-only pages.
    unsigned long addrs[] = {47, 42};
    size_t size = 64;
    sluice_dsm_chain *d = sluice_dsm_malloc_lst(addrs, 2, &size, 1, SLUICE_DSM_MESI);
    ASSERT_NE(d, nullptr);
    ASSERT_NE(d, c);
    char *r = static_cast<char *>(sluice_dsm_write(d));
    ASSERT_NE(r, nullptr);
    r += 64; // chunk 42 is d's second
    EXPECT_EQ(r[0], 'a');
    r[0] = 'b';
    ASSERT_EQ(sluice_dsm_release(d), 0);
    EXPECT_EQ(perms(p), "r--") << "copied through the runtime's own view of the memory";
    EXPECT_EQ(p[0], 'b');
    ASSERT_EQ(sluice_dsm_read(c), p);
    EXPECT_EQ(p[0], 'b');
    EXPECT_EQ(perms(p), "r--");
    ASSERT_EQ(sluice_dsm_release(c), 0);
    // A chain freed and made again gets the same memory back, still read-only, and its data
    // from the home, not what the memory held.
    ASSERT_EQ(sluice_dsm_free(d), 0);
    ASSERT_EQ(sluice_dsm_free(c), 0);
    sluice_dsm_chain *e = sluice_dsm_malloc(49, 64, SLUICE_DSM_MESI);
    const char *q2 = static_cast<const char *>(sluice_dsm_read(e));
    EXPECT_EQ(q2, p) << "the pool's memory";
    EXPECT_EQ(perms(q2), "r--");
    EXPECT_EQ(q2[0], 0) << "chunk 49 was never written";
    ASSERT_EQ(sluice_dsm_release(e), 0);
}

// Past 4096 double-mapped chains, a chain gets one private mapping: still guarded, its fills
// unprotect it, and its data stays right.
TEST(DsmGuard, ChainsPastTheSharedLimitUseOnePrivateMapping)
{
    DsmWorld w(1, 0, 64);
    dsm_guard_install();
    std::vector<sluice_dsm_chain *> many;
    for (unsigned long a = 0; a < 4096; a++) {
        many.push_back(sluice_dsm_malloc(100000 + a, 64, SLUICE_DSM_MESI));
        ASSERT_NE(sluice_dsm_read(many.back()), nullptr);
        ASSERT_EQ(sluice_dsm_release(many.back()), 0);
    }
    EXPECT_EQ(mapping_kind(sluice_dsm_read(many[0])), 's') << "the first ones are shared";
    sluice_dsm_release(many[0]);
    sluice_dsm_chain *c = sluice_dsm_malloc(7, 64, SLUICE_DSM_MESI);
    const char *p = static_cast<const char *>(sluice_dsm_read(c));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(mapping_kind(p), 'p') << "one private mapping";
    EXPECT_EQ(perms(p), "r--");
    ASSERT_EQ(sluice_dsm_release(c), 0);
    unsigned long addrs[] = {8, 7};
    size_t size = 64;
    sluice_dsm_chain *d = sluice_dsm_malloc_lst(addrs, 2, &size, 1, SLUICE_DSM_MESI);
    char *q = static_cast<char *>(sluice_dsm_write(d));
    ASSERT_NE(q, nullptr);
    q[64] = 'z';
    ASSERT_EQ(sluice_dsm_release(d), 0);
    EXPECT_EQ(perms(p), "rw-") << "unprotected for the copy";
    ASSERT_EQ(sluice_dsm_read(c), p);
    EXPECT_EQ(p[0], 'z');
    EXPECT_EQ(perms(p), "r--");
    ASSERT_EQ(sluice_dsm_release(c), 0);
}

TEST(DsmMisuseDeathTest, AWriteAfterTheReadScopeEndedStopsTheProgramNamingTheChain)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            DsmWorld w(1, 0, 256);
            dsm_guard_install();
            sluice_dsm_chain *c = sluice_dsm_malloc(43, 64, SLUICE_DSM_MESI);
            volatile char *p = static_cast<volatile char *>(sluice_dsm_read(c));
            sluice_dsm_release(c);
            p[3] = 'x';
            fprintf(stderr, "the write went through\n");
        },
        "write to DSM chain @43 outside a scope \\(the pointer is valid until RELEASE");
}

} // namespace
