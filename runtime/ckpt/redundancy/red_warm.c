/* SPDX-License-Identifier: MIT */
/* A leader's redundancy buffers made ready while the job starts (red_warm.h). A stream's pieces
 * and a parity's blocks come from the buffer pool, which starts empty: every buffer of a job's
 * first version was fresh memory, a page fault per 4 KiB at its first touch, inside the read of
 * the piece on the I/O thread (257 faults and 4.2-5.6 ms of CPU per 1.1 MiB piece against
 * 0.2-0.5 ms at later versions, 3 testbed nodes of a 2-core virtual machine): one cause of the
 * first version's late protection (docs/REDUNDANCY.md). The faults are now taken once, on the
 * I/O thread, before the program's first checkpoint. */
#include "ckpt/redundancy/red_warm.h"
#include "ckpt/commit/io_worker.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_stream.h"
#include "common/bufpool.h"
#include "config/config.h"

#include <string.h>

/* A piece's message: SLUICE_RED_FILL_BUF of the stream and its head (a set's key is at most
 * PATH_MAX); also a received piece, of about as much. */
#define PIECE_BUF ((size_t)SLUICE_RED_FILL_BUF + 8192)
/* Partner: the window of 4 pieces read or unanswered (red_encode.c) and as many of the partner's
 * received; XOR sends to and receives from several nodes at once: as many as the pool keeps
 * (bufpool.h), and half of its parity blocks (red_xor_accum.h: 32 at most per parity, each
 * released when complete). */
#define PARTNER_PIECES 8
#define XOR_PIECES SLUICE_BUFPOOL_LARGE_SLOTS
#define XOR_BLOCKS 16

static struct sluice_io_task warm;
static int xor_blocks;

static void warm_run(struct sluice_io_task *t)
{
    (void)t;
    sluice_bufpool_warm(PIECE_BUF, xor_blocks ? XOR_PIECES : PARTNER_PIECES);
    if (xor_blocks)
        sluice_bufpool_warm(SLUICE_RED_CHUNK, XOR_BLOCKS);
}

void red_warm_start(const struct red_nodes *n)
{
    static int started;
    const char *mode = sluice_config.REDUNDANCY;
    /* Streams run only for node-local versions: with every version drained nothing is sent. */
    if (!n || n->nnodes < 2 || n->leader[n->mine] != n->rank || !mode || strcmp(mode, "none") == 0 ||
        sluice_config.DRAIN_EVERY <= 1 || __atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
        return;
    xor_blocks = strcmp(mode, "xor") == 0;
    warm.run = warm_run;
    sluice_io_submit(SLUICE_IO_OUT, &warm);
}
