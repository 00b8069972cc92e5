/* SPDX-License-Identifier: MIT */
// Launcher detection from the environment: each launcher's variables, the precedence between
// them, Slurm batch steps, malformed values (skipped with a warning naming them), job keys.
#include <gtest/gtest.h>

#include <map>
#include <string>

extern "C" {
#include "mpi/launcher.h"
}

namespace
{

using Env = std::map<std::string, std::string>;

const char *get(const char *name, void *ctx)
{
    auto *env = static_cast<Env *>(ctx);
    auto it = env->find(name);
    return it == env->end() ? nullptr : it->second.c_str();
}

struct Result {
    sluice_launch l;
    std::string warning;
};

Result detect(Env env)
{
    Result r;
    char warn[256];
    sluice_launch_detect(get, &env, &r.l, warn, sizeof warn);
    r.warning = warn;
    return r;
}

TEST(LauncherDetect, NoLauncherIsRankZeroOfOne)
{
    auto r = detect({{"HOME", "/root"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.l.rank, 0);
    EXPECT_EQ(r.l.size, 1);
    EXPECT_EQ(r.l.pmi_fd, -1);
    EXPECT_STREQ(r.l.job, "");
    EXPECT_EQ(r.warning, "");
}

TEST(LauncherDetect, HydraPmiRankSizeAndFd)
{
    auto r = detect({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"PMI_FD", "6"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_HYDRA);
    EXPECT_EQ(r.l.rank, 2);
    EXPECT_EQ(r.l.size, 3);
    EXPECT_EQ(r.l.pmi_fd, 6);
    EXPECT_STREQ(r.l.job, ""); // derived from the socket by the claim, not from the env
    EXPECT_STREQ(sluice_launcher_name(r.l.kind), "hydra");
}

TEST(LauncherDetect, HydraRanksOnThisNode)
{
    // hydra's proxy tells each process how many ranks of the job it started (node_vote.h)
    auto r = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}, {"MPI_LOCALNRANKS", "4"}});
    EXPECT_EQ(r.l.local_size, 4);
    r = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}, {"MPI_LOCALNRANKS", "2"}});
    EXPECT_EQ(r.l.local_size, 2);
    r = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}});
    EXPECT_EQ(r.l.local_size, 0);
    for (const char *bad : {"5", "x", "-1", ""}) {
        r = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}, {"MPI_LOCALNRANKS", bad}});
        EXPECT_EQ(r.l.local_size, 0) << bad; // unknown: the launcher's vote, never a wrong count
        EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_HYDRA) << bad;
    }
}

TEST(LauncherDetect, HydraWithPmiPortNamesTheJobByPort)
{
    auto r = detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PMI_PORT", "node1:4242"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_HYDRA);
    EXPECT_STREQ(r.l.job, "pmiport-node1_4242");
}

TEST(LauncherDetect, OpenMpiWithJobId)
{
    auto r = detect({{"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_SIZE", "4"},
                     {"OMPI_MCA_ess_base_jobid", "1198718977"},
                     {"PMIX_RANK", "1"},
                     {"PMIX_NAMESPACE", "1198718977"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_OMPI);
    EXPECT_EQ(r.l.rank, 1);
    EXPECT_EQ(r.l.size, 4);
    EXPECT_STREQ(r.l.job, "ompi-1198718977");
    EXPECT_EQ(r.l.anchor_pid, 0);
}

TEST(LauncherDetect, OpenMpiDaemonPidFromPmixServerFolder)
{
    auto r = detect({{"OMPI_COMM_WORLD_RANK", "0"},
                     {"OMPI_COMM_WORLD_SIZE", "2"},
                     {"OMPI_MCA_ess_base_jobid", "77"},
                     {"PMIX_SERVER_TMPDIR", "/tmp/ompi.vm.0/pid.11149"}});
    EXPECT_EQ(r.l.anchor_pid, 11149);
    r = detect({{"OMPI_COMM_WORLD_RANK", "0"},
                {"OMPI_COMM_WORLD_SIZE", "2"},
                {"PMIX_SERVER_TMPDIR", "/tmp/ompi.vm.0/pid.x"}});
    EXPECT_EQ(r.l.anchor_pid, 0);
}

TEST(LauncherDetect, PmixTakesSizeFromSlurmStep)
{
    auto r = detect({{"PMIX_RANK", "5"},
                     {"PMIX_NAMESPACE", "slurm.pmix.77.0"},
                     {"SLURM_STEP_NUM_TASKS", "8"},
                     {"SLURM_NTASKS", "16"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_PMIX);
    EXPECT_EQ(r.l.rank, 5);
    EXPECT_EQ(r.l.size, 8);
    EXPECT_STREQ(r.l.job, "pmix-slurm.pmix.77.0");
}

TEST(LauncherDetect, PmixWithoutAnySizeReportsZero)
{
    auto r = detect({{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "ns"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_PMIX);
    EXPECT_EQ(r.l.size, 0);
}

TEST(LauncherDetect, SlurmStep)
{
    auto r = detect(
        {{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_ID", "12345"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_SLURM);
    EXPECT_EQ(r.l.rank, 3);
    EXPECT_EQ(r.l.size, 4);
    EXPECT_STREQ(r.l.job, "slurm-12345.0");
}

TEST(LauncherDetect, SlurmBatchScriptWithoutStepIsNotALauncher)
{
    auto r = detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "64"}, {"SLURM_JOB_ID", "12345"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.l.size, 1);
}

TEST(LauncherDetect, HydraInsideSlurmAllocationWins)
{
    auto r = detect({{"PMI_RANK", "1"},
                     {"PMI_SIZE", "2"},
                     {"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "1"},
                     {"SLURM_STEP_ID", "batch"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_HYDRA);
    EXPECT_EQ(r.l.rank, 1);
}

TEST(LauncherDetect, MalformedRankIsSkippedWithAWarningNamingIt)
{
    auto r = detect({{"PMI_RANK", "abc"}, {"PMI_SIZE", "2"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.warning, "ignoring PMI_RANK=abc (not a non-negative integer)");
}

TEST(LauncherDetect, MalformedRankFallsThroughToTheNextLauncher)
{
    auto r = detect({{"PMI_RANK", "-1"},
                     {"PMI_SIZE", "2"},
                     {"OMPI_COMM_WORLD_RANK", "0"},
                     {"OMPI_COMM_WORLD_SIZE", "2"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_OMPI);
    EXPECT_EQ(r.warning, "ignoring PMI_RANK=-1 (not a non-negative integer)");
}

TEST(LauncherDetect, RankNotBelowSizeIsRejected)
{
    auto r = detect({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.warning, "ignoring PMI_RANK=4 (rank is not below the job size)");
}

TEST(LauncherDetect, ZeroOrGarbageSizeIsRejected)
{
    auto r = detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.warning, "ignoring PMI_SIZE=0 (not a positive integer)");
    r = detect({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4x"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.warning, "ignoring OMPI_COMM_WORLD_SIZE=4x (not a positive integer)");
}

TEST(LauncherDetect, HugeRankIsRejected)
{
    auto r = detect({{"PMI_RANK", "99999999999"}, {"PMI_SIZE", "2"}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_NE(r.warning.find("PMI_RANK=99999999999"), std::string::npos);
}

TEST(LauncherDetect, EmptyVariablesCountAsUnset)
{
    auto r = detect({{"PMI_RANK", ""}, {"PMI_SIZE", ""}});
    EXPECT_EQ(r.l.kind, SLUICE_LAUNCHER_NONE);
    EXPECT_EQ(r.warning, "");
}

TEST(LauncherDetect, JobKeysAreOnePathComponent)
{
    auto r = detect({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "prterun-host/1234@1"}});
    EXPECT_STREQ(r.l.job, "pmix-prterun-host_1234_1");
}

TEST(LauncherDetect, LongJobIdsKeepDifferentKeys)
{
    // A PMIx namespace may be 255 bytes: two jobs whose namespaces differ only past the key's 95
    // bytes get different keys, that fit and stay one path component.
    std::string head = "prterun-" + std::string(240, 'n');
    auto a = detect({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", head + "-1234@1"}});
    auto b = detect({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", head + "-1235@1"}});
    EXPECT_STRNE(a.l.job, b.l.job);
    EXPECT_EQ(std::string(a.l.job).size(), sizeof a.l.job - 1);
    EXPECT_EQ(std::string(a.l.job).find_first_not_of(
                  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
              std::string::npos);
    EXPECT_EQ(std::string(a.l.job).rfind("pmix-prterun-nnn", 0), 0u);
    // Slurm: job and step ids, whatever their length, joined by a dot.
    auto s = detect(
        {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "3"}, {"SLURM_JOB_ID", "77"}});
    EXPECT_STREQ(s.l.job, "slurm-77.3");
}

TEST(LauncherDetect, LongMalformedValuesAreNamedByTheirHead)
{
    auto r = detect({{"PMI_RANK", std::string(300, 'x')}, {"PMI_SIZE", "2"}});
    EXPECT_EQ(r.warning, "ignoring PMI_RANK=" + std::string(64, 'x') + "... (not a non-negative integer)");
}

} // namespace

// srun --mpi=none (docs/MPI.md, "Slurm without an MPI plugin"): the Slurm variables of a task of `srun -n 4
// --mpi=none`, with none of a PMI plugin's (PMI_FD/PMI_RANK, PMIX_*). Debian 12's Slurm 22.05 sets no
// SLURM_MPI_TYPE then (slurm_jobs.sh runs the real srun); SLURM_MPI_TYPE=none covers sites
// whose environment carries it.
namespace
{
bool withoutPmi(Env env, std::string *msg = nullptr)
{
    sluice_launch l;
    sluice_launch_detect(get, &env, &l, nullptr, 0);
    char buf[320] = "";
    bool r = sluice_launch_without_pmi(get, &env, &l, buf, sizeof buf);
    if (msg)
        *msg = buf;
    return r;
}
Env srunTask(const char *mpiType)
{
    Env e{{"SLURM_PROCID", "2"},  {"SLURM_NTASKS", "4"},   {"SLURM_STEP_NUM_TASKS", "4"},
          {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_ID", "812"}, {"SLURM_LOCALID", "2"},
          {"SLURM_NODEID", "0"},  {"SLURM_NNODES", "1"},   {"SLURM_TASKS_PER_NODE", "4"}};
    if (mpiType)
        e["SLURM_MPI_TYPE"] = mpiType;
    return e;
}
} // namespace

TEST(LauncherWithoutPmi, SrunMpiNoneIsDetectedWithHowToLaunch)
{
    std::string msg;
    EXPECT_TRUE(withoutPmi(srunTask("none"), &msg));
    EXPECT_NE(msg.find("srun started 4 tasks without an MPI plugin (SLURM_MPI_TYPE=none)"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("--mpi=pmi2"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
    EXPECT_TRUE(withoutPmi(srunTask(nullptr), &msg)) << "site default none: no SLURM_MPI_TYPE at all";
    EXPECT_NE(msg.find("no PMI variables"), std::string::npos) << msg;
}

TEST(LauncherWithoutPmi, PluginsAndSingleTasksAreFine)
{
    Env pmi2 = srunTask("pmi2");
    pmi2["PMI_RANK"] = "2";
    pmi2["PMI_SIZE"] = "4";
    pmi2["PMI_FD"] = "5";
    EXPECT_FALSE(withoutPmi(pmi2)) << "--mpi=pmi2: hydra-style PMI-1 variables";
    Env pmix = srunTask("pmix");
    pmix["PMIX_RANK"] = "2";
    pmix["PMIX_NAMESPACE"] = "slurm.pmix.812.0";
    EXPECT_FALSE(withoutPmi(pmix)) << "--mpi=pmix";
    EXPECT_FALSE(withoutPmi(srunTask("cray_shasta"))) << "a plugin sluice does not know: MPI decides";
    Env one = srunTask("none");
    one["SLURM_PROCID"] = "0";
    one["SLURM_NTASKS"] = one["SLURM_STEP_NUM_TASKS"] = "1";
    EXPECT_FALSE(withoutPmi(one)) << "one task is a job of one rank anyway";
    Env batch = srunTask(nullptr);
    batch.erase("SLURM_STEP_ID");
    EXPECT_FALSE(withoutPmi(batch)) << "a batch script outside srun is alone";
    Env hydra = srunTask("none");
    hydra["PMI_RANK"] = "1";
    hydra["PMI_SIZE"] = "2";
    EXPECT_FALSE(withoutPmi(hydra)) << "mpiexec inside an allocation";
}
