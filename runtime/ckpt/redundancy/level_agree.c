/* SPDX-License-Identifier: MIT */
/* Node-local versions agreed over all nodes (docs/REDUNDANCY.md, "Across nodes"): when sluice's
 * communicator is made (collective: MPI_Init, or sluice's own start of MPI), every rank sends a
 * summary of the records its stage folder holds and receives everyone's (level_table.h). The
 * merged table answers reads (the newest version complete over all nodes) and the choice of
 * new version numbers (after the newest any node records) for the rest of the process. A job
 * whose nodes record nothing pays one MPI_Allreduce of an int. */
#include "ckpt/redundancy/level_agree.h"

#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_table.h"
#include "common/host_id.h"
#include "common/log.h"
#include "mpi/roles.h"
#include "mpi/wait_help.h"
#include "trace/trace.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Summaries above this in all (a million records) are not exchanged: reads serve what one node
 * holds, as without the agreement. */
#define AGREE_MAX_BYTES (256u << 20)

static struct sluice_level_table *_Atomic agreed;

const struct sluice_level_table *commit_level_agreed(void)
{
    return __atomic_load_n(&agreed, __ATOMIC_ACQUIRE);
}

/* One line (rank 0) when a set's newest node-local version is newer than its container's and
 * not complete over the nodes: a restart serves an older version, and says which it lost. */
static void report_lost(const struct sluice_level_table *t, const char *key)
{
    uint64_t newest = sluice_level_table_max(t, key), complete = sluice_level_table_complete(t, key, 0);
    char name[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    uint64_t durable = 0;
    if (sluice_container_name(key, name, sizeof name) == 0 &&
        sluice_container_open(name, &c, err, sizeof err) == 0) {
        durable = c->meta.version;
        sluice_container_close(c);
    }
    if (newest <= durable || newest == complete)
        return;
    int nprocs = 0, n = sluice_level_table_records(t, key, newest, &nprocs);
    uint64_t served = complete > durable ? complete : durable;
    sluice_log_warn(
        "checkpoint %s: node-local version %llu is lost (the nodes hold records of %d of its %d ranks: "
        "a node's stage folder is gone, or the job died while recording it); reads serve version %llu%s",
        key, (unsigned long long)newest, n, nprocs, (unsigned long long)served,
        served == durable ? " (durable)" : " (node-local)");
}

/* Per set the table knows: the trace event, and on rank 0 the line of a lost version. */
static void each_set(const struct sluice_level_table *t, int rank)
{
    size_t n = sluice_level_table_size(t);
    for (size_t i = 0; i < n; i++) {
        const char *key = sluice_level_table_key_at(t, i);
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(sluice_level_table_key_at(t, j), key) == 0;
        if (seen)
            continue;
        if (sluice_trace_active())
            sluice_trace_instant(SLUICE_EV_CKPT_LEVEL_AGREE, sluice_trace_string(key),
                                 sluice_level_table_complete(t, key, 0), sluice_level_table_max(t, key));
        if (rank == 0)
            report_lost(t, key);
    }
}

/* Exchanges the summaries (lens: each rank's length) and publishes their merge. Collective. */
static int exchange(MPI_Comm comm, int size, const unsigned char *mine, int len, const int *lens,
                    size_t total)
{
    unsigned char *all = malloc(total);
    size_t *slens = malloc((size_t)size * sizeof *slens);
    int *displs = malloc((size_t)size * sizeof *displs);
    int ok = all && slens && displs;
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok) {
        for (int i = 0, off = 0; i < size; off += lens[i], i++) {
            displs[i] = off;
            slens[i] = (size_t)lens[i];
        }
        if (sluice_quiet_allgatherv(mine, len, MPI_BYTE, all, lens, displs, MPI_BYTE, comm) == MPI_SUCCESS) {
            struct sluice_level_table *t = sluice_level_table_merge(all, slens, size);
            int rank = 0;
            PMPI_Comm_rank(comm, &rank);
            if (t)
                each_set(t, rank);
            sluice_level_table_free(__atomic_exchange_n(&agreed, t, __ATOMIC_ACQ_REL));
        }
    }
    free(all);
    free(slens);
    free(displs);
    return ok;
}

/* Every rank calls it with the same communicator; every step is collective or local, and every
 * rank takes the same branch (they all see the same MAX, MIN and lengths). */
static void agree(MPI_Comm comm)
{
    int size = 0;
    PMPI_Comm_size(comm, &size);
    char host[SLUICE_HOST_ID_LEN + 1];
    sluice_host_id(host);
    unsigned char *mine = NULL;
    size_t mylen = 0;
    if (sluice_level_table_encode(sluice_stage_dir(), host, &mine, &mylen) != 0 || mylen > AGREE_MAX_BYTES)
        mylen = 0;
    int len = (int)mylen, longest = len, ok = 1, *lens = NULL;
    /* Nothing recorded anywhere, the usual case: this one MPI_Allreduce is all it costs. */
    sluice_quiet_allreduce(MPI_IN_PLACE, &longest, 1, MPI_INT, MPI_MAX, comm);
    if (longest > 0) {
        lens = malloc((size_t)size * sizeof *lens);
        ok = lens != NULL;
        sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    }
    if (longest > 0 && ok &&
        sluice_quiet_allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm) == MPI_SUCCESS) {
        size_t total = 0;
        for (int i = 0; i < size; i++)
            total += (size_t)lens[i];
        if (total <= AGREE_MAX_BYTES)
            ok = exchange(comm, size, mine, len, lens, total);
    }
    if (!ok)
        sluice_log_warn("node-local checkpoint versions: out of memory agreeing on them over the nodes; "
                        "a restart reads only versions complete on one node");
    free(lens);
    free(mine);
}

void commit_level_agree_register(void)
{
    sluice_mpi_on_comm(agree);
}
