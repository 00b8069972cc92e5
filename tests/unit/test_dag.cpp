/* SPDX-License-Identifier: MIT */
// Command DAG: dependencies from wait lists, in-order queues, out-of-order queues with markers
// and barriers, and buffer use (data edges that never add ordering); readiness, completion,
// failure propagation, retirement with bounded memory, and a randomized execution check
// against the OpenCL ordering rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "cl/rank0/dag.h"
}

namespace
{

using Ids = std::vector<uint64_t>;

struct Acc {
    uint64_t buffer, offset, size;
    unsigned mode;
};
const unsigned R = SLUICE_DAG_READS, W = SLUICE_DAG_WRITES;

struct Dag {
    sluice_dag *d = sluice_dag_create();
    uint64_t next = 1, clock = 0;
    ~Dag() { sluice_dag_destroy(d); }

    uint64_t add(sluice_dag_kind kind, uint64_t queue, bool ooo, Ids wait = {}, std::vector<Acc> acc = {},
                 int rank = 0)
    {
        std::vector<sluice_dag_access> a;
        for (auto &x : acc)
            a.push_back({x.buffer, x.offset, x.size, x.mode});
        sluice_dag_cmd c{};
        c.id = next;
        c.queue = queue;
        c.out_of_order = ooo;
        c.rank = rank;
        c.kind = kind;
        c.wait = wait.data();
        c.nwait = wait.size();
        c.access = a.data();
        c.naccess = a.size();
        sluice_dag_node_info info;
        int rc = sluice_dag_add(d, &c, ++clock, &info);
        EXPECT_EQ(rc, 0);
        EXPECT_EQ(info.id, next);
        return next++;
    }
    // "on:why,why*" per dependency, sorted by id; '*' marks one already satisfied at add time.
    std::string deps(uint64_t id)
    {
        sluice_dag_node_info info;
        if (sluice_dag_get(d, id, &info) != 0)
            return "gone";
        std::vector<std::pair<uint64_t, std::string>> v;
        static const char *names[] = {"wait", "queue", "raw", "war", "waw"};
        for (size_t i = 0; i < info.ndeps; i++) {
            std::string s;
            for (int b = 0; b < 5; b++)
                if (info.deps[i].why & (1u << b))
                    s += (s.empty() ? "" : ",") + std::string(names[b]);
            v.push_back({info.deps[i].on,
                         std::to_string(info.deps[i].on) + ":" + s + (info.deps[i].satisfied ? "*" : "")});
        }
        std::sort(v.begin(), v.end());
        std::string out;
        for (auto &p : v)
            out += (out.empty() ? "" : " ") + p.second;
        return out;
    }
    Ids ready()
    {
        Ids v(sluice_dag_ready(d, nullptr, 0));
        EXPECT_EQ(sluice_dag_ready(d, v.data(), v.size()), v.size());
        return v;
    }
    Ids complete(uint64_t id, int status = 0)
    {
        sluice_dag_node_info info;
        EXPECT_EQ(sluice_dag_get(d, id, &info), 0);
        if (info.state == SLUICE_DAG_READY) {
            EXPECT_EQ(sluice_dag_dispatch(d, id, ++clock), 0);
        }
        const uint64_t *r;
        size_t n;
        EXPECT_EQ(sluice_dag_complete(d, id, status, clock, clock + 1, &r, &n), 0);
        return Ids(r, r + n);
    }
    sluice_dag_state state(uint64_t id)
    {
        sluice_dag_node_info info;
        EXPECT_EQ(sluice_dag_get(d, id, &info), 0);
        return info.state;
    }
};

} // namespace

TEST(Dag, InOrderQueueChainsCommands)
{
    Dag g;
    uint64_t w = g.add(SLUICE_DAG_WRITE, 1, false, {}, {{7, 0, 100, W}});
    uint64_t k = g.add(SLUICE_DAG_KERNEL, 1, false, {}, {{7, 0, 100, R}, {8, 0, 100, W}});
    uint64_t r = g.add(SLUICE_DAG_READ, 1, false, {}, {{8, 0, 100, R}});
    EXPECT_EQ(g.deps(w), "");
    EXPECT_EQ(g.deps(k), "1:queue,raw");
    EXPECT_EQ(g.deps(r), "2:queue,raw");
    EXPECT_EQ(g.ready(), (Ids{w}));
    EXPECT_EQ(g.complete(w), (Ids{k}));
    EXPECT_EQ(g.ready(), (Ids{k}));
    EXPECT_EQ(g.complete(k), (Ids{r}));
    EXPECT_EQ(g.complete(r), Ids{});
    EXPECT_EQ(g.ready(), Ids{});
}

TEST(Dag, OutOfOrderQueueOrdersOnlyThroughWaitLists)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t c = g.add(SLUICE_DAG_KERNEL, 1, true, {a});
    EXPECT_EQ(g.deps(b), "");
    EXPECT_EQ(g.deps(c), "1:wait");
    EXPECT_EQ(g.ready(), (Ids{a, b}));
    EXPECT_EQ(g.complete(b), Ids{});
    EXPECT_EQ(g.complete(a), (Ids{c}));
}

TEST(Dag, BarrierAndMarkerInAnOutOfOrderQueue)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t m = g.add(SLUICE_DAG_MARKER, 1, true); // waits for a and b; later commands do not wait for it
    uint64_t c = g.add(SLUICE_DAG_KERNEL, 1, true);
    EXPECT_EQ(g.deps(m), "1:queue 2:queue");
    EXPECT_EQ(g.deps(c), "");
    uint64_t bar = g.add(SLUICE_DAG_BARRIER, 1, true); // waits for everything since the start
    uint64_t d = g.add(SLUICE_DAG_KERNEL, 1, true);    // waits for the barrier
    uint64_t e = g.add(SLUICE_DAG_KERNEL, 1, true, {c});
    EXPECT_EQ(g.deps(bar), "1:queue 2:queue 3:queue 4:queue");
    EXPECT_EQ(g.deps(d), "5:queue");
    EXPECT_EQ(g.deps(e), "4:wait 5:queue");
    uint64_t bar2 =
        g.add(SLUICE_DAG_BARRIER, 1, true); // only what came since the last barrier, and that barrier
    EXPECT_EQ(g.deps(bar2), "5:queue 6:queue 7:queue");
    EXPECT_EQ(g.ready(), (Ids{a, b, c}));
    g.complete(a);
    EXPECT_EQ(g.complete(b), (Ids{m}));
    EXPECT_EQ(g.complete(c), Ids{});
    EXPECT_EQ(g.complete(m), (Ids{bar})); // the barrier waits for the marker too
    EXPECT_EQ(g.complete(bar), (Ids{d, e}));
}

TEST(Dag, BarrierWithWaitListWaitsOnlyForItsList)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t bar = g.add(SLUICE_DAG_BARRIER, 1, true, {a});
    uint64_t c = g.add(SLUICE_DAG_KERNEL, 1, true);
    uint64_t mk = g.add(SLUICE_DAG_MARKER, 1, true, {b});
    EXPECT_EQ(g.deps(bar), "1:wait");
    EXPECT_EQ(g.deps(c), "3:queue");
    EXPECT_EQ(g.deps(mk), "2:wait 3:queue");
    EXPECT_EQ(g.complete(a), (Ids{bar}));
    EXPECT_EQ(g.complete(bar), (Ids{c}));
    EXPECT_EQ(g.complete(b), (Ids{mk}));
}

TEST(Dag, MarkersAndBarriersInAnInOrderQueueFollowQueueOrder)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, false);
    uint64_t m = g.add(SLUICE_DAG_MARKER, 1, false);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, false);
    uint64_t bar = g.add(SLUICE_DAG_BARRIER, 1, false);
    EXPECT_EQ(g.deps(m), "1:queue");
    EXPECT_EQ(g.deps(b), "2:queue");
    EXPECT_EQ(g.deps(bar), "3:queue");
    (void)a;
}

TEST(Dag, BufferEdgesAcrossQueuesDoNotAddOrdering)
{
    Dag g;
    uint64_t w = g.add(SLUICE_DAG_KERNEL, 1, false, {}, {{9, 0, 1000, W}}, 1);
    uint64_t r = g.add(SLUICE_DAG_KERNEL, 2, false, {}, {{9, 0, 1000, R}},
                       2); // another queue, no wait list: a race the program owns
    uint64_t r2 = g.add(SLUICE_DAG_KERNEL, 3, false, {w}, {{9, 0, 1000, R}}, 3);
    EXPECT_EQ(g.deps(r), "1:raw");
    EXPECT_EQ(g.deps(r2), "1:wait,raw");
    EXPECT_EQ(g.ready(), (Ids{w, r})); // the data edge does not gate readiness
    EXPECT_EQ(g.complete(w), (Ids{r2}));
    EXPECT_EQ(sluice_dag_dep_trace_kind(SLUICE_DAG_DEP_RAW), 2);
    EXPECT_EQ(sluice_dag_dep_trace_kind(SLUICE_DAG_DEP_WAIT | SLUICE_DAG_DEP_RAW), 0);
    EXPECT_EQ(sluice_dag_dep_trace_kind(SLUICE_DAG_DEP_QUEUE | SLUICE_DAG_DEP_WAW), 1);
}

TEST(Dag, DataEdgesOnOverlappingRangesAndSubBuffers)
{
    Dag g;
    // Sub-buffers are ranges of their parent (buffer 5).
    uint64_t w1 = g.add(SLUICE_DAG_WRITE, 1, true, {}, {{5, 0, 100, W}});
    uint64_t r1 = g.add(SLUICE_DAG_KERNEL, 2, true, {}, {{5, 50, 10, R}});   // inside: RAW
    uint64_t r2 = g.add(SLUICE_DAG_KERNEL, 3, true, {}, {{5, 100, 100, R}}); // adjacent, not overlapping
    uint64_t w2 = g.add(SLUICE_DAG_KERNEL, 4, true, {}, {{5, 40, 100, W}});  // WAW on w1, WAR on r1 and r2
    uint64_t rw =
        g.add(SLUICE_DAG_KERNEL, 5, true, {}, {{5, 0, 10, R | W}}); // RAW+WAW on w1 only (w2 starts at 40)
    uint64_t other = g.add(SLUICE_DAG_KERNEL, 6, true, {}, {{6, 0, 100, R | W}}); // another buffer
    EXPECT_EQ(g.deps(r1), "1:raw");
    EXPECT_EQ(g.deps(r2), "");
    EXPECT_EQ(g.deps(w2), "1:waw 2:war 3:war");
    EXPECT_EQ(g.deps(rw), "1:raw,waw");
    EXPECT_EQ(g.deps(other), "");
    // A write covering earlier accesses entirely supersedes them: later readers depend on it only.
    uint64_t w3 = g.add(SLUICE_DAG_FILL, 7, true, {}, {{5, 0, 200, W}});
    // r1 (2) is not there: w2 covered it entirely, and w2 already depends on it (WAR).
    EXPECT_EQ(g.deps(w3), "1:waw 3:war 4:waw 5:war,waw");
    uint64_t r3 = g.add(SLUICE_DAG_READ, 8, true, {}, {{5, 0, 200, R}});
    EXPECT_EQ(g.deps(r3), "7:raw");
    // A kernel using one buffer through two arguments has no edge to itself.
    uint64_t k = g.add(SLUICE_DAG_KERNEL, 9, true, {}, {{5, 0, 10, R}, {5, 0, 10, W}});
    EXPECT_EQ(g.deps(k), "7:raw,waw 8:war");
    (void)w1, (void)r1, (void)r2, (void)w2, (void)rw, (void)other, (void)w3, (void)r3;
}

TEST(Dag, CompletedDependenciesAreSatisfiedAndFailuresPropagate)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, false);
    g.complete(a, -5);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, false); // its predecessor already failed
    EXPECT_EQ(g.deps(b), "1:queue*");
    EXPECT_EQ(g.state(b), SLUICE_DAG_READY);
    sluice_dag_node_info info;
    sluice_dag_get(g.d, b, &info);
    EXPECT_TRUE(info.failed_dep); // also when the failed dependency completed before the add
    uint64_t c = g.add(SLUICE_DAG_KERNEL, 1, false);
    uint64_t d = g.add(SLUICE_DAG_KERNEL, 2, true, {c});
    EXPECT_EQ(g.complete(b), (Ids{c}));
    EXPECT_EQ(g.complete(c, -14), (Ids{d})); // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    sluice_dag_get(g.d, d, &info);
    EXPECT_TRUE(info.failed_dep);
    sluice_dag_get(g.d, c, &info);
    EXPECT_EQ(info.status, -14);
}

TEST(Dag, UserEventsGateCommandsUntilSet)
{
    Dag g;
    uint64_t u = g.add(SLUICE_DAG_USER_EVENT, 0, false);
    uint64_t k = g.add(SLUICE_DAG_KERNEL, 1, false, {u});
    uint64_t k2 = g.add(SLUICE_DAG_KERNEL, 1, false);
    EXPECT_EQ(g.ready(), (Ids{u}));
    EXPECT_EQ(g.deps(k2), "2:queue");
    const uint64_t *r;
    size_t n;
    ASSERT_EQ(sluice_dag_complete(g.d, u, 0, 0, 0, &r, &n),
              0); // clSetUserEventStatus(CL_COMPLETE): no dispatch
    EXPECT_EQ(Ids(r, r + n), (Ids{k}));
    EXPECT_EQ(g.complete(k), (Ids{k2}));
}

TEST(Dag, RejectsMisuse)
{
    Dag g;
    uint64_t a = g.add(SLUICE_DAG_KERNEL, 1, false);
    sluice_dag_cmd c{};
    c.id = a; // not above the last id
    c.kind = SLUICE_DAG_KERNEL;
    EXPECT_EQ(sluice_dag_add(g.d, &c, 0, nullptr), -EINVAL);
    uint64_t future = 99;
    c.id = 10;
    c.wait = &future;
    c.nwait = 1;
    EXPECT_EQ(sluice_dag_add(g.d, &c, 0, nullptr), -EINVAL);
    c.nwait = 0;
    c.kind = (sluice_dag_kind)SLUICE_DAG_KIND_COUNT;
    EXPECT_EQ(sluice_dag_add(g.d, &c, 0, nullptr), -EINVAL);
    uint64_t b = g.add(SLUICE_DAG_KERNEL, 1, false);
    EXPECT_EQ(sluice_dag_dispatch(g.d, b, 0), -EINVAL); // not ready
    EXPECT_EQ(sluice_dag_dispatch(g.d, 1234, 0), -ENOENT);
    g.complete(a);
    const uint64_t *r;
    size_t n;
    EXPECT_EQ(sluice_dag_complete(g.d, a, 0, 0, 0, &r, &n), -EINVAL); // twice
    EXPECT_STREQ(sluice_dag_kind_name(SLUICE_DAG_BARRIER), "barrier");
    EXPECT_STREQ(sluice_dag_kind_name((sluice_dag_kind)100), "unknown");
}

TEST(Dag, RetireHandsNodesToTheTraceAndKeepsMemoryBounded)
{
    Dag g;
    struct Seen {
        Ids ids;
        std::vector<std::string> kinds;
        size_t with_times = 0;
    } seen;
    auto emit = [](const sluice_dag_node_info *n, void *ctx) {
        auto *s = static_cast<Seen *>(ctx);
        s->ids.push_back(n->id);
        s->kinds.push_back(sluice_dag_kind_name(n->kind));
        s->with_times += n->t_start > 0 && n->t_end > n->t_start && n->t_dispatch > n->t_enqueue;
    };
    // A long in-order stream touching two buffers: live nodes stay few.
    size_t max_live = 0, retired = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t id = g.add(i % 3 ? SLUICE_DAG_KERNEL : SLUICE_DAG_WRITE, 1 + i % 2, false, {},
                            {{(uint64_t)(1 + i % 2), 0, 64, i % 3 ? R | W : W}});
        if (i >= 4)
            g.complete(id - 4);
        if (i % 16 == 0)
            retired += sluice_dag_retire(g.d, emit, &seen);
        max_live = std::max(max_live, sluice_dag_size(g.d));
    }
    EXPECT_LE(max_live, 24u);
    EXPECT_EQ(retired, seen.ids.size());
    EXPECT_TRUE(std::is_sorted(seen.ids.begin(), seen.ids.end()));
    EXPECT_EQ(seen.with_times, seen.ids.size());
    EXPECT_EQ(seen.kinds[0], "write");
    EXPECT_EQ(seen.kinds[1], "kernel");
    // After retirement, references to retired ids count as complete.
    uint64_t last = g.next - 1;
    for (uint64_t id = last - 3; id <= last; id++)
        g.complete(id);
    sluice_dag_retire(g.d, nullptr, nullptr);
    EXPECT_EQ(sluice_dag_size(g.d), 0u);
    uint64_t after = g.add(SLUICE_DAG_KERNEL, 3, false, {last}, {{1, 0, 64, R}});
    EXPECT_EQ(g.state(after), SLUICE_DAG_READY);
    EXPECT_EQ(g.deps(after), std::to_string(last) + ":wait*");
}

TEST(Dag, DotDumpShowsNodesEdgesPlacementAndTimes)
{
    Dag g;
    uint64_t w = g.add(SLUICE_DAG_WRITE, 1, false, {}, {{3, 0, 8, W}}, 2);
    g.add(SLUICE_DAG_KERNEL, 2, false, {w}, {{3, 0, 8, R}}, 1);
    g.complete(w);
    std::string dot(sluice_dag_format_dot(g.d, nullptr, 0), '\0');
    std::vector<char> buf(dot.size() + 1);
    sluice_dag_format_dot(g.d, buf.data(), buf.size());
    dot = buf.data();
    EXPECT_EQ(dot.rfind("digraph sluice_dag {", 0), 0u);
    EXPECT_NE(dot.find("n1 [label=\"write #1\\nrank 2 dev 0 q 1\\ncomplete 0\\n"), std::string::npos) << dot;
    EXPECT_NE(dot.find("n2 [label=\"kernel #2\\nrank 1 dev 0 q 2\\nready\"];"), std::string::npos) << dot;
    EXPECT_NE(dot.find("n1 -> n2 [color=blue label=\"wait,raw\"];"), std::string::npos) << dot;
    EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
}

// Randomized execution against the rules, checked independently of the implementation: an
// in-order queue completes in enqueue order; nothing starts before its wait list completes; in
// an out-of-order queue nothing starts before the previous barrier completes, and a barrier or
// marker without a wait list starts after everything enqueued before it in its queue.
TEST(Dag, RandomExecutionRespectsOpenCLOrdering)
{
    std::mt19937_64 rng(42);
    for (int round = 0; round < 20; round++) {
        Dag g;
        struct Cmd {
            uint64_t queue;
            bool ooo;
            sluice_dag_kind kind;
            Ids wait;
        };
        std::map<uint64_t, Cmd> cmds;
        std::map<uint64_t, int> done_at; // completion step
        std::vector<uint64_t> order;
        int step = 0;
        const bool ooo_queue[4] = {false, false, true, true};
        for (int i = 0; i < 300; i++) {
            uint64_t q = 1 + rng() % 4;
            bool ooo = ooo_queue[q - 1];
            int r = (int)(rng() % 10);
            sluice_dag_kind kind = r == 0   ? SLUICE_DAG_BARRIER
                                   : r == 1 ? SLUICE_DAG_MARKER
                                            : SLUICE_DAG_KERNEL;
            Ids wait;
            if (g.next > 1)
                for (int k = (int)(rng() % 3); k > 0; k--)
                    wait.push_back(1 + rng() % (g.next - 1));
            std::sort(wait.begin(), wait.end());
            wait.erase(std::unique(wait.begin(), wait.end()), wait.end());
            uint64_t id = g.add(kind, q, ooo, wait,
                                {{rng() % 3, rng() % 100, 1 + rng() % 50, (unsigned)(1 + rng() % 3)}});
            cmds[id] = {q, ooo, kind, wait};
            // Run some ready commands in a random order.
            for (int k = (int)(rng() % 3); k > 0; k--) {
                Ids ready = g.ready();
                if (ready.empty())
                    break;
                uint64_t pick = ready[rng() % ready.size()];
                g.complete(pick);
                done_at[pick] = ++step;
                order.push_back(pick);
            }
        }
        for (;;) {
            Ids ready = g.ready();
            if (ready.empty())
                break;
            uint64_t pick = ready[rng() % ready.size()];
            g.complete(pick);
            done_at[pick] = ++step;
        }
        ASSERT_EQ(done_at.size(), cmds.size()) << "round " << round << ": some commands never became ready";
        for (auto &[id, c] : cmds) {
            for (uint64_t w : c.wait)
                ASSERT_LT(done_at[w], done_at[id]) << id << " ran before its wait-list event " << w;
            uint64_t last_barrier = 0;
            for (auto &[pid, p] : cmds) {
                if (pid >= id)
                    break;
                if (p.queue != c.queue)
                    continue;
                if (!c.ooo) {
                    ASSERT_LT(done_at[pid], done_at[id]) << "in-order queue ran " << id << " before " << pid;
                }
                if (p.kind == SLUICE_DAG_BARRIER)
                    last_barrier = pid;
                if (c.ooo && (c.kind == SLUICE_DAG_BARRIER || c.kind == SLUICE_DAG_MARKER) &&
                    c.wait.empty()) {
                    ASSERT_LT(done_at[pid], done_at[id]) << "barrier/marker " << id << " ran before " << pid;
                }
            }
            if (c.ooo && last_barrier) {
                ASSERT_LT(done_at[last_barrier], done_at[id])
                    << id << " ran before the barrier " << last_barrier;
            }
        }
        // Completing everything leaves nothing behind after retirement.
        sluice_dag_retire(g.d, nullptr, nullptr);
        EXPECT_EQ(sluice_dag_size(g.d), 0u);
    }
}
