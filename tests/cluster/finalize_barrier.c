/* SPDX-License-Identifier: MIT */
/* MPICH 4.0.2's MPI_Finalize over UCX's TCP transport hangs when ranks reach it at different
 * times (docs/CLUSTER_TESTBED.md, "Job ends"): its UCX finalize hook closes every endpoint in
 * flush mode (ucp_disconnect_nb) and spins until all closes complete, and a flush over TCP can
 * need an answer from a peer that already left its own closes for the PMI barrier that follows,
 * where it no longer progresses UCX. The testbed's nodes load this library (their own
 * /etc/ld.so.preload): the first ucp_disconnect_nb of a process (MPICH calls it only there)
 * waits in one PMI-1 barrier first (hydra's wire protocol on PMI_FD); then every close returns
 * at once, done, and the endpoints go with the worker that MPICH destroys next (locally, as a
 * force close would; UCX 1.13 refuses that mode for MPICH's endpoints). Once every rank is in
 * MPI_Finalize, every message a correct program sent has been received (its receive completed
 * before its receiver got there), so nothing is left for a flush to wait for. Without PMI_FD
 * (not launched by hydra), or if the barrier fails, MPICH's flush-mode close runs unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int barrier_state; /* 0 not yet, 1 passed, -1 failed or no PMI_FD */

static int pmi_barrier(int fd)
{
    static const char in[] = "cmd=barrier_in\n";
    size_t off = 0;
    while (off < sizeof in - 1) {
        ssize_t n = write(fd, in + off, sizeof in - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    char line[256];
    size_t len = 0;
    for (;;) { /* one line back: cmd=barrier_out */
        ssize_t n = read(fd, line + len, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        if (line[len] == '\n' || ++len == sizeof line - 1)
            break;
    }
    return 0;
}

void *ucp_disconnect_nb(void *ep)
{
    static void *(*flush_close)(void *);
    if (flush_close == NULL)
        flush_close = (void *(*)(void *))dlsym(RTLD_NEXT, "ucp_disconnect_nb");
    if (barrier_state == 0) {
        const char *fd = getenv("PMI_FD");
        barrier_state = fd != NULL && *fd != '\0' && pmi_barrier(atoi(fd)) == 0 ? 1 : -1;
    }
    if (barrier_state == 1)
        return NULL; /* UCS_OK: closed (by ucp_worker_destroy) */
    return flush_close(ep);
}
