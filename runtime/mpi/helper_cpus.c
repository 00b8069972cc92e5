/* SPDX-License-Identifier: MIT */
/* Where sluice's threads run. A launcher that binds each rank to one core (Open MPI for up to 2
 * ranks, Hydra's -bind-to core, srun --cpu-bind=cores) puts sluice's threads on the program's
 * core: rank 0's scheduler thread then takes turns with the program thread, and a serving rank's
 * MPI receives with the OpenCL device's own threads. On the GPU machine (16 cores, 2 ranks bound
 * by Open MPI) a hand-written MPI + OpenCL write pipeline to a PoCL CPU device on rank 1 moved
 * 16 MiB at 3.35 GB/s bound and 6.78 GB/s unbound, and sluice's remote round trip took
 * 29.8-69.5 us bound, 25.5-34.6 us unbound (docs/PERFORMANCE.md has the figures with this).
 *
 * "auto" (the default) therefore moves sluice's threads to the CPUs of the node that no rank is
 * bound to, when the ranks are bound and such CPUs exist: rank 0's sluice threads go there
 * alone (the program keeps its binding, and its core), a serving rank's whole process may use
 * them beside its own binding. "inherit" changes nothing; a CPU list names the CPUs. The CPUs
 * looked at are the job's (its launcher process's mask: a taskset'd mpiexec keeps sluice within
 * it), and the kernel keeps every mask within the job's cpuset (sched_setaffinity intersects). */
#include "mpi/helper_cpus.h"

#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cpulist.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"
#include "mpi/wait_help.h"
#include "threads/helper_threads.h"

/* The setting (unit tests link this part without loading the configuration: the default). */
static const char *setting(void)
{
    return sluice_config.HELPER_CPUS != NULL ? sluice_config.HELPER_CPUS : "auto";
}

static int is_auto(void)
{
    return strcmp(setting(), "auto") == 0;
}

static int is_inherit(void)
{
    return strcmp(setting(), "inherit") == 0;
}

/* The CPUs the job was given on this node: those of the launcher's process that started the rank
 * (hydra's proxy, Open MPI's daemon, slurmstepd), which the launcher's own binding, taskset or a
 * cpuset limit; every configured CPU if it is not known. */
static void job_cpus(cpu_set_t *out)
{
    int root = sluice_rank_root_pid();
    int launcher = root > 0 ? sluice_proc_parent(root) : 0;
    if (launcher > 1 && sched_getaffinity((pid_t)launcher, sizeof *out, out) == 0)
        return;
    CPU_ZERO(out);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
        CPU_SET((size_t)c, out);
}

/* The CPUs of the job on this node that no rank of comm on it is bound to (`own`: this rank's). */
static void free_cpus(MPI_Comm comm, const cpu_set_t *own, cpu_set_t *out)
{
    CPU_ZERO(out);
    MPI_Comm node = MPI_COMM_NULL;
    int n = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        MPI_Comm_size(node, &n) != MPI_SUCCESS)
        return;
    cpu_set_t *all = calloc((size_t)n, sizeof *all);
    int ok = all != NULL;
    /* every member takes part even without memory, so that nobody waits */
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
    if (ok && MPI_Allgather(own, (int)sizeof *own, MPI_BYTE, all, (int)sizeof *own, MPI_BYTE, node) ==
                  MPI_SUCCESS) {
        job_cpus(out);
        for (int r = 0; r < n; r++)
            for (long c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET((size_t)c, &all[r]))
                    CPU_CLR((size_t)c, out);
    }
    free(all);
    MPI_Comm_free(&node);
}

/* Where this process runs: the union of its threads' masks (a hybrid program may have bound its
 * OpenMP threads one CPU each before its first OpenCL call; those CPUs are not free), else the
 * calling thread's. */
static void process_binding(cpu_set_t *out)
{
    CPU_ZERO(out);
    if (sched_getaffinity(0, sizeof *out, out) != 0)
        CPU_ZERO(out);
    DIR *d = SLUICE_REAL(opendir)("/proc/self/task");
    struct dirent *e;
    while (d != NULL && (e = SLUICE_REAL(readdir)(d)) != NULL) {
        cpu_set_t t;
        long tid = strtol(e->d_name, NULL, 10);
        if (tid > 0 && sched_getaffinity((pid_t)tid, sizeof t, &t) == 0)
            CPU_OR(out, out, &t);
    }
    if (d != NULL)
        SLUICE_REAL(closedir)(d);
}

void sluice_helper_cpus_plan(MPI_Comm comm, int whole_process)
{
    cpu_set_t bound, cpus;
    process_binding(&bound);
    free_cpus(comm, &bound, &cpus); /* collective: every rank takes part, whatever its setting */
    if (is_inherit())
        return;
    if (!is_auto()) {
        char err[256];
        if (sluice_cpulist_parse(setting(), &cpus, err, sizeof err) != 0)
            return; /* checked at load */
    } else if (CPU_COUNT(&cpus) == 0) {
        return; /* unbound ranks, or every CPU taken: nowhere better to go */
    } else if (whole_process) {
        CPU_OR(&cpus, &cpus, &bound);
    }
    sluice_helper_threads_move(&cpus, &bound, whole_process);
}

__attribute__((constructor(SLUICE_PRIO_MPI))) static void helper_cpus_check(void)
{
    cpu_set_t s;
    char err[256];
    if (!is_auto() && !is_inherit() && sluice_cpulist_parse(setting(), &s, err, sizeof err) != 0)
        sluice_fatal_config("SLUICE_HELPER_CPUS: %s, auto or inherit", err);
}
