/* SPDX-License-Identifier: MIT */
/* Native kernels across ranks (clEnqueueNativeKernel, docs/DISTRIBUTED.md). A host function's
 * address means nothing in another process (ASLR, PIE), so it travels as the object file it is in
 * and its offset from that object's load bias; the serving rank finds the same object among its
 * own modules and runs the function there, on its copy of the arguments, with the pointer slots
 * of the memory objects holding its own storage of them (the driver's clEnqueueNativeKernel). */
#ifndef SLUICE_CL_SERVE_REMOTE_NATIVE_H
#define SLUICE_CL_SERVE_REMOTE_NATIVE_H

#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "cl/serve/remote_proto.h"

/* A function as another process can find it: its object by GNU build-id, or, for an object
 * without one, by the file's device, inode and size; then its offset from the load bias. */
struct sluice_native_fn {
    uint8_t build_id[64];
    uint32_t id_len; /* 0: none, dev/ino/size name the file */
    uint32_t pad;
    uint64_t dev, ino, size;
    uint64_t offset;
    char name[256]; /* the object's path in the sending process (for messages) */
};

/* One memory object of CMD_NATIVE: where its pointer slot is in the arguments, its rid here. */
struct sluice_native_mem {
    uint64_t loc;
    uint64_t mem;
};

/* The function at `addr` of this process as *out; 0 when no loaded object holds it (executable
 * code of a module: not a JIT buffer or the stack). */
int sluice_native_identify(const void *addr, struct sluice_native_fn *out);
/* This process's executable as *out (offset 0); 0 when it cannot be named. */
int sluice_native_program(struct sluice_native_fn *out);
/* The address in this process of the function `fn` names; NULL when its object is not loaded. */
void *sluice_native_resolve(const struct sluice_native_fn *fn);

/* OBJ NATIVE_FIND (remote_objects.h): bytes one struct sluice_native_fn -> CL_SUCCESS when this
 * process has that object loaded, else CL_INVALID_OPERATION. */
void sluice_remote_native_find(const unsigned char *p, size_t len, struct sluice_remote_msg *out);
/* CMD_NATIVE on queue q (a0 cb_args, a1 number of memory objects; bytes: struct sluice_native_fn,
 * the struct sluice_native_mem of each, then the arguments): the driver's clEnqueueNativeKernel. */
cl_int sluice_remote_native_cmd(cl_command_queue q, const struct sluice_req_native *a, const unsigned char *p,
                                size_t len, cl_uint nw, const cl_event *wl, cl_event *ev);

#endif
