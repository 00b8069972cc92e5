/* SPDX-License-Identifier: MIT */
/* sluice's OpenCL object model: one handle per platform, device, context, queue, memory object,
 * program, kernel, event and sampler the program sees.
 *
 * A handle starts with a cl_khr_icd dispatch pointer (pointing back at sluice's own exported
 * wrappers), so an ICD loader handed a sluice handle routes the call to sluice. It holds the
 * backend's object (`real`) and the backend that owns it: the local ICD loader or the distributed
 * backend (docs/DISTRIBUTED.md, "Objects and calls"); wrappers never care which.
 *
 * Lifetime invariant: a handle lives while the program holds references to it (clRetain and
 * clRelease mirror the real object's count) or another live handle names it as `parent` (a
 * sub-buffer its buffer, a kernel its program, an event its queue, everything its context), or a
 * pending callback needs it. The backend keeps the same parents alive on its side, so while a
 * handle is alive its real object is alive too, and the real -> handle table never holds a stale
 * address. Platforms and root devices live for the whole process. */
#ifndef SLUICE_CL_INTERCEPT_OBJECT_H
#define SLUICE_CL_INTERCEPT_OBJECT_H

#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sluice_cl_kind {
    SLUICE_CL_PLATFORM,
    SLUICE_CL_DEVICE,
    SLUICE_CL_CONTEXT,
    SLUICE_CL_QUEUE,
    SLUICE_CL_MEM,
    SLUICE_CL_PROGRAM,
    SLUICE_CL_KERNEL,
    SLUICE_CL_EVENT,
    SLUICE_CL_SAMPLER,
    SLUICE_CL_KIND_COUNT
};

/* Not a handle kind: marks a context property list among query results (info_objects.def). */
#define SLUICE_CL_CTX_PROPS (-1)

/* Tells a sluice handle of a given kind from anything else at the same address offset. */
#define SLUICE_CL_MAGIC(kind) (0x51C1CE00u | (uint32_t)(kind))

/* flags */
#define SLUICE_CL_F_PERSISTENT 0x1u  /* platform or root device: never freed */
#define SLUICE_CL_F_PROVISIONAL 0x2u /* made for an object sluice did not see created */

/* What a kernel argument is, from clGetKernelArgInfo (or unknown when the program was built
 * without -cl-kernel-arg-info, as most are). */
enum sluice_cl_arg_class {
    SLUICE_CL_ARG_UNKNOWN = 0,
    SLUICE_CL_ARG_MEM,
    SLUICE_CL_ARG_SAMPLER,
    SLUICE_CL_ARG_QUEUE,
    SLUICE_CL_ARG_BYTES,
    SLUICE_CL_ARG_LOCAL
};

struct sluice_cl_backend;

struct sluice_cl_queue_data {
    struct sluice_cl_obj *device;          /* the device the queue feeds */
    cl_command_queue_properties app_props; /* what the program asked for */
    cl_queue_properties *app_props_array;  /* the program's property list (NULL if none) */
    size_t app_props_array_bytes;
    bool forced_profiling;           /* sluice added CL_QUEUE_PROFILING_ENABLE */
    uint64_t last_cmd;               /* command id of the latest enqueue (in-order edges); atomic */
    struct sluice_cl_timing *timing; /* commands awaiting device times (trace_cl.c) */
};

struct sluice_cl_kernel_data {
    uint8_t *arg_class; /* enum sluice_cl_arg_class per argument, set once (atomic) */
    cl_uint nargs;
};

struct sluice_cl_obj {
    const struct _cl_icd_dispatch *dispatch; /* cl_khr_icd: must be first */
    void *dispatch_data;                     /* cl_khr_icd 2.0 slot; unused */
    uint32_t magic;                          /* SLUICE_CL_MAGIC(kind) while alive */
    uint16_t kind;
    uint16_t flags;
    void *real; /* the backend's object */
    const struct sluice_cl_backend *backend;
    struct sluice_cl_obj *parent; /* handle this one keeps alive */
    long refs;                    /* atomic (__atomic builtins: shared with C++ tests) */
    uint64_t cmd;                 /* events: command id for the trace (0: none) */
    union {
        struct sluice_cl_queue_data queue;
        struct sluice_cl_kernel_data kernel;
    } u;
    struct sluice_cl_obj *self; /* key of the live set: the handle's own address */
    UT_hash_handle hh_real;     /* real -> handle */
    UT_hash_handle hh_self;     /* set of live handles */
};

/* The dispatch table every handle points at (generated cl/dispatch.c; absent in unit tests). */
extern const struct _cl_icd_dispatch sluice_cl_icd_dispatch __attribute__((weak));

/* Returns `h` if it is a live sluice handle of `kind` (checked through its magic), else NULL.
 * NULL-safe. Cheap: one load and a compare. */
static inline struct sluice_cl_obj *sluice_cl_valid(const void *h, int kind)
{
    struct sluice_cl_obj *o = (struct sluice_cl_obj *)h;
    return (o != NULL && o->magic == SLUICE_CL_MAGIC(kind)) ? o : NULL;
}

/* The backend object behind a handle; anything that is not a handle of `kind` goes through
 * unchanged so that the backend reports the invalid object as it would without sluice. */
static inline void *sluice_cl_in(const void *h, int kind)
{
    struct sluice_cl_obj *o = sluice_cl_valid(h, kind);
    return o ? o->real : (void *)h;
}

/* A new handle for an object a create call just returned (one program reference). If a
 * provisional handle already stands for it, that one is adopted. Returns NULL when out of memory
 * (the real object is then released). `parent` is retained. */
struct sluice_cl_obj *sluice_cl_wrap_new(int kind, void *real, struct sluice_cl_obj *parent,
                                         const struct sluice_cl_backend *be);

/* The handle for a platform or root device (created once, never freed). */
struct sluice_cl_obj *sluice_cl_wrap_persistent(int kind, void *real, struct sluice_cl_obj *parent,
                                                const struct sluice_cl_backend *be);

/* The handle of a real object returned by a query or a callback. If sluice never saw it
 * created, a provisional handle is made for it (owned by the table). NULL for NULL. */
struct sluice_cl_obj *sluice_cl_lookup(int kind, void *real, const struct sluice_cl_backend *be);

/* Same, but never creates: NULL if unknown. */
struct sluice_cl_obj *sluice_cl_find(void *real);

/* True if `h` is the address of a live handle of one of the kinds in `kind_mask` (bit per kind):
 * used to recognise handles among 8-byte kernel arguments. */
bool sluice_cl_is_live(const void *h, unsigned kind_mask);

void sluice_cl_obj_retain(struct sluice_cl_obj *o);
/* Drops one reference; at zero the handle leaves the tables, drops its parent and is freed. */
void sluice_cl_obj_release(struct sluice_cl_obj *o);

/* Calls fn on every live handle of `kind`, each retained for the duration of the call and
 * outside the table lock (fn may call the backend). */
void sluice_cl_for_each(int kind, void (*fn)(struct sluice_cl_obj *o, void *ctx), void *ctx);

/* Called when a queue handle dies: settles what it still has pending (trace_cl.c). */
void sluice_cl_queue_timing_close(struct sluice_cl_obj *queue);

/* Number of live handles (tests and the exit report). */
size_t sluice_cl_live_count(void);

#ifdef __cplusplus
}
#endif
#endif
