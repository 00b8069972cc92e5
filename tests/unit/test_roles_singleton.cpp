/* SPDX-License-Identifier: MIT */
// sluice's MPI roles in a process that is not under a launcher (as ctest runs it): sluice_comm()
// initializes MPI lazily as a singleton with MPI_THREAD_MULTIPLE and a private communicator;
// finalize hooks run at exit before MPI is finalized; a forked child never uses the parent's
// MPI; the application's view of MPI (initialized, finalized, thread level) hides sluice's own
// initialization.
#define OMPI_SKIP_MPICXX 1 // the C API only, also with Open MPI
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "config/config.h"
#include "mpi/lifecycle.h"
#include "mpi/roles.h"
}

namespace {

int wait_status(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

// A plain array: the hook runs from sluice's destructor, after C++ static objects are gone.
char hook_file[64];

void write_hook_report()
{
    // runs at exit, before MPI is finalized: sluice's communicator must still work
    MPI_Comm c = sluice_comm();
    int size = -1, fin = -1;
    if (c != MPI_COMM_NULL)
        MPI_Comm_size(c, &size);
    PMPI_Finalized(&fin);
    FILE *f = fopen(hook_file, "w");
    if (f) {
        fprintf(f, "hook size %d finalized %d\n", size, fin);
        fclose(f);
    }
}

// First, so that a manual run of the whole binary forks before this process touches MPI.
TEST(RolesSingleton, FinalizeHookRunsAtExitWhileTheCommunicatorStillWorks)
{
    char tmpl[] = "/tmp/sluice-roles-hook-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    snprintf(hook_file, sizeof hook_file, "%s", tmpl);
    pid_t pid = fork();
    if (pid == 0) {
        // a child of a process that never used MPI may initialize it itself
        if (sluice_comm() == MPI_COMM_NULL)
            _exit(3);
        sluice_mpi_on_finalize(write_hook_report);
        exit(0); // normal exit: destructors run the hook, then finalize
    }
    ASSERT_EQ(wait_status(pid), 0);
    std::ifstream in(hook_file);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), "hook size 1 finalized 0\n");
    unlink(tmpl);
}

int adopted_hook_runs;
void count_adopted_hook() { adopted_hook_runs++; }

// Second, for the same reason as the first: the child must start with MPI untouched.
TEST(RolesSingleton, MpiInitializedThroughPmpiIsAdoptedAndFinalizedInOrder)
{
    pid_t pid = fork();
    if (pid == 0) {
        int provided = -1;
        // the application initializes MPI behind sluice's back (no MPI_Init wrapper involved)
        if (PMPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            _exit(1);
        MPI_Comm c = sluice_comm();
        if (c == MPI_COMM_NULL || c == MPI_COMM_WORLD || !sluice_mpi_ready())
            _exit(2);
        sluice_config.any_set = true;
        sluice_mpi_on_finalize(count_adopted_hook);
        if (sluice_mpi_app_finalize() != MPI_SUCCESS)
            _exit(3);
        int fin = 0;
        PMPI_Finalized(&fin);
        if (!fin || adopted_hook_runs != 1)
            _exit(4);
        if (sluice_mpi_ready() || sluice_comm() != MPI_COMM_NULL)
            _exit(5);
        exit(0); // sluice must not finalize again at exit
    }
    EXPECT_EQ(wait_status(pid), 0);
}

TEST(RolesSingleton, NotUnderALauncherIsRankZeroOfOne)
{
    EXPECT_FALSE(sluice_under_launcher());
    EXPECT_EQ(sluice_launch_rank(), 0);
    EXPECT_EQ(sluice_launch_size(), 1);
}

TEST(RolesSingleton, CommInitializesMpiLazilyWithAPrivateCommunicator)
{
    int inited = -1;
    PMPI_Initialized(&inited);
    EXPECT_EQ(inited, 0) << "nothing may initialize MPI before a feature asks";
    EXPECT_FALSE(sluice_mpi_ready());

    MPI_Comm c = sluice_comm();
    ASSERT_NE(c, MPI_COMM_NULL);
    EXPECT_TRUE(sluice_mpi_ready());
    EXPECT_EQ(sluice_comm(), c);

    int size = 0, cmp = -1, level = -1;
    MPI_Comm_size(c, &size);
    EXPECT_EQ(size, 1);
    MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp);
    EXPECT_EQ(cmp, MPI_CONGRUENT) << "a duplicate, never the application's communicator";
    PMPI_Query_thread(&level);
    EXPECT_EQ(level, MPI_THREAD_MULTIPLE);

    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(c, &eh);
    EXPECT_EQ(eh, MPI_ERRORS_RETURN) << "sluice's errors must not abort the application";
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Comm_get_name(c, name, &len);
    EXPECT_STREQ(name, "sluice");
}

TEST(RolesSingleton, ForkedChildOfAnMpiProcessGetsNoCommunicator)
{
    ASSERT_NE(sluice_comm(), MPI_COMM_NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (sluice_mpi_ready())
            _exit(1);
        if (sluice_comm() != MPI_COMM_NULL)
            _exit(2);
        _exit(0); // no destructors: the child must not touch the parent's MPI even at exit
    }
    EXPECT_EQ(wait_status(pid), 0);
    EXPECT_TRUE(sluice_mpi_ready()) << "the parent keeps its MPI";
}

TEST(RolesSingleton, ForkedChildExitingNormallyDoesNotFinalizeTheParentsMpi)
{
    ASSERT_NE(sluice_comm(), MPI_COMM_NULL);
    pid_t pid = fork();
    if (pid == 0)
        exit(0); // runs sluice's destructors in the child
    EXPECT_EQ(wait_status(pid), 0);
    int sum = 0, one = 1;
    EXPECT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, sluice_comm()), MPI_SUCCESS);
    EXPECT_EQ(sum, 1);
}

TEST(RolesSingleton, ApplicationDoesNotSeeSluicesInitializationAndTakesItOver)
{
    ASSERT_NE(sluice_comm(), MPI_COMM_NULL);
    bool was = sluice_config.any_set;
    sluice_config.any_set = true; // as when a SLUICE_* variable is set

    int flag = -1;
    EXPECT_EQ(sluice_mpi_app_initialized(&flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(sluice_mpi_app_finalized(&flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0);

    int provided = -1;
    EXPECT_EQ(sluice_mpi_app_init(nullptr, nullptr, true, MPI_THREAD_FUNNELED, &provided),
              MPI_SUCCESS);
    EXPECT_EQ(provided, MPI_THREAD_FUNNELED) << "what it asked for, capped by the library";
    EXPECT_EQ(sluice_mpi_app_initialized(&flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
    int level = -1;
    EXPECT_EQ(sluice_mpi_app_query_thread(&level), MPI_SUCCESS);
    EXPECT_EQ(level, MPI_THREAD_FUNNELED);
    EXPECT_TRUE(sluice_mpi_ready());
    sluice_config.any_set = was;
}

} // namespace
