/* SPDX-License-Identifier: MIT */
/* sluice's software distributed shared memory (docs/DSM.md), for programs that link
 * libsluice.so (-lsluice) and run under mpiexec. No server process is deployed by hand: every
 * rank is a client, and the ranks named by SLUICE_DSM_SERVERS (all by default) also serve the
 * metadata and home copies of the chunks whose address modulo the server count picks them.
 *
 * Shared data is cut into chunks, each named by an unsigned long address of a logical space.
 * A chain is this process's local, contiguous view of one or more chunks. Data of a chain is
 * only consistent inside a scope: READ / WRITE / READWRITE ... RELEASE (scope consistency);
 * outside one the runtime may evict it, so the pointer a scope returns is valid until RELEASE.
 *
 * Errors: functions returning int return 0 or a negative SLUICE_DSM_E* code; functions
 * returning a pointer return NULL. Either way sluice_dsm_last_error() gives the code and one
 * line naming the problem is printed on stderr. Every wait is bounded by SLUICE_DSM_TIMEOUT.
 *
 * Threads: every function may be called from any thread (one lock per process serializes
 * them); a scope belongs to the process, so two threads must not open scopes on one chunk at
 * once (refused with SLUICE_DSM_EBUSY). Handlers run on the thread that runs the event loop. */
#ifndef SLUICE_DSM_H
#define SLUICE_DSM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sluice_dsm_chain sluice_dsm_chain;

enum sluice_dsm_error {
    SLUICE_DSM_OK = 0,
    SLUICE_DSM_EINVAL = -1,    /* bad argument (size 0, reserved address, count above ranks) */
    SLUICE_DSM_ENOINIT = -2,   /* sluice_dsm_init() not called, or MPI not usable here */
    SLUICE_DSM_ESCOPE = -3,    /* RELEASE without a scope, or a scope already open on the chain */
    SLUICE_DSM_EBUSY = -4,     /* a chunk of the chain is already in a scope of this process */
    SLUICE_DSM_ETIMEDOUT = -5, /* a wait exceeded SLUICE_DSM_TIMEOUT seconds */
    SLUICE_DSM_ESIZE = -6,     /* a chunk exists with another size */
    SLUICE_DSM_ENOENT = -7,    /* no such symbol or chunk */
    SLUICE_DSM_ENOMEM = -8,
    SLUICE_DSM_EMPI = -9 /* an MPI call failed */
};

/* Consistency protocols, chosen per chain at allocation. */
enum sluice_dsm_protocol { SLUICE_DSM_MESI = 0 };

/* Collective over every rank of the job (like MPI_Init; sluice initializes MPI itself if the
 * program has not). A program that initializes MPI itself must ask MPI_THREAD_MULTIPLE. */
int sluice_dsm_init(void);
/* Collective: waits until every rank has called it, serving requests meanwhile. Also run by
 * itself at MPI finalization or exit if the program did not call it. */
int sluice_dsm_finalize(void);
int sluice_dsm_rank(void);
int sluice_dsm_size(void);

/* A chain of ceil(size / SLUICE_DSM_CHUNK_SIZE) chunks at base, base+1, ...; the last chunk
 * holds the remainder. The same (base, size) again returns the same chain. */
sluice_dsm_chain *sluice_dsm_malloc(unsigned long base, size_t size, int protocol);
/* n chunks at addrs[i] of size sizes[i % nsizes]. */
sluice_dsm_chain *sluice_dsm_malloc_lst(const unsigned long *addrs, size_t n, const size_t *sizes,
                                        size_t nsizes, int protocol);
/* Chunks written by anyone, sizes asked from their home; waits until each has been written. */
sluice_dsm_chain *sluice_dsm_lookup(unsigned long base, size_t nchunks);
sluice_dsm_chain *sluice_dsm_lookup_lst(const unsigned long *addrs, size_t n);
/* Drops this process's chain and local data (not the chunks: their home copies stay). */
int sluice_dsm_free(sluice_dsm_chain *chain);
size_t sluice_dsm_chain_size(const sluice_dsm_chain *chain);
unsigned long sluice_dsm_chain_base(const sluice_dsm_chain *chain);

/* Scopes. Each returns the chain's local data (contiguous), valid until RELEASE, or NULL.
 * Writing inside a READ scope stops the program with a message naming the chunk. */
void *sluice_dsm_read(sluice_dsm_chain *chain);
void *sluice_dsm_write(sluice_dsm_chain *chain);
void *sluice_dsm_readwrite(sluice_dsm_chain *chain);
int sluice_dsm_release(sluice_dsm_chain *chain);
/* Version of the chain's first chunk seen by the open scope (1 after the first write). */
unsigned long sluice_dsm_version(const sluice_dsm_chain *chain);

/* Zero-copy: ptr (chain size bytes, the caller's memory) becomes the chain's local data, kept
 * outside scopes; PUT publishes it (an empty WRITE scope), GET refreshes it (an empty READ). */
int sluice_dsm_map(sluice_dsm_chain *chain, void *ptr);
int sluice_dsm_put(sluice_dsm_chain *chain);
int sluice_dsm_get(sluice_dsm_chain *chain);

/* Symbols, kept in a table that is itself shared data of the DSM. */
int sluice_dsm_symbol_define(const char *name, unsigned long base, size_t size);
sluice_dsm_chain *sluice_dsm_symbol_lookup(const char *name); /* NULL, ENOENT if undefined */
int sluice_dsm_symbol_put(const char *name, const void *data, size_t size);
int sluice_dsm_symbol_get(const char *name, void *data, size_t size);

/* Synchronization, distributed (no coordinator). A rendezvous remembers wake-ups: the k-th
 * sleep of a process on id returns once the k-th wakeup of id (by anyone) has reached it.
 * A barrier releases its count participants once all of them have entered it; every
 * participant must pass the same count. Rendezvous and barrier ids are separate spaces. */
int sluice_dsm_sleep(unsigned int id);
int sluice_dsm_wakeup(unsigned int id);
int sluice_dsm_barrier(unsigned int id, unsigned int count);

/* Publish-subscribe. handler(address, args) runs once on this process for every write of the
 * chunk anywhere (every RELEASE of a WRITE/READWRITE scope, every PUT) completed after
 * subscribe returned; handlers run inside sluice_dsm_loop() or sluice_dsm_poll_events(), may
 * use the whole API and may unsubscribe. Signals are the same without a chunk. */
typedef void (*sluice_dsm_handler)(unsigned long address, void *args);
int sluice_dsm_subscribe(unsigned long address, sluice_dsm_handler handler, void *args);
int sluice_dsm_unsubscribe(unsigned long address, sluice_dsm_handler handler, void *args);
int sluice_dsm_subscribe_signal(unsigned long id, sluice_dsm_handler handler, void *args);
int sluice_dsm_unsubscribe_signal(unsigned long id, sluice_dsm_handler handler, void *args);
int sluice_dsm_signal(unsigned long id);
/* Runs handlers until this process has no subscription and no pending event (the end of a
 * task's main). Returns 0, or ETIMEDOUT when no event came for SLUICE_DSM_TIMEOUT seconds. */
int sluice_dsm_loop(void);
/* Runs the handlers of events already received; returns how many ran. */
int sluice_dsm_poll_events(void);

int sluice_dsm_last_error(void);
const char *sluice_dsm_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
