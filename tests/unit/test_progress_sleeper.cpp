/* SPDX-License-Identifier: MIT */
// The progress thread's sleep primitive: a sleep that runs out says so, a wake that happened
// before the sleep is not lost, and a parked (long) sleep is ended by a wake from another
// thread (the return value, not the clock, proves it). A short sleep is never interrupted by
// design; the engine notices the wake after it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

extern "C" {
#include "progress/sleeper.h"
}

TEST(ProgressSleeper, SleepThatRunsOutReturnsZero)
{
    sluice_sleeper s;
    sluice_sleeper_init(&s);
    uint32_t seen = sluice_sleeper_seq(&s);
    EXPECT_EQ(sluice_sleeper_wait(&s, 1000, seen), 0);                   // short: clock_nanosleep
    EXPECT_EQ(sluice_sleeper_wait(&s, 2 * SLUICE_SLEEPER_PARK_NS, seen), 0); // long: futex
    EXPECT_EQ(sluice_sleeper_parked(&s), 0);
}

TEST(ProgressSleeper, WakeBeforeTheSleepIsNotLost)
{
    sluice_sleeper s;
    sluice_sleeper_init(&s);
    uint32_t seen = sluice_sleeper_seq(&s);
    sluice_sleeper_wake(&s);
    EXPECT_EQ(sluice_sleeper_wait(&s, 60ull * 1000000000ull, seen), 1); // would park
    EXPECT_EQ(sluice_sleeper_wait(&s, 1000, seen), 1);                   // would nanosleep
}

TEST(ProgressSleeper, WakeEndsAParkedSleep)
{
    sluice_sleeper s;
    sluice_sleeper_init(&s);
    uint32_t seen = sluice_sleeper_seq(&s);
    std::atomic<int> result{-1};
    // a one-minute sleep: only a working wake lets this test finish
    std::thread sleeper([&] { result = sluice_sleeper_wait(&s, 60ull * 1000000000ull, seen); });
    while (sluice_sleeper_parked(&s) == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sluice_sleeper_wake(&s);
    sleeper.join();
    EXPECT_EQ(result.load(), 1);
    EXPECT_EQ(sluice_sleeper_parked(&s), 0);
}
