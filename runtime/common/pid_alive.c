/* SPDX-License-Identifier: MIT */
/* See pid_alive.h. */
#include "common/pid_alive.h"

#include "common/fd_guard.h"
#include "common/proc_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TICK_MARGIN_NS 50000000 /* start times are in clock ticks (10 ms): a margin of 5 */

/* /proc/<pid>/stat, NUL-terminated, or -1. */
static long read_stat(long pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = sluice_fd_guard_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    long n = syscall(SYS_read, fd, buf, cap - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

bool sluice_pid_running(long pid, int64_t seen_ns)
{
    if (pid <= 0 || (syscall(SYS_kill, (pid_t)pid, 0) != 0 && errno != EPERM))
        return false;
    char buf[1024];
    if (read_stat(pid, buf, sizeof buf) < 0)
        return true; /* no /proc here: kill's answer stands */
    const char *state = sluice_proc_stat_field(buf, 3);
    if (state && (*state == 'Z' || *state == 'X'))
        return false;
    const char *start = seen_ns > 0 ? sluice_proc_stat_field(buf, 22) : NULL;
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec real, boot;
    if (!start || hz <= 0 || clock_gettime(CLOCK_REALTIME, &real) != 0 ||
        clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
        return true;
    int64_t start_boot = (int64_t)strtoll(start, NULL, 10) * (1000000000 / hz);
    int64_t now_real = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
    int64_t seen_boot = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec - (now_real - seen_ns);
    return start_boot <= seen_boot + TICK_MARGIN_NS;
}
