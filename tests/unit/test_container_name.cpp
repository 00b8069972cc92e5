/* SPDX-License-Identifier: MIT */
// Container naming: the four real-world shapes, the directory a container lives in, escaping
// that keeps the mapping reversible (two sets never share a name), long names, temporary
// names, recognition of container names, and that a container's own name is never captured by
// the pattern it came from.
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <random>
#include <set>
#include <string>

#include "ckpt/container/container.h"
#include "ckpt/commit/pattern.h"

namespace {

std::string name_of(const std::string &key)
{
    char out[PATH_MAX];
    int rc = sluice_container_name(key.c_str(), out, sizeof out);
    EXPECT_EQ(rc, 0) << key;
    return rc == 0 ? out : "";
}

std::string dir_of(const std::string &key)
{
    char out[PATH_MAX];
    EXPECT_EQ(sluice_container_dir(key.c_str(), out, sizeof out), 0) << key;
    return out;
}

// The inverse of the documented encoding (docs/FORMAT.md), to prove it is reversible.
std::string decode(const std::string &container)
{
    size_t slash = container.rfind('/');
    std::string d = container.substr(0, slash), b = container.substr(slash + 1);
    b.resize(b.size() - strlen(SLUICE_CONTAINER_SUFFIX));
    std::string r;
    for (size_t i = 0; i < b.size(); i++) {
        if (b[i] != '@') {
            r += b[i];
            continue;
        }
        char e = b[++i];
        r += e == 'r' ? "%r" : e == '_' ? "/" : e == '@' ? "@" : "?";
    }
    return d + "/" + r;
}

TEST(ContainerName, TheFourShapes)
{
    EXPECT_EQ(name_of("/run/ckpt.%r"), "/run/ckpt.@r.sluice");
    EXPECT_EQ(name_of("/d/restart_10_%r.dat"), "/d/restart_10_@r.dat.sluice");
    EXPECT_EQ(name_of("/run/chk_10/rank_%r.bin"), "/run/chk_10/rank_@r.bin.sluice");
    EXPECT_EQ(name_of("/run/rank%r/ckpt.dat"), "/run/rank@r@_ckpt.dat.sluice");
    EXPECT_EQ(dir_of("/run/ckpt.%r"), "/run");
    EXPECT_EQ(dir_of("/run/chk_10/rank_%r.bin"), "/run/chk_10");
    EXPECT_EQ(dir_of("/run/rank%r/ckpt.dat"), "/run") << "per-rank directories are virtual";
    EXPECT_EQ(dir_of("/run/r%r/sub/deeper/x"), "/run");
    EXPECT_EQ(name_of("/run/r%r/sub/deeper/x"), "/run/r@r@_sub@_deeper@_x.sluice");
}

TEST(ContainerName, RootAndEscapes)
{
    EXPECT_EQ(name_of("/ckpt.%r"), "/ckpt.@r.sluice");
    EXPECT_EQ(dir_of("/ckpt.%r"), "/");
    EXPECT_EQ(name_of("/d/a@b.%r"), "/d/a@@b.@r.sluice");
    EXPECT_EQ(name_of("/d/100%_%r"), "/d/100%_@r.sluice");
    EXPECT_EQ(name_of("/d/.hidden.%r"), "/d/.hidden.@r.sluice");
    // The shapes that a naive encoding would confuse:
    EXPECT_NE(name_of("/run/rank%r/ckpt.dat"), name_of("/run/rank%r_ckpt.dat"));
    EXPECT_NE(name_of("/run/rank%r/ckpt.dat"), name_of("/run/rank%r@_ckpt.dat"));
    EXPECT_NE(name_of("/run/a/%r"), name_of("/run/a@_%r"));
}

TEST(ContainerName, DeterministicAndReversibleSoNoTwoSetsShareAName)
{
    std::mt19937 rng(5);
    const char alphabet[] = "ab@/%r_.1";
    std::set<std::string> keys, names;
    for (int i = 0; i < 20000; i++) {
        std::string k = "/";
        int len = 1 + rng() % 12;
        for (int j = 0; j < len; j++)
            k += alphabet[rng() % (sizeof alphabet - 1)];
        k += "%r";
        if (k.find("//") != std::string::npos)
            continue;
        if (!keys.insert(k).second)
            continue;
        std::string n = name_of(k);
        ASSERT_EQ(n, name_of(k)) << "deterministic";
        ASSERT_EQ(decode(n), k) << "reversible";
        ASSERT_TRUE(names.insert(n).second) << "collision for " << k;
        ASSERT_TRUE(sluice_container_is_name(n.c_str())) << n;
    }
}

TEST(ContainerName, LongNamesGetAHashAndStayWithinNameMax)
{
    std::string body(400, 'x');
    std::string k1 = "/scratch/" + body + "_%r.dat", k2 = "/scratch/" + body + "_%r.dbt";
    std::string n1 = name_of(k1), n2 = name_of(k2);
    EXPECT_NE(n1, n2);
    EXPECT_EQ(n1, name_of(k1));
    std::string base = n1.substr(n1.rfind('/') + 1);
    EXPECT_LE(base.size(), 225u);
    EXPECT_NE(base.find("@h"), std::string::npos);
    EXPECT_EQ(base.compare(0, 100, body, 0, 100), 0) << "keeps a readable prefix";
    EXPECT_TRUE(sluice_container_is_name(n1.c_str()));
    char tmp[PATH_MAX];
    ASSERT_EQ(sluice_container_temp_name(n1.c_str(), ULONG_MAX, tmp, sizeof tmp), 0);
    std::string tbase = std::string(tmp).substr(std::string(tmp).rfind('/') + 1);
    EXPECT_LE(tbase.size(), (size_t)NAME_MAX) << "the temporary name fits as well";
    // A prefix cut must not leave a dangling '@' escape.
    std::string ats(199, 'y');
    std::string n3 = name_of("/s/" + ats + "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@%r");
    std::string b3 = n3.substr(n3.rfind('/') + 1);
    size_t h = b3.find("@h");
    size_t run = 0;
    while (run < h && b3[h - 1 - run] == '@')
        run++;
    EXPECT_EQ(run % 2, 0u) << b3;
}

TEST(ContainerName, BadKeys)
{
    char out[PATH_MAX];
    EXPECT_EQ(sluice_container_name("relative/ckpt.%r", out, sizeof out), -EINVAL);
    EXPECT_EQ(sluice_container_name("/run/ckpt.0", out, sizeof out), -EINVAL);
    EXPECT_EQ(sluice_container_name("", out, sizeof out), -EINVAL);
    EXPECT_EQ(sluice_container_name("/run/ckpt.%r", out, 10), -ENAMETOOLONG);
    EXPECT_EQ(sluice_container_dir("/run/ckpt.%r", out, 3), -ENAMETOOLONG);
    EXPECT_EQ(sluice_container_temp_name("/run/ckpt.@r.sluice", 1, out, 10), -ENAMETOOLONG);
}

TEST(ContainerName, TempNamesAndRecognition)
{
    char tmp[PATH_MAX];
    ASSERT_EQ(sluice_container_temp_name("/run/chk_10/rank_@r.bin.sluice", 1234, tmp, sizeof tmp), 0);
    EXPECT_STREQ(tmp, "/run/chk_10/.rank_@r.bin.sluice.tmp.1234");
    EXPECT_TRUE(sluice_container_is_temp_name(tmp));
    EXPECT_FALSE(sluice_container_is_name(tmp));
    EXPECT_TRUE(sluice_container_is_reserved(tmp));
    ASSERT_EQ(sluice_container_temp_name("ckpt.@r.sluice", 7, tmp, sizeof tmp), 0);
    EXPECT_STREQ(tmp, ".ckpt.@r.sluice.tmp.7");

    EXPECT_TRUE(sluice_container_is_name("/run/ckpt.@r.sluice"));
    EXPECT_TRUE(sluice_container_is_name("x.sluice"));
    EXPECT_TRUE(sluice_container_is_reserved("/a/x.sluice"));
    EXPECT_FALSE(sluice_container_is_name(".sluice"));
    EXPECT_FALSE(sluice_container_is_name("/run/ckpt.0"));
    EXPECT_FALSE(sluice_container_is_name("/a/b.sluice/c"));
    EXPECT_FALSE(sluice_container_is_name("/a/b.sluice.bak"));
    EXPECT_FALSE(sluice_container_is_temp_name("/a/.b.sluice.tmp."));
    EXPECT_FALSE(sluice_container_is_temp_name("/a/.b.sluice.tmp.12x"));
    EXPECT_FALSE(sluice_container_is_temp_name("/a/b.sluice.tmp.12"));
    EXPECT_FALSE(sluice_container_is_reserved("/a/ckpt.12"));
}

TEST(ContainerName, ContainerOfEachShapeIsNotCapturedByItsPattern)
{
    struct Case {
        const char *pattern, *member;
    } cases[] = {{"/run/ckpt.%r", "/run/ckpt.3"},
                 {"/d/restart_*_%r.dat", "/d/restart_10_3.dat"},
                 {"/run/chk_*/rank_%r.bin", "/run/chk_10/rank_3.bin"},
                 {"/run/rank%r/ckpt.dat", "/run/rank3/ckpt.dat"}};
    for (const Case &c : cases) {
        sluice_pattern_set set;
        char err[512];
        ASSERT_EQ(sluice_pattern_compile(&set, c.pattern, "/", err, sizeof err), 0) << err;
        int rank = -1;
        char key[PATH_MAX];
        ASSERT_TRUE(sluice_pattern_match(&set, c.member, &rank, key, sizeof key)) << c.member;
        EXPECT_EQ(rank, 3);
        std::string container = name_of(key);
        char tmp[PATH_MAX];
        ASSERT_EQ(sluice_container_temp_name(container.c_str(), 42, tmp, sizeof tmp), 0);
        EXPECT_FALSE(sluice_pattern_match(&set, container.c_str(), &rank, key, sizeof key))
            << container;
        EXPECT_FALSE(sluice_pattern_match(&set, tmp, &rank, key, sizeof key)) << tmp;
        sluice_pattern_free(&set);
    }
}

} // namespace
