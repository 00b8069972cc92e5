/* SPDX-License-Identifier: MIT */
// Descriptors of sluice's threads kept out of the program's way (runtime/common/fd_guard.c):
// what a sluice thread opens through SLUICE_REAL lands at the floor or above; a program thread's
// open keeps the lowest free number; a program thread that dup2s onto a number it believes
// free, or opens expecting the number it just closed, while a sluice thread opens and closes
// files as fast as it can, never loses its file nor hands its data to the sluice thread's
// descriptors, and gets the number it expects.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern "C" {
#include "common/fd_guard.h"
}

namespace
{

// The versions SLUICE_REAL hands out (common/real.c).
template <typename Fn> Fn Guarded(const char *name)
{
    return reinterpret_cast<Fn>(sluice_fd_guard_substitute(name));
}
auto g_open = Guarded<int (*)(const char *, int, ...)>("open");
auto g_close = Guarded<int (*)(int)>("close");
auto g_dup2 = Guarded<int (*)(int, int)>("dup2");

int Floor()
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur / 2 < 512 ? (int)(rl.rlim_cur / 2) : 512;
}

// The size of this process's descriptor table (FDSize in /proc/self/status); -1 if unknown.
int TableSize()
{
    FILE *f = fopen("/proc/self/status", "r");
    int size = -1;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "FDSize: %d", &size) == 1)
            break;
    if (f)
        fclose(f);
    return size;
}

} // namespace

TEST(FdGuard, SluiceThreadsOpenAboveTheFloorProgramThreadsAtTheLowest)
{
    ASSERT_NE(g_open, nullptr);
    int low = -1, high = -1, raw = -1;
    std::thread t([&] {
        sluice_fd_guard_thread_enter();
        high = g_open("/dev/null", O_RDONLY | O_CLOEXEC);
        raw = sluice_fd_guard_openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC, 0);
    });
    t.join();
    EXPECT_GE(high, Floor());
    EXPECT_GE(raw, Floor());
    EXPECT_EQ(fcntl(high, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "the move keeps close-on-exec";
    int expected = g_open("/dev/null", O_RDONLY); // the lowest free number
    g_close(expected);
    low = g_open("/dev/null", O_RDONLY);
    EXPECT_EQ(low, expected);
    EXPECT_LT(low, Floor());
    g_close(low);
    g_close(high);
    g_close(raw);
}

TEST(FdGuard, ProgramDup2NeverMeetsASluiceThreadsDescriptor)
{
    char tmpl[] = "/tmp/sluice-fd-guard-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string mine = dir + "/program", theirs = dir + "/sluice";
    std::atomic<bool> stop{false};
    std::atomic<long> opened{0};
    std::thread t([&] {
        sluice_fd_guard_thread_enter();
        while (!stop.load()) {
            int fd = g_open(theirs.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            if (fd >= 0) {
                (void)!write(fd, "s", 1);
                g_close(fd);
                opened++;
            }
        }
    });
    const int steps = 20000;
    int failures = 0;
    for (int i = 0; i < steps && failures == 0; i++) {
        // What a shell's `exec 7>>file; printf x >&7; exec 7>&-` does.
        int fd = g_open(mine.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd < 0 || g_dup2(fd, 7) != 7 || g_close(fd) != 0 || write(7, "p", 1) != 1 || g_close(7) != 0)
            failures++;
        // What a daemon's `close(n); open(...)` expects: the number it just freed.
        int a = g_open("/dev/null", O_RDONLY);
        g_close(a);
        int b = g_open("/dev/null", O_RDONLY);
        if (b != a)
            failures++;
        g_close(b);
    }
    stop = true;
    t.join();
    EXPECT_EQ(failures, 0);
    EXPECT_GT(opened.load(), 0);
    struct stat st;
    ASSERT_EQ(stat(mine.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, steps) << "every byte of the program's in its own file";
    ASSERT_EQ(stat(theirs.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, opened.load()) << "none of the program's bytes in the sluice thread's file";
    (void)system(("rm -rf '" + dir + "'").c_str());
}

// A program's call that blocks (an open of a FIFO waits for its other end) holds sluice's
// creations back for a moment only, and through them not the program's other threads: the
// FIFO's reader, opened by another thread of the program while a sluice thread waits to
// create, gets through and both ends open.
TEST(FdGuard, ABlockingOpenOfTheProgramHoldsNothingForLong)
{
    char tmpl[] = "/tmp/sluice-fd-guard-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string fifo = dir + "/fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::atomic<bool> stop{false};
    std::atomic<long> created{0};
    std::thread sluice([&] {
        sluice_fd_guard_thread_enter();
        while (!stop.load()) {
            int fd = g_open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                g_close(fd);
                created++;
            }
        }
    });
    int wfd = -1;
    std::thread writer([&] { wfd = g_open(fifo.c_str(), O_WRONLY); }); // blocks for a reader
    usleep(50000);
    long during = created.load();
    usleep(300000);
    during = created.load() - during;
    int rfd = g_open(fifo.c_str(), O_RDONLY);
    writer.join();
    usleep(200000);
    stop = true;
    sluice.join();
    EXPECT_GE(rfd, 0);
    EXPECT_GE(wfd, 0);
    EXPECT_GT(during, 0) << "sluice's thread went ahead while the writer's open blocked";
    g_close(rfd);
    g_close(wfd);
    (void)system(("rm -rf '" + dir + "'").c_str());
}

// Growing the table in a process of several threads waits for an RCU grace period (24-28 ms on
// a busy 16-core host): it is grown past the floor at start and in a fork child, while the
// process has one thread, so that neither sluice's threads' first moves nor the program's own
// numbers up to the floor grow it later.
TEST(FdGuard, TheDescriptorTableIsGrownPastTheFloorWhileSingleThreaded)
{
    EXPECT_GT(TableSize(), Floor()) << "at start (the library's constructor)";
    // A fork child's table holds only the numbers open in the parent: nothing at the floor.
    for (int fd = Floor(); fd < Floor() + 64; fd++)
        ASSERT_EQ(fcntl(fd, F_GETFD), -1)
            << "descriptor " << fd << " is open: the child's table would be large anyway";
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int size = TableSize();
        _exit(write(p[1], &size, sizeof size) == (ssize_t)sizeof size ? 0 : 1);
    }
    int child = -1, status = 0;
    ASSERT_EQ(read(p[0], &child, sizeof child), (ssize_t)sizeof child);
    waitpid(pid, &status, 0);
    close(p[0]);
    close(p[1]);
    EXPECT_GT(child, Floor()) << "in a fork child";
}
