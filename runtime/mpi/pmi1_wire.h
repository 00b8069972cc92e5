/* SPDX-License-Identifier: MIT */
/* PMI-1's wire protocol on the launcher's socket (hydra's PMI_FD): one request line, one answer
 * line. Raw system calls only (it runs in constructors, at exit and on the fatal path, where
 * sluice's own wrappers of send and recv must not be entered); no lock, no allocation. */
#ifndef SLUICE_MPI_PMI1_WIRE_H
#define SLUICE_MPI_PMI1_WIRE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sends req (one line, ending in '\n') on fd and reads its answer line, and nothing after it
 * (which would be MPI's). The answer, without its '\n', goes to ans (NUL-terminated, cut to
 * cap - 1 bytes; ans may be NULL). Returns 0 once answered, -1 if the socket fails or closes,
 * -2 after wait_ms (wait_ms < 0: no limit but the socket's life). */
int sluice_pmi1_call(int fd, const char *req, char *ans, size_t cap, int wait_ms);

/* Reads the next answer line only, as sluice_pmi1_call does after its request. Requests sent
 * together in one write (several lines) are answered in order, one line each: MPICH's hydra
 * proxy handles every whole line of what it read before it reads again (pmip_cb.c, pmi_cb). */
int sluice_pmi1_answer(int fd, char *ans, size_t cap, int wait_ms);

/* Sends req without waiting for an answer (PMI-1's `abort` has none). 0 or -1. */
int sluice_pmi1_send(int fd, const char *req, size_t len);

#ifdef __cplusplus
}
#endif
#endif
