/* SPDX-License-Identifier: MIT */
// Unit tests of the SLUICE_CAPTURE pattern matcher (runtime/ckpt/commit/pattern.c): the four real-world
// shapes, zero padding, per-rank directories, non-matching paths, path normalization and
// hostile input.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "ckpt/commit/pattern.h"
}

namespace {

struct Set {
    sluice_pattern_set s{};
    char err[512] = "";
    int rc;
    explicit Set(const char *spec, const char *cwd = "/run") { rc = sluice_pattern_compile(&s, spec, cwd, err, sizeof err); }
    ~Set() { sluice_pattern_free(&s); }
    // Returns "rank key" on a match, "" otherwise; also checks that the fast filter agrees.
    std::string match(const char *path)
    {
        char abs[4096], key[4200];
        int rank = -1;
        if (sluice_path_absolute("/run", path, abs, sizeof abs) < 0)
            return "";
        bool full = sluice_pattern_match(&s, abs, &rank, key, sizeof key);
        if (full) {
            EXPECT_TRUE(sluice_pattern_may_match(&s, path, false)) << "filter rejected a match: " << path;
        }
        return full ? std::to_string(rank) + " " + key : "";
    }
    bool dir(const char *abspath)
    {
        int rank;
        return sluice_pattern_match_dir(&s, abspath, &rank);
    }
};

TEST(PatternShapes, PlainRankSuffix)
{
    Set p("ckpt.%r");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("ckpt.0"), "0 /run/ckpt.%r");
    EXPECT_EQ(p.match("ckpt.17"), "17 /run/ckpt.%r");
    EXPECT_EQ(p.match("/run/ckpt.3"), "3 /run/ckpt.%r");
    EXPECT_EQ(p.match("./ckpt.3"), "3 /run/ckpt.%r");
    EXPECT_EQ(p.match("sub/../ckpt.3"), "3 /run/ckpt.%r");
    EXPECT_EQ(p.match("ckpt."), "");
    EXPECT_EQ(p.match("ckpt.3x"), "");
    EXPECT_EQ(p.match("sub/ckpt.3"), "");  // '*' and literals never cross directories
    EXPECT_EQ(p.match("/other/ckpt.3"), "");
}

TEST(PatternShapes, StepNumberAndRank)
{
    Set p("restart_*_%r.dat");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("restart_10_3.dat"), "3 /run/restart_10_%r.dat");
    EXPECT_EQ(p.match("restart_0200_12.dat"), "12 /run/restart_0200_%r.dat");
    EXPECT_EQ(p.match("restart__3.dat"), "3 /run/restart__%r.dat");
    EXPECT_EQ(p.match("restart_10_.dat"), "");
    EXPECT_EQ(p.match("restart_10_3.dat.bak"), "");
}

TEST(PatternShapes, DirectoryPerStep)
{
    Set p("chk_*/rank_%r.bin");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("chk_5/rank_2.bin"), "2 /run/chk_5/rank_%r.bin");
    EXPECT_EQ(p.match("/run/chk_000100/rank_0007.bin"), "7 /run/chk_000100/rank_%r.bin");
    EXPECT_EQ(p.match("chk_5/x/rank_2.bin"), "");
    EXPECT_FALSE(p.dir("/run/chk_5"));  // the step directory is real: the program creates it
}

TEST(PatternShapes, PerRankDirectories)
{
    Set p("rank%r/ckpt.dat");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("rank3/ckpt.dat"), "3 /run/rank%r/ckpt.dat");
    EXPECT_EQ(p.match("rank03/ckpt.dat"), "3 /run/rank%r/ckpt.dat");
    EXPECT_EQ(p.match("rank3/other.dat"), "");
    EXPECT_TRUE(p.dir("/run/rank3"));
    EXPECT_TRUE(p.dir("/run/rank0012"));
    EXPECT_FALSE(p.dir("/run/rank"));
    EXPECT_FALSE(p.dir("/run/rank3x"));
    EXPECT_FALSE(p.dir("/run/rank3/ckpt.dat"));
    EXPECT_FALSE(p.dir("/run"));
}

TEST(PatternShapes, NestedPerRankDirectories)
{
    Set p("out/r%r_d/sub/c.bin");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(p.dir("/run/out/r1_d"));
    EXPECT_TRUE(p.dir("/run/out/r1_d/sub"));
    EXPECT_FALSE(p.dir("/run/out/r1_d/other"));
    EXPECT_EQ(p.match("out/r1_d/sub/c.bin"), "1 /run/out/r%r_d/sub/c.bin");
}

TEST(PatternShapes, RankInSeveralPlaces)
{
    // IOR -u: <dir>/<rank>/<name>.<rank, 8 digits>; every %r must carry the same number.
    Set p("ior/%r/out.%r");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("ior/3/out.00000003"), "3 /run/ior/%r/out.%r");
    EXPECT_EQ(p.match("ior/12/out.00000012"), "12 /run/ior/%r/out.%r");
    EXPECT_EQ(p.match("ior/0/out.00000000"), "0 /run/ior/%r/out.%r");
    EXPECT_EQ(p.match("ior/3/out.00000004"), ""); // the two places disagree
    EXPECT_EQ(p.match("ior/3/out.x"), "");
    EXPECT_TRUE(p.dir("/run/ior/3"));
    EXPECT_FALSE(p.dir("/run/ior/3/out.00000003"));
    EXPECT_FALSE(p.dir("/run/ior"));
    EXPECT_TRUE(sluice_pattern_match_parent(&p.s, "/run/ior"));
    // In one component; the leftmost split whose numbers agree.
    Set q("step_*_r%r_of_*_r%r.bin");
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.match("step_7_r2_of_4_r02.bin"), "2 /run/step_7_r%r_of_4_r%r.bin");
    EXPECT_EQ(q.match("step_7_r2_of_4_r3.bin"), "");
    // A number that is also the rank elsewhere in the name stays literal where no %r is.
    Set n("r%r/%r/d%r_%r");
    ASSERT_EQ(n.rc, 0) << n.err;
    EXPECT_EQ(n.match("r5/5/d05_005"), "5 /run/r%r/%r/d%r_%r");
    EXPECT_TRUE(n.dir("/run/r5/05"));
    EXPECT_FALSE(n.dir("/run/r5/6"));
    Set m("a%rb%rc%rd%re%rf%rg%rh%ri%r"); // nine
    EXPECT_EQ(m.rc, -1);
    EXPECT_NE(std::string(m.err).find("more than"), std::string::npos) << m.err;
}

TEST(PatternRank, ZeroPaddingAndLimits)
{
    Set p("ckpt.%r");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("ckpt.0000"), "0 /run/ckpt.%r");
    EXPECT_EQ(p.match("ckpt.000042"), "42 /run/ckpt.%r");
    EXPECT_EQ(p.match("ckpt.2147483647"), "2147483647 /run/ckpt.%r");
    EXPECT_EQ(p.match("ckpt.2147483648"), "");  // above INT_MAX: not a rank
    EXPECT_EQ(p.match("ckpt.0000000000000000001"), "");  // 19 digits
}

TEST(PatternRank, LeftmostLongestRun)
{
    Set p("ckpt*%r");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("ckpt12"), "12 /run/ckpt%r");
    Set q("v%r1.dat");  // the tail starts with a digit: the rank run ends earlier
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.match("v71.dat"), "7 /run/v%r1.dat");
    EXPECT_EQ(q.match("v1.dat"), "");
}

TEST(PatternSet, SeveralPatternsAndAbsolute)
{
    Set p("/scratch/a_%r:ckpt.%r:rank%r/c");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.s.count, 3);
    EXPECT_EQ(p.match("/scratch/a_9"), "9 /scratch/a_%r");
    EXPECT_EQ(p.match("ckpt.1"), "1 /run/ckpt.%r");
    EXPECT_EQ(p.match("rank2/c"), "2 /run/rank%r/c");
    EXPECT_TRUE(p.s.any_rank_in_dir);
}

TEST(PatternFilter, RejectsWithoutNormalizing)
{
    Set p("ckpt.%r:restart_*_%r.dat");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_FALSE(sluice_pattern_may_match(&p.s, "/etc/passwd", false));        // no digit
    EXPECT_FALSE(sluice_pattern_may_match(&p.s, "/lib/x86_64/libc.so.6", false)); // tail differs
    EXPECT_TRUE(sluice_pattern_may_match(&p.s, "ckpt.4", false));
    EXPECT_TRUE(sluice_pattern_may_match(&p.s, "ckpt.4/.", false));             // let full match decide
    Set d("rank%r/ckpt.dat");
    EXPECT_TRUE(sluice_pattern_may_match(&d.s, "ckpt.dat", true));   // cwd may be /run/rank3
    EXPECT_FALSE(sluice_pattern_may_match(&d.s, "ckpt.dat", false));
    EXPECT_FALSE(sluice_pattern_may_match(&d.s, "/ckpt.dat", true));
    Set empty("");
    EXPECT_FALSE(sluice_pattern_may_match(&empty.s, "ckpt.4", false));
}

TEST(PatternCompile, BadPatternsNameTheProblem)
{
    Set none("ckpt");
    EXPECT_EQ(none.rc, -1);
    EXPECT_NE(std::string(none.err).find("'ckpt'"), std::string::npos) << none.err;
    Set two("a%r%r");
    EXPECT_EQ(two.rc, -1);
    Set emptyItem("a%r::b%r");
    EXPECT_EQ(emptyItem.rc, -1);
    EXPECT_NE(std::string(emptyItem.err).find("empty"), std::string::npos) << emptyItem.err;
    Set eaten("x%r/../ckpt");
    EXPECT_EQ(eaten.rc, -1);
    std::string many;
    for (int i = 0; i < SLUICE_PATTERN_MAX + 1; i++)
        many += (i ? ":" : "") + std::string("p") + std::to_string(i) + "_%r";
    Set tooMany(many.c_str());
    EXPECT_EQ(tooMany.rc, -1);
}

TEST(PatternHostile, OddPathsNeverMatchWrongly)
{
    Set p("ckpt.%r:[%r]");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_EQ(p.match("ckpt.%r"), "");  // a literal "%r" in a path is not a rank
    std::string longdigits = "ckpt." + std::string(4000, '7');
    char abs[8192];
    ASSERT_GT(sluice_path_absolute("/run", longdigits.c_str(), abs, sizeof abs), 0);
    int rank;
    char key[8300];
    EXPECT_FALSE(sluice_pattern_match(&p.s, abs, &rank, key, sizeof key));  // run too long
    Set any("*%r*");
    EXPECT_EQ(any.match("x5y"), "5 /run/x%ry");
    EXPECT_EQ(any.match("x5/y"), "");
    // The key buffer is too small: no match reported rather than an overflow.
    char small[4];
    EXPECT_FALSE(sluice_pattern_match(&p.s, "/run/ckpt.1", &rank, small, sizeof small));
    Set bracket("ckpt[.]%r");
    ASSERT_EQ(bracket.rc, 0);
    EXPECT_EQ(bracket.match("ckpt.5"), "5 /run/ckpt.%r");
}

TEST(PatternParent, FoldersThatHoldMembers)
{
    Set p("chk_*/rank_%r.bin:rank%r/ckpt.dat:/abs/ckpt.%r");
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_TRUE(sluice_pattern_match_parent(&p.s, "/run/chk_10"));
    EXPECT_TRUE(sluice_pattern_match_parent(&p.s, "/run"));  // holds the rank%r folders
    EXPECT_TRUE(sluice_pattern_match_parent(&p.s, "/abs"));
    EXPECT_FALSE(sluice_pattern_match_parent(&p.s, "/run/chk_10/x"));
    EXPECT_FALSE(sluice_pattern_match_parent(&p.s, "/etc"));
}

TEST(PathAbsolute, NormalizesLexically)
{
    char out[64];
    EXPECT_EQ(sluice_path_absolute("/a/b", "c", out, sizeof out), 6);
    EXPECT_STREQ(out, "/a/b/c");
    sluice_path_absolute("/a/b", "../../../c", out, sizeof out);
    EXPECT_STREQ(out, "/c");
    sluice_path_absolute("/a/b", "//x/./y//", out, sizeof out);
    EXPECT_STREQ(out, "/x/y");
    sluice_path_absolute("/", ".", out, sizeof out);
    EXPECT_STREQ(out, "/");
    EXPECT_EQ(sluice_path_absolute("/a", "bbbbbbbbbbbbbbbbbbbbbbbb", out, 8), -1);
}

}  // namespace
