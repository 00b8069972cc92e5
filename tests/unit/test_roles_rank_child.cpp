/* SPDX-License-Identifier: MIT */
// Not a test on its own: the program that tests/integration/mpi/mpi_lazy_init.sh runs several
// times per rank under real mpiexec (`sh -c 'child; child; child'`), standing in for a
// sluice feature that needs MPI (none exists in every build). Run by ctest it skips.
//
// ROLES_TEST_STEP=none: reports the launcher rank/size and does not touch MPI.
// ROLES_TEST_STEP=mpi:  asks for sluice_comm(); reports either the communicator (size, sum of
//                       ranks over it, thread level) or that it got MPI_COMM_NULL, and whether
//                       a forked child of this process gets MPI_COMM_NULL.
// Each run writes out.<ROLES_TEST_LABEL>.<rank> in the current directory.
#define OMPI_SKIP_MPICXX 1 // the C API only, also with Open MPI
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "mpi/roles.h"
}

namespace {

std::string report_path()
{
    const char *label = getenv("ROLES_TEST_LABEL");
    return std::string("out.") + (label ? label : "x") + "." + std::to_string(sluice_launch_rank());
}

void hook()
{
    std::ofstream(report_path() + ".hook") << "hook ran ready " << sluice_mpi_ready() << "\n";
}

TEST(RankChild, Step)
{
    const char *step = getenv("ROLES_TEST_STEP");
    if (step == nullptr)
        GTEST_SKIP() << "run by tests/integration/mpi/mpi_lazy_init.sh under mpiexec";
    std::ofstream out(report_path());
    out << "rank " << sluice_launch_rank() << " size " << sluice_launch_size() << " launcher "
        << sluice_under_launcher();
    if (std::string(step) == "none") {
        int inited = -1;
        PMPI_Initialized(&inited);
        out << " mpi untouched " << (inited == 0) << "\n";
        return;
    }
    MPI_Comm c = sluice_comm();
    if (c == MPI_COMM_NULL) {
        out << " comm null\n";
        return;
    }
    int size = 0, rank = -1, level = -1;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    PMPI_Query_thread(&level);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    pid_t pid = fork();
    if (pid == 0)
        _exit(sluice_comm() == MPI_COMM_NULL ? 0 : 1);
    int st = 0;
    waitpid(pid, &st, 0);
    sluice_mpi_on_finalize(hook);
    out << " comm size " << size << " rank " << rank << " sum " << sum << " multiple "
        << (level == MPI_THREAD_MULTIPLE) << " forked child null "
        << (WIFEXITED(st) && WEXITSTATUS(st) == 0) << "\n";
}

} // namespace
