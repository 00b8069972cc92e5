/* SPDX-License-Identifier: MIT */
/* Internals of the commit engine, shared by its files (not a contract with other parts).
 *
 *   commit_msg.c     message encoding and the transport: MPI point-to-point on sluice_comm(),
 *                    or an in-process loopback when the job has one process; it delivers
 *                    each message type to the handler registered for it
 *   commit_member.c  the rank side: members this process closed and owns until committed,
 *                    the capture-facing calls of commit.h, and waiting for answers
 *   commit_home.c    the home side: sets, their notices and waiters, when a version starts
 *   commit_version.c one version at its home: plan, layout, index/footer, atomic rename
 *   commit_data.c    data movement: copying staged bytes into a container at planned
 *                    offsets (the step that the two-phase writer replaces)
 *   commit_fs.c      file-system calls through the real libc (SLUICE_REAL), traced
 *   commit_read.c    reads of committed or staged members for capture
 *   commit_exit.c    the engine's state (commit_g), start-up, exit-time flush, hooks, the
 *                    handlers' registration, capture's registered hooks
 *   direct_writers.c which rank writes each member that is not shuffled: its node's aggregator
 *   direct_write.c   the direct path, writer side: copying the members MSG_WRITE lists
 *   twophase_home.c  the two-phase path, home side: aggregators, the plan's inputs
 *   twophase_part.c  one participant's share of a plan: encoded at the home, decoded there
 *   twophase_exec.c  the two-phase path, participants: running their share of the plan
 *                    (the plan itself is pure and lives below, in ckpt/twophase/)
 *   stage.c          the stage folder (layout and sidecar codec: stage.h, read by capture)
 *   pattern.c        which paths are members, and their set keys (pattern.h, util)
 *
 * Threads: message handlers, home work and data movement run on the progress thread only;
 * application threads touch the member table, the outbox and the waiters under commit_lock.
 * Home state is private to the progress thread and needs no lock. */
#ifndef SLUICE_CKPT_COMMIT_COMMIT_INTERNAL_H
#define SLUICE_CKPT_COMMIT_COMMIT_INTERNAL_H

#include "ckpt/commit/commit.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A set that has pending members but cannot complete (some ranks never write it) is committed
 * with what it has after this delay, counted from its first pending member; after the longer
 * one while a rank known to hold a member of it open (MSG_OPENED) has not closed it: that rank
 * is writing this step, late (a loaded node), and a commit without it would split the step
 * into two versions. A rank that keeps a member open for good (a log) delays the others' stale
 * commits by the longer bound only. */
#define COMMIT_INCOMPLETE_DELAY_NS (2000000000ull)
#define COMMIT_INCOMPLETE_OPEN_DELAY_NS (20000000000ull)
/* A commit forced by a waiter (fsync, unlink, an early flush) of a set that is not complete
 * starts at the earliest this long after the first request. An fsync's commit waits longer,
 * until every rank known to hold an open member of the set (MSG_OPENED) has closed or synced
 * it, at most SLUICE_FSYNC_GATHER milliseconds: the fsyncs of one step, however far apart,
 * make one version rather than one each. */
#define COMMIT_FORCE_GATHER_NS (20000000ull)
/* A reader waits at most this long for a commit in flight that its home said is coming. */
#define COMMIT_READ_WAIT_NS (60000000000ull)
/* A reader whose set's home has not answered at all after COMMIT_READ_NOTICE_NS says so in a
 * line; after COMMIT_READ_ANSWER_NS the read fails with ETIMEDOUT (the home is stopped or
 * gone: what is on disk may be stale, and is not served silently). */
#define COMMIT_READ_NOTICE_NS (3000000000ull)
#define COMMIT_READ_ANSWER_NS (20000000000ull)
/* The status of a FLUSHED answer to MSG_QUERY that only says "alive; a commit that has the
 * path is coming, the real answer follows". */
#define COMMIT_QUERY_PENDING (-EINPROGRESS)

/* ---- messages (commit_msg.c) ------------------------------------------------------------- */

enum commit_msg_type {
    MSG_CLOSED = 1,    /* rank -> home: {key, path, n}: a member of the set was closed; n numbers
                          the sender's notices to this home (1, 2, ...) */
    MSG_FLUSH,         /* rank -> home: {key, req}: commit what is pending, answer when durable */
    MSG_UNLINK,        /* rank -> home: {key, path, req}: drop a committed member */
    MSG_COLLECT,       /* home -> rank: {id, key, upto}: send me your closed members of the set
                          announced by notices up to number upto (a complete step, not later ones) */
    MSG_MEMBERS,       /* rank -> home: {id, n, n x (seq, path, member_rank, writer_rank, size,
                          mtime, mode, staging file name), node id, stage key} */
    MSG_WRITE,         /* home -> writer: {id, tmp, n, n x (owner, seq, offset, size, staging
                          file name), chunk size (0: none)}: the members of the writer's group
                          (direct_writers.c) */
    MSG_WRITTEN,       /* writer -> home: {id, err, n, n x (owner, seq, crc, vanished, nruns,
                          nruns x (logical, length), chunk_size, nchunks, nchunks x crc)}: the
                          data runs stored, the rest holes; the chunk checksums (0 chunks: none) */
    MSG_DONE,          /* home -> rank: {id, err, version}: the members you sent are committed */
    MSG_FLUSHED,       /* home -> rank: {req, err}: answer to FLUSH / UNLINK */
    MSG_TWOPHASE,      /* home -> participant: its share of a two-phase plan (twophase_part.c) */
    MSG_QUERY,         /* rank -> home: {key, path, req}: answer (FLUSHED; at once with status
                          COMMIT_QUERY_PENDING if a commit is coming) once no closed version of
                          path is waiting for a commit; never forces one */
    MSG_OPENED,        /* rank -> home: {key}: this rank holds a member of the set open for writing */
    MSG_SEAL,          /* home -> rank: {key, upto, version, nprocs}: keep the members a collection
                          up to notice upto would take as node-local version `version` (not
                          drained now; the next drain collects them: redundancy/level_rank.c) */
    MSG_RED_RECORDED,  /* rank -> its node's leader: {key, version, nprocs}: my record of the
                          node-local version is written (redundancy/red_encode.c) */
    MSG_RED_PIECE,     /* leader -> partner leader: {key, version, bytes, flags}: the next piece of
                          the copy of the sender's node part (flags 1: first, 2: last, 4: abort) */
    MSG_RED_ACK,       /* partner leader -> leader: {key, version, status}: a piece is stored */
    MSG_RED_STORED,    /* leader -> rank 0: {key, version}: I stored my partner's whole copy */
    MSG_RED_PROTECTED, /* rank 0 -> leaders: {key, version, nodes}: every node stored its copy */
    MSG_RED_XOR,       /* leader -> leader of its XOR set: {key, version, kind, position, ...}: the
                          sender's part's layout, a piece to XOR into the parity at an offset, its
                          end, or its abort (redundancy/red_xor_encode.c) */
    MSG_RED_XACK,      /* parity holder -> leader: {key, version, status}: a piece is XORed in */
    MSG_TYPES          /* (the number of types + 1) */
};

struct cmsg {
    unsigned char *p;
    size_t len, cap, rd;
    int bad; /* a get ran past the end or a put failed to allocate */
};

void cmsg_init(struct cmsg *m, uint32_t type);
void cmsg_free(struct cmsg *m);
void cmsg_put_u32(struct cmsg *m, uint32_t v);
void cmsg_put_u64(struct cmsg *m, uint64_t v);
void cmsg_put_str(struct cmsg *m, const char *s);
uint32_t cmsg_get_u32(struct cmsg *m);
uint64_t cmsg_get_u64(struct cmsg *m);
/* Returns a pointer into the message (NUL-terminated in place) or "" if malformed. */
const char *cmsg_get_str(struct cmsg *m);

/* Queues m for rank dst (takes ownership). Any thread; the progress thread sends it. */
void commit_send(int dst, struct cmsg *m);
/* Progress-thread pump: sends queued messages, completes sends, receives and dispatches.
 * Returns the number of things done. */
int commit_transport_poll(void);
/* 1 while sends are queued or in flight. */
int commit_transport_busy(void);
/* Chooses MPI or loopback. Called once under commit_lock on an application thread. */
int commit_transport_start(void);
void commit_transport_stop(void);

/* Handlers register with the transport, which knows none of them: a received message of
 * `type` goes to the handler registered for it (progress thread), one of an unregistered type
 * is dropped with a warning. Registered before the transport starts (commit_exit.c). */
typedef void (*commit_handler)(int src, uint32_t type, struct cmsg *m);
void commit_transport_on(uint32_t type, commit_handler fn);
/* Each side registers its own types: rank-bound (commit_member.c), home-bound
 * (commit_home.c), the two-phase plan (twophase_exec.c). */
void commit_rank_register(void);
void commit_home_register(void);
void commit_twophase_register(void);
void commit_direct_register(void); /* MSG_WRITE (direct_write.c) */

/* ---- process-wide state (commit_exit.c) -------------------------------------------------- */

struct commit_state {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int started;    /* transport chosen, poller installed */
    int use_mpi;    /* 1: MPI transport, 0: loopback (single process) */
    int rank, size; /* in the transport's terms */
    int poller_id;
    int finished;          /* exit flush done: later closes commit alone */
    uint64_t *closed_sent; /* CLOSED notices sent per home (exit accounting) */
    uint64_t announced;    /* CLOSED notices sent in all: a flush with nothing new is a no-op */
};
extern struct commit_state commit_g;

int commit_home_of(const char *set_key);
/* Turns the engine on for these capture patterns (the constructor does it from SLUICE_CAPTURE;
 * unit tests call it directly). 0 or -EINVAL. */
int commit_engine_enable(const char *capture_spec, const char *cwd);
/* Starts the engine (transport + poller) if it is not yet; returns 0 or -errno. Takes the lock. */
int commit_ensure_started(void);

/* ---- rank side (commit_member.c) --------------------------------------------------------- */

/* A closed member this process owns until it is committed. */
struct commit_member {
    struct sluice_staged_member m;
    char meta_path[PATH_MAX]; /* the sidecar beside the staging file */
    uint64_t seq;             /* local identity, increasing: newer versions have larger seq */
    int64_t mtime_ns;
    uint64_t notice;      /* number of the CLOSED notice that announced it to its home */
    uint32_t inflight_id; /* commit (at home inflight_home) that took it; 0 none */
    int inflight_home;
    int err;         /* last failed commit (-errno), kept for recover and reporting */
    int unlinked;    /* the program unlinked it while it was in flight */
    uint64_t sealed; /* node-local version it belongs to (0: none) */
    int held;        /* superseded, kept only for an older node-local version: never collected */
    struct commit_member *next;
};

/* The newest member of this process with this path (lock held), or NULL. */
struct commit_member *commit_member_find(const char *path);
/* Waiting for a FLUSHED answer. */
uint64_t commit_request_new(void);
/* Waits (lock held) until request req is answered or timeout_ns passes (0: forever). Returns
 * the answer's status, or -ETIMEDOUT. */
int commit_request_wait(uint64_t req, uint64_t timeout_ns);
/* Closed members waiting for the engine's start (commit_adopt.c; lock held): a deferred close
 * (0, or -ENOMEM), the one of path takes mode (1 if found), all taken at once. */
int commit_members_defer_locked(const struct sluice_staged_member *m);
int commit_adopted_chmod(const char *path, unsigned mode);
struct sluice_staged_member *commit_adopted_take(size_t *n);
/* Rank-side exit accounting: 1 if no member is waiting to be committed (failed ones excepted). */
int commit_members_quiet(void);
/* 1 while this process awaits a home's answer: a member in a version in flight or announced and
 * not yet collected (node-local ones kept for a later drain excepted: that may be minutes), or
 * a request waiting for its answer. Lock held. */
int commit_members_awaiting(void);
/* Re-announces members whose last commit failed, so that the next commit retries them. Returns
 * how many. Lock held. */
int commit_members_retry(void);
/* Worst error among members still staged (0 if none). Lock held. */
int commit_members_error(void);
/* Sends CLOSED for the member's set and counts it (lock held). Returns the notice's number. */
uint64_t commit_announce(const char *set_key, const char *path);
/* Waits (bounded) until no closed version of path is waiting for its set's commit, without
 * forcing one. 0, or -errno (-ETIMEDOUT). Takes the lock. */
int commit_query_wait(const char *set_key, const char *path, uint64_t timeout_ns);

/* ---- node-local versions, rank side (redundancy/level_rank.c; lock held) ------------------- */

/* Registers the agreement over all nodes on the node-local versions, run when sluice's
 * communicator is made (redundancy/level_agree.c). Before MPI starts. */
void commit_level_agree_register(void);
/* Records this rank's members of node-local version `version` of key (docs/REDUNDANCY.md). */
void commit_level_sealed(const char *key, uint64_t version, int nprocs, const struct commit_member *const *m,
                         size_t n);
/* Version `version` of key is durable: this rank's records up to it, and those that dead
 * processes of this node left up to it (with their staging files), go. */
void commit_level_drained(const char *key, uint64_t version);
/* This rank's records of key up to `upto` name no member any more: they go. */
void commit_level_forget(const char *key, uint64_t upto);
/* Redundancy (redundancy/red_encode.c): the rank's record of version `version` of key is
 * written; its node's leader encodes the node's part once every rank of the node did. */
void commit_red_recorded(const char *key, uint64_t version, int nprocs);
/* 1 while this leader streams a part to its partner (the exit waits for it: the partner
 * keeps receiving until its own exit's last collective). */
int commit_red_busy(void);
/* The redundancy's message handlers (before the transport starts). */
void commit_red_handlers(void);
/* Progress thread, every round: sends the pieces the I/O thread read, answers those it wrote.
 * Returns the number of things done. */
int commit_red_poll(void);
/* The node map and the rebuild of lost parts, run when sluice's communicator is made, before
 * the agreement on the versions (redundancy/red_rebuild.c). Before MPI starts. */
void commit_red_register(void);
/* This leader stored its share of version `version` of key (a partner copy, or its XOR parity,
 * bytes long), begun at t0 (sluice_now_ns: its first piece, the trace event's duration): rank 0
 * hears of it; older copies no kept version needs go. */
struct red_nodes;
void commit_red_stored(const struct red_nodes *n, const char *key, uint64_t version, uint64_t bytes,
                       uint64_t t0);
/* A version of key is durable: this node's copies and marks up to it go (leader only). */
void commit_red_drained(const char *key, uint64_t version);
/* 1 when version of key is at or below the newest heard durable on this process: an encoding of
 * it that ends now keeps nothing. Progress thread. */
int commit_red_drained_covers(const char *key, uint64_t version);
/* Byte strings in messages: a u32 length then the bytes; get returns a pointer into m. */
void cmsg_put_bytes(struct cmsg *m, const void *p, uint32_t n);
/* A byte string filled in place (no copy): begin reserves room for up to cap bytes and returns
 * where they go (NULL where it could not allocate: m is bad); end says how many were written
 * (n <= cap). Nothing else is put between the two. */
unsigned char *cmsg_bytes_begin(struct cmsg *m, uint32_t cap);
void cmsg_bytes_end(struct cmsg *m, uint32_t n);
/* While this node awaits the protection of a version it encodes, or streams one in or out:
 * its progress thread stays out of deep idle (commit_exit.c's expect_answers), so that the
 * pieces and the protection notice of a peer wait at most SLUICE_PROGRESS_SLEEP_MAX. */
int commit_red_awaiting(void);
const unsigned char *cmsg_get_bytes(struct cmsg *m, uint32_t *n);
/* Reads: the member's staging file in the newest complete node-local version of key newer
 * than `above` (the container's version; complete on this node or over all nodes). 1 with
 * data (cap bytes), size, mtime, mode and the version filled; 0 if there is none; -EIO (said
 * in a line) when that version's member is staged on another node. Any thread, no lock. */
int commit_level_find(const char *key, const char *path, uint64_t above, char *data, size_t cap,
                      uint64_t *size, int64_t *mtime_ns, unsigned *mode, uint64_t *version);

/* ---- home side (commit_home.c) ----------------------------------------------------------- */

/* Exit: from now on commit every pending set at once, once `expected` CLOSED notices have
 * arrived. Progress thread. */
void commit_home_final(uint64_t expected);
/* 1 when final and nothing is pending or in flight. Any thread (atomic). */
int commit_home_quiet(void);
/* Timers (incomplete sets). Progress thread. Returns things done. */
int commit_home_poll(void);
/* 1 while a set homed here has members pending or a version in flight (as of the last
 * commit_home_poll). Any thread (atomic). */
int commit_home_busy(void);

/* ---- data movement (commit_data.c): the seam for the two-phase writer --------------------- */

/* The data runs of a staged member (SEEK_DATA/SEEK_HOLE of its staging file): what the
 * container stores of it; the rest are holes, never written, read as zeros. */
#define COMMIT_MAX_RUNS 1024 /* more runs than this: stored densely, one run */
/* Members of a set laid out as an array carry a checksum per this many of their bytes (format
 * 1.3 chunk checksums): a restart on another decomposition verifies only the chunks it reads
 * (commit_array_chunks.c, docs/LAYOUT.md). */
#define COMMIT_ARRAY_CHUNK (16u << 10)
struct commit_run {
    uint64_t logical, length;
};
/* Fills runs (COMMIT_MAX_RUNS) with the data runs of fd's first `size` bytes, in order; one
 * run [0, size) where the file system cannot tell or there are too many. Returns the count
 * (0 for an empty or all-hole member). */
uint32_t commit_data_runs(int fd, uint64_t size, struct commit_run *runs);
void commit_put_runs(struct cmsg *m, const struct commit_run *runs, uint32_t n);

struct commit_copy {
    const char *src_path; /* staging file */
    uint64_t offset;      /* container offset */
    uint64_t size;
    uint32_t crc;            /* out: CRC32C of the bytes copied */
    uint32_t nruns;          /* out: the data runs written (the rest are holes) */
    struct commit_run *runs; /* out: malloc'ed, COMMIT_MAX_RUNS entries */
    int vanished;            /* out: the staging file was gone (the member was unlinked by
                                another process of this node): the member is dropped */
};
/* Writer side: copies each staged member (its own or another rank's of its stage folder) into
 * the container file `tmp` at its offset and, if `sync`, makes the writes durable (fdatasync)
 * before returning (0 in the home's own process: its fsync of the version covers them).
 * 0 or -errno. */
int commit_data_write(const char *tmp, struct commit_copy *copies, size_t n, int sync);

/* Two-phase path (twophase_home.c, twophase_exec.c). MSG_MEMBERS ends with the sender's node
 * id (commit_twophase_node_id), which the home notes for aggregator selection. */
struct sluice_array;
struct commit_tp_member {
    uint64_t seq, offset, size;
    int src; /* staged on this rank; -1: carried over by the home */
    int member_rank;
    uint32_t crc; /* executor side: CRC of a member written directly */
    int vanished; /* executor side: its staging file was unlinked meanwhile: dropped */
    int writer;   /* home side, out: the rank that copies it (direct_writers.c); -1 shuffled
                     or carried over */
};
uint64_t commit_twophase_node_id(void);
void commit_twophase_note_node(int rank, uint64_t node);
/* Home side: 1 when ranks a and b run on one node as far as the home knows (an unknown node is
 * a node of its own). */
int commit_twophase_same_node(int a, int b);
/* Home: sends the plan's inputs to every participant and returns how many MSG_WRITTEN to wait
 * for, or 0 when the commit takes the direct path (SLUICE_CB_WRITE=disable, one process, or
 * nothing to shuffle). Either way it sets each member's writer: -1 for a shuffled one, else the
 * rank that copies it from its staging file (MSG_WRITE, sent by the caller). */
int commit_twophase_start(uint32_t id, const char *tmp, const char *dir, uint32_t block,
                          struct commit_tp_member *m, size_t n, const int *ranks, int nranks,
                          const struct sluice_array *array);

/* Direct writers (direct_writers.c). This rank's stage key (host and stage folder; 0 unknown),
 * sent in MSG_MEMBERS; the home notes each sender's. */
uint64_t commit_direct_stage_key(void);
void commit_direct_note(int rank, uint64_t key);
/* Home: sets m[i].writer for each member: -1 where shuffled[i] (NULL: none is) or src < 0,
 * else the aggregator among aggr[0..naggr) that shares the owner's stage folder (the owner
 * itself when it is one), or the lowest owner rank of that folder when no aggregator does, or
 * the owner when its folder is unknown. 0 or -ENOMEM. */
int commit_direct_assign(struct commit_tp_member *m, size_t n, const unsigned char *shuffled, const int *aggr,
                         int naggr);
/* The home's plan of a set laid out as an array (n members, every one shuffled): domains,
 * rounds and requests of its regions, no pieces; each participant cuts its own pieces from the
 * layout (twophase_part_array.c), and the executor runs them as for plain members. */
struct sluice_tp_params;
struct sluice_tp_plan;
int commit_twophase_array_plan(const struct sluice_array *array, size_t n, const struct sluice_tp_params *prm,
                               struct sluice_tp_plan *plan);
/* The staging file of this process's member `seq` in commit (home, id), or NULL. */
const char *commit_member_stage_path(int home, uint32_t id, uint64_t seq);

/* ---- file system (commit_fs.c) ----------------------------------------------------------- */

int commit_fs_open(const char *path, int flags, mode_t mode);
int commit_fs_close(int fd);
int commit_fs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off); /* 0 or -errno */
/* The same into a new file, leaving 4 KiB-aligned blocks that are all zeros unwritten (holes:
 * they read as zeros), so that a sparse member stays sparse through the two-phase writer. Each
 * write is traced for version_file, full-stripe when it covers whole units. Bytes written. */
long commit_fs_pwrite_sparse(int fd, const void *buf, size_t n, uint64_t off, const char *version_file,
                             uint64_t unit);
/* The same for the bytes that iov[0..niov) describe, one request per run of blocks that are not
 * all zeros (pwritev: an aggregator writes its own pieces from their staging mappings and the
 * others' from its round buffer without copying them together). commit_fs_sparse.c. */
struct iovec;
long commit_fs_pwritev_sparse(int fd, const struct iovec *iov, int niov, uint64_t off,
                              const char *version_file, uint64_t unit);
int commit_fs_fsync(int fd, const char *path);
int commit_fs_fdatasync(int fd, const char *path);
int commit_fs_rename(const char *from, const char *to);
int commit_fs_unlink(const char *path);
/* version_file: the temporary file of the version the folder is synced for (NULL: none). */
int commit_fs_fsync_dir(const char *dir, const char *version_file);
/* Trace records of file-system calls, tagged with the version they work for (its temporary
 * file; NULL for a staging file): COMMIT_FS_META now or at t_ns, COMMIT_FS_WRITE with the
 * full-stripe flag given or computed from SLUICE_STRIPING_UNIT. */
void commit_trace_meta(const char *op, const char *path, const char *version_file);
void commit_trace_meta_at(uint64_t t_ns, const char *op, const char *path, const char *version_file);
void commit_trace_write(const char *version_file, uint64_t offset, uint64_t bytes);
void commit_trace_write_full(const char *version_file, uint64_t offset, uint64_t bytes, int full);

#endif
