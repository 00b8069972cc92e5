/* SPDX-License-Identifier: MIT */
// A container folder's lock file (runtime/ckpt/commit/folder_lock.c): exclusive while its owner
// lives; a dead owner of this host is stale at once; another host's owner is live until its lock
// goes untouched for SLUICE_FOLDER_LOCK_STALE_S seconds; release removes only its own file.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "ckpt/commit/folder_lock.h"
}

namespace
{

struct Folder {
    std::string path;
    Folder()
    {
        char tmpl[] = "/tmp/sluice-folder-lock-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~Folder() { (void)system(("rm -rf '" + path + "'").c_str()); }
    std::string lock() const { return path + "/" SLUICE_FOLDER_LOCK_NAME; }
};

bool Exists(const std::string &p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

// A lock file as another host's process would leave it, last touched `age_s` seconds ago.
void WriteForeignLock(const std::string &path, int age_s)
{
    FILE *f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fprintf(f, "0123456789abcdef 1 42\n");
    fclose(f);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age_s;
    t[1] = t[0];
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
}

} // namespace

TEST(FolderLock, ExclusiveWhileHeldThenReleased)
{
    Folder d;
    sluice_folder_lock a, b;
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &a, nullptr, 0), 0);
    EXPECT_TRUE(Exists(d.lock()));
    char owner[64] = "";
    EXPECT_EQ(sluice_folder_lock_try(d.path.c_str(), &b, owner, sizeof owner), -EWOULDBLOCK);
    EXPECT_NE(std::string(owner).find("pid " + std::to_string(getpid())), std::string::npos) << owner;
    sluice_folder_lock_release(&a);
    EXPECT_FALSE(Exists(d.lock()));
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &b, nullptr, 0), 0);
    sluice_folder_lock_release(&b);
}

TEST(FolderLock, DeadOwnerOfThisHostIsStaleAtOnce)
{
    Folder d;
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // takes the lock and dies holding it
        sluice_folder_lock l;
        _exit(sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0) == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(Exists(d.lock()));
    sluice_folder_lock l;
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0), 0);
    sluice_folder_lock_release(&l);
    EXPECT_EQ(system(("ls -A '" + d.path + "' | grep -q .").c_str()) == 0, false)
        << "left files in " << d.path;
}

// A killed owner that nobody reaped yet (a zombie, which kill(pid, 0) still answers) is gone.
TEST(FolderLock, ZombieOwnerIsStaleAtOnce)
{
    Folder d;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // takes the lock, says so, and waits to be killed
        sluice_folder_lock l;
        char ok = sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0) == 0 ? 'y' : 'n';
        (void)!write(ready[1], &ok, 1);
        for (;;)
            pause();
    }
    char ok = 0;
    ASSERT_EQ(read(ready[0], &ok, 1), 1);
    ASSERT_EQ(ok, 'y');
    kill(child, SIGKILL);
    siginfo_t info;
    ASSERT_EQ(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0); // a zombie now
    sluice_folder_lock l;
    EXPECT_EQ(sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0), 0);
    sluice_folder_lock_release(&l);
    waitpid(child, nullptr, 0);
    close(ready[0]);
    close(ready[1]);
}

TEST(FolderLock, AnotherHostsLockIsLiveUntilUntouchedForTheStaleTime)
{
    Folder d;
    sluice_folder_lock l;
    char owner[64] = "";
    WriteForeignLock(d.lock(), SLUICE_FOLDER_LOCK_STALE_S - 5);
    EXPECT_EQ(sluice_folder_lock_try(d.path.c_str(), &l, owner, sizeof owner), -EWOULDBLOCK);
    EXPECT_STREQ(owner, "host 0123456789abcdef pid 1");
    WriteForeignLock(d.lock(), SLUICE_FOLDER_LOCK_STALE_S + 5);
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0), 0);
    sluice_folder_lock_release(&l);
    EXPECT_FALSE(Exists(d.lock()));
}

TEST(FolderLock, ReleaseLeavesAnotherOwnersFile)
{
    Folder d;
    sluice_folder_lock l;
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &l, nullptr, 0), 0);
    // Judged stale and broken by another node meanwhile, then taken by a third owner.
    ASSERT_EQ(unlink(d.lock().c_str()), 0);
    WriteForeignLock(d.lock(), 0);
    sluice_folder_lock_release(&l);
    EXPECT_TRUE(Exists(d.lock())) << "release removed another owner's lock";
}

// The lock appears whole: no empty lock for a moment (a process killed then would leave a lock
// judged stale only by its age), and the owner line's own file is gone once the lock is taken.
TEST(FolderLock, AppearsWholeAndLeavesNothingElse)
{
    Folder d;
    sluice_folder_lock a;
    ASSERT_EQ(sluice_folder_lock_try(d.path.c_str(), &a, nullptr, 0), 0);
    FILE *f = fopen(d.lock().c_str(), "r");
    ASSERT_NE(f, nullptr);
    char host[32];
    long pid = 0;
    long long start = 0;
    EXPECT_EQ(fscanf(f, "%16s %ld %lld", host, &pid, &start), 3);
    fclose(f);
    EXPECT_EQ(pid, (long)getpid());
    std::string listing;
    FILE *ls = popen(("ls -A '" + d.path + "'").c_str(), "r");
    ASSERT_NE(ls, nullptr);
    for (int c; (c = fgetc(ls)) != EOF;)
        listing += (char)c;
    pclose(ls);
    EXPECT_EQ(listing, std::string(SLUICE_FOLDER_LOCK_NAME) + "\n");
    sluice_folder_lock_release(&a);
    EXPECT_FALSE(Exists(d.lock()));
}
