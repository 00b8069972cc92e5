/* SPDX-License-Identifier: MIT */
/* Communicators of collective replacement (docs/DAG.md): one per set of ranks, created once by
 * MPI_Comm_create_group (collective over the set only, not the whole job) and kept until exit.
 * Rank 0 names a set by its rank mask and sends GROUP to the other members before it calls
 * MPI_Comm_create_group itself; serving ranks answer GROUP from their loop at once (never
 * behind commands), so every member reaches the call. A set of serving ranks only (an allgather
 * among them) is announced by rank 0 the same way, but created by its members alone. */
#include <pthread.h>

#include "cl/serve/remote_proto.h"
#include "trace/trace.h"

#define GROUPS 64

static struct {
    uint64_t mask;
    MPI_Comm comm;
} groups[GROUPS];
static int ngroups;
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;

static MPI_Comm lookup(uint64_t mask)
{
    for (int i = 0; i < ngroups; i++)
        if (groups[i].mask == mask)
            return groups[i].comm;
    return MPI_COMM_NULL;
}

/* Rank 0 names the set to its other members: they create the communicator when GROUP arrives. */
static void announce(MPI_Comm world, uint64_t mask)
{
    struct sluice_remote_req req = {.op = SLUICE_REMOTE_GROUP, .a = {mask}};
    for (int r = 1; r < 63; r++) /* (bit 63: the gather communicator of the same ranks) */
        if (mask & (1ull << r)) {
            MPI_Send(&req, sizeof req, MPI_BYTE, r, SLUICE_REMOTE_TAG_REQ, world);
            sluice_trace_instant(SLUICE_EV_MSG_SEND, (uint64_t)r, sizeof req, SLUICE_REMOTE_TAG_REQ);
        }
}

MPI_Comm sluice_remote_group_comm(uint64_t mask)
{
    pthread_mutex_lock(&group_lock);
    MPI_Comm c = lookup(mask);
    if (c == MPI_COMM_NULL && ngroups < GROUPS) {
        MPI_Comm world = sluice_comm();
        int me = 0, ranks[64], n = 0;
        MPI_Comm_rank(world, &me);
        for (int r = 0; r < 63; r++)
            if (mask & (1ull << r))
                ranks[n++] = r;
        if (me == 0)
            announce(world, mask);
        MPI_Group all, sub;
        MPI_Comm_group(world, &all);
        MPI_Group_incl(all, n, ranks, &sub);
        if (MPI_Comm_create_group(world, sub, SLUICE_REMOTE_TAG_GROUP, &c) != MPI_SUCCESS)
            c = MPI_COMM_NULL;
        MPI_Group_free(&sub);
        MPI_Group_free(&all);
        if (c != MPI_COMM_NULL) {
            groups[ngroups].mask = mask;
            groups[ngroups++].comm = c;
        }
    }
    pthread_mutex_unlock(&group_lock);
    return c;
}

/* Rank 0 keeps such a set with MPI_COMM_SELF in place of a communicator it is not in. */
int sluice_remote_group_announce(uint64_t mask)
{
    pthread_mutex_lock(&group_lock);
    int ok = lookup(mask) != MPI_COMM_NULL;
    if (!ok && ngroups < GROUPS && !(mask & 1)) {
        announce(sluice_comm(), mask);
        groups[ngroups].mask = mask;
        groups[ngroups++].comm = MPI_COMM_SELF;
        ok = 1;
    }
    pthread_mutex_unlock(&group_lock);
    return ok ? 0 : -1;
}
