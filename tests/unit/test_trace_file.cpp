/* SPDX-License-Identifier: MIT */
// Trace files: what the writer puts in comes back out of the reader unchanged, and the reader
// rejects truncated and corrupted files with a message saying so.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <algorithm>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include "common/host_id.h"
#include "sluice.h"
#include "trace/core.h"
#include "trace/kinds.h"
#include "trace/reader.h"
}

namespace {

std::string make_tmpdir()
{
    char tmpl[] = "/tmp/sluice-test-tracefile-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return d ? d : "/tmp";
}

std::vector<char> slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class TraceFile : public ::testing::Test {
protected:
    std::string dir = make_tmpdir();
    std::string path = dir + "/sample.sluicetrace";

    void start(unsigned backtrace, const char *debug = nullptr)
    {
        sluice_trace_options opt{};
        opt.dir = dir.c_str();
        opt.limit = 16u << 20;
        opt.backtrace = backtrace;
        opt.debug = debug;
        opt.rank = 1;
        opt.size = 3;
        ASSERT_EQ(sluice_trace_start(&opt), 0);
    }
    void TearDown() override
    {
        sluice_trace_stop();
        std::string cmd = "rm -rf '" + dir + "'";
        if (system(cmd.c_str()) != 0)
            ADD_FAILURE() << "cannot clean " << dir;
    }
    // A file with strings, several kinds, an error flag, a call site and two threads.
    std::vector<char> sample()
    {
        start(4);
        uint32_t p = sluice_trace_string("/scratch/ckpt.1");
        sluice_trace_record(SLUICE_EV_CKPT_OPEN, 0, 1000, 50, p, 0101, 7);
        sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, 2000, 60, 7, 4096, 0);
        sluice_trace_record(SLUICE_EV_CKPT_WRITE, SLUICE_EVF_ERROR, 3000, 70, 7, 0, 28);
        sluice_trace_mark("phase two");
        std::thread([] { sluice_trace_instant(SLUICE_EV_MPI_SEND, 2, 1 << 20, 9); }).join();
        EXPECT_EQ(sluice_trace_write_file(path.c_str(), 0), 0);
        return slurp(path);
    }
    static std::string parse_error(const std::vector<char> &bytes)
    {
        char err[512] = "";
        sluice_trace_file *f = nullptr;
        int r = sluice_trace_file_parse(bytes.data(), bytes.size(), "sample", &f, err, sizeof err);
        if (r == 0) {
            sluice_trace_file_free(f);
            return "";
        }
        EXPECT_EQ(f, nullptr);
        return err;
    }
};

} // namespace

TEST_F(TraceFile, RoundTripKeepsHeaderStringsEventsAndCallSites)
{
    std::vector<char> bytes = sample();
    char err[512];
    sluice_trace_file *f = nullptr;
    ASSERT_EQ(sluice_trace_file_parse(bytes.data(), bytes.size(), "sample", &f, err, sizeof err), 0) << err;

    EXPECT_EQ(f->header.version, SLUICE_TF_VERSION);
    EXPECT_EQ(f->header.rank, 1);
    EXPECT_EQ(f->header.size, 3);
    EXPECT_EQ(f->header.pid, getpid());
    EXPECT_EQ(f->header.ppid, getppid());
    EXPECT_EQ(f->header.backtrace_depth, 4u);
    EXPECT_EQ(f->header.kind_count, (uint32_t)SLUICE_EV_COUNT);
    EXPECT_GT(f->header.start_real_ns, 1600000000ull * 1000000000ull);  // a real wall-clock time
    EXPECT_GE(f->header.end_mono_ns, f->header.start_mono_ns);
    char host[256] = "";
    gethostname(host, sizeof host);
    EXPECT_EQ(std::string(f->header.hostname), std::string(host).substr(0, 63));
    EXPECT_NE(std::string(f->header.exe).find("test_trace_file"), std::string::npos) << f->header.exe;
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
        EXPECT_STREQ(sluice_trace_file_kind(f, k), sluice_kinds[k].name);

    ASSERT_EQ(f->nthreads, 2u);
    const sluice_trace_rthread *main_t = nullptr, *other = nullptr;
    for (size_t i = 0; i < 2; i++)
        (f->threads[i].info.tid == gettid() ? main_t : other) = &f->threads[i];
    ASSERT_NE(main_t, nullptr);
    ASSERT_NE(other, nullptr);
    ASSERT_EQ(main_t->info.events, 4u);
    const sluice_tf_event *e = main_t->events;
    EXPECT_EQ(e[0].kind, SLUICE_EV_CKPT_OPEN);
    EXPECT_STREQ(sluice_trace_file_string(f, e[0].a), "/scratch/ckpt.1");
    EXPECT_EQ(e[0].b, 0101u);
    EXPECT_EQ(e[0].c, 7u);
    EXPECT_EQ(e[0].t_ns, 1000u);
    EXPECT_EQ(e[0].dur_ns, 50u);
    EXPECT_EQ(e[1].b, 4096u);
    EXPECT_EQ(e[2].flags, SLUICE_EVF_ERROR);
    EXPECT_EQ(e[2].c, 28u);
    EXPECT_EQ(e[3].kind, SLUICE_EV_MARK);
    EXPECT_STREQ(sluice_trace_file_string(f, e[3].a), "phase two");
    ASSERT_EQ(other->info.events, 1u);
    EXPECT_EQ(other->events[0].kind, SLUICE_EV_MPI_SEND);
    EXPECT_EQ(other->events[0].b, 1u << 20);
    EXPECT_NE(other->info.last_ns, 0u);

    // Call sites: every event has one; its innermost frame lies in this test program, which the
    // module map knows, and the open and the first write (different lines) differ.
    for (uint64_t i = 0; i < main_t->info.events; i++) {
        const sluice_trace_rcallsite *cs = sluice_trace_file_callsite(f, main_t->events[i].callsite);
        ASSERT_NE(cs, nullptr) << "event " << i;
        ASSERT_GE(cs->depth, 1u);
        EXPECT_LE(cs->depth, 4u);
        const sluice_trace_rmodule *m = sluice_trace_file_module(f, cs->frames[0]);
        ASSERT_NE(m, nullptr) << std::hex << cs->frames[0];
        EXPECT_TRUE(m->path[0] == '/' || m->path[0] == '[') << "module path [" << m->path << "]";
        if (i < 3) {
            EXPECT_NE(std::string(m->path).find("test_trace_file"), std::string::npos) << m->path;
            // The file address (ip - bias) lies inside the program's file: the bias is right.
            struct stat st;
            ASSERT_EQ(stat(m->path, &st), 0) << m->path;
            EXPECT_LT(cs->frames[0] - m->m.bias, (uint64_t)st.st_size);
            EXPECT_GE(cs->frames[0] - m->m.bias, m->m.offset);
        }
    }
    EXPECT_NE(main_t->events[0].callsite, main_t->events[1].callsite);
    EXPECT_GT(f->nmodules, 2u);  // the program, libc, ...
    sluice_trace_file_free(f);
}

TEST_F(TraceFile, EveryTruncationIsRejectedAsTruncated)
{
    std::vector<char> bytes = sample();
    ASSERT_GT(bytes.size(), sizeof(sluice_tf_header));
    for (size_t cut = 0; cut < bytes.size(); cut += (cut < 600 ? 1 : 97)) {
        std::vector<char> part(bytes.begin(), bytes.begin() + cut);
        std::string err = parse_error(part);
        ASSERT_FALSE(err.empty()) << "a file cut at " << cut << " of " << bytes.size() << " bytes was accepted";
        if (cut >= 8) {
            EXPECT_NE(err.find("truncated"), std::string::npos) << "cut " << cut << ": " << err;
        }
    }
    EXPECT_EQ(parse_error(bytes), "");
}

TEST_F(TraceFile, EveryFlippedByteIsRejected)
{
    std::vector<char> bytes = sample();
    size_t step = bytes.size() / 400 + 1;
    for (size_t at = 0; at < bytes.size(); at += step) {
        std::vector<char> bad = bytes;
        bad[at] ^= 0x20;
        std::string err = parse_error(bad);
        EXPECT_FALSE(err.empty()) << "a flipped byte at " << at << " was not detected";
    }
}

TEST_F(TraceFile, ClearMessagesForForeignAndNewerFiles)
{
    std::vector<char> bytes = sample();
    std::vector<char> bad = bytes;
    bad[0] = 'X';
    EXPECT_NE(parse_error(bad).find("not a sluice trace file"), std::string::npos);
    bad = bytes;
    uint32_t v = 99;
    std::memcpy(bad.data() + offsetof(sluice_tf_header, version), &v, 4);
    EXPECT_NE(parse_error(bad).find("version 99"), std::string::npos) << parse_error(bad);
    bad = bytes;
    bad.resize(bytes.size() - 1);
    EXPECT_NE(parse_error(bad).find("truncated"), std::string::npos);
    bad = bytes;
    bad.push_back(0);
    EXPECT_NE(parse_error(bad).find("after the END"), std::string::npos) << parse_error(bad);

    char err[512];
    sluice_trace_file *f = nullptr;
    EXPECT_NE(sluice_trace_file_read((dir + "/missing.sluicetrace").c_str(), &f, err, sizeof err), 0);
    EXPECT_NE(std::string(err).find("No such file"), std::string::npos) << err;
}

TEST_F(TraceFile, DumpNamesTheFileByRankAndPidOnce)
{
    start(0);
    sluice_trace_instant(SLUICE_EV_MARK, 0, 0, 0);
    ASSERT_EQ(sluice_trace_dump(0), 0);
    char host[SLUICE_HOST_ID_LEN + 1];
    sluice_host_id(host);
    std::string name = dir + "/rank-1.pid-" + std::to_string(getpid()) + "." + host + ".sluicetrace";
    ASSERT_EQ(access(name.c_str(), R_OK), 0) << name;
    EXPECT_NE(access((name + ".tmp").c_str(), F_OK), 0);
    // A second dump (destructor after a signal handler wrote the file) is a no-op.
    unlink(name.c_str());
    EXPECT_EQ(sluice_trace_dump(0), 0);
    EXPECT_NE(access(name.c_str(), F_OK), 0);
}

TEST_F(TraceFile, DebugStreamWritesOneLinePerEventToAFileNamedByRankAndPid)
{
    std::string spec = dir + "/debug.%r.%p.log";
    start(0, spec.c_str());
    sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, sluice_now_ns(), 1500, 5, 65536, 0);
    sluice_trace_mark("checkpoint 3");
    sluice_trace_stop();
    std::string log = dir + "/debug.1." + std::to_string(getpid()) + ".log";
    std::vector<char> text = slurp(log);
    std::string s(text.begin(), text.end());
    ASSERT_EQ(std::count(s.begin(), s.end(), '\n'), 2) << s;
    EXPECT_NE(s.find("sluice[1] +"), std::string::npos) << s;
    EXPECT_NE(s.find("CKPT_WRITE fd=5, bytes=65536, offset=0 dur=1500ns"), std::string::npos) << s;
    EXPECT_NE(s.find("MARK label=\"checkpoint 3\""), std::string::npos) << s;
}
