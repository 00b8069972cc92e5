/* SPDX-License-Identifier: MIT */
// Trace buffers: concurrent writers keep every event in per-thread order, the memory limit
// drops (and counts) instead of crashing, and a disabled trace records nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

extern "C" {
#include "trace/core.h"
#include "trace/reader.h"
}

namespace
{

std::string make_tmpdir()
{
    char tmpl[] = "/tmp/sluice-test-trace-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return d ? d : "/tmp";
}

struct TraceSession {
    std::string dir = make_tmpdir();
    explicit TraceSession(uint64_t limit, unsigned backtrace = 0)
    {
        sluice_trace_options opt{};
        opt.dir = dir.c_str();
        opt.limit = limit;
        opt.backtrace = backtrace;
        opt.rank = 2;
        opt.size = 5;
        EXPECT_EQ(sluice_trace_start(&opt), 0);
    }
    ~TraceSession()
    {
        sluice_trace_stop();
        std::string cmd = "rm -rf '" + dir + "'";
        if (system(cmd.c_str()) != 0)
            ADD_FAILURE() << "cannot clean " << dir;
    }
    sluice_trace_file *write_and_read(const std::string &name = "t")
    {
        std::string path = dir + "/" + name + ".sluicetrace"; // written once (O_EXCL)
        EXPECT_EQ(sluice_trace_write_file(path.c_str(), 0), 0);
        char err[512];
        sluice_trace_file *f = nullptr;
        EXPECT_EQ(sluice_trace_file_read(path.c_str(), &f, err, sizeof err), 0) << err;
        return f;
    }
};

} // namespace

TEST(TraceBuffer, ConcurrentWritersKeepEveryEventInThreadOrder)
{
    TraceSession s(64u << 20);
    const int threads = 8, per_thread = 20000;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
        ts.emplace_back([t] {
            for (int i = 0; i < per_thread; i++)
                sluice_trace_record(SLUICE_EV_CKPT_WRITE, 0, sluice_now_ns(), 7, (uint64_t)t, (uint64_t)i,
                                    42);
        });
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(sluice_trace_events_kept(), (uint64_t)threads * per_thread);
    EXPECT_EQ(sluice_trace_events_dropped(SLUICE_EV_CKPT_WRITE), 0u);

    sluice_trace_file *f = s.write_and_read();
    ASSERT_NE(f, nullptr);
    std::vector<int> seen(threads, 0);
    for (size_t i = 0; i < f->nthreads; i++) {
        const sluice_trace_rthread &t = f->threads[i];
        if (t.info.events == 0)
            continue;
        ASSERT_EQ(t.info.events, (uint64_t)per_thread);
        uint64_t writer = t.events[0].a;
        ASSERT_LT(writer, (uint64_t)threads);
        seen[writer]++;
        uint64_t prev_t = 0;
        for (uint64_t e = 0; e < t.info.events; e++) {
            const sluice_tf_event &ev = t.events[e];
            ASSERT_EQ(ev.kind, SLUICE_EV_CKPT_WRITE);
            ASSERT_EQ(ev.a, writer) << "events of two threads mixed in one buffer";
            ASSERT_EQ(ev.b, e) << "event lost or reordered";
            ASSERT_EQ(ev.c, 42u);
            ASSERT_EQ(ev.dur_ns, 7u);
            ASSERT_GE(ev.t_ns, prev_t);
            prev_t = ev.t_ns;
        }
    }
    for (int t = 0; t < threads; t++)
        EXPECT_EQ(seen[t], 1) << "thread " << t;
    EXPECT_EQ(f->header.rank, 2);
    EXPECT_EQ(f->header.size, 5);
    EXPECT_EQ(f->header.flags & SLUICE_TF_FLAG_DROPPED, 0u);
    sluice_trace_file_free(f);
}

TEST(TraceBuffer, LimitDropsAndCountsPerKindWithoutCrashing)
{
    const uint64_t limit = 64u << 10;
    TraceSession s(limit);
    const int threads = 4, per_thread = 50000;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
        ts.emplace_back([] {
            for (int i = 0; i < per_thread; i++)
                sluice_trace_record(i % 3 ? SLUICE_EV_CKPT_READ : SLUICE_EV_MPI_SEND, 0, sluice_now_ns(), 0,
                                    1, 2, 3);
        });
    for (auto &t : ts)
        t.join();
    uint64_t kept = sluice_trace_events_kept();
    uint64_t dropped =
        sluice_trace_events_dropped(SLUICE_EV_CKPT_READ) + sluice_trace_events_dropped(SLUICE_EV_MPI_SEND);
    EXPECT_EQ(kept + dropped, (uint64_t)threads * per_thread);
    EXPECT_GT(dropped, 0u);
    EXPECT_GT(sluice_trace_events_dropped(SLUICE_EV_MPI_SEND), 0u);
    EXPECT_LE(kept * sizeof(sluice_tf_event), limit) << "kept more events than the budget holds";
    EXPECT_LE(sluice_trace_bytes_used(), limit);

    sluice_trace_file *f = s.write_and_read();
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->header.flags & SLUICE_TF_FLAG_DROPPED, 0u);
    EXPECT_EQ(f->header.trace_limit, limit);
    uint64_t file_kept = 0, file_dropped = 0, file_dropped_send = 0;
    for (size_t i = 0; i < f->nthreads; i++) {
        file_kept += f->threads[i].info.events;
        file_dropped += f->threads[i].info.dropped;
        file_dropped_send += f->threads[i].overflow[SLUICE_EV_MPI_SEND];
    }
    EXPECT_EQ(file_kept, kept);
    EXPECT_EQ(file_dropped, dropped);
    EXPECT_EQ(file_dropped_send, sluice_trace_events_dropped(SLUICE_EV_MPI_SEND));
    sluice_trace_file_free(f);
}

TEST(TraceBuffer, ManyThreadsStayWithinTheLimitAndOrphanEventsAreCounted)
{
    const uint64_t limit = 64u << 10; // room for a handful of threads only
    TraceSession s(limit);
    const int threads = 200, per_thread = 10;
    for (int round = 0; round < threads / 20; round++) {
        std::vector<std::thread> ts;
        for (int t = 0; t < 20; t++)
            ts.emplace_back([] {
                for (int i = 0; i < per_thread; i++)
                    sluice_trace_instant(SLUICE_EV_CL_CALL, 1, 2, 3);
            });
        for (auto &t : ts)
            t.join();
    }
    EXPECT_LE(sluice_trace_bytes_used(), limit);
    uint64_t kept = sluice_trace_events_kept(), dropped = sluice_trace_events_dropped(SLUICE_EV_CL_CALL);
    EXPECT_EQ(kept + dropped, (uint64_t)threads * per_thread);
    EXPECT_GT(kept, 0u);
    EXPECT_GT(dropped, 0u);

    sluice_trace_file *f = s.write_and_read();
    ASSERT_NE(f, nullptr);
    uint64_t file_kept = 0, file_dropped = 0, real_threads = 0, orphan_records = 0;
    for (size_t i = 0; i < f->nthreads; i++) {
        file_kept += f->threads[i].info.events;
        file_dropped += f->threads[i].overflow[SLUICE_EV_CL_CALL];
        if (f->threads[i].info.index == SLUICE_TF_NO_THREAD) {
            orphan_records++;
            EXPECT_EQ(f->threads[i].info.tid, -1);
            EXPECT_EQ(f->threads[i].info.events, 0u);
        } else {
            real_threads++;
        }
    }
    EXPECT_EQ(orphan_records, 1u);
    EXPECT_LT(real_threads, (uint64_t)threads);
    EXPECT_EQ(file_kept, kept);
    EXPECT_EQ(file_dropped, dropped);
    sluice_trace_file_free(f);
}

TEST(TraceBuffer, ThreadsWithFewEventsUseSmallChunks)
{
    TraceSession s(64u << 20);
    const int threads = 100;
    for (int round = 0; round < threads / 20; round++) {
        std::vector<std::thread> ts;
        for (int t = 0; t < 20; t++)
            ts.emplace_back([] { sluice_trace_instant(SLUICE_EV_MARK, 0, 0, 0); });
        for (auto &t : ts)
            t.join();
    }
    EXPECT_EQ(sluice_trace_events_kept(), (uint64_t)threads);
    // one state page and one 4 KiB chunk per thread, not a 64 KiB chunk each
    EXPECT_LE(sluice_trace_bytes_used(), (uint64_t)threads * 8192);
}

TEST(TraceBuffer, ZeroLimitKeepsNothingAndCountsEverything)
{
    TraceSession s(0);
    for (int i = 0; i < 1000; i++)
        sluice_trace_instant(SLUICE_EV_MARK, 0, 0, 0);
    EXPECT_EQ(sluice_trace_events_kept(), 0u);
    EXPECT_EQ(sluice_trace_events_dropped(SLUICE_EV_MARK), 1000u);
}

TEST(TraceBuffer, DisabledTraceRecordsNothing)
{
    sluice_trace_stop();
    EXPECT_FALSE(sluice_trace_active());
    sluice_trace_record(SLUICE_EV_MARK, 0, 1, 0, 0, 0, 0);
    sluice_trace_instant(SLUICE_EV_MARK, 0, 0, 0);
    EXPECT_EQ(sluice_trace_events_kept(), 0u);
    EXPECT_EQ(sluice_trace_string("x"), 0u);
    EXPECT_EQ(sluice_time_enter(SLUICE_TIME_MPI), SLUICE_TIME_USER);
}

TEST(TraceBuffer, OutOfRangeKindIsIgnored)
{
    TraceSession s(1u << 20);
    sluice_trace_record((sluice_event_kind)SLUICE_EV_COUNT, 0, 1, 0, 0, 0, 0);
    sluice_trace_record((sluice_event_kind)60000, 0, 1, 0, 0, 0, 0);
    EXPECT_EQ(sluice_trace_events_kept(), 0u);
}

TEST(TraceTime, AccountsEachStateAndNests)
{
    TraceSession s(1u << 20);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
    EXPECT_EQ(prev, SLUICE_TIME_USER);
    usleep(30000);
    sluice_time_state inner = sluice_time_enter(SLUICE_TIME_MPI);
    EXPECT_EQ(inner, SLUICE_TIME_SLEEP);
    usleep(20000);
    sluice_time_leave(inner);
    EXPECT_EQ(sluice_time_enter(SLUICE_TIME_SLEEP), SLUICE_TIME_SLEEP)
        << "leave() must restore the outer state";
    usleep(10000);
    sluice_time_leave(prev);

    sluice_trace_file *f = s.write_and_read();
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->nthreads, 1u);
    const uint64_t *t = f->threads[0].info.time_ns;
    EXPECT_GE(t[SLUICE_TIME_SLEEP], 40000000u); // 30 ms + 10 ms slept in the SLEEP state
    EXPECT_GE(t[SLUICE_TIME_MPI], 20000000u);
    EXPECT_EQ(t[SLUICE_TIME_SLUICE], 0u);
    uint64_t sum = t[0] + t[1] + t[2] + t[3];
    EXPECT_LE(sum, f->threads[0].info.last_ns - f->threads[0].info.first_ns);
    sluice_trace_file_free(f);
}

// A trace written while another thread switches states (as the fatal-signal dump does while the
// serving loop runs) reads that thread's running clock: every field the writer reads from another
// thread is written atomically there (the TSan job runs this test).
TEST(TraceTime, AFileWrittenWhileAThreadSwitchesStatesReadsItsRunningClock)
{
    TraceSession s(1u << 20);
    std::atomic<bool> stop{false}, started{false};
    std::thread busy([&] {
        sluice_time_state outer = sluice_time_enter(SLUICE_TIME_MPI);
        started = true;
        while (!stop) {
            sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
            sluice_time_leave(prev);
        }
        sluice_time_leave(outer);
    });
    while (!started)
        std::this_thread::yield();
    uint64_t mpi_ns = 0;
    for (int i = 0; i < 20; i++) {
        sluice_trace_file *f = s.write_and_read("t" + std::to_string(i));
        ASSERT_NE(f, nullptr);
        for (size_t k = 0; k < f->nthreads; k++)
            mpi_ns = std::max(mpi_ns, f->threads[k].info.time_ns[SLUICE_TIME_MPI]);
        sluice_trace_file_free(f);
    }
    stop = true;
    busy.join();
    EXPECT_GT(mpi_ns, 0u) << "the busy thread's time in its state was read while it ran";
}
