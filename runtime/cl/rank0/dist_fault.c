/* SPDX-License-Identifier: MIT */
/* Fault handling of distributed OpenCL (dist_fault.h, docs/FAULTS.md).
 *
 * Two ways a job ends on a fault, both with exactly one sluice line naming the rank:
 *  - an MPI call between ranks fails (the transport calls dist_fault_peer): the line, then
 *    MPI_Abort on sluice's communicator, which ends every rank (exit code SLUICE_DIST_FAULT_EXIT);
 *  - a serving rank dies of a catchable signal: its own handler prints the line and lets the
 *    signal kill it; MPICH's launcher then kills every other rank (SIGKILL) at once.
 * A SIGKILL leaves no process a chance to speak: the launcher's banner is all there is.
 * A serving rank that exits with a non-zero status (exit or _exit inside the driver) says so
 * before it goes. Rank 0 leaving through _exit finalizes as exit() would (dist_fault_before_exit),
 * so the servers end cleanly and the job's exit code is the program's. */
#include "cl/rank0/dist_fault.h"
#include "common/exit_hooks.h"
#include "common/init_order.h"
#include "common/real.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cl/intercept/info_text.h"
#include "cl/intercept/wrap.h"
#include "cl/rank0/dist.h"
#include "cl/rank0/dist_internal.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/signal_chain.h"
#include "mpi/launcher_watch.h"
#include "mpi/roles.h"
#include "trace/trace.h"

static atomic_int ending;

/* Rank 0: the names of each rank's devices, "a, b" (truncated with "..."), from enumeration. */
static char rank_devices[DIST_MAX_RANKS][200];

bool dist_fault_ending(void)
{
    return atomic_load(&ending) != 0;
}

/* Appends `name` to a comma-separated list in `buf`, ending it with "..." when it is full. */
static void list_append(char *buf, size_t size, const char *name)
{
    size_t used = strlen(buf);
    if (used >= 3 && strcmp(buf + used - 3, "...") == 0)
        return;
    int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
    if (n < 0 || (size_t)n >= size - used)
        snprintf(buf + (size > 4 ? size - 4 : 0), size > 4 ? 4 : size, "...");
}

void dist_fault_note_device(int rank, const char *name)
{
    if (rank >= 0 && rank < DIST_MAX_RANKS && name != NULL)
        list_append(rank_devices[rank], sizeof rank_devices[rank], name);
}

const char *dist_fault_devices(int rank)
{
    return rank > 0 && rank < DIST_MAX_RANKS && rank_devices[rank][0] ? rank_devices[rank] : "unknown";
}

static void exit_at_once(void)
{
    sluice_trace_exit_now(SLUICE_DIST_FAULT_EXIT);
    SLUICE_REAL(_exit)(SLUICE_DIST_FAULT_EXIT);
}

void dist_fault_peer(int rank, int mpi_rc, const char *what)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&ending, &expected, 1)) {
        /* Another thread is ending the job: its MPI_Abort takes this process down too. */
        for (;;)
            pause();
    }
    /* MPI is bound lazily: no PMPI call unless sluice's MPI is up (it always is once serving). */
    bool mpi = sluice_mpi_ready();
    char err[MPI_MAX_ERROR_STRING] = "the peer is gone";
    int elen = 0;
    if (mpi_rc != MPI_SUCCESS && (!mpi || PMPI_Error_string(mpi_rc, err, &elen) != MPI_SUCCESS))
        snprintf(err, sizeof err, "MPI error %d", mpi_rc);
    const char *devs = rank > 0 && rank < DIST_MAX_RANKS ? rank_devices[rank] : "";
    if (rank == 0)
        sluice_log_error(
            "distributed OpenCL: rank 0 (the program) failed while %s: %s; ending the job (exit code %d)",
            what, err, SLUICE_DIST_FAULT_EXIT);
    else
        sluice_log_error(
            "distributed OpenCL: serving rank %d (%s%s) failed while %s: %s; ending the job (exit code %d)",
            rank, devs[0] ? "devices: " : "devices unknown", devs, what, err, SLUICE_DIST_FAULT_EXIT);
    if (mpi) {
        /* The abort ends every process at once, and under load the line above died in the pipe:
         * the line reaches the launcher first (at most 2 s). Also where MPI itself failed: an
         * error code does not say the peer is gone (a cut link, a refused message), and where it
         * is, the launcher ends the job meanwhile with the peer's status, which is as true. */
        sluice_launcher_drain_output();
        /* MPI_Abort exits through exit(): sluice's exit work must not talk to the aborted job. */
        sluice_mpi_abandon();
        /* ... and that exit must be quick: a handler registered now runs first and ends the
         * process at once. MPI_COMM_WORLD (sluice's communicator is its duplicate): MPICH sends an
         * abort of another communicator to each member itself, and rank 0 sat in that send to a
         * stopped rank while the other ranks, ended from their progress with the code, made
         * Hydra kill it (mpiexec said 9, SIGKILL, in 2 of 3 runs of cl_conf_stopped_rank); the
         * world's abort goes to the process manager, which ends every rank and reports 86. */
        atexit(exit_at_once);
        PMPI_Abort(MPI_COMM_WORLD, SLUICE_DIST_FAULT_EXIT); /* every rank: none is left waiting */
    }
    SLUICE_REAL(_exit)(SLUICE_DIST_FAULT_EXIT); /* MPI_Abort returned, or there is no MPI to end the others */
}

/* ---- a serving rank's fatal signals -------------------------------------------------------- */

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM};
static const char *const fatal_names[] = {"Segmentation fault",       "Bus error",           "Aborted",
                                          "Floating point exception", "Illegal instruction", "Terminated"};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sluice_signal_chain chain;
static pid_t server_pid;
static int server_rank;
static char server_devices[200];
/* "sluice[2]: distributed OpenCL: serving rank 2 (devices: ...) died of signal " */
static char line_head[512];
static size_t line_head_len;

static int fatal_index(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig)
            return (int)i;
    return -1;
}

/* Async-signal-safe: the head was formatted before serving; only the signal is added here. */
static void say_died(int sig, int i)
{
    char line[sizeof line_head + 96];
    size_t n = line_head_len;
    memcpy(line, line_head, n);
    char digits[12];
    int nd = 0;
    for (unsigned v = (unsigned)sig; v > 0 || nd == 0; v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    while (nd > 0)
        line[n++] = digits[--nd];
    const char *parts[] = {" (", fatal_names[i], "); the job ends\n"};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        size_t len = strlen(parts[k]);
        memcpy(line + n, parts[k], len);
        n += len;
    }
    sluice_log_raw(line, n);
}

/* Says which rank died, then lets the signal kill the process, which makes MPICH's launcher kill
 * every other rank. The handler that was there runs first (the trace core's writes the trace;
 * LLVM's, in PoCL, swallows a signal sent by kill once and restores its own predecessor): then
 * the signal is raised again, so that a sent signal, which does not recur by itself as a fault
 * does, still ends the server after its line was printed. */
static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    int i = fatal_index(sig);
    /* A SIGTERM from the launcher (our parent) is the job being ended, not this rank failing. */
    bool from_launcher =
        sig == SIGTERM && info != NULL && info->si_code == SI_USER && info->si_pid == getppid();
    int expected = 0;
    if (i >= 0 && getpid() == server_pid && !from_launcher &&
        atomic_compare_exchange_strong(&ending, &expected, 1))
        say_died(sig, i);
    sluice_signal_chain_call_previous(&chain, sig, info, uctx);
    struct sigaction now;
    if (sluice_real_sigaction(sig, NULL, &now) == 0 &&
        (((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_fatal_signal) ||
         (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN))) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sluice_real_sigaction(sig, &dfl, NULL);
    }
    /* Blocked until this handler returns, then delivered to whatever handles it now. */
    syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
    errno = saved;
}

/* The names of this rank's devices, asked of the real loader (the server lists them anyway). */
static void own_devices(char *buf, size_t size)
{
    const struct sluice_cl_api *A = sluice_cl_raw_api();
    cl_platform_id plats[16];
    cl_uint np = 0;
    buf[0] = '\0';
    if (A->clGetPlatformIDs == NULL || A->clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
        return;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id devs[32];
        cl_uint nd = 0;
        if (A->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 32, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 32; d++) {
            char *name = sluice_cl_device_text(A->clGetDeviceInfo, devs[d], CL_DEVICE_NAME);
            if (name != NULL)
                list_append(buf, size, name); /* a long list ends with "..." */
            free(name);
        }
    }
}

/* True when the MPI library is on the stack: MPICH ends every other rank of an MPI_Abort with
 * exit(code) from inside its progress engine (measured: the serving loop's MPI_Iprobe). That
 * exit is the aborting rank's to explain, not this one's. */
static bool exit_from_mpi(void)
{
    Dl_info mpi, di;
    void *probe = sluice_real_dlsym(RTLD_DEFAULT, "PMPI_Iprobe");
    if (probe == NULL || !dladdr(probe, &mpi))
        return false;
    void *frames[64];
    int n = backtrace(frames, 64);
    for (int i = 0; i < n; i++)
        if (dladdr(frames[i], &di) && di.dli_fbase == mpi.dli_fbase)
            return true;
    return false;
}

/* A server ends with exit(0) once rank 0 says so: any other status is the driver (or a library
 * under it: LLVM's report_fatal_error calls exit(1)) giving up while serving. */
static void say_exited(int status)
{
    int expected = 0;
    if (status != 0 && getpid() == server_pid && !exit_from_mpi() &&
        atomic_compare_exchange_strong(&ending, &expected, 1))
        sluice_log_error(
            "distributed OpenCL: serving rank %d (%s%s) exited with status %d while serving; the job ends",
            server_rank, server_devices[0] ? "devices: " : "no devices", server_devices, status);
}

static void at_exit(int status, void *arg)
{
    (void)arg;
    say_exited(status);
}

void dist_fault_serving(int rank)
{
    /* Asking for the devices starts the platform (PoCL loads LLVM, which installs its own signal
     * handlers): the handlers below come after, so they run first and see who sent a signal. */
    char *devs = server_devices;
    own_devices(devs, sizeof server_devices);
    server_rank = rank;
    on_exit(at_exit, NULL);
    int n = snprintf(line_head, sizeof line_head,
                     "sluice[%d]: distributed OpenCL: serving rank %d (%s%s) died of signal ", rank, rank,
                     devs[0] ? "devices: " : "no devices", devs);
    line_head_len = n < 0 ? 0 : (size_t)n < sizeof line_head ? (size_t)n : sizeof line_head - 1;
    server_pid = getpid();
    sluice_signal_chain_install(&chain, fatal_signals, NFATAL, on_fatal_signal);
}

/* Runs before every other part's exit work (destructors run from the highest priority down). When
 * MPI itself is ending this process (another rank's MPI_Abort, delivered inside an MPI call),
 * sluice's finalize hooks and MPI_Finalize would fail on the aborted job ("Assertion failed",
 * "Internal error"): they are skipped. So they are on a server leaving while MPI is still up: its
 * normal end finalizes MPI before exit(0), so this is the driver exiting in the middle of serving,
 * and the others are to be ended by the launcher, not waited for. */
__attribute__((destructor(SLUICE_PRIO_OPENCL + 1))) static void mpi_ending_us(void)
{
    bool server = server_pid != 0 && server_pid == getpid();
    if (!(server || sluice_cl_dist_active()) || !sluice_mpi_ready())
        return;
    if (server || exit_from_mpi())
        sluice_mpi_abandon();
}

/* ---- rank 0 leaving through _exit ---------------------------------------------------------- */

void dist_fault_before_exit(int status)
{
    if (server_pid != 0)
        say_exited(status);
    else if (sluice_cl_dist_active() || dist_rank0_leaving())
        sluice_mpi_finalize_before_exit();
}

/* _exit and _Exit (common/exit_hooks.h): after capture's hook; the status is left as it is. */
static int exit_hook(int status)
{
    dist_fault_before_exit(status);
    return status;
}

__attribute__((constructor(SLUICE_PRIO_OPENCL))) static void dist_fault_register_exit(void)
{
    sluice_exit_hook_add(SLUICE_EXIT_ORDER_OPENCL, exit_hook);
}
