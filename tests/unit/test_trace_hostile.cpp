/* SPDX-License-Identifier: MIT */
// Hostile and truncated trace files: the reader rejects each with one line naming the file and
// the byte offset of the problem, even when the checksums were recomputed after the damage (a
// crafted file, not a torn one); and every sluice-trace command survives files whose structure
// is valid but whose values are absurd (a crash would be a signal, not an exit status).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "trace/core.h"
#include "trace/format.h"
#include "trace/reader.h"
#include "trace/trace.h"
}

namespace
{

std::string make_tmpdir()
{
    char tmpl[] = "/tmp/sluice-test-hostile-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return d ? d : "/tmp";
}

std::vector<char> slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string tool()
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "sluice-trace";
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/')); // build/tests
    return dir.substr(0, dir.rfind('/')) + "/bin/sluice-trace";
}

struct section {
    size_t off; // of the section header
    sluice_tf_section sh;
    size_t payload() const { return off + sizeof sh; }
};

std::vector<section> sections(const std::vector<char> &b)
{
    std::vector<section> out;
    size_t off = sizeof(sluice_tf_header);
    while (off + sizeof(sluice_tf_section) <= b.size()) {
        section s{off, {}};
        std::memcpy(&s.sh, b.data() + off, sizeof s.sh);
        out.push_back(s);
        if (s.sh.tag == SLUICE_TF_END)
            break;
        off += sizeof s.sh + ((s.sh.length + 7) & ~7ull) + 8;
    }
    return out;
}

// Recomputes the checksum of the section at `s`, as a crafted file would have it.
void reseal(std::vector<char> &b, const section &s)
{
    sluice_tf_section sh;
    std::memcpy(&sh, b.data() + s.off, sizeof sh);
    uint64_t padded = (sh.length + 7) & ~7ull;
    uint64_t sum =
        sluice_fnv1a(sluice_fnv1a(SLUICE_FNV_INIT, b.data() + s.payload(), padded), &sh, sizeof sh);
    std::memcpy(b.data() + s.payload() + padded, &sum, 8);
}

const section &find(const std::vector<section> &v, uint32_t tag)
{
    for (const section &s : v)
        if (s.sh.tag == tag)
            return s;
    static section none{};
    ADD_FAILURE() << "no section " << tag;
    return none;
}

class TraceHostile : public ::testing::Test
{
  protected:
    std::string dir = make_tmpdir();

    void TearDown() override
    {
        sluice_trace_stop();
        std::string cmd = "rm -rf '" + dir + "'";
        if (system(cmd.c_str()) != 0)
            ADD_FAILURE() << "cannot clean " << dir;
    }
    void start(unsigned backtrace, int rank)
    {
        sluice_trace_options opt{};
        opt.dir = dir.c_str();
        opt.limit = 16u << 20;
        opt.backtrace = backtrace;
        opt.rank = rank;
        opt.size = 3;
        ASSERT_EQ(sluice_trace_start(&opt), 0);
    }
    std::vector<char> sample()
    {
        start(2, 1);
        sluice_trace_record(SLUICE_EV_CKPT_OPEN, 0, 1000, 50, sluice_trace_string("/scratch/ckpt.1"), 0101,
                            7);
        sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, 2000, 60, 7, 4096, 0);
        std::string path = dir + "/sample.sluicetrace";
        EXPECT_EQ(sluice_trace_write_file(path.c_str(), 0), 0);
        sluice_trace_stop();
        return slurp(path);
    }
    static std::string error(const std::vector<char> &bytes)
    {
        char err[512] = "";
        sluice_trace_file *f = nullptr;
        if (sluice_trace_file_parse(bytes.data(), bytes.size(), "sample.sluicetrace", &f, err, sizeof err) ==
            0) {
            sluice_trace_file_free(f);
            return "";
        }
        return err;
    }
    // The message names the file and an offset, and is one line.
    static void expect_located(const std::string &err, const std::string &what)
    {
        EXPECT_EQ(err.rfind("sample.sluicetrace: ", 0), 0u) << err;
        EXPECT_NE(err.find(what), std::string::npos) << err;
        EXPECT_TRUE(err.find("byte") != std::string::npos) << "no offset: " << err;
        EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    }
    int run(const std::string &args)
    {
        std::string cmd = tool() + " " + args + " >/dev/null 2>&1";
        int st = system(cmd.c_str());
        EXPECT_TRUE(WIFEXITED(st)) << cmd << ": killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
};

} // namespace

TEST_F(TraceHostile, EveryTruncationNamesTheFileAndAnOffsetOrSize)
{
    std::vector<char> bytes = sample();
    for (size_t cut = 8; cut < bytes.size(); cut += (cut < 700 ? 1 : 61)) {
        std::string err = error(std::vector<char>(bytes.begin(), bytes.begin() + cut));
        ASSERT_FALSE(err.empty()) << "cut at " << cut;
        EXPECT_EQ(err.rfind("sample.sluicetrace: truncated", 0), 0u) << err;
        EXPECT_TRUE(err.find("byte") != std::string::npos || err.find("sections") != std::string::npos)
            << err;
    }
}

TEST_F(TraceHostile, CraftedSectionsWithValidChecksumsAreRejectedWithTheirOffset)
{
    const std::vector<char> good = sample();
    ASSERT_EQ(error(good), "");
    std::vector<section> secs = sections(good);

    // A thread claiming 2^61 events (events * 48 overflows).
    std::vector<char> b = good;
    const section &th = find(secs, SLUICE_TF_THREAD);
    uint64_t huge = 1ull << 61;
    std::memcpy(b.data() + th.payload() + offsetof(sluice_tf_thread, events), &huge, 8);
    reseal(b, th);
    expect_located(error(b), "events but its section holds");
    EXPECT_NE(error(b).find("THREAD section at byte " + std::to_string(th.off)), std::string::npos)
        << error(b);

    // An event of a kind the file does not list.
    b = good;
    size_t ev0 = th.payload() + sizeof(sluice_tf_thread) + 8 * SLUICE_EV_COUNT;
    uint16_t kind = 60000;
    std::memcpy(b.data() + ev0 + offsetof(sluice_tf_event, kind), &kind, 2);
    reseal(b, th);
    expect_located(error(b), "has kind 60000");

    // An event naming a call site that does not exist.
    b = good;
    uint32_t site = 0x7fffffff;
    std::memcpy(b.data() + ev0 + offsetof(sluice_tf_event, callsite), &site, 4);
    reseal(b, th);
    expect_located(error(b), "unknown call site");

    // A string longer than its section, and string id 0.
    const section &st = find(secs, SLUICE_TF_STRINGS);
    b = good;
    uint32_t len = 0xffffffffu;
    std::memcpy(b.data() + st.payload() + 4, &len, 4);
    reseal(b, st);
    expect_located(error(b), "overruns its section");
    b = good;
    uint32_t id = 0;
    std::memcpy(b.data() + st.payload(), &id, 4);
    reseal(b, st);
    expect_located(error(b), "string id 0 out of range");

    // KINDS disagreeing with the header.
    const section &kd = find(secs, SLUICE_TF_KINDS);
    b = good;
    uint32_t count = 3;
    std::memcpy(b.data() + kd.payload(), &count, 4);
    reseal(b, kd);
    expect_located(error(b), "KINDS lists 3 kinds");

    // A call site 1000 frames deep.
    const section &cs = find(secs, SLUICE_TF_CALLSITES);
    b = good;
    uint32_t depth = 1000;
    std::memcpy(b.data() + cs.payload() + 4, &depth, 4);
    reseal(b, cs);
    expect_located(error(b), "depth 1000");

    // A section length near 2^64 (padding would wrap).
    b = good;
    uint64_t length = ~0ull - 3;
    std::memcpy(b.data() + th.off + offsetof(sluice_tf_section, length), &length, 8);
    expect_located(error(b), "truncated: THREAD section at byte " + std::to_string(th.off));

    // A negative rank in the header.
    b = good;
    int32_t rank = -1;
    std::memcpy(b.data() + offsetof(sluice_tf_header, rank), &rank, 4);
    EXPECT_NE(error(b).find("sample.sluicetrace: corrupt: rank -1"), std::string::npos) << error(b);
}

TEST_F(TraceHostile, EveryCommandSurvivesAbsurdValues)
{
    start(0, 2);
    const uint64_t big = ~0ull;
    // Durations and times at the ends of the range, string ids that do not exist, ranks and
    // devices that are not there, a DAG edge to itself, an unknown-to-us bit pattern everywhere.
    sluice_trace_record(SLUICE_EV_COMMIT_BEGIN, 0, big, big, 0xdeadbeef, big, big);
    sluice_trace_record(SLUICE_EV_COMMIT_MEMBER, 0, 0, 0, big, big, 0xffffffff);
    sluice_trace_record(SLUICE_EV_COMMIT_DURABLE, 0, 1, big, 0xdeadbeef, big, 0);
    sluice_trace_record(SLUICE_EV_COMMIT_END, 0, big / 2, big, 7, 0, big);
    sluice_trace_record(SLUICE_EV_COMMIT_FS_WRITE, 0, 5, 0, big, big, 9);
    sluice_trace_record(SLUICE_EV_COMMIT_SHUFFLE, 0, 6, 0, big, big, big);
    sluice_trace_record(SLUICE_EV_MPI_SEND, 0, 7, 0, (uint64_t)-5, big, big);
    sluice_trace_record(SLUICE_EV_MPI_RECV, 0, 8, 0, (uint64_t)-5, big, big);
    sluice_trace_record(SLUICE_EV_CL_DAG_NODE, 0, 9, big, 1, big, big);
    sluice_trace_record(SLUICE_EV_CL_DAG_EDGE, 0, 9, 0, 1, 1, big);
    sluice_trace_record(SLUICE_EV_CL_TRANSFER, 0, 10, 3, 77, big, big);
    sluice_trace_record(SLUICE_EV_CL_CALL, 0, 11, 0, big, big, big);
    sluice_trace_record(SLUICE_EV_CKPT_CLOSE, 0, big, 0, 3, big, 0);
    sluice_trace_record(SLUICE_EV_COMMIT_SHUFFLE_RECV, 0, 12, 0, (uint64_t)-5, big, big);
    sluice_trace_record(SLUICE_EV_MSG_SEND, 0, 13, 0, big, big, 0x5D00);
    sluice_trace_record(SLUICE_EV_MSG_RECV, 0, 14, 0, 2, big, 7);
    sluice_trace_record(SLUICE_EV_CL_DIST_DATA, 0, 15, 0, big, big, 2);
    sluice_trace_record(SLUICE_EV_CL_DCR, 0, 16, 0, 0xdeadbeef, 1, big);
    sluice_trace_record(SLUICE_EV_DSM_ALLOC, 0, big, 0, big, big, big);
    sluice_trace_record(SLUICE_EV_DSM_FREE, 0, 0, 0, big, big, big);
    sluice_trace_record(SLUICE_EV_DSM_ACCESS, 0, big, big, big, big, 2);
    sluice_trace_record(SLUICE_EV_DSM_ACCESS, 0, 1, big, big, big, big);
    ASSERT_EQ(sluice_trace_write_file((dir + "/rank-2.pid-1.sluicetrace").c_str(), 0), 0);
    sluice_trace_stop();
    std::string d = "'" + dir + "'";
    EXPECT_EQ(run("summary --no-symbols " + d), 0);
    EXPECT_EQ(run("dump " + d), 0);
    EXPECT_EQ(run("perfetto " + d + "/out.json " + d), 0);
    std::string check =
        "/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' " + d +
        "/out.json";
    EXPECT_EQ(system(check.c_str()), 0) << "perfetto output is not valid JSON";
    EXPECT_EQ(run("heatmap --csv - " + d), 0);
    EXPECT_EQ(run("time --csv - " + d), 0);
    EXPECT_EQ(run("io --mtbf 1h " + d), 0);
    EXPECT_EQ(run("dsm --csv - " + d), 0);
    EXPECT_EQ(run("dag - " + d), 0);
    // And a folder holding only a torn file: exit 1 with the reason, no crash.
    std::vector<char> bytes = slurp(dir + "/rank-2.pid-1.sluicetrace");
    std::ofstream(dir + "/rank-2.pid-1.sluicetrace", std::ios::binary | std::ios::trunc)
        .write(bytes.data(), (std::streamsize)(bytes.size() / 2));
    for (const char *cmd :
         {"summary", "dump", "perfetto -", "heatmap --csv -", "time --csv -", "io", "dsm", "dag -"})
        EXPECT_EQ(run(std::string(cmd) + " " + d), 1) << cmd;
}
