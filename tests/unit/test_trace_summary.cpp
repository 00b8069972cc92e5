/* SPDX-License-Identifier: MIT */
// sluice-trace on files with known contents: the summary's counts, bytes, time shares and
// warnings, and the dump's lines, are what was recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <vector>
#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include <unistd.h>

extern "C" {
#include "trace/core.h"
}

namespace {

std::string tool_path()
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "sluice-trace";
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/'));           // build/tests
    return dir.substr(0, dir.rfind('/')) + "/bin/sluice-trace";
}

std::string run(const std::string &cmd, int *status)
{
    FILE *p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    int st = p ? pclose(p) : -1;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

// The row of `summary` starting with `who` and `kind`, split in words.
std::vector<std::string> row(const std::string &text, const std::string &who, const std::string &kind)
{
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream w(line);
        std::vector<std::string> words;
        std::string x;
        while (w >> x)
            words.push_back(x);
        if (words.size() >= 2 && words[0] == who && words[1] == kind)
            return words;
    }
    return {};
}

class TraceSummary : public ::testing::Test {
protected:
    std::string dir;
    void SetUp() override
    {
        char tmpl[] = "/tmp/sluice-test-summary-XXXXXX";
        dir = mkdtemp(tmpl);
    }
    void TearDown() override
    {
        sluice_trace_stop();
        std::string cmd = "rm -rf '" + dir + "'";
        if (system(cmd.c_str()) != 0)
            ADD_FAILURE() << "cannot clean " << dir;
    }
    void write_rank(int rank, uint64_t limit, void (*record)())
    {
        sluice_trace_options opt{};
        opt.dir = dir.c_str();
        opt.limit = limit;
        opt.rank = rank;
        opt.size = 2;
        ASSERT_EQ(sluice_trace_start(&opt), 0);
        record();
        std::string path = dir + "/rank-" + std::to_string(rank) + ".pid-" + std::to_string(100 + rank) + ".sluicetrace";
        ASSERT_EQ(sluice_trace_write_file(path.c_str(), 0), 0);
        sluice_trace_stop();
    }
};

} // namespace

TEST_F(TraceSummary, CountsBytesTimeAndWarningsAreWhatWasRecorded)
{
    write_rank(0, 16u << 20, [] {
        for (int i = 0; i < 3; i++)
            sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, sluice_now_ns(), 1000000, 3, 4096, 0);
        sluice_trace_record(SLUICE_EV_CKPT_WRITE, SLUICE_EVF_ERROR, sluice_now_ns(), 0, 3, 777, 28);
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
        usleep(50000);
        sluice_time_leave(prev);
    });
    write_rank(1, 0, [] {  // no memory at all: everything is dropped and must be reported
        sluice_trace_instant(SLUICE_EV_MPI_SEND, 0, 1 << 20, 1);
        sluice_trace_instant(SLUICE_EV_MPI_SEND, 0, 1 << 20, 1);
    });

    int status;
    std::string out = run(tool_path() + " summary --no-symbols " + dir, &status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("2 files, 2 ranks (launcher size 2)"), std::string::npos) << out;

    auto w = row(out, "0", "CKPT_WRITE");
    ASSERT_EQ(w.size(), 6u) << out;
    EXPECT_EQ(w[2], "4");                 // count, the failed write included
    EXPECT_EQ(w[3] + " " + w[4], "12.0 KiB");  // bytes of the three successful writes only
    EXPECT_EQ(w[5], "0.003000");          // summed durations
    w = row(out, "total", "CKPT_WRITE");
    ASSERT_EQ(w.size(), 6u) << out;
    EXPECT_EQ(w[2], "4");
    EXPECT_TRUE(row(out, "1", "MPI_SEND").empty()) << "rank 1 kept no events";

    // rank 0's thread slept 50 ms of its accounted time: the sleep share is reported
    w = row(out, "0", "1");
    ASSERT_GE(w.size(), 11u) << out;
    EXPECT_GE(std::stod(w[9]), 0.05) << out;

    EXPECT_NE(out.find("rank 1 pid " + std::to_string(getpid()) + ": 2 MPI_SEND events dropped from threads that got "
                                                                    "no trace memory"),
              std::string::npos)
        << out;

    std::string dump = run(tool_path() + " dump " + dir, &status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(std::count(dump.begin(), dump.end(), '\n'), 4) << dump;
    EXPECT_NE(dump.find("CKPT_WRITE fd=3, bytes=777, offset=28 ERROR"), std::string::npos) << dump;
}
