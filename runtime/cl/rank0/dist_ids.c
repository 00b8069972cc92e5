/* SPDX-License-Identifier: MIT */
/* Creations without a round trip (cl/serve/remote_ids.h): rank 0 chooses the id of an object it
 * creates on a serving rank, one id space per rank, and sends the creation without waiting for
 * the reply it would otherwise need to learn the rank's handle. The creation goes on the request
 * channel before any command that names the id (one sender, one tag: MPI keeps their order), and
 * like a query it leaves collective replacement's window open (dist_call.c). What the driver
 * would refuse at once is checked on rank 0 before (dist_validate.c); a failure the rank meets
 * later is kept there under the id and fails the object's first use or query. */
#include <string.h>

#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_ids.h"
#include "config/config.h"

static uint64_t next_id[DIST_MAX_RANKS]; /* the last id given on each rank, from 1 */

static void post_creation(int rank, int op, const uint64_t *args, int nargs, const void *payload, size_t len)
{
    struct sluice_remote_req req;
    memset(&req, 0, sizeof req);
    req.op = (uint32_t)op;
    for (int i = 0; i < nargs && i < SLUICE_REMOTE_NARGS; i++) /* as in dist_call */
        req.a[i] = args[i];
    req.nbytes = len;
    dist_sched_window_touch(); /* the window stays open: no held command can name the new id */
    MPI_Comm comm = sluice_comm();
    if (comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&dist_lock);
    int rc = sluice_remote_send(comm, rank, SLUICE_REMOTE_TAG_REQ, &req, sizeof req, payload, len);
    if (rc != MPI_SUCCESS)
        dist_fault_peer(rank, rc, "sending a creation");
    pthread_mutex_unlock(&dist_lock);
}

cl_int dist_create(int rank, int op, uint64_t *words, int nwords, int id_word, const void *payload,
                   size_t len, uint64_t *rid)
{
    if (rank == 0 || !sluice_config.DIST_IDS) /* rank 0: in-process, no round trip to save */
        return dist_call_v(rank, op, words, nwords, payload, len, rid);
    uint64_t id = SLUICE_RID_CHOSEN | __atomic_add_fetch(&next_id[rank], 1, __ATOMIC_RELAXED);
    words[id_word] = id;
    post_creation(rank, op, words, nwords, payload, len);
    *rid = id;
    return CL_SUCCESS;
}
