/* SPDX-License-Identifier: MIT */
/* See launcher_watch.h. The exchange uses raw system calls only: it runs in constructors and on
 * the fatal path, where sluice's own wrappers of send and recv must not be entered. */
#include "mpi/launcher_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "mpi/launcher.h"
#include "mpi/pmi1_wire.h"
#include "mpi/roles.h"

#define WATCH_ANSWER_MS 30000 /* hydra's proxy answers `init` itself, at once */
#define FATAL_ANSWER_MS 5000  /* the process is ending anyway */
#define DRAIN_MS 2000         /* for the launcher to read what the process wrote last */

static atomic_bool watched; /* this process image sent `init` */

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: async-signal-safe */
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Decimal digits of an exit status (0..255) without stdio; returns their count. */
static size_t fmt_status(char *out, int status)
{
    char tmp[4];
    size_t n = 0;
    unsigned v = (unsigned)status & 0xffu;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* PMI-1's first request, the one MPI's start-up begins with and repeats later without harm.
 * Returns 0 once answered, -1 if the socket fails, -2 after wait_ms. */
static int pmi_init_exchange(int fd, int wait_ms)
{
    return sluice_pmi1_call(fd, "cmd=init pmi_version=1 pmi_subversion=1\n", NULL, 0, wait_ms);
}

/* Bytes written to fd that its reader has not taken yet: the launcher's pipe or socket that
 * forwards the rank's stdout or stderr; 0 for anything else (a file, a terminal). */
static int unread(int fd)
{
    struct stat st;
    int n = 0;
    if (syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) != 0)
        return 0;
    if (S_ISFIFO(st.st_mode) && syscall(SYS_ioctl, fd, FIONREAD, &n) == 0)
        return n;
    if (S_ISSOCK(st.st_mode) && syscall(SYS_ioctl, fd, SIOCOUTQ, &n) == 0)
        return n;
    return 0;
}

/* Waits (at most DRAIN_MS) until the launcher has read the process's stdout and stderr: the abort
 * ends the job at once, and the line that says why must not die in the pipe. The launcher's proxy
 * forwards what it reads before it reads the abort that follows. */
void sluice_launcher_drain_output(void)
{
    long deadline = now_ms() + DRAIN_MS;
    while ((unread(1) > 0 || unread(2) > 0) && now_ms() < deadline) {
        struct timespec t = {.tv_sec = 0, .tv_nsec = 2000000};
        syscall(SYS_nanosleep, &t, NULL);
    }
}

/* The rank's own process: the launcher's child, or the first preloaded process of a rank whose
 * own process has no sluice (a shell that runs the program with LD_PRELOAD set). Only it may
 * speak on the rank's PMI socket before MPI: its children share the socket. */
static bool rank_own_process(void)
{
    if (sluice_launcher_child())
        return true;
    int root = sluice_rank_root_pid();
    return root > 0 && !sluice_process_preloaded(root);
}

/* PMI-1's abort: the launcher ends every rank of the job and exits with status. */
static void send_abort(int fd, int status)
{
    char req[48] = "cmd=abort exitcode=";
    size_t n = strlen(req);
    n += fmt_status(req + n, status);
    req[n++] = '\n';
    sluice_pmi1_send(fd, req, n);
}

/* The rank's PMI socket where this process may speak on it: a job of more than one rank under a
 * PMI-1 launcher (PMI_FD), in a process that has not started MPI; -1 otherwise. */
static int pmi_fd(void)
{
    const struct sluice_launch *l = sluice_launch_current();
    if (l->kind != SLUICE_LAUNCHER_HYDRA || l->pmi_fd < 0 || l->size < 2 || !sluice_mpi_untouched())
        return -1;
    int type = 0;
    socklen_t len = sizeof type;
    if (syscall(SYS_getsockopt, l->pmi_fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        return -1; /* closed by a parent (Python's subprocess) or not a socket */
    return rank_own_process() ? l->pmi_fd : -1;
}

bool sluice_launcher_watch(void)
{
    /* Only hydra: Slurm's pmi2 plugin accepts `init` once per task, and MPI's own would then fail
     * ("invalid pmi1 command received: 'init'", Slurm 22.05). */
    int fd = pmi_fd();
    if (fd < 0 || atomic_load(&watched) || sluice_pmi_server() != SLUICE_PMI_HYDRA)
        return false;
    atomic_store(&watched, true);
    int rc = pmi_init_exchange(fd, WATCH_ANSWER_MS);
    if (rc == -2)
        sluice_log_warn(
            "the launcher did not answer on its PMI socket (PMI_FD=%d) within %d s; if a rank ends "
            "before MPI starts, the job may wait for it",
            fd, WATCH_ANSWER_MS / 1000);
    return rc == 0;
}

/* The rank's PMI socket in the process whose MPI is up, under hydra with more than one rank; -1
 * otherwise. MPI speaks on it only at start, end and spawn: at a fatal error it is quiet. */
static int mpi_pmi_fd(void)
{
    const struct sluice_launch *l = sluice_launch_current();
    int type = 0;
    socklen_t len = sizeof type;
    if (l->kind != SLUICE_LAUNCHER_HYDRA || l->pmi_fd < 0 || l->size < 2 || !sluice_mpi_ready() ||
        sluice_pmi_server() != SLUICE_PMI_HYDRA ||
        syscall(SYS_getsockopt, l->pmi_fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        return -1;
    return l->pmi_fd;
}

void sluice_launcher_watch_fatal(int status)
{
    int fd = pmi_fd();
    if (fd < 0 && (fd = mpi_pmi_fd()) >= 0) {
        /* MPI is up: PMI's abort ends every rank with this status. Without it the launcher
         * killed the others at this rank's exit and reported whichever status it collected
         * first: 9 (a rank it killed) instead of 2 in a loaded run of cl_long_strings. */
        sluice_launcher_drain_output();
        send_abort(fd, status);
        return;
    }
    if (fd < 0 || sluice_pmi_server() == SLUICE_PMI_OTHER)
        return;
    if (!atomic_exchange(&watched, true) && pmi_init_exchange(fd, FATAL_ANSWER_MS) != 0)
        return;
    sluice_launcher_drain_output();
    send_abort(fd, status);
}
