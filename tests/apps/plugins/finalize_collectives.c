/* SPDX-License-Identifier: MIT */
/* A preload library, put before libsluice in LD_PRELOAD, that counts the MPI collectives a process
 * makes from the moment its program calls MPI_Finalize until MPI is finalized: during that time
 * the program itself makes none, so every one counted is made by the libraries it calls into
 * (sluice's exit flush). It wraps both names (MPI_ and PMPI_) of the blocking and non-blocking
 * collectives and of MPI_Finalize, and forwards each call with dlsym(RTLD_NEXT). At the end of
 * MPI_Finalize it writes one line per collective seen into $FINALIZE_COLLECTIVES_DIR/coll.<pid>
 * ("NAME elements"), and "none" if there was none.
 * Used by tests/integration/ckpt/commit_start_vote.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_SEEN 64

static int finalizing;
static struct {
    const char *name;
    long elements;
} seen[MAX_SEEN];
static int nseen;

static void count(const char *name, long elements)
{
    if (finalizing && nseen < MAX_SEEN) {
        seen[nseen].name = name;
        seen[nseen++].elements = elements;
    }
}

#define NEXT(name) ((__typeof__(&P##name))dlsym(RTLD_NEXT, "P" #name))
#define ALIAS(name) EXPORT __typeof__(name) P##name __attribute__((alias(#name)));

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    count("MPI_Barrier", 0);
    return NEXT(MPI_Barrier)(comm);
}
ALIAS(MPI_Barrier)

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    count("MPI_Ibarrier", 0);
    return NEXT(MPI_Ibarrier)(comm, req);
}
ALIAS(MPI_Ibarrier)

EXPORT int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    count("MPI_Allreduce", n);
    return NEXT(MPI_Allreduce)(s, r, n, t, op, comm);
}
ALIAS(MPI_Allreduce)

EXPORT int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                          MPI_Request *req)
{
    count("MPI_Iallreduce", n);
    return NEXT(MPI_Iallreduce)(s, r, n, t, op, comm, req);
}
ALIAS(MPI_Iallreduce)

EXPORT int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    count("MPI_Reduce", n);
    return NEXT(MPI_Reduce)(s, r, n, t, op, root, comm);
}
ALIAS(MPI_Reduce)

EXPORT int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    int size = 0;
    PMPI_Comm_size(comm, &size);
    count("MPI_Reduce_scatter_block", (long)n * size);
    return NEXT(MPI_Reduce_scatter_block)(s, r, n, t, op, comm);
}
ALIAS(MPI_Reduce_scatter_block)

EXPORT int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    count("MPI_Bcast", n);
    return NEXT(MPI_Bcast)(b, n, t, root, comm);
}
ALIAS(MPI_Bcast)

EXPORT int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                         MPI_Comm comm)
{
    count("MPI_Allgather", sn);
    return NEXT(MPI_Allgather)(s, sn, st, r, rn, rt, comm);
}
ALIAS(MPI_Allgather)

EXPORT int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                      MPI_Comm comm)
{
    count("MPI_Gather", sn);
    return NEXT(MPI_Gather)(s, sn, st, r, rn, rt, root, comm);
}
ALIAS(MPI_Gather)

EXPORT int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                        MPI_Comm comm)
{
    count("MPI_Alltoall", sn);
    return NEXT(MPI_Alltoall)(s, sn, st, r, rn, rt, comm);
}
ALIAS(MPI_Alltoall)

static void report(void)
{
    const char *dir = getenv("FINALIZE_COLLECTIVES_DIR");
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/coll.%d", dir, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (int i = 0; i < nseen; i++)
        fprintf(f, "%s %ld\n", seen[i].name, seen[i].elements);
    if (nseen == 0)
        fprintf(f, "none\n");
    fclose(f);
}

EXPORT int MPI_Finalize(void)
{
    finalizing = 1;
    int rc = NEXT(MPI_Finalize)();
    finalizing = 0;
    report();
    return rc;
}
ALIAS(MPI_Finalize)
