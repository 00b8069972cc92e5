/* SPDX-License-Identifier: MIT */
/* See node_report.h. The watcher is started with clone(CLONE_VM | CLONE_VFORK) and execve, as
 * posix_spawn does (no copy of the rank's memory), through a child without an exit signal (the
 * program's SIGCHLD handler and wait() never see it), with no environment (it must not preload sluice) and
 * with /dev/null for its standard streams (the launcher must not wait for it to close the rank's pipes).
 * System calls are raw: sluice's own wrappers must not be entered. */
#include "mpi/node_report.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "config/config.h"
#include "mpi/claim.h"
#include "mpi/launcher.h"
#include "mpi/roles.h"

#define STACK_SIZE (64 * 1024)

struct spawn {
    const char *path;
    char *const *argv;
};

/* The grandchild: the watcher's program, with /dev/null for its streams and no environment. */
static int spawn_exec(void *arg)
{
    const struct spawn *s = arg;
    char *const envp[] = {NULL};
    long null = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        if (null != fd)
            syscall(SYS_dup3, null, fd, 0);
    if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
        for (int fd = 3; fd < 4096; fd++)
            syscall(SYS_close, fd);
    syscall(SYS_execve, s->path, s->argv, envp);
    syscall(SYS_exit, 127);
    return 127;
}

/* The child: starts the grandchild and waits for its first process, whose status it ends with.
 * An exec resets the exit signal to SIGCHLD: only this child, which never execs, keeps none,
 * so the rank's program never sees a SIGCHLD; the grandchild's goes to this child. */
static int spawn_middle(void *arg)
{
    static char stack[STACK_SIZE] __attribute__((aligned(16)));
    int pid = clone(spawn_exec, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
    int status = 0;
    if (pid <= 0 || syscall(SYS_wait4, pid, &status, __WALL, NULL) != pid)
        syscall(SYS_exit, 126);
    syscall(SYS_exit, WIFEXITED(status) ? WEXITSTATUS(status) : 125);
    return 125;
}

/* Runs path with argv (the watcher forks itself away and its first process ends); returns that
 * first process's exit status, or -1 if it could not be started at all. */
static int spawn_wait(const char *path, char *const *argv)
{
    static char stack[STACK_SIZE] __attribute__((aligned(16)));
    struct spawn s = {.path = path, .argv = argv};
    sigset_t all, old;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(long)); /* none in the children */
    int pid = clone(spawn_middle, stack + sizeof stack, CLONE_VM | CLONE_VFORK, &s);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(long));
    if (pid <= 0)
        return -1;
    int status = 0;
    long r;
    do
        r = syscall(SYS_wait4, pid, &status, __WCLONE, NULL);
    while (r < 0 && errno == EINTR);
    return r == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* "a,b,c" of n numbers; NULL if out of memory. */
static char *join(const int *v, int n)
{
    size_t len = (size_t)n * 12 + 1;
    char *s = malloc(len), *at = s;
    if (!s)
        return NULL;
    *s = '\0';
    for (int i = 0; i < n; i++)
        at += snprintf(at, len - (size_t)(at - s), "%s%d", i ? "," : "", v[i]);
    return s;
}

bool sluice_node_report_on(void)
{
    const char *value = sluice_config.NODE_REPORT;
    if (!value || !*value)
        return false;
    sluice_launcher_kind kind = sluice_launch_current()->kind;
    return !(kind == SLUICE_LAUNCHER_SLURM || kind == SLUICE_LAUNCHER_PMIX ||
             sluice_pmi_server() == SLUICE_PMI_SLURM);
}

/* what.<rank> in this rank's claim folder, for its node's watcher. */
static void mark(const char *what, int rank)
{
    const char *folder = sluice_claim_owned_folder();
    char path[4096 + 160];
    if (!folder || snprintf(path, sizeof path, "%s/%s.%d", folder, what, rank) >= (int)sizeof path)
        return;
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        syscall(SYS_close, fd);
}

void sluice_node_report_finalized(int rank)
{
    mark("fin", rank);
}

void sluice_node_report_aborting(void)
{
    if (sluice_node_report_on())
        mark("abort", sluice_launch_current()->rank);
}

void sluice_node_report_start(const char *host, const int *ranks, const int *pids, int n)
{
    const char *value = sluice_config.NODE_REPORT;
    if (!sluice_node_report_on())
        return;
    /* ADDRESSES:PORT:TOKEN:LAUNCHER (tools/sluice/job_watch.c) */
    const char *path = value;
    for (int colons = 0; colons < 3 && path; colons++)
        path = (path = strchr(path, ':')) ? path + 1 : NULL;
    if (!path || path[0] != '/') {
        sluice_log_warn(
            "SLUICE_NODE_REPORT=%s: not what sluice --watch-nodes sets; a node whose processes all "
            "die will not be named",
            value);
        return;
    }
    char *rank_list = join(ranks, n), *pid_list = join(pids, n);
    const char *folder = sluice_claim_owned_folder(); /* where the ranks mark their finalize */
    char *marks = (char *)(folder ? folder : "-");
    char *argv[] = {(char *)path, "--node-helper", (char *)value, (char *)host,
                    rank_list,    pid_list,        marks,         NULL};
    int status = rank_list && pid_list ? spawn_wait(path, argv) : -1;
    if (status != 0)
        sluice_log_warn(
            "node %s's watcher for sluice --watch-nodes did not start (%s %s): if all its processes "
            "die, the node will not be named",
            host, path,
            status == 127 ? "cannot be run on this node"
            : status == 3 ? "could not reach the wrapper"
                          : "could not be started");
    free(rank_list);
    free(pid_list);
}
