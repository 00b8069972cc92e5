/* SPDX-License-Identifier: MIT */
// Configuration: value parsers, validation messages, "did you mean", and that docs/ENV.md
// documents every variable of the table.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "config/config.h"
}

namespace {

struct Parsed {
    int rc;
    struct sluice_config cfg;
    std::string err;
    std::vector<std::string> warnings;
};

void collect(const char *line, void *ctx) { static_cast<std::vector<std::string> *>(ctx)->push_back(line); }

Parsed parse(std::vector<std::string> env)
{
    std::vector<char *> envp;
    for (auto &e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    Parsed p{};
    char err[512] = "";
    p.rc = sluice_config_parse(&p.cfg, envp.data(), err, sizeof err, collect, &p.warnings);
    p.err = err;
    return p;
}

TEST(SizeParsing, AcceptsPlainNumbersAndBinarySuffixes)
{
    uint64_t v = 0;
    EXPECT_EQ(0, sluice_parse_size("0", &v));
    EXPECT_EQ(0u, v);
    EXPECT_EQ(0, sluice_parse_size("4096", &v));
    EXPECT_EQ(4096u, v);
    EXPECT_EQ(0, sluice_parse_size("16M", &v));
    EXPECT_EQ(16u << 20, v);
    EXPECT_EQ(0, sluice_parse_size("1GiB", &v));
    EXPECT_EQ(1ull << 30, v);
    EXPECT_EQ(0, sluice_parse_size("2g", &v));
    EXPECT_EQ(2ull << 30, v);
    EXPECT_EQ(0, sluice_parse_size("3 KB", &v));
    EXPECT_EQ(3u << 10, v);
    EXPECT_EQ(0, sluice_parse_size("1T", &v));
    EXPECT_EQ(1ull << 40, v);
}

TEST(SizeParsing, RejectsGarbageNegativeAndOverflow)
{
    uint64_t v = 7;
    for (const char *bad : {"", "M", "-1", "12Q", "1.5G", "16MM", " 16M", "99999999999999999999",
                            "20000000000T"})
        EXPECT_NE(0, sluice_parse_size(bad, &v)) << bad;
    EXPECT_EQ(7u, v);
}

TEST(BoolParsing, UsualSpellings)
{
    bool b;
    for (const char *yes : {"1", "yes", "Y", "on", "TRUE", "enable"}) {
        ASSERT_EQ(0, sluice_parse_bool(yes, &b)) << yes;
        EXPECT_TRUE(b) << yes;
    }
    for (const char *no : {"0", "no", "N", "off", "False", "disable", ""}) {
        ASSERT_EQ(0, sluice_parse_bool(no, &b)) << no;
        EXPECT_FALSE(b) << no;
    }
    EXPECT_NE(0, sluice_parse_bool("maybe", &b));
}

TEST(ConfigParse, DefaultsWhenNothingIsSetAndInert)
{
    Parsed p = parse({"PATH=/bin", "HOME=/root"});
    ASSERT_EQ(0, p.rc);
    EXPECT_FALSE(p.cfg.any_set);
    EXPECT_EQ(64ull << 20, p.cfg.TRACE_LIMIT);
    EXPECT_EQ(16ull << 20, p.cfg.CB_BUFFER_SIZE);
    EXPECT_STREQ("auto", p.cfg.CB_WRITE);
    EXPECT_STREQ("on", p.cfg.OPENCL);
    EXPECT_STREQ("", p.cfg.CAPTURE);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(ConfigParse, ValuesReachTheirTypedFields)
{
    Parsed p = parse({"SLUICE_TRACE_DIR=/tmp/t", "SLUICE_STAGE_LIMIT=512MiB", "SLUICE_CB_NODES=3",
                      "SLUICE_CB_WRITE=enable", "SLUICE_CAPTURE=ckpt.%r:chk_*/rank_%r.bin",
                      "SLUICE_BLOCK_SIZE=1M"});
    ASSERT_EQ(0, p.rc) << p.err;
    EXPECT_TRUE(p.cfg.any_set);
    EXPECT_TRUE(p.cfg.is_set[SLUICE_CFG_TRACE_DIR]);
    EXPECT_FALSE(p.cfg.is_set[SLUICE_CFG_DEBUG]);
    EXPECT_STREQ("/tmp/t", p.cfg.TRACE_DIR);
    EXPECT_EQ(512ull << 20, p.cfg.STAGE_LIMIT);
    EXPECT_EQ(3u, p.cfg.CB_NODES);
    EXPECT_STREQ("enable", p.cfg.CB_WRITE);
    EXPECT_STREQ("ckpt.%r:chk_*/rank_%r.bin", p.cfg.CAPTURE);
    EXPECT_EQ(1u << 20, p.cfg.BLOCK_SIZE);
}

TEST(ConfigParse, BadValueNamesVariableValueAndWhatIsAccepted)
{
    Parsed p = parse({"SLUICE_TRACE_LIMIT=12Q"});
    ASSERT_EQ(-1, p.rc);
    EXPECT_NE(std::string::npos, p.err.find("SLUICE_TRACE_LIMIT"));
    EXPECT_NE(std::string::npos, p.err.find("'12Q'"));
    EXPECT_NE(std::string::npos, p.err.find("16M"));
    EXPECT_EQ(std::string::npos, p.err.find('\n'));
}

TEST(ConfigParse, EnumRangeBlockSizeAndPatternsAreValidated)
{
    EXPECT_EQ(-1, parse({"SLUICE_CB_WRITE=sometimes"}).rc);
    EXPECT_NE(std::string::npos, parse({"SLUICE_CB_WRITE=sometimes"}).err.find("auto|enable|disable"));
    EXPECT_EQ(-1, parse({"SLUICE_BACKTRACE=33"}).rc);
    EXPECT_EQ(0, parse({"SLUICE_BACKTRACE=32"}).rc);
    EXPECT_EQ(-1, parse({"SLUICE_BACKTRACE=-1"}).rc);
    EXPECT_EQ(-1, parse({"SLUICE_BLOCK_SIZE=3000"}).rc);  // not a power of two
    EXPECT_EQ(-1, parse({"SLUICE_BLOCK_SIZE=256"}).rc);   // too small
    EXPECT_EQ(0, parse({"SLUICE_BLOCK_SIZE=64K"}).rc);
    EXPECT_EQ(0, parse({"SLUICE_DIST_CHUNK=0"}).rc);   // by transfer size
    EXPECT_EQ(0, parse({"SLUICE_DIST_CHUNK=4K"}).rc);
    EXPECT_EQ(0, parse({"SLUICE_DIST_CHUNK=1G"}).rc);
    EXPECT_EQ(-1, parse({"SLUICE_DIST_CHUNK=1K"}).rc);  // below 4K
    EXPECT_EQ(-1, parse({"SLUICE_DIST_CHUNK=2G"}).rc);  // above an MPI count
    EXPECT_EQ(-1, parse({"SLUICE_CAPTURE=ckpt.dat"}).rc);        // no %r
    EXPECT_EQ(-1, parse({"SLUICE_CAPTURE=ckpt.%r::x.%r"}).rc);   // empty pattern
    EXPECT_EQ(0, parse({"SLUICE_CAPTURE=ior/%r/out.%r"}).rc);    // the rank twice (IOR -u)
    EXPECT_EQ(0, parse({"SLUICE_CAPTURE=rank%r/ckpt.dat"}).rc);
    EXPECT_EQ(-1, parse({"SLUICE_OPENCL=maybe"}).rc);
    EXPECT_EQ(0, parse({"SLUICE_OPENCL=distributed"}).rc);
}

TEST(ConfigParse, MisspeltVariableWarnsWithNearestName)
{
    Parsed p = parse({"SLUICE_CAPTUR=ckpt.%r", "SLUICE_TRACEDIR=/tmp"});
    ASSERT_EQ(0, p.rc);
    ASSERT_EQ(2u, p.warnings.size());
    EXPECT_NE(std::string::npos, p.warnings[0].find("did you mean SLUICE_CAPTURE?"));
    EXPECT_NE(std::string::npos, p.warnings[1].find("did you mean SLUICE_TRACE_DIR?"));
    Parsed far = parse({"SLUICE_ZZZZZZZZZZZZZZZZZZ=1"});
    ASSERT_EQ(1u, far.warnings.size());
    EXPECT_EQ(std::string::npos, far.warnings[0].find("did you mean"));
    // An unknown name alone does not switch sluice on.
    EXPECT_FALSE(far.cfg.any_set);
}

TEST(ConfigDocs, EveryVariableIsDocumentedInEnvMd)
{
    std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/docs/ENV.md");
    ASSERT_TRUE(in.good()) << "docs/ENV.md missing";
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        const std::string heading = std::string("## ") + sluice_cfg_table[i].name;
        EXPECT_NE(std::string::npos, doc.find(heading)) << sluice_cfg_table[i].name << " has no section";
        EXPECT_NE(std::string::npos, doc.find(std::string("--") + sluice_cfg_table[i].option))
            << sluice_cfg_table[i].name << ": launcher option not documented";
    }
}

} // namespace

// One variable checked as the whole parse checks it (sluice-ckpt recover reads SLUICE_BLOCK_SIZE).
TEST(ConfigParseOne, ChecksOneVariableAsTheParseDoes)
{
    struct sluice_config cfg = {};
    ASSERT_EQ(0, sluice_config_parse_one(&cfg, SLUICE_CFG_BLOCK_SIZE, "1M"));
    EXPECT_EQ(uint64_t(1) << 20, cfg.BLOCK_SIZE);
    EXPECT_EQ(-1, sluice_config_parse_one(&cfg, SLUICE_CFG_BLOCK_SIZE, "3K"));   // not a power of two
    EXPECT_EQ(-1, sluice_config_parse_one(&cfg, SLUICE_CFG_BLOCK_SIZE, "128M")); // above 64M
    EXPECT_EQ(-1, sluice_config_parse_one(&cfg, SLUICE_CFG_OPENCL, "sideways"));
    EXPECT_EQ(uint64_t(1) << 20, cfg.BLOCK_SIZE) << "a rejected value leaves the field";
}

// Before the constructor parsed the environment (sluice_config still zero here): the
// environment's valid value, else the default.
TEST(ConfigEarly, EnvironmentBeforeTheParseThenDefault)
{
    ASSERT_EQ(nullptr, sluice_config.OPENCL);
    setenv("SLUICE_OPENCL", "distributed", 1);
    EXPECT_STREQ("distributed", sluice_config_early(SLUICE_CFG_OPENCL));
    setenv("SLUICE_OPENCL", "sideways", 1);
    EXPECT_STREQ("on", sluice_config_early(SLUICE_CFG_OPENCL));
    unsetenv("SLUICE_OPENCL");
    EXPECT_STREQ("on", sluice_config_early(SLUICE_CFG_OPENCL));
    EXPECT_EQ(nullptr, sluice_config_early(SLUICE_CFG_BLOCK_SIZE)) << "not a string variable";
}
