/* SPDX-License-Identifier: MIT */
/* Internals of the software DSM (docs/DSM.md), shared by its files:
 *   transport.c  messages over sluice's communicator, the progress poller, bounded waits
 *   chunk.c      local chunks and chains, LRU eviction, the READ-scope write guard
 *   home.c       the home side common to protocols: chunk records, lookups, subscriptions
 *   mesi.c       the home-based MESI protocol (client and home), behind dsm_protocol_ops
 *   sync.c       rendezvous and barriers; pubsub.c events and the loop; symbols.c the table
 *   api.c        the public functions of sluice_dsm.h
 * Everything runs under D.lock, taken by the API calls and by the progress poller; waits
 * drop it while they sleep, so the other side of a protocol step is always served. */
#ifndef SLUICE_DSM_DSM_H
#define SLUICE_DSM_DSM_H

#include "common/mpi_c.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "sluice_dsm.h"

/* One message = this header + payload (chunk data), one MPI_BYTE message on one tag, so that
 * MPI's per-pair ordering orders every message between two ranks (a write-back always reaches
 * the home before the acknowledgement that follows it). */
enum dsm_msg_type {
    M_RD_REQ = 1,   /* client -> home: read copy wanted (version held in `version`) */
    M_WR_REQ,       /* client -> home: exclusive copy wanted (flags: DSM_F_NODATA) */
    M_RD_DATA,      /* home -> client: read copy (payload) */
    M_WR_GRANT,     /* home -> client: ownership (payload unless the client's copy is current; arg:
                       the M_INV_ACKs to wait for) */
    M_INV,          /* home -> sharer: drop the copy, then M_ACK (DSM_F_FWD: M_INV_ACK to the requester) */
    M_RECALL,       /* home -> owner: give up ownership (flags DSM_F_KEEP: stay a sharer) */
    M_ACK,          /* sharer/owner -> home: M_INV or M_RECALL done */
    M_WB,           /* owner -> home: new data after a WRITE scope (payload) */
    M_ERROR,        /* home -> client: request refused (arg: error code, size: home's size) */
    M_LOOKUP,       /* client -> home: size of a written chunk wanted */
    M_LOOKUP_REPLY, /* home -> client */
    M_SUB,          /* client -> home: subscribe (kind: chunk or signal) */
    M_SUB_ACK,
    M_UNSUB,
    M_PUBLISH, /* home -> subscriber: the chunk was written (version) / the signal fired */
    M_SIGNAL,  /* anyone -> home of a signal id */
    M_ARRIVE,  /* broadcast: entered barrier addr, generation version */
    M_WAKE,    /* broadcast: wakeup of rendezvous addr */
    M_DONE,    /* broadcast: finalize phase arg reached */
    M_INV_ACK  /* sharer -> writer: an M_INV with DSM_F_FWD done (the writer counts them) */
};

#define DSM_F_NODATA 1u /* M_WR_REQ: the caller overwrites everything (PUT) */
#define DSM_F_KEEP 2u   /* M_RECALL: downgrade to sharer, not invalid; home write: requester was a sharer */
#define DSM_F_DATA 4u   /* M_WR_GRANT: payload present */
/* M_WR_GRANT: other copies were invalidated or recalled to grant it (someone else reads it) */
#define DSM_F_CONTENDED 8u
#define DSM_F_DOWNGRADE 16u /* M_WB: the writer keeps a read copy only, no ownership */
/* M_INV: the home granted already; acknowledge to rank `arg` (the writer) with M_INV_ACK */
#define DSM_F_FWD 32u
/* M_WR_GRANT: the chunk migrates between writers: give the copy up entirely at RELEASE */
#define DSM_F_MIGRATORY 64u
#define DSM_F_DROP 128u /* M_WB: the writer keeps no copy (state I, not a sharer) */

enum dsm_kind { K_CHUNK = 0, K_SIGNAL = 1 };

struct dsm_msg {
    uint32_t type;
    uint16_t proto;
    uint16_t kind;
    int32_t src;
    uint32_t flags;
    uint64_t addr;
    uint64_t size;
    uint64_t version;
    int64_t arg;
};

/* Client states of a chunk (MESI: M is E inside a WRITE scope). */
enum dsm_state { ST_I = 0, ST_S, ST_E, ST_M };
enum dsm_mode { MODE_NONE = 0, MODE_READ = 1, MODE_WRITE = 2, MODE_RW = 3 };

struct sluice_dsm_chain;

struct dsm_instance {
    struct sluice_dsm_chain *chain;
    size_t offset;
};

/* This process's record of a chunk. All live instances hold the same bytes when state != I. */
struct dsm_chunk {
    unsigned long addr;
    size_t size;
    int proto;
    int state;
    uint64_t version;
    struct dsm_instance *inst;
    size_t ninst;
    int scope;         /* MODE_* of the open scope (or of the acquire in flight) */
    bool held;         /* the scope is open (acquire done, no RELEASE yet) */
    uint32_t deferred; /* M_INV / M_RECALL received inside the scope, answered at release */
    uint32_t deferred_flags;
    int deferred_to; /* the rank its answer goes to (the home, or the writer of an M_INV with DSM_F_FWD) */
    /* M_INV_ACKs still owed to this rank's write grants: + the count each grant names, - each
     * acknowledgement (which may arrive before its grant). An acquire completes at 0. Kept
     * across scopes, so that the acknowledgements of a grant whose acquire timed out are still
     * counted (and waited for) by the next one. */
    int64_t acks_owed;
    bool reply;          /* the answer to the request in flight arrived */
    int reply_error;     /* its SLUICE_DSM_E* code, 0 if granted */
    uint64_t reply_size; /* home's size (errors, lookups) */
    uint64_t scope_t0;   /* acquire start, for the trace */
    bool scope_hit;
    bool contended; /* the last grant took the chunk from other copies: give it up at RELEASE */
    bool migratory; /* the last grant was DSM_F_MIGRATORY: drop the copy at RELEASE */
    UT_hash_handle hh;
};

/* A chain: this process's contiguous view of chunks. Evicted chains keep their chunks. */
struct sluice_dsm_chain {
    unsigned long base;
    size_t n;
    struct dsm_chunk **chunks;
    size_t *offsets;
    size_t bytes;
    unsigned char *buf;  /* NULL while evicted */
    unsigned char *wbuf; /* the runtime's view of buf, always writable (chunk.c) */
    bool ro;             /* buf is read-only now */
    size_t mapped_len;   /* mmap length of buf, 0 when buf is the caller's (MAP) */
    bool user_mapped;
    int guard_slot; /* 1 + the guard slot while the pages are read-only, 0 when writable */
    int scope;
    int proto;
    struct sluice_dsm_chain *lru_prev, *lru_next;
    struct sluice_dsm_chain *all_next;
};

/* A protocol: client steps (called with D.lock held, may wait) and home message handling. */
struct dsm_protocol_ops {
    const char *name;
    /* Brings c into the state mode needs; *hit set when no message was needed. */
    int (*acquire)(struct dsm_chunk *c, int mode, bool want_data, bool *hit);
    /* Ends the scope of c; data is the instance written (WRITE/RW) or NULL. */
    void (*release)(struct dsm_chunk *c, int mode, const void *data);
    void (*client_msg)(struct dsm_chunk *c, const struct dsm_msg *m, const void *payload, size_t len);
    void (*home_msg)(const struct dsm_msg *m, const void *payload, size_t len, int src);
};
extern const struct dsm_protocol_ops dsm_mesi_ops;
const struct dsm_protocol_ops *dsm_protocol(int proto);

/* Home record of a chunk or signal (home.c). */
struct dsm_queued {
    struct dsm_msg m;
    void *payload;
    size_t len;
    struct dsm_queued *next;
};
struct dsm_home_key {
    uint64_t addr;
    uint32_t kind;
    uint32_t pad;
};
struct dsm_home {
    struct dsm_home_key key;
    size_t size;
    uint64_t version;
    int proto;
    unsigned char *data;
    unsigned char *sharers; /* one byte per rank */
    int owner;              /* -1: none */
    int *subs;              /* subscriptions per rank (NULL until the first) */
    int busy_type;          /* request being served (0: idle) */
    int busy_src;
    uint32_t busy_flags;
    uint64_t busy_version;
    int acks;
    /* Migratory sharing (mesi.c): the rank granted the last write (-1: none), whether the
     * chunk is marked migratory, the other ranks that read it since that grant, and the write
     * requests left before it may be marked again after a wrong guess. */
    int last_writer;
    bool migratory;
    int readers;
    int holdoff;
    struct dsm_queued *queue, *queue_tail;
    int *lookup_waiters;
    size_t nwaiters;
    UT_hash_handle hh;
};

struct dsm_sub {
    uint32_t kind;
    unsigned long addr;
    sluice_dsm_handler fn;
    void *args;
    uint64_t seq;
    bool active;
    struct dsm_sub *next;
};
struct dsm_event {
    uint32_t kind;
    unsigned long addr;
    uint64_t seq; /* subscriptions made before this event arrived get it */
    struct dsm_event *next;
};

struct dsm_sendreq {
    MPI_Request req;
    void *buf;
    struct dsm_sendreq *next;
};

struct dsm_selfmsg {
    size_t len;
    struct dsm_selfmsg *next;
    unsigned char buf[]; /* header + payload */
};

struct dsm_counter {
    uint64_t key[2];
    uint64_t value, used;
    UT_hash_handle hh;
};

struct dsm_global {
    pthread_mutex_t lock;
    bool up;
    MPI_Comm comm;
    int rank, size;
    int *servers;
    int nservers;
    size_t chunk_size;
    uint64_t timeout_ns;
    uint64_t cache_limit; /* chunks with local data; 0: no limit */
    uint64_t footprint;
    struct dsm_chunk *chunks;
    struct sluice_dsm_chain *all, *lru_head, *lru_tail;
    struct dsm_home *homes;
    struct dsm_sendreq *sends;
    struct dsm_sub *subs;
    size_t nsubs_active;
    struct dsm_event *ev_head, *ev_tail;
    uint64_t sub_seq;
    struct dsm_counter *barrier_gen, *barrier_arrived, *rendezvous;
    int done[2];
    int poller;
    bool in_finalize;
    uint64_t spin_ns;                          /* SLUICE_DSM_SPIN */
    uint64_t last_msg_ns;                      /* last message sent or received */
    bool busy;                                 /* holds the progress engine's MPI-busy mode (transport.c) */
    int waiting;                               /* threads in dsm_wait (read by the poller without the lock) */
    int entering;                              /* threads about to take D.lock in an API call (idem) */
    struct dsm_selfmsg *self_head, *self_tail; /* messages to this rank, not through MPI */
    /* Sends to other ranks go here instead of MPI when set: the unit tests play the peers. */
    int (*peer_send)(int dst, const void *msg, size_t len);
};
extern struct dsm_global D;

/* transport.c */
int dsm_send(int dst, const struct dsm_msg *m, const void *payload, size_t len);
int dsm_poll(void); /* handles what arrived; caller holds D.lock */
/* Handles one message (header + payload) from src, as if it had just arrived. */
void dsm_deliver(const void *msg, size_t len, int src);
void dsm_transport_free_self(void);
/* Waits (polling, dropping D.lock while sleeping) until done(arg) or the timeout; what names
 * the wait in the timeout message. */
int dsm_wait(bool (*done)(void *arg), void *arg, const char *what, unsigned long addr);
int dsm_transport_start(void);
void dsm_transport_stop(void);
int dsm_home_of(unsigned long addr);

/* chunk.c */
struct dsm_chunk *dsm_chunk_find(unsigned long addr);
struct dsm_chunk *dsm_chunk_get(unsigned long addr, size_t size, int proto, int *err);
struct sluice_dsm_chain *dsm_chain_make(const unsigned long *addrs, const size_t *sizes, size_t n, int proto,
                                        int *err);
int dsm_chain_ensure_memory(struct sluice_dsm_chain *ch);
void dsm_chunk_fill(struct dsm_chunk *c, const void *data, size_t len); /* all live instances */
void dsm_chunk_copy_from(struct dsm_chunk *c, const void *src);         /* other instances */
bool dsm_chunk_has_data(const struct dsm_chunk *c);
void dsm_chain_touch(struct sluice_dsm_chain *ch);
void dsm_evict_excess(void);
void dsm_chain_destroy(struct sluice_dsm_chain *ch);
void dsm_guard_install(void);
/* READ scope start (in_scope) or end: the pages become (or stay) read-only. */
void dsm_guard_read(struct sluice_dsm_chain *ch, bool in_scope);
void dsm_guard_writable(struct sluice_dsm_chain *ch); /* before the runtime or a WRITE scope writes */
void dsm_guard_forget(struct sluice_dsm_chain *ch);   /* before munmap */
/* Where the runtime writes the chain's data (a fill, a copy between chains). */
unsigned char *dsm_chain_wbuf(struct sluice_dsm_chain *ch);
void dsm_chunk_pool_drain(void); /* unmaps the memory kept from freed chains */

/* home.c */
struct dsm_home *dsm_home_get(uint64_t addr, uint32_t kind, bool create);
int dsm_home_size(struct dsm_home *h, size_t size, int proto); /* 0, or ESIZE / ENOMEM */
void dsm_home_msg(const struct dsm_msg *m, const void *payload, size_t len, int src);
void dsm_home_written(struct dsm_home *h); /* after a write-back: publish, answer lookups */
void dsm_home_queue(struct dsm_home *h, const struct dsm_msg *m, const void *payload, size_t len);
void dsm_home_run_queue(struct dsm_home *h);
void dsm_home_free_all(void);

/* client dispatch (api.c): replies for lookups and subscriptions */
void dsm_client_msg(const struct dsm_msg *m, const void *payload, size_t len, int src);

/* sync.c, pubsub.c */
void dsm_sync_msg(const struct dsm_msg *m, int src);
void dsm_pubsub_msg(const struct dsm_msg *m, int src);
void dsm_sync_free_all(void);
void dsm_pubsub_free_all(void);

/* api.c: frees every chain, chunk, home record, counter and event of this process */
void dsm_free_state(void);

/* api.c: records the error and prints its line; returns code */
int dsm_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* trace helpers */
void dsm_trace_send(int dst, size_t bytes, uint64_t t_ns);

#define DSM_TAG 7
/* Addresses from DSM_RESERVED up belong to the symbol table: its buckets (the top 64
 * addresses) and the data of symbols placed by name (symbols.c). */
#define DSM_RESERVED 0xF000000000000000ul
#define DSM_SYMDATA_BASE DSM_RESERVED
#define DSM_SYM_BUCKETS 64ul
#define DSM_SYM_BASE (~0ul - DSM_SYM_BUCKETS + 1)

/* api.c: a scope on a chain, for the runtime's own shared data (the symbol table) */
void *dsm_scope_begin(struct sluice_dsm_chain *ch, int mode, bool want_data, int *err);
int dsm_scope_end(struct sluice_dsm_chain *ch);

/* sync.c */
int dsm_barrier(unsigned int id, unsigned int count);
int dsm_wakeup(unsigned int id);
int dsm_sleep(unsigned int id);
int dsm_done_phase(int phase);

/* pubsub.c */
int dsm_subscribe(uint32_t kind, unsigned long addr, sluice_dsm_handler fn, void *args);
int dsm_unsubscribe(uint32_t kind, unsigned long addr, sluice_dsm_handler fn, void *args);
int dsm_signal(unsigned long id);
int dsm_poll_events(void);
int dsm_loop(void);
void dsm_pubsub_ack(const struct dsm_msg *m);

/* symbols.c */
int dsm_symbol_define(const char *name, unsigned long base, size_t size);
int dsm_symbol_find(const char *name, unsigned long *base, size_t *size); /* 0 or ENOENT */
unsigned long dsm_symbol_address(const char *name);

/* chunk.c: the caller's memory becomes the chain's (MAP) */
void dsm_chain_map(struct sluice_dsm_chain *ch, void *ptr);

#endif
