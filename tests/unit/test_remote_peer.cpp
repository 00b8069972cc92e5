/* SPDX-License-Identifier: MIT */
// The peer hooks of the serving ranks' transport (cl/serve/remote_peer.h): what rank 0's backend
// registers is what a failed or silent peer reaches, with the arguments given; without a
// registration a failed peer still ends the process with one line, never returns.
#include <gtest/gtest.h>

#include <string>
#include <unistd.h>

extern "C" {
#include "cl/serve/remote_peer.h"
}

namespace
{

int silent_rank = -1;
uint64_t silent_since;
std::string silent_what;

void record_silent(int rank, uint64_t since, const char *what)
{
    silent_rank = rank;
    silent_since = since;
    silent_what = what;
}

void exit_with_rank(int rank, int mpi_rc, const char *what)
{
    fprintf(stderr, "hook: rank %d rc %d while %s\n", rank, mpi_rc, what);
    _exit(40 + rank);
}

const sluice_remote_peer_ops test_ops = {exit_with_rank, record_silent};

TEST(RemotePeer, SilentReachesTheRegisteredHookWithItsArguments)
{
    sluice_remote_peer_ops_set(&test_ops);
    sluice_remote_peer_silent(2, 12345, "the reply to a call");
    EXPECT_EQ(silent_rank, 2);
    EXPECT_EQ(silent_since, 12345u);
    EXPECT_EQ(silent_what, "the reply to a call");
    sluice_remote_peer_ops_set(nullptr);
}

TEST(RemotePeer, SilentWithoutHooksDoesNothing)
{
    sluice_remote_peer_ops_set(nullptr);
    silent_rank = -1;
    sluice_remote_peer_silent(1, 1, "its clock");
    EXPECT_EQ(silent_rank, -1);
}

TEST(RemotePeerDeathTest, FailedEndsThroughTheRegisteredHook)
{
    EXPECT_EXIT(
        {
            sluice_remote_peer_ops_set(&test_ops);
            sluice_remote_peer_failed(3, 15, "sending a request");
        },
        testing::ExitedWithCode(43), "hook: rank 3 rc 15 while sending a request");
}

TEST(RemotePeerDeathTest, FailedWithoutHooksSaysSoAndEnds)
{
    EXPECT_EXIT(
        {
            sluice_remote_peer_ops_set(nullptr);
            sluice_remote_peer_failed(2, 15, "receiving a reply");
        },
        testing::ExitedWithCode(1),
        "distributed OpenCL: an MPI call with rank 2 failed while receiving a reply \\(MPI error 15\\), "
        "and no fault handler is registered");
}

} // namespace
