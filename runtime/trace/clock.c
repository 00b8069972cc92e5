/* SPDX-License-Identifier: MIT */
/* The trace clock: CLOCK_MONOTONIC in nanoseconds (vDSO, no system call on x86-64). */
#include <time.h>

#include "trace/trace.h"

uint64_t sluice_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
