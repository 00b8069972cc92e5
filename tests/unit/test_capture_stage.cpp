/* SPDX-License-Identifier: MIT */
// Unit tests of the stage-folder sidecar codec (runtime/ckpt/commit/stage.h), which the commit engine
// and `sluice-ckpt recover` use to find out what a staging file holds: round trips with awkward
// paths, and hostile or truncated sidecars that must be refused rather than misread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

extern "C" {
#include "ckpt/commit/stage.h"
}

namespace {

sluice_stage_meta sample(const char *path, const char *key)
{
    sluice_stage_meta sm;
    memset(&sm, 0, sizeof sm);
    snprintf(sm.m.path, sizeof sm.m.path, "%s", path);
    snprintf(sm.m.set_key, sizeof sm.m.set_key, "%s", key);
    sm.m.member_rank = 12;
    sm.m.writer_rank = 3;
    sm.m.size = 123456789012ull;
    sm.closed = 1;
    sm.pid = 4242;
    return sm;
}

std::string encode(const sluice_stage_meta &sm)
{
    std::string buf(SLUICE_STAGE_META_MAX, '\0');
    int n = sluice_stage_meta_format(&sm, &buf[0], buf.size());
    EXPECT_GT(n, 0);
    buf.resize(n > 0 ? (size_t)n : 0);
    return buf;
}

TEST(StageMeta, RoundTrip)
{
    sluice_stage_meta in = sample("/run/ckpt.12", "/run/ckpt.%r"), out;
    std::string text = encode(in);
    EXPECT_EQ(text.rfind(SLUICE_STAGE_MAGIC "\nstate closed\n", 0), 0u) << text;
    ASSERT_EQ(sluice_stage_meta_parse(text.data(), text.size(), &out), 0);
    EXPECT_STREQ(out.m.path, in.m.path);
    EXPECT_STREQ(out.m.set_key, in.m.set_key);
    EXPECT_EQ(out.m.member_rank, 12);
    EXPECT_EQ(out.m.writer_rank, 3);
    EXPECT_EQ(out.m.size, 123456789012ull);
    EXPECT_EQ(out.closed, 1);
    EXPECT_EQ(out.pid, 4242);
    EXPECT_STREQ(out.m.stage_path, "");
}

// The writer's host (names and liveness probes must not mix nodes whose pids repeat): round trip
// with and without a mode, absent in older sidecars (this host's), refused when malformed; and
// the host and pid read back from a stage file's name, old and new forms.
TEST(StageMeta, WriterHostRoundTripsAndNamesCarryIt)
{
    sluice_stage_meta in = sample("/run/ckpt.12", "/run/ckpt.%r"), out;
    sluice_host_id(in.host);
    for (unsigned mode : {0u, 0640u}) {
        in.m.mode = mode;
        std::string text = encode(in);
        ASSERT_EQ(sluice_stage_meta_parse(text.data(), text.size(), &out), 0) << text;
        EXPECT_STREQ(out.host, in.host);
        EXPECT_EQ(out.m.mode, mode);
        EXPECT_EQ(sluice_host_id_is_mine(out.host), 1);
    }
    in.host[0] = '\0';
    std::string old = encode(in);
    ASSERT_EQ(sluice_stage_meta_parse(old.data(), old.size(), &out), 0);
    EXPECT_STREQ(out.host, "");
    EXPECT_EQ(sluice_host_id_is_mine(out.host), 1);
    EXPECT_EQ(sluice_host_id_is_mine("0000000000000001"), 0);
    for (const char *bad : {"host xyz\n", "host 0123\n", "host 0123456789abcdefa\n", "host 0123456789ABCDEF\n"}) {
        std::string text = old + bad;
        EXPECT_NE(sluice_stage_meta_parse(text.data(), text.size(), &out), 0) << bad;
    }

    char host[SLUICE_HOST_ID_LEN + 1], prefix[SLUICE_STAGE_PREFIX_MAX];
    long pid = 0;
    sluice_stage_prefix(prefix, 77);
    std::string name = std::string(prefix) + "123.meta.tmp0a";
    ASSERT_EQ(sluice_stage_name_writer(name.c_str(), host, &pid), 0) << name;
    EXPECT_EQ(pid, 77);
    EXPECT_EQ(sluice_host_id_is_mine(host), 1);
    ASSERT_EQ(sluice_stage_name_writer("m-812-99.data", host, &pid), 0);
    EXPECT_EQ(pid, 812);
    EXPECT_STREQ(host, "");
    EXPECT_NE(sluice_stage_name_writer("x-812-99.data", host, &pid), 0);
}

TEST(StageMeta, PathsWithNewlinesBackslashesAndSpaces)
{
    sluice_stage_meta in = sample("/r un/a\\b\nc/ckpt.1", "/r un/a\\b\nc/ckpt.%r"), out;
    in.closed = 0;
    std::string text = encode(in);
    // exactly 8 lines: the newline inside the path is escaped
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8) << text;
    ASSERT_EQ(sluice_stage_meta_parse(text.data(), text.size(), &out), 0);
    EXPECT_STREQ(out.m.path, in.m.path);
    EXPECT_STREQ(out.m.set_key, in.m.set_key);
    EXPECT_EQ(out.closed, 0);
}

TEST(StageMeta, TruncatedSidecarsAreRefused)
{
    sluice_stage_meta in = sample("/run/ckpt.12", "/run/ckpt.%r"), out;
    std::string text = encode(in);
    for (size_t len = 0; len < text.size(); len++)
        EXPECT_NE(sluice_stage_meta_parse(text.data(), len, &out), 0) << "accepted a prefix of " << len << " bytes";
}

TEST(StageMeta, HostileSidecarsAreRefused)
{
    sluice_stage_meta out;
    auto refuse = [&](const std::string &s) {
        EXPECT_NE(sluice_stage_meta_parse(s.data(), s.size(), &out), 0) << "accepted: " << s;
    };
    const std::string head = SLUICE_STAGE_MAGIC "\n";
    const std::string tail = "set_key /r/ckpt.%r\npath /r/ckpt.1\n";
    refuse("");
    refuse("sluice-stage 2\nstate open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail);
    refuse(head + "state maybe\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail);
    refuse(head + "state open\npid 0\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail);
    refuse(head + "state open\npid 1\nwriter_rank -1\nmember_rank 1\nsize 0\n" + tail);
    refuse(head + "state open\npid 1\nwriter_rank 0\nmember_rank 99999999999\nsize 0\n" + tail);
    refuse(head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 12x\n" + tail);
    refuse(head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\nset_key relative/%r\npath /r/ckpt.1\n");
    refuse(head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\nset_key /r/ckpt.%r\npath /r/bad\\q\n");
    refuse(head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail + "extra line\n");
    refuse(head + "pid 1\nstate open\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail);  // order is fixed
    std::string nul = head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\nset_key /r/ck";
    nul.push_back('\0');
    nul += "pt.%r\npath /r/ckpt.1\n";
    refuse(nul);
    std::string longpath = head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\nset_key /" +
                           std::string(PATH_MAX + 10, 'x') + "\npath /r/ckpt.1\n";
    refuse(longpath);
    // and the well-formed one is accepted, so the refusals above are for the defect alone
    std::string good = head + "state open\npid 1\nwriter_rank 0\nmember_rank 1\nsize 0\n" + tail;
    EXPECT_EQ(sluice_stage_meta_parse(good.data(), good.size(), &out), 0);
}

TEST(StageMeta, DefaultFolderNamesTheUser)
{
    char buf[64];
    sluice_stage_default_dir(buf, sizeof buf);
    EXPECT_EQ(std::string(buf), "/dev/shm/sluice-" + std::to_string(getuid()));
}

}  // namespace
