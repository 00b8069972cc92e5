/* SPDX-License-Identifier: MIT */
/* Pulled writes, rank 0's side (dist_pull.h). The probe word holds a value no other process has
 * at that address, so a serving rank that reads it back is on this node and may read this
 * process's memory (the kernel's ptrace rules: the same user, and Yama's ptrace_scope allowing
 * it, or CAP_SYS_PTRACE). rank 0 changes none of those rules: where they refuse, data goes by
 * MPI as before. */
#include "dist/dist_pull.h"

#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "dist/dist_internal.h"
#include "trace/trace.h"

static uint64_t probe_word;
static int can_pull[DIST_MAX_RANKS]; /* written before the scheduler thread starts */

void dist_pull_offer(struct sluice_remote_req *ping)
{
    if (!sluice_config.DIST_PULL)
        return;
    if (probe_word == 0)
        probe_word = ((sluice_now_ns() * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)getpid() << 32)) | 1;
    ping->a[1] = (uint64_t)getpid();
    ping->a[2] = (uint64_t)(uintptr_t)&probe_word;
    ping->a[3] = probe_word;
}

void dist_pull_answer(int rank, const unsigned char *rep, size_t len)
{
    uint64_t v[2] = {0, 0};
    if (rank <= 0 || rank >= DIST_MAX_RANKS || len < sizeof v)
        return; /* (a rank answering the clock alone pulls nothing) */
    memcpy(v, rep, sizeof v);
    can_pull[rank] = sluice_config.DIST_PULL && v[1] == 1;
}

int dist_pull_write(int rank, struct sluice_remote_req *req, unsigned char *p, const void *data)
{
    struct sluice_remote_cmd h;
    if (rank <= 0 || rank >= DIST_MAX_RANKS || !can_pull[rank] || data == NULL ||
        req->op != SLUICE_REMOTE_CMD_WRITE || req->nbytes < sizeof h)
        return 0;
    memcpy(&h, p, sizeof h);
    if (h.flags & (SLUICE_CMD_BCAST | SLUICE_CMD_SCATTER | SLUICE_CMD_ALLGATHER))
        return 0; /* its data comes by a collective */
    h.flags |= SLUICE_CMD_PULL;
    memcpy(p, &h, sizeof h);
    req->a[6] = (uint64_t)(uintptr_t)data;
    return 1;
}
