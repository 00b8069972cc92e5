/* SPDX-License-Identifier: MIT */
// Whether a writer process still runs (runtime/common/pid_alive.c): a live child runs; a killed
// child that nobody reaped yet (a zombie, which kill(pid, 0) still answers) does not; a live
// process that started after the time it is asked about holds a reused pid and does not either.
#include <gtest/gtest.h>

#include <csignal>
#include <ctime>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "common/pid_alive.h"
}

namespace
{

int64_t NowNs()
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

pid_t SleepingChild()
{
    pid_t pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    return pid;
}

} // namespace

TEST(PidAlive, LiveChildRuns)
{
    pid_t pid = SleepingChild();
    ASSERT_GT(pid, 0);
    EXPECT_TRUE(sluice_pid_running(pid, 0));
    EXPECT_TRUE(sluice_pid_running(pid, NowNs()));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

TEST(PidAlive, ZombieDoesNotRun)
{
    pid_t pid = SleepingChild();
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    siginfo_t info;
    // Wait until it is a zombie without reaping it.
    ASSERT_EQ(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    EXPECT_EQ(kill(pid, 0), 0) << "a zombie answers kill(pid, 0)";
    EXPECT_FALSE(sluice_pid_running(pid, 0));
    waitpid(pid, nullptr, 0);
    EXPECT_FALSE(sluice_pid_running(pid, 0));
}

TEST(PidAlive, ProcessStartedLaterHoldsAReusedPid)
{
    int64_t before = NowNs() - 5LL * 1000000000;
    pid_t pid = SleepingChild();
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(sluice_pid_running(pid, before)) << "started 5 s after the time asked about";
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

TEST(PidAlive, NoSuchPid)
{
    EXPECT_FALSE(sluice_pid_running(0, 0));
    EXPECT_FALSE(sluice_pid_running(-1, 0));
    EXPECT_TRUE(sluice_pid_running(getpid(), NowNs()));
}
