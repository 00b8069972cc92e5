/* SPDX-License-Identifier: MIT */
// CPU lists (runtime/common/cpulist.h), the syntax of SLUICE_HELPER_CPUS: what parses, what is refused
// with a reason, and that formatting gives back the kernel's own compact form.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "common/cpulist.h"
}

namespace {

std::string RoundTrip(const char *s)
{
    cpu_set_t set;
    char err[256] = "", out[256] = "";
    if (sluice_cpulist_parse(s, &set, err, sizeof err) != 0)
        return std::string("error: ") + err;
    sluice_cpulist_format(&set, out, sizeof out);
    return out;
}

TEST(CpuList, ParsesSinglesRangesAndMixes)
{
    EXPECT_EQ(RoundTrip("0"), "0");
    EXPECT_EQ(RoundTrip("3"), "3");
    EXPECT_EQ(RoundTrip("2-5"), "2-5");
    EXPECT_EQ(RoundTrip("8,0-1,10-11"), "0-1,8,10-11");
    EXPECT_EQ(RoundTrip("4,5,6,9"), "4-6,9"); // joined as the kernel writes it
    EXPECT_EQ(RoundTrip("7-7"), "7");
    EXPECT_EQ(RoundTrip("1023"), "1023");
}

TEST(CpuList, RefusesWhatIsNotAList)
{
    for (const char *bad : {"", ",", "1,", ",1", "a", "1-", "-1", "3-2", "1 2", "1;2", "0x1", "1024", "1-1024",
                            "99999999999999999999", "auto"}) {
        std::string r = RoundTrip(bad);
        EXPECT_EQ(r.rfind("error: '", 0), 0u) << "'" << bad << "' gave " << r;
        EXPECT_NE(r.find("is not a CPU list"), std::string::npos) << r;
    }
}

TEST(CpuList, MaskOfTheFirst64)
{
    cpu_set_t set;
    char err[128];
    ASSERT_EQ(sluice_cpulist_parse("0,2,63,64,100", &set, err, sizeof err), 0);
    EXPECT_EQ(sluice_cpulist_mask64(&set), (1ull << 0) | (1ull << 2) | (1ull << 63));
}

TEST(CpuList, FormatTruncatesToTheBuffer)
{
    cpu_set_t set;
    char err[128], out[6];
    ASSERT_EQ(sluice_cpulist_parse("0,2,4,6,8,10", &set, err, sizeof err), 0);
    sluice_cpulist_format(&set, out, sizeof out);
    EXPECT_EQ(std::string(out), "0,2,4"); // whole entries only, never a torn number
    CPU_ZERO(&set);
    sluice_cpulist_format(&set, out, sizeof out);
    EXPECT_EQ(std::string(out), "");
}

} // namespace
