/* SPDX-License-Identifier: MIT */
// sluice-trace on files with known contents: the summary's counts, bytes, time shares and
// warnings, and the dump's lines, are what was recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include <unistd.h>

extern "C" {
#include "trace/core.h"
}

namespace
{

std::string tool_path()
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "sluice-trace";
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/')); // build/tests
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

class TraceSummary : public ::testing::Test
{
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
        std::string path =
            dir + "/rank-" + std::to_string(rank) + ".pid-" + std::to_string(100 + rank) + ".sluicetrace";
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
    write_rank(1, 0, [] { // no memory at all: everything is dropped and must be reported
        sluice_trace_instant(SLUICE_EV_MPI_SEND, 0, 1 << 20, 1);
        sluice_trace_instant(SLUICE_EV_MPI_SEND, 0, 1 << 20, 1);
    });

    int status;
    std::string out = run(tool_path() + " summary --no-symbols " + dir, &status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("2 files, 2 ranks (launcher size 2)"), std::string::npos) << out;

    auto w = row(out, "0", "CKPT_WRITE");
    ASSERT_EQ(w.size(), 6u) << out;
    EXPECT_EQ(w[2], "4");                     // count, the failed write included
    EXPECT_EQ(w[3] + " " + w[4], "12.0 KiB"); // bytes of the three successful writes only
    EXPECT_EQ(w[5], "0.003000");              // summed durations
    w = row(out, "total", "CKPT_WRITE");
    ASSERT_EQ(w.size(), 6u) << out;
    EXPECT_EQ(w[2], "4");
    EXPECT_TRUE(row(out, "1", "MPI_SEND").empty()) << "rank 1 kept no events";

    // rank 0's thread slept 50 ms of its accounted time: the sleep share is reported
    w = row(out, "0", "1");
    ASSERT_GE(w.size(), 11u) << out;
    EXPECT_GE(std::stod(w[9]), 0.05) << out;

    EXPECT_NE(out.find("rank 1 pid " + std::to_string(getpid()) +
                       ": 2 MPI_SEND events dropped from threads that got "
                       "no trace memory"),
              std::string::npos)
        << out;

    std::string dump = run(tool_path() + " dump " + dir, &status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(std::count(dump.begin(), dump.end(), '\n'), 4) << dump;
    EXPECT_NE(dump.find("CKPT_WRITE fd=3, bytes=777, offset=28 ERROR"), std::string::npos) << dump;
}

// A job of 1,000 ranks, each with what a rank of a checkpointing OpenCL program records (MPI
// messages, checkpoint writes, OpenCL calls and transfers, accounted time; some ranks lose events
// and get warnings): the summary stays a page, whatever the rank count (docs/TRACE.md, "Many
// ranks"), and --ranks=LIST brings back one rank's own tables.
TEST_F(TraceSummary, ThousandRanksStayOnePage)
{
    constexpr int kRanks = 1000;
    for (int r = 0; r < kRanks; r++) {
        sluice_trace_options opt{};
        opt.dir = dir.c_str();
        opt.limit = r % 7 == 5 ? 0 : 1u << 20; // every 7th rank keeps nothing: 5 warnings each
        opt.rank = r;
        opt.size = kRanks;
        ASSERT_EQ(sluice_trace_start(&opt), 0);
        uint64_t fn[3] = {sluice_trace_string("clEnqueueNDRangeKernel"), sluice_trace_string("clFinish"),
                          sluice_trace_string("clEnqueueWriteBuffer")};
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLUICE);
        for (int i = 0; i < 4; i++) {
            sluice_trace_instant(SLUICE_EV_MPI_SEND, (uint64_t)((r + 1) % kRanks), 4096u * (1 + r % 7), 11);
            sluice_trace_instant(SLUICE_EV_MPI_RECV, (uint64_t)((r + kRanks - 1) % kRanks), 4096, 11);
            sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, sluice_now_ns(), 1000 + (uint64_t)r, 3,
                                65536u + (uint64_t)r, (uint64_t)i * 65536u);
            for (uint64_t f : fn)
                sluice_trace_record(SLUICE_EV_CL_CALL, 0, sluice_now_ns(), 2000 + (uint64_t)r % 13, f, 0, 1);
            sluice_trace_record(SLUICE_EV_CL_TRANSFER, 0, sluice_now_ns(), 5000, 0, 1u << 20, 0);
        }
        sluice_time_leave(prev);
        std::string path =
            dir + "/rank-" + std::to_string(r) + ".pid-" + std::to_string(100000 + r) + ".sluicetrace";
        ASSERT_EQ(sluice_trace_write_file(path.c_str(), 0), 0);
        sluice_trace_stop();
    }

    int status;
    std::string out = run(tool_path() + " summary --no-symbols " + dir, &status);
    EXPECT_EQ(status, 0) << out.substr(0, 4000);
    long lines = std::count(out.begin(), out.end(), '\n');
    EXPECT_NE(out.find("1000 files, 1000 ranks (launcher size 1000)"), std::string::npos)
        << out.substr(0, 4000);
    EXPECT_LE(lines, 100) << "the summary of 1,000 ranks has " << lines << " lines:\n"
                          << out.substr(0, 20000);
    EXPECT_EQ(out.find("\n999 "), std::string::npos) << "a row of rank 999's own:\n" << out.substr(0, 20000);
    EXPECT_NE(out.find("CKPT_WRITE"), std::string::npos) << out.substr(0, 4000);
    EXPECT_NE(out.find("clEnqueueNDRangeKernel"), std::string::npos) << out.substr(0, 4000);
    // 143 ranks lost 5 kinds of event each: one line per kind, with the ranks counted
    EXPECT_NE(
        out.find("572 CKPT_WRITE events dropped: SLUICE_TRACE_LIMIT reached, in 143 processes: ranks 5, 12,"),
        std::string::npos)
        << out.substr(0, 20000);

    // The same traces with one rank's detail: rank 999's rows come back, the page stays short.
    std::string one = run(tool_path() + " summary --no-symbols --ranks=999 " + dir, &status);
    EXPECT_EQ(status, 0) << one.substr(0, 4000);
    EXPECT_NE(one.find("999"), std::string::npos) << one.substr(0, 4000);
    long one_lines = std::count(one.begin(), one.end(), '\n');
    EXPECT_LE(one_lines, 100) << one.substr(0, 20000);
    std::printf("summary of %d ranks: %ld lines; with --ranks=999: %ld lines\n", kRanks, lines, one_lines);
    if (const char *keep = getenv("SLUICE_TEST_SUMMARY_OUT")) { // by hand: the page itself
        FILE *f = fopen(keep, "w");
        if (f) {
            fputs(out.c_str(), f);
            fclose(f);
        }
    }
}

// `perfetto`'s DAG dependency arrows (docs/DISTRIBUTED.md, "Trace"): a node whose start was
// mapped onto rank 0's clock 3 us before the end of the node it waited for gets an arrow that
// lands at that end, inside its slice, not one that points back in time; a node that lies
// wholly before that end (a point) keeps its arrow where it is (nothing is invented).
TEST_F(TraceSummary, PerfettoDagArrowsLandWhereTheyCannotPointBack)
{
    write_rank(0, 1u << 20, [] {
        uint64_t kernel = sluice_trace_string("kernel"), t = sluice_now_ns();
        sluice_trace_record(SLUICE_EV_CL_DAG_NODE, 0, t, 100000, 1, 1, kernel);
        sluice_trace_record(SLUICE_EV_CL_DAG_NODE, 0, t + 97000, 50000, 2, 2, kernel);
        sluice_trace_record(SLUICE_EV_CL_DAG_EDGE, 0, t + 97000, 0, 2, 1, 2);
        sluice_trace_record(SLUICE_EV_CL_DAG_NODE, 0, t + 10000, 0, 3, 3, kernel);
        sluice_trace_record(SLUICE_EV_CL_DAG_EDGE, 0, t + 10000, 0, 3, 1, 2);
    });
    std::string json = dir + "/dag.json";
    int status;
    std::string out = run(tool_path() + " perfetto " + json + " " + dir + " 2>&1", &status);
    ASSERT_EQ(status, 0) << out;
    // The two ends of each "DAG dependency" flow, by id: "s" then "f", their ts in us.
    std::map<std::string, std::pair<double, double>> flow;
    std::ifstream in(json);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("\"name\":\"DAG dependency\"") == std::string::npos)
            continue;
        size_t id = line.find("\"id\":"), ts = line.find("\"ts\":");
        ASSERT_NE(id, std::string::npos) << line;
        ASSERT_NE(ts, std::string::npos) << line;
        std::string key = line.substr(id + 5, line.find(',', id) - id - 5);
        double v = std::stod(line.substr(ts + 5));
        if (line.find("\"ph\":\"s\"") != std::string::npos)
            flow[key].first = v;
        else
            flow[key].second = v;
    }
    ASSERT_EQ(flow.size(), 2u) << out;
    std::vector<double> back; // how far each arrow's head lies after its tail, us
    for (const auto &f : flow)
        back.push_back(f.second.second - f.second.first);
    std::sort(back.begin(), back.end());
    EXPECT_NEAR(back[0], -90.0, 0.01) << "the point at +10 us keeps its place";
    EXPECT_NEAR(back[1], 0.0, 0.01)
        << "the node that starts 3 us early: its arrow lands at the end it waited for";
}
