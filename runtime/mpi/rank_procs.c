/* SPDX-License-Identifier: MIT */
/* The processes of one rank on this node (roles.h): which of them the launcher started, found
 * from /proc with raw system calls (sluice wraps open and read for capture, and these reads are
 * not the program's I/O). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fd_guard.h"
#include "common/proc_stat.h"
#include "mpi/launcher.h"
#include "mpi/roles.h"

/* Reads up to cap-1 bytes of a /proc file, NUL-terminated; returns the length or -1. */
static long read_proc(int pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, what);
    int fd = sluice_fd_guard_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        long r = syscall(SYS_read, fd, buf + n, cap - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    syscall(SYS_close, fd);
    buf[n] = '\0';
    return (long)n;
}

int sluice_proc_parent(int pid)
{
    char buf[512];
    if (read_proc(pid, "stat", buf, sizeof buf) <= 0)
        return 0;
    const char *p = sluice_proc_stat_field(buf, 4); /* the parent's pid */
    return p ? atoi(p) : 0;
}

static bool is_slurmstepd(int pid)
{
    char comm[64];
    return read_proc(pid, "comm", comm, sizeof comm) > 0 && strncmp(comm, "slurmstepd", 10) == 0;
}

int sluice_launcher_pid(const struct sluice_launch *l)
{
    if (l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd >= 0) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(l->pmi_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
            return cred.pid;
    }
    return l->anchor_pid;
}

enum sluice_pmi_server sluice_pmi_server(void)
{
    const struct sluice_launch *l = sluice_launch_current();
    int lpid = l->kind == SLUICE_LAUNCHER_HYDRA ? sluice_launcher_pid(l) : 0;
    char comm[64];
    if (lpid <= 0 || read_proc(lpid, "comm", comm, sizeof comm) <= 0)
        return SLUICE_PMI_OTHER;
    if (strcmp(comm, "hydra_pmi_proxy\n") == 0)
        return SLUICE_PMI_HYDRA;
    return strncmp(comm, "slurmstepd", 10) == 0 ? SLUICE_PMI_SLURM : SLUICE_PMI_OTHER;
}

static bool started_by_launcher(const struct sluice_launch *l, int lpid, int pid, int ppid)
{
    (void)pid;
    if (lpid > 0)
        return ppid == lpid;
    return (l->kind == SLUICE_LAUNCHER_SLURM || l->kind == SLUICE_LAUNCHER_PMIX) && is_slurmstepd(ppid);
}

int sluice_rank_root_pid(void)
{
    const struct sluice_launch *l = sluice_launch_current();
    if (l->kind == SLUICE_LAUNCHER_NONE)
        return (int)getpid();
    int lpid = sluice_launcher_pid(l);
    int pid = (int)getpid();
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        int ppid = sluice_proc_parent(pid);
        if (started_by_launcher(l, lpid, pid, ppid))
            return pid;
        pid = ppid;
    }
    return 0;
}

bool sluice_launcher_child(void)
{
    const struct sluice_launch *l = sluice_launch_current();
    if (l->kind == SLUICE_LAUNCHER_NONE)
        return true;
    return started_by_launcher(l, sluice_launcher_pid(l), (int)getpid(), (int)getppid());
}

bool sluice_process_preloaded(int pid)
{
    /* maps can be long; read it in pieces and look for the library's file name */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    int fd = sluice_fd_guard_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return false;
    static const char needle[] = "/libsluice.so";
    char buf[8192 + sizeof needle];
    size_t keep = 0;
    bool found = false;
    for (;;) {
        long r = syscall(SYS_read, fd, buf + keep, sizeof buf - 1 - keep);
        if (r <= 0)
            break;
        size_t n = keep + (size_t)r;
        buf[n] = '\0';
        if (strstr(buf, needle)) {
            found = true;
            break;
        }
        keep = n < sizeof needle ? n : sizeof needle - 1;
        memmove(buf, buf + n - keep, keep);
    }
    syscall(SYS_close, fd);
    return found;
}
