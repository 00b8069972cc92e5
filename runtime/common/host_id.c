/* SPDX-License-Identifier: MIT */
#include "common/host_id.h"

#include "common/hash.h"
#include "common/host_name.h"

#include "common/fd_guard.h"
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t host_hash(void)
{
    uint64_t h = SLUICE_FNV_INIT;
    char boot[64];
    long n = -1;
    int fd = sluice_fd_guard_openat(AT_FDCWD, "/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC, 0);
    if (fd >= 0) {
        n = syscall(SYS_read, fd, boot, sizeof boot);
        syscall(SYS_close, fd);
    }
    if (n > 0)
        h = sluice_fnv1a(h, boot, (uint64_t)n);
    struct stat st; /* the PID namespace's inode: one per node of the testbed, per container */
    if (syscall(SYS_newfstatat, AT_FDCWD, "/proc/self/ns/pid", &st, 0) == 0) {
        h = sluice_fnv1a(h, &st.st_dev, sizeof st.st_dev);
        h = sluice_fnv1a(h, &st.st_ino, sizeof st.st_ino);
    }
    char host[SLUICE_HOST_NAME_MAX + 1];
    sluice_host_name(host);
    return sluice_fnv1a(h, host, strlen(host));
}

static void format_id(uint64_t h, char *buf)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SLUICE_HOST_ID_LEN; i++)
        buf[i] = hex[(h >> (4 * (SLUICE_HOST_ID_LEN - 1 - i))) & 15];
    buf[SLUICE_HOST_ID_LEN] = '\0';
}

/* The id of this process's host, computed once per process: a stage scan checks it for every
 * entry (4 system calls each before). Keyed on the pid, since a child may live in another PID
 * namespace (unshare): a forked child sees its parent's pid here and computes its own. Every
 * thread of one process computes the same value, so a race between them stores equal values. */
static _Atomic uint64_t cached_hash;
static _Atomic long cached_pid;

static uint64_t my_hash(void)
{
    long pid = syscall(SYS_getpid);
    if (atomic_load_explicit(&cached_pid, memory_order_acquire) == pid)
        return atomic_load_explicit(&cached_hash, memory_order_relaxed);
    uint64_t h = host_hash();
    atomic_store_explicit(&cached_hash, h, memory_order_relaxed);
    atomic_store_explicit(&cached_pid, pid, memory_order_release);
    return h;
}

/* The cached value too, so that an id written and one compared agree within a process. */
void sluice_host_id(char *buf)
{
    format_id(my_hash(), buf);
}

int sluice_host_id_is_mine(const char *id)
{
    if (id[0] == '\0')
        return 1;
    char mine[SLUICE_HOST_ID_LEN + 1];
    format_id(my_hash(), mine);
    return strcmp(id, mine) == 0;
}
