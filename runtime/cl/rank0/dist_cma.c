/* SPDX-License-Identifier: MIT */
/* Cross-memory attach, rank 0's side (dist_cma.h). The probe word holds a value no other process
 * has at that address, so a serving rank that reads it back is on this node and may access this
 * process's memory (the kernel's ptrace rules: the same user and Yama's ptrace_scope allowing it,
 * or CAP_SYS_PTRACE). Rank 0 changes none of those rules: where they refuse, data goes by MPI. */
#include "cl/rank0/dist_cma.h"

#include <string.h>
#include <unistd.h>

#include "cl/rank0/dist_internal.h"
#include "config/config.h"
#include "trace/trace.h"

static uint64_t probe_word;
static int can_copy[DIST_MAX_RANKS]; /* written before the scheduler thread starts */

void dist_cma_offer(struct sluice_remote_req *ping)
{
    if (!sluice_config.DIST_CMA)
        return;
    if (probe_word == 0)
        probe_word = ((sluice_now_ns() * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)getpid() << 32)) | 1;
    ping->ping.pid = (uint64_t)getpid();
    ping->ping.probe_addr = (uint64_t)(uintptr_t)&probe_word;
    ping->ping.probe_word = probe_word;
}

void dist_cma_answer(int rank, const unsigned char *rep, size_t len)
{
    uint64_t v[2] = {0, 0};
    if (rank <= 0 || rank >= DIST_MAX_RANKS || len < sizeof v)
        return;
    memcpy(v, rep, sizeof v);
    can_copy[rank] = sluice_config.DIST_CMA && v[1] == 1;
}

int dist_cma_can(int rank)
{
    return rank > 0 && rank < DIST_MAX_RANKS && can_copy[rank];
}

int dist_cma_command(int rank, struct sluice_remote_req *req, unsigned char *p, const void *host)
{
    struct sluice_remote_cmd h;
    if (rank <= 0 || rank >= DIST_MAX_RANKS || !can_copy[rank] || host == NULL ||
        (req->op != SLUICE_REMOTE_CMD_WRITE && req->op != SLUICE_REMOTE_CMD_READ) || req->nbytes < sizeof h)
        return 0;
    memcpy(&h, p, sizeof h);
    if (h.flags & (SLUICE_CMD_BCAST | SLUICE_CMD_SCATTER | SLUICE_CMD_ALLGATHER | SLUICE_CMD_GATHER))
        return 0; /* its data moves by a collective */
    h.flags |= SLUICE_CMD_CMA;
    memcpy(p, &h, sizeof h);
    req->xfer.cma_addr = (uint64_t)(uintptr_t)host;
    return 1;
}
