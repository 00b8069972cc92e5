/* SPDX-License-Identifier: MIT */
/* See sleeper.h. The parked flag and seq are sequentially consistent so that a waker and a
 * parking sleeper cannot miss each other: the sleeper sets parked then reads seq, the waker
 * bumps seq then reads parked; at least one of them sees the other's store. FUTEX_WAIT itself
 * re-checks seq atomically against `seen`. */
#include "progress/sleeper.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void sluice_sleeper_init(struct sluice_sleeper *s)
{
    atomic_store(&s->seq, 0);
    atomic_store(&s->parked, 0);
}

static struct timespec add_ns(struct timespec t, uint64_t ns)
{
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec += (long)(ns % 1000000000u);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int sluice_sleeper_wait(struct sluice_sleeper *s, uint64_t ns, uint32_t seen)
{
    if (atomic_load(&s->seq) != seen)
        return 1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct timespec deadline = add_ns(now, ns);
    if (ns <= SLUICE_SLEEPER_PARK_NS) {
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
        }
        return atomic_load(&s->seq) != seen;
    }
    atomic_store(&s->parked, 1);
    int woken = 0;
    while (!woken) {
        if (atomic_load(&s->seq) != seen) {
            woken = 1;
            break;
        }
        /* FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC. */
        long r = syscall(SYS_futex, (uint32_t *)&s->seq, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen,
                         &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        if (r == 0 || (r == -1 && errno == EAGAIN)) {
            woken = atomic_load(&s->seq) != seen;
            if (!woken)
                continue; /* spurious: sleep on until the deadline */
        } else if (errno == ETIMEDOUT) {
            break;
        } else if (errno != EINTR) {
            /* no usable futex (seccomp, ENOSYS): sleep the full time instead */
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
            }
            woken = atomic_load(&s->seq) != seen;
            break;
        }
        /* EINTR: go round; the deadline is absolute */
    }
    atomic_store(&s->parked, 0);
    return woken;
}

void sluice_sleeper_wake(struct sluice_sleeper *s)
{
    atomic_fetch_add(&s->seq, 1);
    if (atomic_load(&s->parked))
        syscall(SYS_futex, (uint32_t *)&s->seq, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

uint32_t sluice_sleeper_seq(struct sluice_sleeper *s)
{
    return atomic_load(&s->seq);
}

int sluice_sleeper_parked(struct sluice_sleeper *s)
{
    return atomic_load(&s->parked);
}
