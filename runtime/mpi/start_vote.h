/* SPDX-License-Identifier: MIT */
/* Whether the ranks of a job start MPI at all, decided without MPI (docs/COMMIT.md, "Which
 * processes use MPI").
 *
 * With capture on, a rank that wrote a checkpoint starts MPI to commit it, and MPI's start-up is
 * collective: every rank of the job must start it too, even one that wrote nothing. Most steps of
 * a job script write nothing at all (`mpiexec -n 64 hostname`), and starting MPI on every rank to
 * find that out cost 15-18 s at 64 ranks here. So under hydra, before any process starts MPI,
 * the rank's MPI owner takes part in one vote over the launcher's PMI-1 key-value space: a rank
 * about to start MPI puts the key sluice_start_mpi, every rank then enters PMI's barrier; rank 0
 * reads the key and puts the tally (sluice_start_mpi_tally, 0 or 1), and after a second barrier
 * every other rank reads the tally, which its node's proxy already holds (a key that nobody put
 * is asked of mpiexec by the proxy at each get: N requests in a row at one process). A rank that
 * wrote nothing and finds no rank did tells the launcher it has finished (PMI `finalize`) and
 * leaves without MPI; any other goes on to MPI_Init, whose own barriers
 * then line up on every rank, since every rank voted once before them. */
#ifndef SLUICE_MPI_START_VOTE_H
#define SLUICE_MPI_START_VOTE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sluice_start_vote {
    SLUICE_VOTE_FAILED = -1, /* the exchange failed: decide as without a vote (start MPI) */
    SLUICE_VOTE_NONE = 0,    /* no rank starts MPI: this process told the launcher it is done */
    SLUICE_VOTE_SOME = 1,    /* some rank starts MPI: every rank must */
};

/* The vote on the rank's PMI-1 socket fd (hydra's proxy). start: this rank starts MPI. Waits
 * in PMI's barrier until every rank of the job has voted (the launcher ends the job if a rank
 * that spoke PMI dies first). With start set, never SLUICE_VOTE_NONE. */
enum sluice_start_vote sluice_start_vote(int fd, int rank, bool start);

/* The same vote at the exit flush of a job that started MPI, on key sluice_exit_busy: whether any
 * rank has something to commit or report (busy: this one has). Processes wait asleep in PMI's
 * barrier, where an MPI collective on oversubscribed cores spins and waits for each peer to be
 * scheduled. Never tells the launcher anything else: MPI's own finalize follows. all_arrived (may be
 * NULL) is called after the first barrier, when every rank has entered the vote, before the wait
 * for the tally: work begun there overlaps that wait. */
enum sluice_start_vote sluice_exit_vote(int fd, int rank, bool busy, void (*all_arrived)(void));

#ifdef __cplusplus
}
#endif
#endif
