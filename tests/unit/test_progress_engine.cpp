/* SPDX-License-Identifier: MIT */
// The progress engine on its real thread: posted work runs once and in order, drain waits for
// it, pollers run until removed and never after removal returns, an idle thread backs off to
// SLUICE_PROGRESS_SLEEP_MAX and a post wakes it from that sleep, and idle long enough on to
// SLUICE_PROGRESS_IDLE_SLEEP; stop/restart, fork, shutdown; a program thread that helps runs
// the any-thread pollers, never alongside the progress thread.
// Waits for the thread are bounded condition polls (never a timing assertion).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "config/config.h"
#include "progress/control.h"
#include "progress/progress.h"
}

namespace
{

// Polls cond every millisecond for up to 20 s; returns whether it became true.
bool eventually(const std::function<bool()> &cond)
{
    for (int i = 0; i < 20000; i++) {
        if (cond())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return cond();
}

sluice_progress_stats stats()
{
    sluice_progress_stats s;
    sluice_progress_get_stats(&s);
    return s;
}

struct Recorder {
    std::vector<int> order; // touched only on the progress thread until drained
    std::atomic<int> on_thread{0};
};
struct Item {
    Recorder *r;
    int n;
};

void record(void *arg)
{
    auto *it = static_cast<Item *>(arg);
    it->r->order.push_back(it->n);
    if (sluice_progress_is_self())
        it->r->on_thread++;
}

class ProgressEngine : public ::testing::Test
{
  protected:
    void TearDown() override { sluice_progress_set_sleep_max_us(0); }
};

TEST_F(ProgressEngine, PostedWorkRunsOnceInPostingOrderOnTheProgressThread)
{
    Recorder r;
    std::vector<Item> items(5000);
    for (int i = 0; i < 5000; i++) {
        items[i] = {&r, i};
        sluice_progress_post(record, &items[i]);
    }
    sluice_progress_drain();
    ASSERT_EQ(r.order.size(), 5000u);
    for (int i = 0; i < 5000; i++)
        ASSERT_EQ(r.order[i], i) << "at position " << i;
    EXPECT_EQ(r.on_thread.load(), 5000);
    EXPECT_FALSE(sluice_progress_is_self());
}

void slow_set(void *arg)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    static_cast<std::atomic<int> *>(arg)->store(1);
}

TEST_F(ProgressEngine, DrainReturnsOnlyAfterEarlierWorkHasRun)
{
    std::atomic<int> done{0};
    sluice_progress_post(slow_set, &done);
    sluice_progress_drain();
    EXPECT_EQ(done.load(), 1);
}

TEST_F(ProgressEngine, DrainFromConcurrentThreadsSeesTheirOwnWork)
{
    std::vector<std::thread> ts;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; t++)
        ts.emplace_back([&failures] {
            for (int i = 0; i < 200; i++) {
                std::atomic<int> done{0};
                sluice_progress_post([](void *a) { static_cast<std::atomic<int> *>(a)->store(1); }, &done);
                sluice_progress_drain();
                if (done.load() != 1)
                    failures++;
            }
        });
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(failures.load(), 0);
}

struct Nested {
    std::vector<int> order;
};
void nested_inner(void *arg)
{
    static_cast<Nested *>(arg)->order.push_back(2);
}
void nested_outer(void *arg)
{
    auto *n = static_cast<Nested *>(arg);
    n->order.push_back(1);
    sluice_progress_post(nested_inner, n);
    sluice_progress_drain(); // on the progress thread: runs the inner item here, no deadlock
    // The inner item has finished before the outer one: a drain on another thread must still
    // wait for the outer one (this sleep makes an early return visible).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    n->order.push_back(3);
}

TEST_F(ProgressEngine, WorkMayPostAndDrainFromTheProgressThread)
{
    Nested n;
    sluice_progress_post(nested_outer, &n);
    sluice_progress_drain();
    EXPECT_EQ(n.order, (std::vector<int>{1, 2, 3}));
}

int count_poll(void *arg)
{
    static_cast<std::atomic<int> *>(arg)->fetch_add(1);
    return 0;
}

TEST_F(ProgressEngine, PollerIsCalledRepeatedlyAndNeverAfterRemoval)
{
    std::atomic<int> calls{0};
    int id = sluice_progress_add_poller(count_poll, &calls);
    ASSERT_GT(id, 0);
    ASSERT_TRUE(eventually([&] { return calls.load() >= 20; }));
    sluice_progress_remove_poller(id);
    int after = calls.load();
    uint64_t rounds = stats().rounds;
    ASSERT_TRUE(eventually([&] { return stats().rounds >= rounds + 5; }));
    EXPECT_EQ(calls.load(), after);
}

struct SlowPoller {
    std::atomic<int> inside{0};
    std::atomic<int> entered{0};
};
int slow_poll(void *arg)
{
    auto *p = static_cast<SlowPoller *>(arg);
    p->inside = 1;
    p->entered++;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    p->inside = 0;
    return 0;
}

TEST_F(ProgressEngine, RemovePollerWaitsForTheCallInProgress)
{
    SlowPoller p;
    int id = sluice_progress_add_poller(slow_poll, &p);
    ASSERT_TRUE(eventually([&] { return p.inside.load() == 1; }));
    sluice_progress_remove_poller(id);
    EXPECT_EQ(p.inside.load(), 0);
    int entered = p.entered.load();
    uint64_t rounds = stats().rounds;
    ASSERT_TRUE(eventually([&] { return stats().rounds >= rounds + 3; }));
    EXPECT_EQ(p.entered.load(), entered);
}

int self_removing_poll(void *arg)
{
    auto *id = static_cast<std::atomic<int> *>(arg);
    if (id->load() <= 0)
        return 0;                              // called before add_poller returned the id, or already removed
    sluice_progress_remove_poller(id->load()); // must not wait for itself
    id->store(-1);
    return 1;
}

TEST_F(ProgressEngine, PollerMayRemoveItself)
{
    std::atomic<int> id{0};
    id = sluice_progress_add_poller(self_removing_poll, &id);
    ASSERT_TRUE(eventually([&] { return id.load() == -1; }));
    uint64_t rounds = stats().rounds;
    ASSERT_TRUE(eventually([&] { return stats().rounds >= rounds + 3; }));
    EXPECT_EQ(id.load(), -1); // not called again (it would return early, but not set -1 twice)
}

TEST_F(ProgressEngine, IdleThreadBacksOffToTheCapAndNeverBeyond)
{
    sluice_progress_set_sleep_max_us(400);
    sluice_progress_post([](void *) {}, nullptr); // make sure a thread runs
    sluice_progress_drain();
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns == 400000u; }));
    sluice_progress_set_sleep_max_us(400); // same cap again: restarts longest_sleep_ns
    uint64_t sleeps = stats().sleeps;
    ASSERT_TRUE(eventually([&] { return stats().sleeps > sleeps + 20; }));
    auto s = stats();
    EXPECT_GT(s.sleeps, 5u);
    EXPECT_EQ(s.longest_sleep_ns, 400000u); // since the cap was set
    EXPECT_GT(s.parks, 0u);                 // 400 us sleeps park on the futex
}

int busy_poll(void *arg)
{
    static_cast<std::atomic<int> *>(arg)->fetch_add(1);
    return 1; // always found something: no sleeping
}

TEST_F(ProgressEngine, PollerThatFindsWorkKeepsTheThreadAwake)
{
    std::atomic<int> calls{0};
    sluice_progress_set_sleep_max_us(1000);
    int id = sluice_progress_add_poller(busy_poll, &calls);
    ASSERT_TRUE(eventually([&] { return calls.load() > 100; }));
    uint64_t sleeps = stats().sleeps;
    int c0 = calls.load();
    ASSERT_TRUE(eventually([&] { return calls.load() > c0 + 1000; }));
    EXPECT_EQ(stats().sleeps, sleeps);
    sluice_progress_remove_poller(id);
}

TEST_F(ProgressEngine, PostCutsALongSleepShort)
{
    // A one-second cap: the thread parks for a full second when idle. The wake-up counter
    // proves the post ended that sleep instead of waiting it out.
    sluice_progress_set_sleep_max_us(1000000);
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns == 1000000000u; }));
    uint64_t wakeups = stats().wakeups;
    std::atomic<int> done{0};
    sluice_progress_post([](void *a) { static_cast<std::atomic<int> *>(a)->store(1); }, &done);
    sluice_progress_drain();
    EXPECT_EQ(done.load(), 1);
    EXPECT_GT(stats().wakeups, wakeups);
}

TEST_F(ProgressEngine, WakeResetsTheBackOff)
{
    sluice_progress_set_sleep_max_us(1000000);
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns == 1000000000u; }));
    sluice_progress_wake();
    // after the wake the thread sleeps from the minimum again, climbing back up
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns < 1000000000u; }));
}

// Makes sure the thread runs (one empty item) and returns how many threads were started so far.
uint64_t thread_running_started()
{
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    EXPECT_EQ(stats().running, 1);
    return stats().threads_started;
}

// Posts an item that stores v into *done and waits for it to have run.
void post_store_and_drain(std::atomic<int> *done, int v)
{
    struct Store {
        std::atomic<int> *done;
        int v;
    } store{done, v};
    sluice_progress_post(
        [](void *a) {
            auto *st = static_cast<Store *>(a);
            st->done->store(st->v);
        },
        &store);
    sluice_progress_drain();
    EXPECT_EQ(done->load(), v);
}

TEST_F(ProgressEngine, StopJoinsTheThreadAndTheNextPostStartsANewOne)
{
    uint64_t started = thread_running_started();
    sluice_progress_stop();
    EXPECT_EQ(stats().running, 0);
    EXPECT_EQ(sluice_progress_thread_cpu_ns(), -1);
    std::atomic<int> done{0};
    post_store_and_drain(&done, 1);
    EXPECT_EQ(stats().running, 1);
    EXPECT_EQ(stats().threads_started, started + 1);
}

// stop_begin asks the thread to end without waiting for it; the thread ends on its own (the exit
// vote's barrier overlaps that), and a post afterwards joins it and starts a new one. A post right
// after stop_begin calls the stop off or starts a new thread: its work runs either way and a
// thread is left running. run_here runs on the calling thread.
TEST_F(ProgressEngine, StopBeginEndsTheThreadWithoutWaitingAndAPostStartsItAgain)
{
    uint64_t started = thread_running_started();
    sluice_progress_stop_begin();
    for (int i = 0; i < 5000 && stats().running; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(stats().running, 0);
    std::atomic<int> done{0};
    post_store_and_drain(&done, 1);
    EXPECT_EQ(stats().running, 1);
    EXPECT_EQ(stats().threads_started, started + 1);

    sluice_progress_stop_begin();
    post_store_and_drain(&done, 2);
    EXPECT_EQ(stats().running, 1);

    sluice_progress_stop_begin();
    sluice_progress_stop();
    EXPECT_EQ(stats().running, 0);
    std::thread::id ran_on;
    sluice_progress_run_here([](void *a) { *static_cast<std::thread::id *>(a) = std::this_thread::get_id(); },
                             &ran_on);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    EXPECT_EQ(stats().running, 0);
}

// Runs fn in a forked child and returns its exit status (fn returns the status).
int in_child(int (*fn)())
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn());
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

TEST_F(ProgressEngine, ForkedChildHasNoThreadUntilItUsesOne)
{
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    ASSERT_EQ(stats().running, 1);
    int rc = in_child([]() -> int {
        if (stats().running != 0)
            return 1;
        if (stats().threads_started != 0)
            return 2;
        std::atomic<int> done{0};
        sluice_progress_post([](void *a) { static_cast<std::atomic<int> *>(a)->store(1); }, &done);
        sluice_progress_drain();
        if (done.load() != 1)
            return 3;
        if (stats().running != 1)
            return 4;
        sluice_progress_stop();
        return 0;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(stats().running, 1); // the parent's thread is untouched
}

TEST_F(ProgressEngine, AfterShutdownWorkRunsOnThePostingThread)
{
    int rc = in_child([]() -> int {
        sluice_progress_shutdown();
        std::thread::id ran_on;
        struct Arg {
            std::thread::id *id;
        } a{&ran_on};
        sluice_progress_post([](void *p) { *static_cast<Arg *>(p)->id = std::this_thread::get_id(); }, &a);
        if (ran_on != std::this_thread::get_id())
            return 1;
        if (stats().running != 0)
            return 2;
        sluice_progress_drain(); // nothing pending: returns
        return 0;
    });
    EXPECT_EQ(rc, 0);
}

TEST_F(ProgressEngine, IdleThreadSleepsLongerOnceIdleForAWhile)
{
    // (The unit tests load no configuration: the defaults of vars.def, here.) The thread reads
    // the configuration, which a running program never changes: stopped first, so that the new
    // values are written before the thread that reads them starts (TSan saw the race).
    sluice_progress_stop();
    ASSERT_EQ(sluice_config_parse_one(&sluice_config, SLUICE_CFG_PROGRESS_SLEEP_MAX, "2000"), 0);
    ASSERT_EQ(sluice_config_parse_one(&sluice_config, SLUICE_CFG_PROGRESS_IDLE_SLEEP, "50000"), 0);
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    // Past SLUICE_PROGRESS_SLEEP_MAX (2 ms) only in deep idle, after 100 ms without work.
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns > sluice_config.PROGRESS_SLEEP_MAX * 1000u; }));
    EXPECT_LE(stats().longest_sleep_ns, sluice_config.PROGRESS_IDLE_SLEEP * 1000u);
    // Work brings the short sleeps back at once.
    uint64_t sleeps = stats().sleeps;
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    ASSERT_TRUE(eventually([&] { return stats().sleeps > sleeps + 2; }));
    EXPECT_LT(stats().last_sleep_ns, sluice_config.PROGRESS_SLEEP_MAX * 1000u);
}

TEST_F(ProgressEngine, AwaitedAnswerKeepsSleepsShort)
{
    // While an answer is awaited (sluice_progress_expect), 300 ms without work never reach deep
    // idle: every sleep stays at SLUICE_PROGRESS_SLEEP_MAX; once none is, deep idle comes back.
    sluice_progress_stop();
    ASSERT_EQ(sluice_config_parse_one(&sluice_config, SLUICE_CFG_PROGRESS_SLEEP_MAX, "2000"), 0);
    ASSERT_EQ(sluice_config_parse_one(&sluice_config, SLUICE_CFG_PROGRESS_IDLE_SLEEP, "50000"), 0);
    sluice_progress_expect(1);
    sluice_progress_set_sleep_max_us(0); // restarts longest_sleep_ns
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    uint64_t sleeps = stats().sleeps;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_GT(stats().sleeps, sleeps + 10);
    EXPECT_LE(stats().longest_sleep_ns, sluice_config.PROGRESS_SLEEP_MAX * 1000u);
    sluice_progress_expect(-1);
    ASSERT_TRUE(eventually([] { return stats().last_sleep_ns > sluice_config.PROGRESS_SLEEP_MAX * 1000u; }));
}

struct Helped {
    std::atomic<int> inside{0}, overlaps{0}, on_progress{0}, elsewhere{0};
};

int any_thread_poll(void *arg)
{
    auto *h = static_cast<Helped *>(arg);
    if (h->inside.fetch_add(1) != 0)
        h->overlaps++;
    (sluice_progress_is_self() ? h->on_progress : h->elsewhere)++;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    h->inside.fetch_sub(1);
    return sluice_progress_is_self() ? 0 : 1; // the progress thread backs off, helpers count
}

int progress_only_poll(void *arg)
{
    auto *h = static_cast<Helped *>(arg);
    (sluice_progress_is_self() ? h->on_progress : h->elsewhere)++;
    return 0;
}

TEST_F(ProgressEngine, HelpingThreadRunsAnyThreadPollersOneThreadAtATime)
{
    Helped any, only;
    int a = sluice_progress_add_poller_any_thread(any_thread_poll, &any);
    int b = sluice_progress_add_poller(progress_only_poll, &only);
    ASSERT_TRUE(eventually([&] { return any.on_progress.load() > 0; }));
    int helped = 0; // (a call finds the progress thread inside its round now and then: it skips)
    ASSERT_TRUE(eventually([&] {
        helped += sluice_progress_help() > 0;
        return helped >= 20;
    }));
    EXPECT_TRUE(sluice_progress_wants_help()); // the helpers found work just now
    sluice_progress_remove_poller(a);
    sluice_progress_remove_poller(b);
    EXPECT_GT(helped, 0);
    EXPECT_EQ(any.elsewhere.load(), helped); // each helping call that ran it ran it here
    EXPECT_EQ(any.overlaps.load(), 0);       // never on two threads at once
    EXPECT_EQ(only.elsewhere.load(), 0);     // a plain poller stays on the progress thread
    EXPECT_GT(stats().helped, 0u);
}

TEST_F(ProgressEngine, ThreadCpuTimeIsReadable)
{
    sluice_progress_post([](void *) {}, nullptr);
    sluice_progress_drain();
    EXPECT_GE(sluice_progress_thread_cpu_ns(), 0);
}

} // namespace
