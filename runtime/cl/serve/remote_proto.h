/* SPDX-License-Identifier: MIT */
/* Wire protocol of distributed OpenCL (SLUICE_OPENCL=distributed). Two kinds of request go from
 * rank 0 to the rank that owns the objects:
 * - object calls (create, info, release...): one request, one reply (REP tag), synchronous;
 * - commands (CMD_*: enqueues, coherence transfers) and NOTIFY: no reply. The rank's engine
 *   (remote_engine.c) enqueues them at once on real queues, and reports each command's end with a
 *   DONE record (status and profiling times) when its real event completes.
 * Bulk data never rides in a request: it goes as its own messages (pieces of at most
 * SLUICE_REMOTE_CHUNK bytes, tag SLUICE_REMOTE_DATA_TAG(command id)) straight between the two
 * end points, from and to the program's own pointer on rank 0. Remote objects are named by their
 * real address on the serving rank (`rid`), or, for those rank 0 created without waiting (buffers,
 * sub-buffers, images, queues, samplers), by the id rank 0 chose (cl/serve/remote_ids.h): only
 * rank 0 ever names them, and only with values the server handed it or ids it sent a creation of.
 *
 * The same handlers run on serving ranks and, called directly without MPI, for rank 0's own
 * devices, so every device goes through one code path. */
#ifndef SLUICE_CL_SERVE_REMOTE_PROTO_H
#define SLUICE_CL_SERVE_REMOTE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "mpi/roles.h"
#include "mpi/tags.h"

/* sluice's communicator is private; these tags are distributed OpenCL's own. */
#define SLUICE_REMOTE_TAG_REQ (SLUICE_TAG_REMOTE_CTRL + 0)
#define SLUICE_REMOTE_TAG_REP (SLUICE_TAG_REMOTE_CTRL + 1)
/* engine -> rank 0: sluice_remote_done records */
#define SLUICE_REMOTE_TAG_DONE (SLUICE_TAG_REMOTE_CTRL + 3)
/* engine -> rank 0: its clock, answering PING */
#define SLUICE_REMOTE_TAG_CLOCK (SLUICE_TAG_REMOTE_CTRL + 4)
/* rank 0 -> ranks of a broadcast: MPI_Comm_create_group of their communicator (remote_group.c) */
#define SLUICE_REMOTE_TAG_GROUP (SLUICE_TAG_REMOTE_CTRL + 5)
/* rank 0 -> a serving rank that keeps it waiting, and its answer from the rank's ping thread
 * (dist_alive.c, remote_engine.c): whether the rank is alive, even while it is busy in a call. */
#define SLUICE_REMOTE_TAG_PING (SLUICE_TAG_REMOTE_CTRL + 6)
#define SLUICE_REMOTE_TAG_PONG (SLUICE_TAG_REMOTE_CTRL + 7)
/* Bulk data of command `id` (mpi/tags.def). */
#define SLUICE_REMOTE_DATA_TAG(id) (SLUICE_TAG_REMOTE_DATA + (int)((id) % SLUICE_TAG_REMOTE_DATA_COUNT))
/* Bulk data moves in pieces (sluice_remote_chunk): the receiver writes piece i to its device while
 * piece i+1 is still arriving, the sender sends piece i while piece i+1 is read from its device.
 * Both end points cut at the same offsets: SLUICE_DIST_CHUNK of rank 0, which its clock pings
 * (PING, a0) give the serving ranks before any command. By default a piece is about a sixteenth
 * of the transfer, a power of two between these bounds: with 8 MiB pieces a 16 MiB transfer was
 * 2 pieces, half of it not overlapped (0.47 of MPI's rate to a GPU); smaller ones cost a message
 * and an enqueue each. From 256 KiB (was 1 MiB) a 1 MiB transfer is 4 pieces, not one whose
 * device copy followed all of its MPI transfer. */
#define SLUICE_REMOTE_CHUNK_MIN ((size_t)256 << 10)
#define SLUICE_REMOTE_CHUNK ((size_t)8 << 20)

/* Waits (remote_transport.c): after progress, poll (yielding the core) this long before sleeping:
 * an answer is usually due within microseconds. */
#define SLUICE_REMOTE_HOT_NS 30000u
/* While this process's own data messages are moving, poll this long after the last progress
 * before sleeping. MPI moves a large message only inside MPI calls, on both sides (Open MPI's
 * rendezvous and pipelined copies: a sender that sleeps 250 us between tests moved 32 KiB per
 * sleep), so a sleeping end point stalls the transfer. */
#define SLUICE_REMOTE_DATA_HOT_NS 5000000u
/* ... for messages of at least this size: smaller ones (a stencil's halos) complete within the
 * short poll, and polling for them took cores from the devices of a 2-core machine. */
#define SLUICE_REMOTE_DATA_HOT_MIN ((size_t)64 << 10)

/* Every request rank 0 sends a rank: X(name, class). The words a0.. below are the operands of
 * struct sluice_remote_req, each op read through its own struct below (sluice_req_info for INFO,
 * sluice_req_xfer for CMD_WRITE, ...; the words of OBJ are its operation's, remote_objects.h).
 * Its class says who takes it on the rank:
 * CALL, an object call the server answers with a reply (remote_server.c); CMD, a command the
 * engine enqueues and reports by a DONE record (remote_commands.c); LOOP, a message of the
 * serving loop itself (remote_engine.c). */
#define SLUICE_REMOTE_OPS(X)                                                                                 \
    X(ENUM, CALL)             /* -> bytes: platform and device records (remote_enum_*) */                    \
    X(INFO, CALL)             /* a0 getter, a1 obj, a2 obj2, a3 param, a4 size -> ret, v0 size_ret, bytes */ \
    X(CTX_CREATE, CALL)       /* bytes: device rids -> v0 context */                                         \
    X(QUEUE_CREATE, CALL)     /* a0 ctx, a1 device, a2 properties -> v0 queue */                             \
    X(BUF_CREATE, CALL)       /* a0 ctx, a1 flags, a2 size -> v0 buffer */                                   \
    X(PROG_CREATE, CALL)      /* a0 ctx; bytes: source -> v0 program */                                      \
    X(PROG_BUILD, CALL)       /* a0 program, a1 ndev; bytes: device rids then options */                     \
    X(KERNEL_CREATE, CALL)    /* a0 program; bytes: name -> v0 kernel */                                     \
    X(RELEASE, CALL)          /* a0 kind (SLUICE_CL_*), a1 rid, a2 1: no reply (rank 0 goes on at once) */   \
    X(SUBBUF, CALL)           /* a0 parent buffer, a1 flags, a2 origin, a3 size -> v0 buffer */              \
    X(PROG_BINARY, CALL)      /* a0 program, a1 index among its devices -> bytes: that device's binary */    \
    X(PROG_FROM_BINARY, CALL) /* a0 ctx, a1 ndev; bytes: ndev x {rid, len}, then the binaries -> v0 program, \
                                 bytes: statuses */                                                          \
    X(SUBDEVICES, CALL)       /* a0 device; bytes: partition properties -> bytes: sub-device rids */         \
    X(CMD_WRITE, CMD)         /* cmd; a0 buf, a1 offset, a2 size, a3 data pointer (in-process only), a4 rank \
                                 the data comes from */                                                      \
    X(CMD_READ, CMD)          /* cmd; a0 buf, a1 offset, a2 size, a3 data pointer (in-process only), a4 rank \
                                 the data goes to */                                                         \
    X(CMD_NDRANGE, CMD)       /* cmd; a0 kernel, a1 dims, a2 null mask (1 offset, 4 local), a3 nargs;        \
                                 bytes: 3 x dims size_t, args */                                             \
    X(CMD_COPY, CMD)          /* cmd; a0 src, a1 dst, a2 src offset, a3 dst offset, a4 size */               \
    X(CMD_FILL, CMD)          /* cmd; a0 buf, a1 offset, a2 size; bytes: pattern */                          \
    X(CMD_MARKER, CMD)        /* cmd; a0 1 for a barrier */                                                  \
    X(CMD_NATIVE, CMD)        /* cmd; a0 cb_args, a1 memory objects; bytes: function, their slots, args      \
                                 (remote_native.h) */                                                        \
    X(NOTIFY, LOOP)           /* a0 command id (of another rank, or a user event), a1 its status: wakes      \
                                 waiters */                                                                  \
    X(PING, LOOP)             /* a0 rank 0's SLUICE_DIST_CHUNK, a1 its pid, a2 the address of a3 in it (0:   \
                                 no CMA) -> TAG_CLOCK: the engine's clock, then 1 if it can copy by CMA      \
                                 (remote_cma.h) */                                                           \
    X(OBJ, CALL)              /* a0 operation (remote_objects.h): programs from IL, compile, link... */      \
    X(END, LOOP)              /* rank 0's program ended (a0: pings sent): serve no more, answer last */      \
    X(GROUP, LOOP)            /* a0 rank mask: create the communicator of those ranks now (collective        \
                                 replacement) */

enum sluice_remote_op {
#define X(name, class) SLUICE_REMOTE_##name,
    SLUICE_REMOTE_OPS(X)
#undef X
        SLUICE_REMOTE_OP_COUNT
};

/* Getters the INFO op can call. */
enum sluice_remote_getter {
    SLUICE_RG_PLATFORM,
    SLUICE_RG_DEVICE,
    SLUICE_RG_CONTEXT,
    SLUICE_RG_QUEUE,
    SLUICE_RG_MEM,
    SLUICE_RG_PROGRAM,
    SLUICE_RG_BUILD,
    SLUICE_RG_KERNEL,
    SLUICE_RG_KERNEL_WG,
    SLUICE_RG_KERNEL_ARG,
    SLUICE_RG_EVENT,
    SLUICE_RG_PROFILING,
    SLUICE_RG_COUNT
};

/* The operands of a request: SLUICE_REMOTE_NARGS words after the op, read through the struct of
 * its op (commands and loop messages below) or, for object calls, as the words a0.. that
 * SLUICE_REMOTE_OPS names. Every struct is of 64-bit words, so the bytes on the wire are those
 * of the words. */
#define SLUICE_REMOTE_NARGS 8
/* CMD_WRITE, CMD_READ: a transfer of [offset, offset + size) of buf (for a rect: size is the
 * packed bytes that move, 0 on rank 0 itself; the geometry is in the payload). */
struct sluice_req_xfer {
    uint64_t buf;
    uint64_t offset;
    uint64_t size;
    uint64_t host;     /* the data's address, in-process only (rank 0's own devices); 0: it moves */
    uint64_t peer;     /* the rank the data comes from (write) or goes to (read) */
    uint64_t mask;     /* SLUICE_CMD_BCAST, SCATTER, GATHER, ALLGATHER: the ranks of the collective */
    uint64_t cma_addr; /* SLUICE_CMD_CMA: rank 0's address the rank copies from or to */
};
/* The geometry of a rect transfer, the payload of a rect CMD_WRITE, CMD_READ or CMD_COPY and of
 * an image command (13 size_t). For a rect copy: the source's origin, the destination's origin
 * (host_origin), the region, then the source's and the destination's pitches (host_*). For an
 * image: its origin, host_origin 0, the region in pixels, elem_size, slice_pitch 0 and the host's
 * pitches in bytes (cl/serve/remote_image.h). */
struct sluice_rect_geom {
    size_t origin[3];      /* in the buffer (bytes, rows, slices) or the image (pixels) */
    size_t host_origin[3]; /* in the host memory */
    size_t region[3];      /* bytes (pixels for an image), rows, slices */
    union {
        size_t row_pitch; /* the buffer's */
        size_t elem_size; /* an image's pixel */
    };
    size_t slice_pitch; /* the buffer's */
    size_t host_row_pitch, host_slice_pitch;
};
/* CMD_NDRANGE: `nulls` says which of the sizes in the payload the program left NULL. */
enum { SLUICE_NDR_NO_OFFSET = 1u, SLUICE_NDR_NO_LOCAL = 4u };
struct sluice_req_ndrange {
    uint64_t kernel;
    uint64_t dims;
    uint64_t nulls; /* SLUICE_NDR_NO_* */
    uint64_t nargs;
};
/* CMD_COPY of buffers (a rect copy: its geometry in the payload, the offsets unused). */
struct sluice_req_copy {
    uint64_t src, dst;
    uint64_t src_offset, dst_offset;
    uint64_t size;
};
/* CMD_COPY with SLUICE_CMD_IMAGE: kind is SLUICE_IMG_COPY_* (cl/serve/remote_image.h). */
struct sluice_req_image_copy {
    uint64_t src, dst;
    uint64_t kind;
};
/* CMD_FILL (of a buffer; an image's: SLUICE_CMD_IMAGE, buf only, the rest in the payload). */
struct sluice_req_fill {
    uint64_t buf, offset, size;
};
struct sluice_req_marker {
    uint64_t barrier; /* 1: enqueue a barrier, not a marker */
};
struct sluice_req_native {
    uint64_t cb_args; /* bytes of the function's argument block */
    uint64_t nmem;    /* memory objects in it */
};
struct sluice_req_notify {
    uint64_t id; /* of another rank's command, or a user event */
    int64_t status;
};
struct sluice_req_ping {
    uint64_t chunk;      /* rank 0's SLUICE_DIST_CHUNK */
    uint64_t pid;        /* rank 0's pid */
    uint64_t probe_addr; /* the address of probe_word in rank 0 (0: no CMA) */
    uint64_t probe_word;
};
struct sluice_req_end {
    uint64_t pings; /* rank 0 sent this rank */
};
struct sluice_req_group {
    uint64_t mask; /* the ranks of the communicator to create */
};
struct sluice_req_release {
    uint64_t kind; /* SLUICE_CL_* */
    uint64_t rid;
    uint64_t no_reply; /* 1: rank 0 goes on at once */
};
/* The object calls (class CALL): rids of the rank's own objects, and values. */
struct sluice_req_info {
    uint64_t getter; /* SLUICE_RG_* */
    uint64_t obj, obj2;
    uint64_t param;
    uint64_t size; /* of the value wanted; 0: only its size */
};
/* The creations below carry `id`: 0, the reply names the new object (v0); else the id rank 0
 * chose for it (cl/serve/remote_ids.h), and there is no reply. */
struct sluice_req_queue_create {
    uint64_t ctx, device;
    uint64_t properties; /* CL_QUEUE_PROPERTIES bits; 0: none */
    uint64_t id;
};
struct sluice_req_buf_create {
    uint64_t ctx, flags, size;
    uint64_t id;
};
struct sluice_req_subbuf {
    uint64_t parent, flags, origin, size;
    uint64_t id;
};
struct sluice_req_in_ctx { /* PROG_CREATE */
    uint64_t ctx;
};
struct sluice_req_in_program { /* KERNEL_CREATE */
    uint64_t program;
};
struct sluice_req_prog_build {
    uint64_t program;
    uint64_t ndev; /* device rids at the payload's head, then the options */
};
struct sluice_req_prog_binary {
    uint64_t program;
    uint64_t index; /* among the program's devices */
};
struct sluice_req_prog_from_binary {
    uint64_t ctx;
    uint64_t ndev;
};
struct sluice_req_subdevices {
    uint64_t device;
};
#define SLUICE_REMOTE_ARG_MEMBERS                                                                            \
    uint64_t a[SLUICE_REMOTE_NARGS];                                                                         \
    struct sluice_req_xfer xfer;                                                                             \
    struct sluice_req_ndrange ndrange;                                                                       \
    struct sluice_req_copy copy;                                                                             \
    struct sluice_req_image_copy image_copy;                                                                 \
    struct sluice_req_fill fill;                                                                             \
    struct sluice_req_marker marker;                                                                         \
    struct sluice_req_native native;                                                                         \
    struct sluice_req_notify notify;                                                                         \
    struct sluice_req_ping ping;                                                                             \
    struct sluice_req_end end;                                                                               \
    struct sluice_req_group group;                                                                           \
    struct sluice_req_release release;                                                                       \
    struct sluice_req_info info;                                                                             \
    struct sluice_req_queue_create queue_create;                                                             \
    struct sluice_req_buf_create buf_create;                                                                 \
    struct sluice_req_subbuf subbuf;                                                                         \
    struct sluice_req_in_ctx in_ctx;                                                                         \
    struct sluice_req_in_program in_program;                                                                 \
    struct sluice_req_prog_build prog_build;                                                                 \
    struct sluice_req_prog_binary prog_binary;                                                               \
    struct sluice_req_prog_from_binary prog_from_binary;                                                     \
    struct sluice_req_subdevices subdevices;
/* The operands alone, as rank 0's scheduler keeps them until a command is sent. */
union sluice_remote_args {
    SLUICE_REMOTE_ARG_MEMBERS
};
struct sluice_remote_req {
    uint32_t op;
    uint32_t pad;
    union {
        SLUICE_REMOTE_ARG_MEMBERS
    };
    uint64_t nbytes; /* payload after the header */
};
#ifndef __cplusplus
_Static_assert(sizeof(struct sluice_rect_geom) == 13 * sizeof(size_t),
               "the rect geometry is 13 words on the wire");
_Static_assert(sizeof(union sluice_remote_args) == SLUICE_REMOTE_NARGS * sizeof(uint64_t),
               "a request's operands are its SLUICE_REMOTE_NARGS words");
_Static_assert(sizeof(struct sluice_remote_req) == (SLUICE_REMOTE_NARGS + 2) * sizeof(uint64_t),
               "the request header keeps its size on the wire");
#endif

struct sluice_remote_rep {
    int64_t ret; /* cl_int */
    uint64_t v[2];
    uint64_t nbytes; /* payload after the header */
};

/* Commands (CMD_*): the payload starts with this header, then `nlocal` command ids this one waits
 * for that ran on this rank, `nremote` ids whose completion rank 0 will NOTIFY (other ranks'
 * commands, user events), `naccess` buffer uses, then the operation's own bytes. */
enum {
    SLUICE_CMD_PROFILE = 1u << 0,   /* the queue profiles: DONE carries the times */
    SLUICE_CMD_SILENT = 1u << 1,    /* send no DONE (the sending half of a transfer) */
    SLUICE_CMD_TRANSFER = 1u << 2,  /* a coherence move: waits for every earlier use of its buffer */
    SLUICE_CMD_BCAST = 1u << 3,     /* CMD_WRITE: the data comes by MPI_Ibcast from rank 0 over the
                                       communicator of the ranks in a5 (a mask), not from a4 */
    SLUICE_CMD_SCATTER = 1u << 4,   /* CMD_WRITE: the data comes as this rank's part of one
                                       MPI_Iscatterv from rank 0 over that communicator, one piece */
    SLUICE_CMD_IMAGE = 1u << 5,     /* an image command: rect READ/WRITE of an image, image COPY and
                                       FILL (cl/serve/remote_image.h) */
    SLUICE_CMD_GATHER = 1u << 6,    /* CMD_READ: the data goes as this rank's part of one MPI_Igatherv
                                       rooted at rank 0 over the gather communicator of a5, one
                                       piece; a rank posts its gathers in command order */
    SLUICE_CMD_ALLGATHER = 1u << 7, /* CMD_WRITE: the whole range comes by one MPI_Iallgatherv in place
                                       over the communicator of the serving ranks in a5 (rank 0 not
                                       in it), this rank giving its slice read from its own buffer:
                                       struct sluice_remote_allgather after the accesses */
    SLUICE_CMD_CMA = 1u << 8        /* CMD_WRITE from rank 0, CMD_READ to it: no data messages; the
                                       rank copies the data from or to rank 0's address a6 itself
                                       (cl/serve/remote_cma.h) */
};
/* SLUICE_CMD_ALLGATHER: the buffer this rank's slice is read from (its root's id here, the
 * offset), then `members` counts and `members` displacements (int32, bytes into the range) by
 * rank order of a5's members; this rank's slice is its own count and displacement (count 0:
 * it gives nothing). */
struct sluice_remote_allgather {
    uint64_t src, src_off;
    uint32_t members, pad;
};
struct sluice_remote_cmd {
    uint64_t id;
    uint64_t queue; /* rid, 0: the context's internal queue */
    uint64_t ctx;
    uint32_t nlocal, nremote, naccess, flags;
};
/* A buffer use: the rid of the buffer (of its parent for a sub-buffer) on the executing rank. */
struct sluice_remote_access {
    uint64_t root;
    uint64_t write;
};
/* One kernel argument in CMD_NDRANGE, followed by `size` bytes rounded up to 8 when kind is
 * SLUICE_KARG_BYTES. */
enum sluice_karg_kind {
    SLUICE_KARG_BYTES = 0, /* the value's bytes follow */
    SLUICE_KARG_MEM = 1,   /* a memory object or a sampler: its rid in `mem` */
    SLUICE_KARG_LOCAL = 2  /* local memory of `size` bytes */
};
struct sluice_remote_karg {
    uint32_t kind; /* enum sluice_karg_kind */
    uint32_t pad;
    uint64_t size;
    uint64_t mem;
};
/* A command finished on its rank. Times are the device's profiling times moved onto the
 * rank's CLOCK_MONOTONIC (0 when the queue does not profile). */
struct sluice_remote_done {
    uint64_t id;
    int64_t status;
    uint64_t t[4]; /* queued, submit, start, end */
};

/* One platform as ENUM reports it, followed by its name (`name_len` bytes, no NUL: the driver's,
 * whatever its length), then `ndev` device records, each followed by the device's DQL descriptor
 * (struct sluice_dql_device, cl/dql/dql.h) for SLUICE_DEVICES. */
struct sluice_remote_enum_platform {
    uint64_t rid;
    uint64_t ndev;
    uint64_t name_len;
};
struct sluice_remote_enum_device {
    uint64_t rid;
    uint64_t type;
};

/* A reply under construction or received: header plus payload in one malloc'd block. */
struct sluice_remote_msg {
    struct sluice_remote_rep rep;
    unsigned char *bytes; /* rep.nbytes of payload (owned) */
};

/* Executes one request against the real OpenCL loader of this process; `payload` holds
 * req->nbytes bytes. Fills `out` (payload malloc'd, freed by the caller). */
void sluice_remote_handle(const struct sluice_remote_req *req, const unsigned char *payload,
                          struct sluice_remote_msg *out);

/* Transport (remote_transport.c). Waits never spin: MPI_Iprobe with a micro-sleep back-off. */
int sluice_remote_wait_probe(MPI_Comm comm, int src, int tag, MPI_Status *st);
/* Sends header + payload as one message. */
int sluice_remote_send(MPI_Comm comm, int dst, int tag, const void *head, size_t head_len,
                       const void *payload, size_t payload_len);
/* Receives one message from src/tag into a malloc'd block (*buf, *len). */
int sluice_remote_recv(MPI_Comm comm, int src, int tag, unsigned char **buf, size_t *len);

/* Bulk data of a command: piece i of [data, data+len) as its own message (non-blocking; the
 * requests go into reqs[0..sluice_remote_pieces(len))). Not traced: the engine records the
 * rank-to-rank moves (MPI_SEND/MPI_RECV), the wrappers the program's own transfers. */
size_t sluice_remote_chunk(size_t len);
/* The piece size setting (SLUICE_DIST_CHUNK, 0: by transfer size): this process's own until rank
 * 0's arrives with a PING (set). */
size_t sluice_remote_chunk_setting(void);
void sluice_remote_set_chunk(size_t bytes);
size_t sluice_remote_pieces(size_t len);
/* Piece i of a transfer of len bytes: its offset, and its size in *k. */
size_t sluice_remote_piece(size_t len, size_t i, size_t *k);
int sluice_remote_data_isend(MPI_Comm comm, int dst, uint64_t id, const void *data, size_t len,
                             MPI_Request *reqs);
int sluice_remote_data_irecv(MPI_Comm comm, int src, uint64_t id, void *data, size_t len, MPI_Request *reqs);
/* A broadcast of collective replacement, along a chain: rank 0 of comm (a group's, rank 0 first)
 * sends the pieces to member 1 only, and each member forwards piece i to the next as soon as it
 * arrived, while piece i+1 is still arriving. So rank 0's link carries the data once, whatever the
 * number of members, and every link in and out of a member once: a broadcast of n pieces to K
 * members takes about (n + K - 1) pieces' time. (MPI_Ibcast below 8 ranks is a binomial tree:
 * rank 0 sends the whole data ceil(log2(K + 1)) times, 3 times at K = 4.)
 * post: rank 0 starts its sends, a member the receives of its pieces from the member before it
 * (tag SLUICE_TAG_REMOTE_CHAIN); next: the member to forward to, -1 for the last; forward: piece
 * i to `next` (the serving engine calls it once piece i arrived: remote_chain.c). */
int sluice_remote_chain_post(MPI_Comm comm, void *data, size_t len, MPI_Request *reqs);
int sluice_remote_chain_next(MPI_Comm comm);
int sluice_remote_chain_forward(MPI_Comm comm, int next, const void *data, size_t len, size_t i,
                                MPI_Request *req);
/* The communicator of the ranks in `mask` (bit r: rank r of sluice's communicator, r < 63), created
 * once with MPI_Comm_create_group by each of them and cached (remote_group.c). Rank 0 first sends
 * GROUP to the others, which create it from their serving loop at once. MPI_COMM_NULL on failure.
 * Bit 63 (SLUICE_REMOTE_GROUP_GATHER) asks for a second communicator of the same ranks, for
 * gathers only: their parts are posted when a device read completes, not in command order. */
#define SLUICE_REMOTE_GROUP_GATHER (1ull << 63)
MPI_Comm sluice_remote_group_comm(uint64_t mask);
/* Rank 0, for a set of serving ranks only (bit 0 clear): sends GROUP to them the first time, so
 * that they create its communicator among themselves. 0, or -1 when no more can be kept. */
int sluice_remote_group_announce(uint64_t mask);
/* The sleep of a wait that has found nothing for waited_ns: an eighth of it, between 1 us and
 * max_ns, so that an answer is found at most about 1/8 late. */
uint64_t sluice_remote_idle_ns(uint64_t waited_ns, uint64_t max_ns);
/* Sleeps about ns nanoseconds (accounted as SLEEP in the trace). */
void sluice_remote_nap(uint64_t ns);

/* True when `op` is of class CALL (SLUICE_REMOTE_OPS), or no known op (the server answers it
 * CL_INVALID_OPERATION). */
int sluice_remote_is_call(uint32_t op);
/* False for the calls rank 0 does not wait on: a release with no_reply, a creation with an id. */
int sluice_remote_wants_reply(const struct sluice_remote_req *req);

/* The command engine (remote_engine.c), one per process: serving ranks run it from their serving
 * loop, rank 0 runs it for its own devices from its scheduler thread. Thread-safe. */
void sluice_engine_command(const struct sluice_remote_req *req, const unsigned char *payload);
void sluice_engine_notify(uint64_t id, int64_t status);
/* Advances transfers and collects finished commands into done[0..max); returns how many (0 when
 * nothing happened; *progress tells whether anything else moved). */
size_t sluice_engine_progress(struct sluice_remote_done *done, size_t max, int *progress);
/* Commands in flight on this rank. */
size_t sluice_engine_inflight(void);
/* True when, at the last sluice_engine_progress, data messages of this rank were moving (posted
 * MPI requests of bulk data not yet complete): its loop should keep polling. */
int sluice_engine_data_active(void);
/* Wakes sluice_engine_wait (a command was added, a real event completed); wait returns 1 when
 * woken (or a completion is queued), 0 when the time ran out. */
void sluice_engine_wake(void);
int sluice_engine_wait(uint64_t ns);
/* A RELEASE while commands wait in the engine (behind a write whose data is still arriving): kept
 * and done after them, in order (returns 1; the reply is CL_SUCCESS at once). 0: do it now. */
int sluice_engine_defer_release(const struct sluice_remote_req *req, const unsigned char *payload);
/* Fails every command still waiting for a NOTIFY (rank 0 ended). */
void sluice_engine_abandon(void);

/* The serving loop of ranks 1..N-1 (remote_engine.c): returns when rank 0 says END and the
 * commands in flight have finished. */
void sluice_remote_serve(MPI_Comm comm);

#endif
