/* SPDX-License-Identifier: MIT */
// The per-rank MPI claim on real files: the first process of a rank owns it, every later
// process (another program of the same shell, a forked child) sees it taken and who holds it,
// other ranks are independent, hydra jobs are named by the PMI socket's peer, finished jobs'
// folders are collected, and failures say why.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "mpi/claim.h"
}

namespace {

class Claim : public ::testing::Test {
  protected:
    std::string root;
    void SetUp() override
    {
        char tmpl[] = "/tmp/sluice-claim-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root = std::string(tmpl) + "/claims";
    }
    void TearDown() override
    {
        std::string cmd = "rm -rf '" + root.substr(0, root.size() - 7) + "'";
        ASSERT_EQ(system(cmd.c_str()), 0);
    }
    static sluice_launch launch(int rank, const char *job)
    {
        sluice_launch l{};
        l.kind = SLUICE_LAUNCHER_OMPI;
        l.rank = rank;
        l.size = 4;
        l.pmi_fd = -1;
        snprintf(l.job, sizeof l.job, "%s", job);
        return l;
    }
    bool exists(const std::string &p)
    {
        struct stat st;
        return stat((root + "/" + p).c_str(), &st) == 0;
    }
};

TEST_F(Claim, FirstProcessOwnsTheRankAndLaterOnesSeeItTaken)
{
    auto l = launch(1, "ompi-42");
    pid_t holder = -1;
    EXPECT_EQ(sluice_claim_rank(&l, root.c_str(), &holder, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_EQ(holder, 0);
    EXPECT_TRUE(exists("ompi-42/rank.1"));
    EXPECT_EQ(sluice_claim_rank(&l, root.c_str(), &holder, nullptr, 0), SLUICE_CLAIM_TAKEN);
    EXPECT_EQ(holder, getpid());
}

TEST_F(Claim, RanksAndJobsAreIndependent)
{
    auto a = launch(0, "ompi-1"), b = launch(1, "ompi-1"), c = launch(0, "ompi-2");
    EXPECT_EQ(sluice_claim_rank(&a, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_EQ(sluice_claim_rank(&b, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_EQ(sluice_claim_rank(&c, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
}

TEST_F(Claim, AnotherProcessOfTheRankSeesTheHolderPid)
{
    auto l = launch(3, "ompi-7");
    ASSERT_EQ(sluice_claim_rank(&l, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        pid_t holder = 0;
        int r = sluice_claim_rank(&l, root.c_str(), &holder, nullptr, 0);
        _exit(r == SLUICE_CLAIM_TAKEN && holder == parent ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST_F(Claim, OnlyOneOfManyRacingProcessesWins)
{
    auto l = launch(0, "ompi-race");
    const int n = 16;
    pid_t pids[n];
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            _exit(sluice_claim_rank(&l, root.c_str(), nullptr, nullptr, 0));
    }
    int owned = 0, taken = 0;
    for (int i = 0; i < n; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        ASSERT_TRUE(WIFEXITED(st));
        owned += WEXITSTATUS(st) == SLUICE_CLAIM_OWNED;
        taken += WEXITSTATUS(st) == SLUICE_CLAIM_TAKEN;
    }
    EXPECT_EQ(owned, 1);
    EXPECT_EQ(taken, n - 1);
}

TEST_F(Claim, HydraJobIsNamedByThePmiSocketPeer)
{
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sluice_launch l{};
    l.kind = SLUICE_LAUNCHER_HYDRA;
    l.rank = 0;
    l.size = 2;
    l.pmi_fd = sv[0];
    char key[128];
    ASSERT_EQ(sluice_claim_job_key(&l, key, sizeof key), 0);
    std::string prefix = "hydra@" + std::to_string(getpid()) + "-";
    EXPECT_EQ(std::string(key).rfind(prefix, 0), 0u) << key;
    EXPECT_GT(std::string(key).size(), prefix.size()); // the start time follows
    EXPECT_EQ(sluice_claim_rank(&l, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_TRUE(exists(std::string(key) + "/rank.0"));
    close(sv[0]);
    close(sv[1]);
}

TEST_F(Claim, FinishedHydraJobsAreCollectedAndLiveOnesKept)
{
    // a job whose proxy is gone (no such pid) and one whose proxy is this live process
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sluice_launch live{};
    live.kind = SLUICE_LAUNCHER_HYDRA;
    live.size = 1;
    live.pmi_fd = sv[0];
    char live_key[128];
    ASSERT_EQ(sluice_claim_job_key(&live, live_key, sizeof live_key), 0);
    ASSERT_EQ(sluice_claim_rank(&live, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    ASSERT_EQ(mkdir((root + "/hydra@2147483000-12345").c_str(), 0700), 0);
    std::ofstream(root + "/hydra@2147483000-12345/rank.0") << "1\n";
    ASSERT_EQ(mkdir((root + "/ompi-recent").c_str(), 0700), 0);
    // a job of another host sharing this folder: its pid cannot be probed here, so it stays
    const std::string other = "hydra@2147483000-12345-0000000000000001";
    ASSERT_EQ(mkdir((root + "/" + other).c_str(), 0700), 0);

    auto l = launch(0, "ompi-new"); // the first claim of a new job collects
    EXPECT_EQ(sluice_claim_rank(&l, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_FALSE(exists("hydra@2147483000-12345"));
    EXPECT_TRUE(exists(other));
    EXPECT_TRUE(exists(live_key));
    EXPECT_TRUE(exists("ompi-recent")); // no launcher process named: only removed when a week old
    close(sv[0]);
    close(sv[1]);
}

TEST_F(Claim, OpenMpiJobWithADaemonIsCollectedOnceTheDaemonIsGone)
{
    auto live = launch(0, "ompi-5");
    live.anchor_pid = getpid();
    char key[128];
    ASSERT_EQ(sluice_claim_job_key(&live, key, sizeof key), 0);
    std::string k = key;
    EXPECT_EQ(k.rfind("ompi-5@" + std::to_string(getpid()) + "-", 0), 0u) << k;
    ASSERT_EQ(sluice_claim_rank(&live, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);

    pid_t gone = fork(); // a daemon that has exited
    if (gone == 0)
        _exit(0);
    waitpid(gone, nullptr, 0);
    auto old = launch(0, "ompi-4");
    old.anchor_pid = gone;
    char old_key[128];
    ASSERT_EQ(sluice_claim_job_key(&old, old_key, sizeof old_key), 0);
    ASSERT_EQ(mkdir((root + "/" + old_key).c_str(), 0700), 0);

    auto fresh = launch(0, "ompi-6");
    EXPECT_EQ(sluice_claim_rank(&fresh, root.c_str(), nullptr, nullptr, 0), SLUICE_CLAIM_OWNED);
    EXPECT_FALSE(exists(old_key));
    EXPECT_TRUE(exists(k));
}

TEST_F(Claim, UnnamedJobCannotBeCoordinatedAndSaysWhy)
{
    sluice_launch l{};
    l.kind = SLUICE_LAUNCHER_PMIX;
    l.pmi_fd = -1;
    char why[256];
    EXPECT_EQ(sluice_claim_rank(&l, root.c_str(), nullptr, why, sizeof why), SLUICE_CLAIM_UNKNOWN);
    EXPECT_STREQ(why, "the pmix launcher's job cannot be identified");
}

TEST_F(Claim, UnwritableFolderSaysWhichPathFailed)
{
    auto l = launch(0, "ompi-9");
    char why[512];
    EXPECT_EQ(sluice_claim_rank(&l, "/proc/sluice-no/claims", nullptr, why, sizeof why),
              SLUICE_CLAIM_UNKNOWN);
    EXPECT_NE(std::string(why).find("cannot create /proc/sluice-no"), std::string::npos) << why;
}

} // namespace
