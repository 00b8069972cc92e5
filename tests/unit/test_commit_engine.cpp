/* SPDX-License-Identifier: MIT */
// The commit engine in one process (loopback transport, real progress thread, real files):
// closed members become container versions, newer closes supersede older ones, members of
// the previous version are carried over, reads return exact bytes, unlink drops members,
// corruption gives EIO, and a failed commit keeps the staged data and the previous version.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern "C" {
#include "ckpt/commit/commit.h"
#include "ckpt/commit/commit_internal.h"
#include "ckpt/container/container.h"
#include "ckpt/commit/stage.h"
#include "config/config.h"
}

namespace {

std::string g_root, g_dir, g_stage;
int g_seq;

std::string Bytes(size_t n, int salt)
{
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++)
        s[i] = static_cast<char>(i * 7 + salt * 131 + (i >> 10));
    return s;
}

void WriteFile(const std::string &path, const std::string &data)
{
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    close(fd);
}

// Stages `data` as member `rank` the way capture does (data file + closed sidecar) and, if
// `hand_over`, hands it to the commit engine. Returns the member as passed.
sluice_staged_member Close(int rank, const std::string &data, bool hand_over = true)
{
    sluice_staged_member m{};
    std::string base = g_stage + "/m-" + std::to_string(getpid()) + "-t" + std::to_string(++g_seq);
    snprintf(m.set_key, sizeof m.set_key, "%s/ckpt.%%r", g_dir.c_str());
    snprintf(m.path, sizeof m.path, "%s/ckpt.%d", g_dir.c_str(), rank);
    snprintf(m.stage_path, sizeof m.stage_path, "%s.data", base.c_str());
    m.member_rank = rank;
    m.writer_rank = 0;
    m.size = data.size();
    WriteFile(m.stage_path, data);
    sluice_stage_meta sm{};
    sm.m = m;
    sm.closed = 1;
    sm.pid = getpid();
    char text[SLUICE_STAGE_META_MAX];
    int n = sluice_stage_meta_format(&sm, text, sizeof text);
    EXPECT_GT(n, 0);
    WriteFile(base + ".meta", std::string(text, static_cast<size_t>(n)));
    if (hand_over)
        sluice_commit_member_closed(&m);
    return m;
}

// Compares without printing megabytes on failure.
::testing::AssertionResult SameBytes(const std::string &got, const std::string &want)
{
    if (got == want)
        return ::testing::AssertionSuccess();
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i])
        i++;
    return ::testing::AssertionFailure() << "got " << got.size() << " bytes, want " << want.size()
                                         << ", first difference at " << i;
}

std::string Container() { return g_dir + "/ckpt.@r.sluice"; }

// Everything this process closed is committed (not at exit: the non-collective flush).
int Settle() { return sluice_commit_flush_all(); }

std::string ReadMember(int rank, int *err = nullptr)
{
    std::string path = g_dir + "/ckpt." + std::to_string(rank);
    int fd = sluice_commit_open_member(path.c_str(), O_RDONLY);
    if (err)
        *err = fd < 0 ? fd : 0;
    if (fd < 0)
        return "";
    std::string out;
    char buf[65536];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(r));
    close(fd);
    return out;
}

struct Info {
    uint64_t version = 0;
    std::vector<int> ranks;
};

Info Inspect()
{
    Info info;
    sluice_container *c = nullptr;
    char err[8192];
    if (sluice_container_open(Container().c_str(), &c, err, sizeof err) != 0)
        return info;
    info.version = c->meta.version;
    for (uint32_t i = 0; i < c->n_members; i++) {
        EXPECT_EQ(sluice_container_verify_member(c, i, err, sizeof err), 0) << err;
        info.ranks.push_back(c->members[i].member_rank);
    }
    sluice_container_close(c);
    return info;
}

size_t StagedFiles()
{
    size_t n = 0;
    for (const char *suffix : {".data", ".meta"}) {
        std::string cmd = "ls " + g_stage + " | grep -c '\\" + std::string(suffix) + "$'";
        FILE *p = popen(cmd.c_str(), "r");
        unsigned long k = 0;
        if (p && fscanf(p, "%lu", &k) == 1)
            n += k;
        if (p)
            pclose(p);
    }
    return n;
}

class CommitEngine : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        char tmpl[] = "/tmp/sluice-commit-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        g_root = tmpl;
        g_stage = g_root + "/stage";
        mkdir(g_stage.c_str(), 0700);
        sluice_config.STAGE_DIR = strdup(g_stage.c_str());
        sluice_config.BLOCK_SIZE = 4096;
        sluice_config.CB_WRITE = "disable";
        // One folder (one set) per test: ctest runs each test in its own process.
        std::string spec = g_root + "/*/ckpt.%r";
        ASSERT_EQ(commit_engine_enable(spec.c_str(), g_root.c_str()), 0);
    }
    void SetUp() override
    {
        g_dir = g_root + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
        mkdir(g_dir.c_str(), 0755);
    }
    // A first version with members 0 (empty), 1 (1 byte) and 2 (3 MiB and a bit).
    static void FirstVersion()
    {
        Close(0, Bytes(0, 1));
        Close(1, Bytes(1, 1));
        Close(2, Bytes(3 * 1024 * 1024 + 17, 1));
        ASSERT_EQ(Settle(), 0);
    }
    static void TearDownTestSuite()
    {
        std::string cmd = "rm -rf " + g_root;
        (void)system(cmd.c_str());
    }
};

} // namespace

TEST_F(CommitEngine, ClosedMembersBecomeOneVerifiedContainer)
{
    FirstVersion();
    Info info = Inspect();
    EXPECT_GE(info.version, 1u);
    EXPECT_EQ(info.ranks, (std::vector<int>{0, 1, 2}));
    EXPECT_TRUE(SameBytes(ReadMember(2), Bytes(3 * 1024 * 1024 + 17, 1)));
    EXPECT_TRUE(SameBytes(ReadMember(1), Bytes(1, 1)));
    EXPECT_EQ(ReadMember(0), "");
    EXPECT_EQ(StagedFiles(), 0u) << "staged copies must go once committed";
    uint64_t size = 0;
    int64_t mtime = 0;
    ASSERT_EQ(sluice_commit_stat_member((g_dir + "/ckpt.2").c_str(), &size, &mtime, nullptr), 0);
    EXPECT_EQ(size, 3u * 1024 * 1024 + 17);
    EXPECT_GT(mtime, 0);
}

TEST_F(CommitEngine, NewVersionCarriesOtherMembersAndNewestCloseWins)
{
    FirstVersion();
    uint64_t before = Inspect().version;
    Close(1, Bytes(5000, 2));
    Close(1, Bytes(7000, 3));   // a rewrite of the same member
    Close(5, Bytes(123, 3));
    ASSERT_EQ(Settle(), 0);
    Info info = Inspect();
    EXPECT_GT(info.version, before);
    EXPECT_EQ(info.ranks, (std::vector<int>{0, 1, 2, 5}));
    EXPECT_TRUE(SameBytes(ReadMember(1), Bytes(7000, 3)));
    EXPECT_TRUE(SameBytes(ReadMember(2), Bytes(3 * 1024 * 1024 + 17, 1))) << "carried over unchanged";
    EXPECT_TRUE(SameBytes(ReadMember(5), Bytes(123, 3)));
    EXPECT_EQ(StagedFiles(), 0u);
}

TEST_F(CommitEngine, MissingMemberIsENOENT)
{
    FirstVersion();
    int err = 0;
    ReadMember(9, &err);
    EXPECT_EQ(err, -ENOENT);
    uint64_t size;
    int64_t mtime;
    EXPECT_EQ(sluice_commit_stat_member((g_dir + "/ckpt.9").c_str(), &size, &mtime, nullptr), -ENOENT);
    EXPECT_EQ(sluice_commit_member_unlinked((g_dir + "/ckpt.9").c_str()), -ENOENT);
}

TEST_F(CommitEngine, UnlinkDropsTheMemberFromTheNextVersion)
{
    FirstVersion();
    Close(5, Bytes(123, 3));
    ASSERT_EQ(Settle(), 0);
    EXPECT_EQ(Inspect().ranks, (std::vector<int>{0, 1, 2, 5}));
    ASSERT_EQ(sluice_commit_member_unlinked((g_dir + "/ckpt.5").c_str()), 0);
    Info info = Inspect();
    EXPECT_EQ(info.ranks, (std::vector<int>{0, 1, 2}));
    int err = 0;
    ReadMember(5, &err);
    EXPECT_EQ(err, -ENOENT);
    // Unlinking every member removes the container.
    for (int r : {0, 1, 2})
        ASSERT_EQ(sluice_commit_member_unlinked((g_dir + "/ckpt." + std::to_string(r)).c_str()), 0);
    struct stat st;
    EXPECT_NE(stat(Container().c_str(), &st), 0);
}

TEST_F(CommitEngine, FailedCommitKeepsStagedDataAndPreviousVersion)
{
    FirstVersion();
    Info before = Inspect();
    // The container file may not grow past 1 MiB: the commit of a 2 MiB member fails (EFBIG).
    sluice_staged_member m = Close(3, Bytes(2 * 1024 * 1024, 4), false);
    signal(SIGXFSZ, SIG_IGN);
    rlimit old{}, small{};
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 1 << 20;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    sluice_commit_member_closed(&m);
    int rc = sluice_commit_member_sync(&m);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    EXPECT_EQ(rc, -EFBIG) << "fsync must report the commit's error";
    Info after = Inspect();
    EXPECT_EQ(after.version, before.version) << "the committed version must stay";
    EXPECT_EQ(after.ranks, before.ranks);
    EXPECT_EQ(StagedFiles(), 2u) << "the failed member stays staged for recover";
    // Its own process still reads the staged bytes.
    EXPECT_TRUE(SameBytes(ReadMember(3), Bytes(2 * 1024 * 1024, 4)));

    // With room again, fsync retries and succeeds.
    EXPECT_EQ(sluice_commit_member_sync(&m), 0);
    Info fixed = Inspect();
    EXPECT_GT(fixed.version, before.version);
    EXPECT_EQ(fixed.ranks, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(StagedFiles(), 0u);
}

TEST_F(CommitEngine, CorruptMemberIsEIOOthersStillRead)
{
    FirstVersion();
    sluice_container *c = nullptr;
    char err[8192];
    ASSERT_EQ(sluice_container_open(Container().c_str(), &c, err, sizeof err), 0) << err;
    long i2 = sluice_container_find_rank(c, 2);
    ASSERT_GE(i2, 0);
    uint64_t off = c->members[i2].extents[0].file_offset + 100;
    sluice_container_close(c);
    int fd = open(Container().c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char b;
    ASSERT_EQ(pread(fd, &b, 1, static_cast<off_t>(off)), 1);
    b = static_cast<char>(b ^ 0x5a);
    ASSERT_EQ(pwrite(fd, &b, 1, static_cast<off_t>(off)), 1);
    close(fd);
    int rc = 0;
    ReadMember(2, &rc);
    EXPECT_EQ(rc, -EIO);
    EXPECT_TRUE(SameBytes(ReadMember(1), Bytes(1, 1)));
    EXPECT_TRUE(SameBytes(ReadMember(0), Bytes(0, 1)));
}
