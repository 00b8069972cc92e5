/* SPDX-License-Identifier: MIT */
// Back-off policy of the progress thread: starts at the minimum, doubles, never exceeds the
// cap, and a reset goes back to the minimum.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "progress/backoff.h"
}

TEST(ProgressBackoff, DoublesFromMinimumUpToCapAndStaysThere)
{
    sluice_backoff b;
    sluice_backoff_init(&b, 1000, 2000000);
    std::vector<uint64_t> got;
    for (int i = 0; i < 14; i++)
        got.push_back(sluice_backoff_next(&b));
    std::vector<uint64_t> want = {1000,   2000,   4000,    8000,    16000,   32000,   64000,
                                  128000, 256000, 512000, 1024000, 2000000, 2000000, 2000000};
    EXPECT_EQ(got, want);
}

TEST(ProgressBackoff, ResetReturnsToMinimum)
{
    sluice_backoff b;
    sluice_backoff_init(&b, 1000, 8000);
    for (int i = 0; i < 10; i++)
        sluice_backoff_next(&b);
    EXPECT_EQ(sluice_backoff_next(&b), 8000u);
    sluice_backoff_reset(&b);
    EXPECT_EQ(sluice_backoff_next(&b), 1000u);
    EXPECT_EQ(sluice_backoff_next(&b), 2000u);
}

TEST(ProgressBackoff, CapBelowMinimumIsRaisedToMinimum)
{
    sluice_backoff b;
    sluice_backoff_init(&b, 5000, 10);
    EXPECT_EQ(sluice_backoff_next(&b), 5000u);
    EXPECT_EQ(sluice_backoff_next(&b), 5000u);
}

TEST(ProgressBackoff, HugeCapDoesNotOverflow)
{
    sluice_backoff b;
    sluice_backoff_init(&b, 1, UINT64_MAX);
    uint64_t prev = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t v = sluice_backoff_next(&b);
        ASSERT_GE(v, prev);
        prev = v;
    }
    EXPECT_EQ(prev, UINT64_MAX);
}
