/* SPDX-License-Identifier: MIT */
/* The commit's I/O threads, so that the progress thread keeps driving MPI while a file is read
 * or written or an index encoded: an aggregator's rounds (twophase_exec.c), the redundancy
 * streams' reads and writes (red_encode.c, red_xor_encode.c), a home's index of a global array
 * (commit_index.c). A pread or write of 1 MiB on the progress thread stalls every message of
 * every commit of the process meanwhile.
 *
 * Lanes of one thread and one queue each (a lane's thread starts on its first task), so that a
 * node reading its own part out and writing what its partners send in does both at once:
 * SLUICE_IO_OUT reads what is to be sent, SLUICE_IO_IN writes what was received, SLUICE_IO_INDEX
 * (below) encodes indexes. Tasks of one lane run one at a time in the order they
 * were queued: a stream's pieces reach their file in order. The submitter owns the task; the
 * thread sets `done` (release) once run() returned and wakes the progress thread, which sees it
 * with sluice_io_done() and may then free it. */
#ifndef SLUICE_CKPT_COMMIT_IO_WORKER_H
#define SLUICE_CKPT_COMMIT_IO_WORKER_H

struct sluice_io_task {
    void (*run)(struct sluice_io_task *t); /* on the I/O thread; must not free t */
    int done;
    struct sluice_io_task *next;  /* the lane's queue */
    struct sluice_io_task *after; /* the submitter's fifo (below) */
};

/* SLUICE_IO_INDEX: a home's index of a global array, encoded while the data moves
 * (commit_index.c); a lane of its own, so that the home's wait for it at the end is only its
 * own work. */
enum sluice_io_lane { SLUICE_IO_OUT, SLUICE_IO_IN, SLUICE_IO_INDEX, SLUICE_IO_LANES };

/* Queues t on a lane (run and nothing else set by the caller). Any thread. Where no thread can
 * be had, runs it here at once: still correct, only slower. */
void sluice_io_submit(enum sluice_io_lane lane, struct sluice_io_task *t);

static inline int sluice_io_done(const struct sluice_io_task *t)
{
    return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
}

/* One submitter's tasks (a stream's pieces), taken back in the order they were queued: the
 * progress thread's side. Zeroed is empty. */
struct sluice_io_fifo {
    struct sluice_io_task *head, *tail;
    int n; /* queued and not yet taken back */
};

/* Queues t on lane and at the fifo's end. */
void sluice_io_fifo_submit(struct sluice_io_fifo *q, enum sluice_io_lane lane, struct sluice_io_task *t);
/* The fifo's oldest task once it is done (taken off the fifo: the caller frees it), else NULL. */
struct sluice_io_task *sluice_io_fifo_take(struct sluice_io_fifo *q);

#endif
