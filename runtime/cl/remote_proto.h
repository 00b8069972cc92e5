/* Wire protocol of distributed OpenCL (SLUICE_OPENCL=distributed): rank 0 sends one request
 * message per remote call to the rank that owns the objects, the serving rank answers with one
 * reply message. Buffer moves between two serving ranks go directly from one to the other as a
 * DATA message. Remote objects are named by their real address on the serving rank (`rid`):
 * only rank 0 ever names them, and only with values the server handed it.
 *
 * The same handler (sluice_remote_handle) runs on serving ranks (remote_server.c) and, called
 * directly without MPI, for rank 0's own devices, so every device goes through one code path. */
#ifndef SLUICE_CL_REMOTE_PROTO_H
#define SLUICE_CL_REMOTE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "mpi/roles.h"

/* sluice's communicator is private; these tags are distributed OpenCL's own. */
#define SLUICE_REMOTE_TAG_REQ 0x5D00
#define SLUICE_REMOTE_TAG_REP 0x5D01
#define SLUICE_REMOTE_TAG_DATA 0x5D02

#define SLUICE_REMOTE_OPS(X)                                                                        \
    X(ENUM)        /* -> bytes: platform and device records (remote_enum_*) */                      \
    X(INFO)        /* a0 getter, a1 obj, a2 obj2, a3 param, a4 size -> ret, v0 size_ret, bytes */   \
    X(CTX_CREATE)  /* bytes: device rids -> v0 context */                                           \
    X(QUEUE_CREATE)/* a0 ctx, a1 device, a2 properties -> v0 queue */                               \
    X(BUF_CREATE)  /* a0 ctx, a1 flags, a2 size -> v0 buffer */                                     \
    X(BUF_WRITE)   /* a0 queue (0: the context's own), a1 buf, a2 offset, a3 ctx, a5 want event; bytes -> v0 event */ \
    X(BUF_READ)    /* a0 queue (0: own), a1 buf, a2 offset, a3 size, a4 ctx, a5 want event -> bytes, v0 event */   \
    X(PUSH)        /* a0 ctx, a1 buf, a2 offset, a3 size, a4 destination rank */                    \
    X(PULL)        /* a0 ctx, a1 buf, a2 offset, a3 size, a4 source rank */                         \
    X(PROG_CREATE) /* a0 ctx; bytes: source -> v0 program */                                       \
    X(PROG_BUILD)  /* a0 program, a1 ndev; bytes: device rids then options */                       \
    X(KERNEL_CREATE) /* a0 program; bytes: name -> v0 kernel */                                     \
    X(KERNEL_ARG)  /* a0 kernel, a1 index, a2 size, a3 kind (0 bytes, 1 mem, 2 local), a4 mem; bytes */ \
    X(NDRANGE)     /* a0 queue, a1 kernel, a2 dims, a3 null mask (1 offset, 4 local) | 8 want event; bytes: 3 x dims size_t -> v0 event */ \
    X(FINISH)      /* a0 queue */                                                                   \
    X(FLUSH)       /* a0 queue */                                                                   \
    X(WAIT)        /* bytes: event rids */                                                          \
    X(RELEASE)     /* a0 kind (SLUICE_CL_*), a1 rid */                                              \
    X(COPY)        /* a0 queue, a1 src, a2 dst, a3 src offset, a4 dst offset, a5 size, a6 want event -> v0 event */ \
    X(FILL)        /* a0 queue, a1 buf, a2 offset, a3 size, a4 want event; bytes: pattern -> v0 event */ \
    X(MARKER)      /* a0 queue, a1 1 for a barrier, a2 want event -> v0 event */                   \
    X(SUBBUF)      /* a0 parent buffer, a1 flags, a2 origin, a3 size -> v0 buffer */               \
    X(PROG_BINARY) /* a0 program, a1 index among its devices -> bytes: that device's binary */    \
    X(PROG_FROM_BINARY) /* a0 ctx, a1 ndev; bytes: ndev x {rid, len}, then the binaries -> v0 program, bytes: statuses */ \
    X(SUBDEVICES)  /* a0 device; bytes: partition properties -> bytes: sub-device rids */        \
    X(OBJ)         /* a0 operation (remote_objects.h): programs from IL, compile, link... */    \
    X(END)         /* rank 0's program ended: serve no more */

enum sluice_remote_op {
#define X(name) SLUICE_REMOTE_##name,
    SLUICE_REMOTE_OPS(X)
#undef X
    SLUICE_REMOTE_OP_COUNT
};

/* Getters the INFO op can call. */
enum sluice_remote_getter {
    SLUICE_RG_PLATFORM, SLUICE_RG_DEVICE, SLUICE_RG_CONTEXT, SLUICE_RG_QUEUE, SLUICE_RG_MEM,
    SLUICE_RG_PROGRAM, SLUICE_RG_BUILD, SLUICE_RG_KERNEL, SLUICE_RG_KERNEL_WG, SLUICE_RG_KERNEL_ARG,
    SLUICE_RG_EVENT, SLUICE_RG_PROFILING, SLUICE_RG_COUNT
};

#define SLUICE_REMOTE_NARGS 8
struct sluice_remote_req {
    uint32_t op;
    uint32_t pad;
    uint64_t a[SLUICE_REMOTE_NARGS];
    uint64_t nbytes; /* payload after the header */
};

struct sluice_remote_rep {
    int64_t ret;     /* cl_int */
    uint64_t v[2];
    uint64_t nbytes; /* payload after the header */
};

/* One platform as ENUM reports it, followed by `ndev` device records, each followed by the
 * device's DQL descriptor (struct sluice_dql_device, dcl/dql.h) for SLUICE_DEVICES. */
struct sluice_remote_enum_platform {
    uint64_t rid;
    uint64_t ndev;
    char name[256];
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

/* Rank-to-rank buffer data: blocking send/recv of `len` bytes, traced (MPI_SEND/MPI_RECV). */
int sluice_remote_data_send(MPI_Comm comm, int dst, const void *data, size_t len);
int sluice_remote_data_recv(MPI_Comm comm, int src, void *data, size_t len);

/* The serving loop of ranks 1..N-1 (remote_server.c): returns when rank 0 says END. */
void sluice_remote_serve(MPI_Comm comm);

#endif
