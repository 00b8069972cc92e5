/* SPDX-License-Identifier: MIT */
/* See roles.h. The trace records no thread names (the runtime's threads are created by the parts
 * that own them), so a role is read from the kinds only that role records: the progress thread's
 * spells, the scheduler's DAG nodes, the two-phase write-behind thread's container writes, a
 * serving rank's messages. */
#include "roles.h"

#include <stdio.h>
#include <string.h>

#include "traceset.h"

static int count_kind(const struct sluice_trace_rthread *t, int kind)
{
    int n = 0;
    if (kind < 0)
        return 0;
    for (uint64_t e = 0; e < t->info.events; e++)
        n += t->events[e].kind == (unsigned)kind;
    return n;
}

const char *role_of_thread(const struct sluice_trace_file *f, const struct sluice_trace_rthread *t, char *buf,
                           size_t len)
{
    bool main_thread = t->info.tid == f->header.pid;
    bool server =
        count_kind(t, trace_kind_number(f, "MPI_SEND")) + count_kind(t, trace_kind_number(f, "MPI_RECV"));
    if (count_kind(t, trace_kind_number(f, "PROGRESS_SLEEP")) +
        count_kind(t, trace_kind_number(f, "PROGRESS_WAKE")))
        snprintf(buf, len, "progress%s", server ? ", OpenCL server" : "");
    else if (count_kind(t, trace_kind_number(f, "CL_DAG_NODE")))
        snprintf(buf, len, "dist scheduler");
    else if (main_thread)
        snprintf(buf, len, "main%s", server ? ", OpenCL server" : "");
    else if (server)
        snprintf(buf, len, "OpenCL server");
    else if (t->info.events && count_kind(t, trace_kind_number(f, "COMMIT_FS_WRITE")) +
                                       count_kind(t, trace_kind_number(f, "COMMIT_FS_FOR")) ==
                                   (int)t->info.events)
        snprintf(buf, len, "write-behind");
    else
        snprintf(buf, len, "thread %u", t->info.index);
    return buf;
}

static bool in_mpi_module(const struct sluice_trace_file *f, uint32_t site, bool *known)
{
    const struct sluice_trace_rcallsite *cs = site ? sluice_trace_file_callsite(f, site) : NULL;
    *known = cs != NULL && cs->depth > 0;
    if (!*known)
        return false;
    for (uint32_t i = 0; i < cs->depth; i++) {
        const struct sluice_trace_rmodule *m = sluice_trace_file_module(f, cs->frames[i]);
        if (!m)
            continue;
        const char *base = strrchr(m->path, '/');
        base = base ? base + 1 : m->path;
        if (strstr(base, "hwloc") || strncmp(base, "libmpi", 6) == 0 || strncmp(base, "libpmpi", 7) == 0)
            return true;
        /* Frames are innermost first: the first module outside OpenCL and libc is the caller. */
        if (strncmp(base, "libOpenCL", 9) != 0 && strncmp(base, "libc.so", 7) != 0 &&
            strncmp(base, "libpocl", 7) != 0)
            return false;
    }
    return false;
}

static bool is_query(const struct sluice_trace_file *f, const struct sluice_tf_event *ev, int k_call,
                     int k_dev)
{
    if ((int)ev->kind == k_dev)
        return true;
    if ((int)ev->kind != k_call)
        return false;
    const char *fn = sluice_trace_file_string(f, ev->a);
    return fn && strncmp(fn, "clGet", 5) == 0;
}

enum cl_origin cl_call_origin(const struct sluice_trace_file *f, const struct sluice_trace_rthread *t,
                              uint64_t e)
{
    bool known;
    if (in_mpi_module(f, t->events[e].callsite, &known))
        return CL_ORIGIN_HWLOC_SITE;
    if (known)
        return CL_ORIGIN_PROGRAM;
    int k_call = trace_kind_number(f, "CL_CALL"), k_dev = trace_kind_number(f, "CL_DEVICE");
    int k_init = trace_kind_number(f, "MPI_INIT");
    if (!is_query(f, &t->events[e], k_call, k_dev))
        return CL_ORIGIN_PROGRAM;
    for (uint64_t i = e + 1; i < t->info.events; i++) {
        const struct sluice_tf_event *ev = &t->events[i];
        if ((int)ev->kind == k_init)
            return CL_ORIGIN_HWLOC_INIT;
        if (!is_query(f, ev, k_call, k_dev))
            return CL_ORIGIN_PROGRAM;
    }
    return CL_ORIGIN_PROGRAM;
}

const char *cl_origin_text(enum cl_origin o)
{
    switch (o) {
    case CL_ORIGIN_HWLOC_SITE:
        return "MPI_Init: MPI's hwloc probing the OpenCL loader (call site in hwloc/libmpi), not the program";
    case CL_ORIGIN_HWLOC_INIT:
        return "MPI_Init: a query in the run that ends at MPI_INIT, as MPI's hwloc makes them (no call site "
               "recorded; SLUICE_BACKTRACE=4 tells for sure)";
    default:
        return NULL;
    }
}
