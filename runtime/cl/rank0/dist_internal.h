/* SPDX-License-Identifier: MIT */
/* Rank 0's view of distributed OpenCL objects: what the `real` field of a sluice handle points
 * at when its backend is the distributed one. Each object knows, per rank, the real object
 * that rank created for it (its rid, 0 where none). Rank 0's own devices are served by the same
 * request handler, called in-process.
 *
 * Lock order of distributed OpenCL (a thread holding one lock takes only locks after it):
 * dist_lock (recursive, dist_call.c: every call of the backend the program makes, in program
 * order) -> dist_sched_lock (dist_sched.c: the scheduler's records, DAG and window; taken by
 * submits under dist_lock and by the scheduler thread) -> sluice_eng_lock (remote_engine.c: the
 * command engine, entered from the scheduler with dist_sched_lock held, e.g. NOTIFY of rank 0's
 * own commands) -> srv_lock (remote_server.c: the server's queue list, taken by the engine's
 * deferred releases). The engine's note_lock is a leaf: nothing is taken while it is held. The
 * program's event callbacks run outside dist_sched_lock (dist_sched_callbacks.c). */
#ifndef SLUICE_CL_RANK0_DIST_INTERNAL_H
#define SLUICE_CL_RANK0_DIST_INTERNAL_H

#include <CL/cl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cl/dql/dql.h"
#include "cl/intercept/backend.h"
#include "cl/rank0/dag.h"
#include "cl/rank0/dist_cmds.h"
#include "cl/serve/remote_image.h"
#include "cl/serve/remote_proto.h"
#include "trace/debug.h"

/* The subsystem of this room's SLUICE_RETURN_ERROR_ON reasons (SLUICE_DEBUG=dist). */
#define SLUICE_DEBUG_HERE dist

#define DIST_MAX_RANKS 64
#define DIST_MAX_DEVICES 256

struct dist_platform {
    char *name; /* malloc'd, whole: platforms of the ranks merge by name */
    int rank;   /* the rank that answers platform queries */
    uint64_t rid;
    uint64_t rids[DIST_MAX_RANKS]; /* this platform's real platform on each rank (0: none) */
    int ndev;
    struct dist_device *devs[DIST_MAX_DEVICES];
};

/* A device's image limits (dist_image_accept.c), asked at the first image that could skip a reply. */
struct dist_image_limits {
    int known;
    size_t max_2d[2], max_3d[3], max_array; /* CL_DEVICE_IMAGE2D_MAX_*, IMAGE3D_MAX_*, IMAGE_MAX_ARRAY_SIZE */
    cl_ulong max_alloc;                     /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    /* Images of buffers, asked at the first one that could skip a reply: */
    int storage_known;
    size_t max_buffer;               /* CL_DEVICE_IMAGE_MAX_BUFFER_SIZE (pixels) */
    cl_uint pitch_align, base_align; /* CL_DEVICE_IMAGE_PITCH_ALIGNMENT, _BASE_ADDRESS_ALIGNMENT (pixels) */
};

struct dist_device {
    int rank;
    uint64_t rid;
    cl_device_type type;
    struct dist_platform *platform;
    struct dist_device *parent;    /* sub-devices only (freed with their last reference) */
    struct sluice_dql_device *dql; /* root devices: what SLUICE_DEVICES queries see */
    long refs;
    /* What enqueue validation needs (dist_validate.c), asked at the device's first queue. */
    int limits_known;
    cl_uint max_dims;
    size_t max_items[3];
    size_t max_wg;
    int version;                             /* of CL_DEVICE_VERSION, major * 10 + minor */
    int nonuniform;                          /* the device can run non-uniform work-groups */
    cl_command_queue_properties queue_props; /* CL_DEVICE_QUEUE_PROPERTIES */
    cl_uint base_align;                      /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits (0: unknown) */
    int native; /* native kernels (dist_native.c): 0 not asked yet, 1 run, 2 not by the driver, 3 not
                   rank 0's program there */
    struct dist_image_limits image_limits; /* under dist_lock */
};

/* A destructor callback the program registered (context or memory object). */
struct dist_dtor {
    void (*fn)(void *obj, void *user_data);
    void *user_data;
    struct dist_dtor *next; /* most recent first: called in reverse order of registration */
};

struct dist_context {
    long refs;
    struct dist_dtor *dtors;
    int ndev;
    struct dist_device **devs;
    cl_context_properties props[3]; /* CL_CONTEXT_PLATFORM, platform, 0 (or empty) */
    int nprops;
    uint64_t rid[DIST_MAX_RANKS];
    struct dist_formats *formats;   /* clGetSupportedImageFormats' answers (dist_image.c) */
    struct dist_accepted *accepted; /* creations its first rank's driver took (dist_image_accept.c) */
};

struct dist_queue {
    long refs;
    struct dist_context *ctx;
    struct dist_device *dev;
    uint64_t rid;
    /* asynchronous dispatch (dist_sched.c, under its lock) */
    long inflight; /* commands not complete yet */
    int props_known;
    cl_command_queue_properties props; /* asked from the device's rank at the first command */
    int nparray;                       /* CL_QUEUE_PROPERTIES_ARRAY: the program's list, its 0 included */
    cl_queue_properties parray[5];
};

/* What rank 0 keeps of an image (dist_image.c). Every image type is seen in three dimensions:
 * width, rows (a 2D image's height, a 1D array's images) and slices (a 3D image's depth, a 2D
 * array's images). Rank 0's copy (shadow) is packed: rows of dims[0] * elem bytes. */
struct dist_image {
    cl_image_format format;
    cl_image_desc desc; /* as the program gave it (host pitches: CL_MEM_USE_HOST_PTR) */
    size_t elem;        /* bytes per pixel */
    size_t dims[3];
    /* The first rank's driver's answers: in the creation's reply, or asked at the first query of
     * one (an image created without waiting, dist_image_accept.c); valid once info_known is set. */
    struct sluice_remote_image_info info;
    int info_known;
    bool padded; /* a 2D image of a buffer whose rows are further apart than its width */
};

struct dist_mem {
    long refs;
    struct dist_dtor *dtors;
    struct dist_context *ctx;
    cl_mem_flags flags;
    size_t size;
    void *host_ptr;          /* the program's pointer (CL_MEM_HOST_PTR query) */
    uint64_t coh_id;         /* the coherence directory's name for it */
    unsigned char *shadow;   /* rank 0's copy of COPY/USE_HOST_PTR data until devices hold it */
    bool shadow_borrowed;    /* CL_MEM_USE_HOST_PTR: shadow is the program's host_ptr (not freed) */
    struct dist_mem *parent; /* sub-buffers: the buffer they are a region of (retained) */
    size_t origin;           /* sub-buffers: offset in the parent */
    uint64_t rid[DIST_MAX_RANKS];
    struct dist_mem *next_live;
    bool props_given;         /* created with a property list (CL_MEM_PROPERTIES: its terminating 0) */
    struct dist_image *image; /* images only; size is then the packed size of the whole image */
};

/* A sampler: one real sampler on every rank of its context. */
struct dist_sampler {
    long refs;
    struct dist_context *ctx;
    uint64_t rid[DIST_MAX_RANKS];
    struct dist_sampler *next_live;
};

/* A region the program has mapped: rank 0 memory handed out by clEnqueueMapBuffer. */
struct dist_map {
    struct dist_mem *mem;
    void *ptr;
    size_t off, size;
    cl_map_flags flags;
    struct dist_map *next;
};

struct dist_program {
    long refs;
    struct dist_context *ctx;
    int ndev; /* from binaries: the devices named (else 0: the context's) */
    struct dist_device **devs;
    uint64_t rid[DIST_MAX_RANKS];
    bool built; /* a build or compile was asked for (on some ranks, maybe not all) */
};

/* A kernel argument that is a sampler: sent as SLUICE_KARG_MEM with the sampler's rid. */
enum { DIST_ARG_SAMPLER = 3 };
struct dist_arg {
    int set;
    int kind;                             /* SLUICE_KARG_* (remote_proto.h), or DIST_ARG_SAMPLER */
    int read_only;                        /* the kernel declares it const or __constant (set at creation) */
    cl_kernel_arg_address_qualifier addr; /* its declaration, when the kernel has arg info (else 0) */
    size_t type_size;                     /* private scalars and vectors: their size (0: unknown) */
    size_t size;
    unsigned char *bytes;
    struct dist_mem *mem;
    struct dist_sampler *sampler;
};

/* A kernel on one device of its context, for enqueue validation (0: unknown, not checked). */
struct dist_kernel_dev {
    size_t wg;      /* CL_KERNEL_WORK_GROUP_SIZE */
    int nonuniform; /* its build there allows non-uniform work-groups */
};

struct dist_kernel {
    long refs;
    struct dist_program *prog;
    char *name; /* malloc'd: a clone is made by name */
    cl_uint nargs;
    struct dist_arg *args;
    uint64_t rid[DIST_MAX_RANKS];
    size_t reqd[3];               /* reqd_work_group_size (0: none) */
    struct dist_kernel_dev *devs; /* in the order of the context's devices (NULL: unknown) */
};

struct dist_event_cb;
/* A rect read from another rank: its packed data lands in tmp, and is unpacked into the
 * program's memory (dst, with its host origin and pitches) when the command completes. */
struct dist_rect {
    unsigned char *tmp;
    unsigned char *dst;
    size_t origin[3], region[3], row_pitch, slice_pitch;
};
/* A command as rank 0 knows it (also what a program's cl_event points at). Status and times come
 * from the DONE record its rank sends; fields below `type` belong to dist_sched.c's lock. */
struct dist_event {
    long refs;                /* the program's, plus one while in flight */
    struct dist_queue *queue; /* NULL for user events and transfers */
    int rank;                 /* where it runs; -1: a user event */
    uint64_t rid;             /* unused since dispatch is asynchronous (0) */
    cl_command_type type;
    uint64_t id; /* DAG node and wire name */
    struct dist_context *ctx;
    int user;
    cl_int status; /* CL_SUBMITTED until done, then CL_COMPLETE or negative */
    int done_msg;  /* its DONE arrived (or it never went out) */
    cl_int result; /* what it ends with once its data messages are done too */
    int nreqs;     /* rank 0's own data messages of the command */
    MPI_Request *reqs;
    /* A read's bytes: its MSG_RECV is recorded when its messages completed (trace). */
    size_t recv_len;
    int has_times;
    uint64_t t[4];                 /* queued, submit, start, end on rank 0's clock */
    uint64_t queued_ns, submit_ns; /* rank 0's own stamps: enqueued by the program, sent to its rank */
    uint64_t subs;                 /* ranks that wait for it (NOTIFY when done) */
    struct dist_event_cb *cbs;
    struct dist_mem *hold;  /* kept alive until done (a transfer's source) */
    void *free_after;       /* freed when done (an unmapped region) */
    struct dist_rect *rect; /* unpacked, then freed, when done */
    struct dist_event *hnext, *mnext;
    /* A write whose host bytes a pending read still fills: its data goes when it is ready. */
    const void *late_send;
    size_t late_len;
    const void *late_pack; /* a rect write: packed from here (late_geom) first */
    struct sluice_rect_geom late_geom;
    struct dist_event *late_next;
    /* A gather's lead read (the one holding the MPI request): the other reads it replaced, which
     * complete with it. */
    struct dist_event *gather_next;
};

/* dist_call.c */
int dist_size(void);
/* One request to `rank` (in-process for rank 0). Returns the OpenCL code of the reply; the
 * reply (payload included) is left in *out when out is not NULL (free out->bytes). */
cl_int dist_call(int rank, int op, const uint64_t *args, int nargs, const void *payload, size_t len,
                 struct sluice_remote_msg *out);
cl_int dist_call_v(int rank, int op, const uint64_t *args, int nargs, const void *payload, size_t len,
                   uint64_t *v0);
/* A request that wants no reply (a release with a2 = 1): sent in order with the others, and the
 * program goes on at once instead of waiting a round trip. */
void dist_post(int rank, int op, const uint64_t *args, int nargs);
/* dist_ids.c: creates an object on `rank` with the request op (words[id_word] is the request's id
 * word): on a serving rank under an id rank 0 chooses, sent without waiting (no round trip); on
 * rank 0, or with SLUICE_DIST_IDS off, as a call that waits for the handle. *rid: the object's
 * name on that rank. The caller has checked what the driver would refuse at once. */
cl_int dist_create(int rank, int op, uint64_t *words, int nwords, int id_word, const void *payload,
                   size_t len, uint64_t *rid);
/* The words of an operand struct of remote_proto.h (all uint64_t), as dist_call and dist_post
 * take them: dist_call(rank, SLUICE_REMOTE_INFO, DIST_WORDS(in), ...). */
#define DIST_WORDS(s) ((const uint64_t *)(const void *)&(s)), ((int)(sizeof(s) / sizeof(uint64_t)))
/* The same, writable, and the word of its `id` (dist_create fills it in). */
#define DIST_WORDS_ID(s)                                                                                     \
    ((uint64_t *)(void *)&(s)), ((int)(sizeof(s) / sizeof(uint64_t))),                                       \
        ((int)(((const char *)&(s).id - (const char *)&(s)) / sizeof(uint64_t)))
/* Generic INFO forward. */
cl_int dist_info(int rank, int getter, uint64_t obj, uint64_t obj2, cl_uint param, size_t size, void *value,
                 size_t *size_ret);
/* A string-valued INFO forward read whole whatever its length (common/info_string.h): a malloc'd,
 * NUL-terminated string, or NULL with *err (if not NULL) set. */
char *dist_info_text(int rank, int getter, uint64_t obj, uint64_t obj2, cl_uint param, cl_int *err);
/* Answers a query locally from a value of `n` bytes. */
cl_int dist_answer(const void *src, size_t n, size_t size, void *value, size_t *size_ret);

/* dist_role.c: the first merged platform (NULL when none), what a NULL platform means. */
struct dist_platform *dist_default_platform(void);

/* dist_devices.c */
void dist_devices_install(struct sluice_cl_api *api);
struct dist_platform *dist_platform_of_rank(int rank, uint64_t rid);

/* dist_objects.c, dist_program.c, dist_exec.c */
void dist_objects_install(struct sluice_cl_api *api);
void dist_program_install(struct sluice_cl_api *api);
/* dist_host_access.c: after the command slots are installed (enforces CL_MEM_HOST_*). */
void dist_host_access_install(struct sluice_cl_api *api);
/* dist_legacy.c: the OpenCL 1.0 commands as their 1.2 equivalents (after the command slots). */
void dist_legacy_install(struct sluice_cl_api *api);
/* Helpers of the object files: a reference on a context record, the last one releases its real
 * contexts; releasing the real objects of a record on every rank that has one. */
void dist_ctx_retain(struct dist_context *c);
void dist_ctx_unref(struct dist_context *c);
void dist_release_everywhere(const uint64_t *rid, int kind);
static inline void dist_set_err(cl_int *errcode_ret, cl_int e)
{
    if (errcode_ret != NULL)
        *errcode_ret = e;
}
void dist_exec_install(struct sluice_cl_api *api);
/* The commands' shared steps (dist_exec.c, dist_image.c). What a command uses of its memory
 * objects: for the DAG (directory ids, root-relative ranges) and for the engine of its rank (the
 * root object there). Grown as needed: a kernel may take any number of buffers. */
struct dist_uses {
    size_t n, cap;
    struct sluice_dag_access *dag;
    struct sluice_remote_access *wire;
};
/* Makes [off, off+size) of m valid on rank's device (the directory plans the moves) and adds the
 * use; an image is its root's whole unit. Under dist_lock. */
cl_int dist_use(struct dist_uses *u, struct dist_mem *m, int rank, size_t off, size_t size, bool write,
                bool write_all);
void dist_uses_free(struct dist_uses *u);
struct dist_cmd dist_command(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                             const struct dist_uses *u);
cl_int dist_check_wait(cl_uint n, const cl_event *evs);
/* Hands the record to the program (or drops it), after waiting for it when the call blocks. */
cl_int dist_finish_call(cl_int r, struct dist_event *e, bool blocking, cl_event *event);
/* A marker command of kind `kind` on q (maps and unmaps that move nothing); hold and free_after
 * as in struct dist_cmd. */
struct dist_event;
cl_int dist_exec_marker(struct dist_queue *q, dist_cmd_kind kind, cl_uint nwait, const cl_event *wl,
                        struct dist_event **e, struct dist_mem *hold, void *free_after);
/* dist_native.c: clEnqueueNativeKernel, the function run on the queue's rank. */
void dist_native_install(struct sluice_cl_api *api);
/* Whether the process serving `rank` is rank 0's program: only then do its devices advertise
 * CL_EXEC_NATIVE_KERNEL (asked once per rank, silently). */
bool dist_native_program_there(int rank);
/* dist_image*.c, dist_sampler.c: images and samplers (after dist_exec_install: it extends
 * clEnqueueUnmapMemObject); their parts share dist_image_internal.h. */
void dist_image_install(struct sluice_cl_api *api);
void dist_image_forget_formats(struct dist_context *c);  /* when the context goes */
void dist_image_forget_accepted(struct dist_context *c); /* the same */
/* The first rank's driver's answers about image m (asked once if its creation did not wait), or
 * NULL with *err set to the code of the query (the creation's error where it failed there). */
const struct sluice_remote_image_info *dist_image_answers(struct dist_mem *m, cl_int *err);
bool dist_sampler_is_live(const void *p);
/* The geometry of a move of the whole image m (cl/serve/remote_image.h), with packed host pitches. */
void dist_image_whole(const struct dist_mem *m, struct sluice_rect_geom *g);
bool dist_mem_is_live(const void *p);
/* CL_MEM_HOST_{WRITE,READ,NO}_ACCESS: CL_INVALID_OPERATION when the host may not read (read) or
 * write (write) the buffer, else CL_SUCCESS. For reads, writes and maps. */
cl_int dist_mem_host_access(const struct dist_mem *m, bool read, bool write);
/* The program's memory behind a CL_MEM_USE_HOST_PTR buffer (sub-buffers: at their origin), NULL
 * for other buffers: a map of [off, off+size) must return host_ptr + off. */
void *dist_mem_host_ptr(const struct dist_mem *m);
/* A new memory object joins the live list (on error its last reference goes). */
cl_mem dist_mem_publish(struct dist_mem *m, cl_int err, cl_int *errcode_ret);
/* The same for one with storage of its own (a buffer, an image not made from one): first its
 * directory id and, without an error, its entry in the coherence directory. */
cl_mem dist_mem_publish_root(struct dist_mem *m, cl_int err, cl_int *errcode_ret);
/* clCreate{Buffer,Image}WithProperties: no memory property is defined, so only an empty list is
 * valid; false with *errcode_ret set (CL_INVALID_CONTEXT first, else CL_INVALID_PROPERTY). */
bool dist_mem_props_ok(cl_context context, const cl_mem_properties *props, cl_int *errcode_ret);
/* mem, remembering that a list was given: CL_MEM_PROPERTIES then answers its terminating 0. */
cl_mem dist_mem_props_given(cl_mem mem, const cl_mem_properties *props);
/* Drop one reference of rank 0's record (the last one releases the real objects everywhere). */
void dist_mem_unref(struct dist_mem *m);
void dist_queue_unref(struct dist_queue *q);
/* The coherence directory (dist_coherence.c): makes [off, off+size) of `m` valid on the device
 * of `rank` before a command reads (write=false) or writes it there. */
cl_int dist_coh_add(struct dist_mem *m);
void dist_coh_remove(struct dist_mem *m);
cl_int dist_coh_acquire(struct dist_mem *m, int rank, size_t off, size_t size, bool write, bool write_all);

/* dist_dhdcr.c: device-host-device copy removal (SLUICE_DHDCR, 3 ranks or more). */
struct dist_dhdcr_src {
    struct dist_mem *root; /* the buffer the host bytes came from (a root buffer) */
    size_t off;            /* their offset in it */
    int rank;              /* where it was read */
    uint64_t read_id;
};
int dist_dhdcr_on(void);
/* A read of `size` bytes at `off` of m on `rank` into host memory was submitted as command id. */
void dist_dhdcr_note_read(uint64_t id, const void *host, size_t size, struct dist_mem *m, size_t off,
                          int rank);
/* The command id completed (ok: successfully); the scheduler calls this for every read. */
void dist_dhdcr_read_done(uint64_t id, int ok);
/* A command writes [off, off+size) of root (size 0: the buffer goes away). */
void dist_dhdcr_forget_range(const struct dist_mem *root, size_t off, size_t size);
/* Where the host bytes [host, host+size) can be taken from for a write on dst_rank: 1 and *out. */
int dist_dhdcr_source(const void *host, size_t size, int dst_rank, struct dist_dhdcr_src *out);
/* The host copies known that overlap [host, host+size), up to max: where they are, the buffer
 * they came from on `rank` (its root's id there, the offset) and whether the host bytes are still
 * what the read brought (it completed and they compare equal). Returns how many. */
struct dist_dhdcr_slice {
    const unsigned char *host;
    size_t size;
    const struct dist_context *ctx; /* the buffer's */
    int rank;
    uint64_t rid;
    size_t off;
    int unchanged;
};
size_t dist_dhdcr_slices(const void *host, size_t size, struct dist_dhdcr_slice *out, size_t max);

/* dist_validate.c: what the driver would refuse at enqueue, from cached limits (no round trip).
 * The device's limits are asked at its first queue, the kernel's at its creation. */
void dist_device_limits(struct dist_device *d);
void dist_kernel_limits(struct dist_kernel *k);
/* What a creation on a serving rank would be refused at once (its creation is not waited for):
 * CL_INVALID_BUFFER_SIZE for a size above every context device's CL_DEVICE_MAX_MEM_ALLOC_SIZE,
 * CL_INVALID_QUEUE_PROPERTIES for queue properties the device lacks, CL_MISALIGNED_SUB_BUFFER_OFFSET
 * for a sub-buffer origin some device of the context cannot take. */
cl_int dist_validate_buffer_size(const struct dist_context *c, size_t size);
cl_int dist_validate_queue(struct dist_device *d, cl_command_queue_properties props);
cl_int dist_validate_sub_origin(const struct dist_context *c, size_t origin);
/* CL_SUCCESS or the driver's error; *empty: a valid NDRange of no work-item (OpenCL 2.1+). */
cl_int dist_validate_ndrange(struct dist_queue *q, struct dist_kernel *k, cl_uint dims, const size_t *offset,
                             const size_t *global, const size_t *local, int *empty);

/* dist_sched*.c: rank 0's scheduler (asynchronous dispatch through the command DAG); its parts
 * share dist_sched_internal.h. */
struct dist_cmd {
    int rank;                 /* where it runs */
    dist_cmd_kind kind;       /* its wire op, command type, DAG kind (dist_cmds.def) */
    struct dist_queue *queue; /* NULL: a transfer (the context's internal queue) */
    struct dist_context *ctx;
    unsigned flags;                /* SLUICE_CMD_* */
    union sluice_remote_args args; /* its operands (cl/serve/remote_proto.h) */
    cl_uint nwait;
    const cl_event *wait;
    size_t naccess;
    const struct sluice_dag_access *access;     /* by directory id, for the DAG */
    const struct sluice_remote_access *raccess; /* by root rid on `rank`, for its engine */
    const void *bytes;                          /* the operation's own bytes */
    size_t nbytes;
    const void *send; /* data rank 0 sends to `rank` (a3 of a write from rank 0) */
    void *recv;       /* where rank 0 receives a read's data */
    size_t len;       /* of send or recv */
    struct dist_mem *hold;
    void *free_after;
    struct dist_rect *rect;
    /* A rect write whose host bytes a pending read still brings: packed from here (geometry in
     * bytes) into send when its data goes, not at enqueue. */
    const void *pack_from;
    /* A transfer between two devices: its sending half, a silent CMD_READ with the same id on
     * push_rank (operands push_xfer, one use of the buffer's root there). */
    int push;
    int push_rank;
    struct sluice_req_xfer push_xfer;
    struct sluice_remote_access push_access;
    const struct sluice_rect_geom *push_geom; /* an image's move: the sending half's geometry */
};
/* Adds the command to the DAG and sends it to its rank without waiting; the caller holds
 * dist_lock (program order). *out gets the record with one reference for the caller (NULL: none
 * wanted). */
cl_int dist_sched_submit(const struct dist_cmd *c, struct dist_event **out);
/* dist_cmd.flags, rank 0 only: `send` is rank 0's own copy of a blocking write (freed with it). */
#define SLUICE_CMD_STAGED (1u << 16)
/* Collective replacement may hold commands for `rank` in a window (SLUICE_DCR, 3 ranks or more):
 * then a blocking host write to it is staged and returns at once. */
int dist_sched_dcr_on(int rank);
/* 1 when a pending read (from any rank) is to fill some of [p, p + len): a write of those bytes
 * must not take them now (no staged copy). */
int dist_sched_host_busy(const void *p, size_t len);
/* Packs the host region of a rect transfer (geometry g) into `to`. */
void dist_rect_pack(unsigned char *to, const unsigned char *from, const struct sluice_rect_geom *g);
/* The bytes [*lo, *hi) of host memory that g's host side spans, from its start. */
void dist_rect_host_span(const struct sluice_rect_geom *g, size_t *lo, size_t *hi);
/* Closes the window: every held command goes to its rank (object calls do it first). */
void dist_sched_flush(void);
/* An object call that keeps the window open (a create, a query) counts as the program's activity:
 * the window's idle bound starts again from now. */
void dist_sched_window_touch(void);
/* Without closing the window: 0 while e runs, 1 when it completed, -1 when it failed. */
int dist_sched_peek_done(struct dist_event *e);
/* The CL_DCR trace event of a write replaced by a direct transfer from `from` (dist_sched_window.c). */
void dist_dcr_trace_p2p(uint64_t id, int from);
/* A record that is complete already (maps served from rank 0 memory). */
struct dist_event *dist_sched_done_event(struct dist_queue *q, cl_command_type type);
/* Waits (sleeping) until e is done; returns its status (CL_COMPLETE or negative). */
cl_int dist_sched_wait_event(struct dist_event *e);
cl_int dist_sched_finish(struct dist_queue *q);
void dist_sched_release(struct dist_event *e);
void dist_event_install(struct sluice_cl_api *api);
/* Waits for every command in flight, then stops the scheduler (before MPI ends; idempotent). */
void dist_sched_drain(void);

/* clRetainX and clReleaseX of a rank 0 record: counted on rank 0; `unref` drops one reference
 * and frees the real objects everywhere with the last one. */
#define DIST_RETAIN_RELEASE(name, handle_t, record_t, unref, invalid)                                        \
    static cl_int CL_API_CALL retain_##name(handle_t h)                                                      \
    {                                                                                                        \
        if (h == NULL)                                                                                       \
            return invalid;                                                                                  \
        __atomic_add_fetch(&((record_t *)h)->refs, 1, __ATOMIC_ACQ_REL);                                     \
        return CL_SUCCESS;                                                                                   \
    }                                                                                                        \
    static cl_int CL_API_CALL release_##name(handle_t h)                                                     \
    {                                                                                                        \
        if (h == NULL)                                                                                       \
            return invalid;                                                                                  \
        unref((record_t *)h);                                                                                \
        return CL_SUCCESS;                                                                                   \
    }

extern pthread_mutex_t dist_lock; /* recursive: every call of the distributed backend */

/* The live list of one kind of rank 0 record (mem, sampler): every one the program holds, linked
 * through next_live, so that a pointer can be told to be such a handle (kernel arguments, native
 * kernels). Defines live_<name>s, dist_<name>_is_live, and <name>_live_add / <name>_live_remove,
 * which take dist_lock. */
#define DIST_LIVE_LIST(name, record_t)                                                                       \
    static record_t *live_##name##s;                                                                         \
    bool dist_##name##_is_live(const void *p)                                                                \
    {                                                                                                        \
        for (record_t *x = live_##name##s; x != NULL; x = x->next_live)                                      \
            if (x == p)                                                                                      \
                return true;                                                                                 \
        return false;                                                                                        \
    }                                                                                                        \
    static void name##_live_add(record_t *x)                                                                 \
    {                                                                                                        \
        pthread_mutex_lock(&dist_lock);                                                                      \
        x->next_live = live_##name##s;                                                                       \
        live_##name##s = x;                                                                                  \
        pthread_mutex_unlock(&dist_lock);                                                                    \
    }                                                                                                        \
    static void name##_live_remove(record_t *x)                                                              \
    {                                                                                                        \
        pthread_mutex_lock(&dist_lock);                                                                      \
        for (record_t **p = &live_##name##s; *p != NULL; p = &(*p)->next_live)                               \
            if (*p == x) {                                                                                   \
                *p = x->next_live;                                                                           \
                break;                                                                                       \
            }                                                                                                \
        pthread_mutex_unlock(&dist_lock);                                                                    \
    }

#endif
