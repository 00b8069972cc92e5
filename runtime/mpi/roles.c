/* SPDX-License-Identifier: MIT */
/* MPI roles (roles.h, lifecycle.h): who this process is, sluice's private communicator, and
 * the application's MPI life cycle as sluice changes it.
 *
 * States of this process's MPI, as sluice sees it:
 *   IDLE      nobody initialized MPI yet; sluice_comm() may initialize it (after claiming the
 *             rank, claim.h) and MPI_Init from the application initializes it.
 *   READY     MPI is initialized with MPI_THREAD_MULTIPLE and sluice has its own duplicate of
 *             MPI_COMM_WORLD (errors return, never abort).
 *   UNUSABLE  sluice will not use MPI here: a forked child of a process that used it, another
 *             process of the rank owns MPI, the library gave less than MPI_THREAD_MULTIPLE, or
 *             initialization failed. sluice_comm() returns MPI_COMM_NULL.
 *   FINALIZED MPI was finalized.
 *
 * Who initialized MPI matters: if sluice did (lazily, for a feature), it also finalizes it at
 * exit, and the application does not see it (MPI_Initialized says 0, a later MPI_Init of the
 * application just takes over the initialized library). If the application did and never
 * calls MPI_Finalize, sluice leaves it that way, as it would be without sluice. */
#include "mpi/roles.h"
#include "mpi/tags.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/claim.h"
#include "mpi/launcher.h"
#include "mpi/launcher_watch.h"
#include "mpi/library.h"
#include "mpi/lifecycle.h"
#include "mpi/node_vote.h"
#include "mpi/start_vote.h"
#include "mpi/wait_help.h"
#include "progress/control.h"
#include "trace/clocksync.h"
#include "trace/trace.h"

/* The next MPI_Init_thread/MPI_Init/MPI_Finalize after sluice's own (shim/mpi.c exports the PMPI_
 * names too, so a call by name would come back here): a tool preloaded after sluice, or the
 * library. A program that links libsluice after MPI has nothing after sluice: the library's own
 * definition then. NULL (MPI_ERR_OTHER) where MPI is not loaded. */
static void *next_mpi(const char *name, void *_Atomic *slot)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (p == NULL && (p = sluice_real_resolve(name, slot)) == NULL &&
        (p = sluice_mpi_library_symbol(name)) != NULL)
        atomic_store_explicit(slot, p, memory_order_release);
    return p;
}

static int next_init_thread(int *argc, char ***argv, int required, int *provided)
{
    static void *_Atomic slot;
    __typeof__(&PMPI_Init_thread) f = (__typeof__(&PMPI_Init_thread))next_mpi("PMPI_Init_thread", &slot);
    return f ? f(argc, argv, required, provided) : MPI_ERR_OTHER;
}

static int next_init(int *argc, char ***argv)
{
    static void *_Atomic slot;
    __typeof__(&PMPI_Init) f = (__typeof__(&PMPI_Init))next_mpi("PMPI_Init", &slot);
    return f ? f(argc, argv) : MPI_ERR_OTHER;
}

static int next_finalize(void)
{
    static void *_Atomic slot;
    __typeof__(&PMPI_Finalize) f = (__typeof__(&PMPI_Finalize))next_mpi("PMPI_Finalize", &slot);
    return f ? f() : MPI_ERR_OTHER;
}

#define MAX_HOOKS 32

enum mpi_state { ST_IDLE, ST_READY, ST_UNUSABLE, ST_FINALIZED };

static struct {
    pthread_mutex_t lock;
    _Atomic int state;
    MPI_Comm comm;
    bool sluice_initialized; /* sluice called PMPI_Init_thread in this process (ever) */
    bool app_initialized;    /* the application called MPI_Init(_thread) and it succeeded */
    bool app_finalized;
    int lib_provided; /* what PMPI_Init_thread gave */
    int app_provided; /* what the application was told */
    void (*hooks[MAX_HOOKS])(void);
    int nhooks, hooks_run;
    void (*comm_hooks[MAX_HOOKS])(MPI_Comm);
    int ncomm_hooks;
    int owner_pid; /* the rank's MPI belongs to this other process (claim refused) */
    bool claimed;  /* this process owns the rank's MPI (claim.h) */
    bool voted;    /* this process took part in the start vote (start_vote.h) */
    void (*init_hooks[MAX_HOOKS])(void);
    int ninit_hooks;
} R = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, .state = ST_IDLE};
/* R.lock is recursive because MPI initialization runs under it and may fork (Open MPI's
 * singleton init starts orted): our own pthread_atfork prepare handler then takes the lock
 * again on the same thread. */

/* Launcher detection happens once, on first use: the trace part's constructor runs before
 * ours and already asks for the rank. */
static pthread_once_t launch_once = PTHREAD_ONCE_INIT;
static struct sluice_launch launch;
static char launch_warning[256];

static const char *getenv_cb(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

static void detect_launcher(void)
{
    sluice_launch_detect(getenv_cb, NULL, &launch, launch_warning, sizeof launch_warning);
}

static const struct sluice_launch *L(void)
{
    pthread_once(&launch_once, detect_launcher);
    return &launch;
}

const struct sluice_launch *sluice_launch_current(void)
{
    return L();
}

int sluice_launch_rank(void)
{
    return L()->rank;
}
int sluice_launch_size(void)
{
    return L()->size;
}
bool sluice_under_launcher(void)
{
    return L()->kind != SLUICE_LAUNCHER_NONE;
}

bool sluice_mpi_ready(void)
{
    return atomic_load_explicit(&R.state, memory_order_acquire) == ST_READY;
}

bool sluice_mpi_untouched(void)
{
    return atomic_load_explicit(&R.state, memory_order_acquire) == ST_IDLE && !R.sluice_initialized &&
           !R.app_initialized;
}

static bool active(void)
{
    return sluice_config.any_set;
}

/* ---- initialization ----------------------------------------------------------------------- */

/* Claims this launcher rank for MPI. False if another process of the rank owns it. */
static bool claim_rank(const char *who)
{
    const struct sluice_launch *l = L();
    if (l->kind == SLUICE_LAUNCHER_NONE || R.claimed)
        return true; /* a singleton is alone: nothing to share */
    pid_t holder;
    char why[512], key[128];
    switch (sluice_claim_rank(l, NULL, &holder, why, sizeof why)) {
    case SLUICE_CLAIM_OWNED:
        R.claimed = true;
        return true;
    case SLUICE_CLAIM_UNKNOWN:
        /* (Only when the job cannot be named: a refused claims folder is reported below.) */
        if (l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd >= 0 &&
            sluice_claim_job_key(l, key, sizeof key) != 0) {
            /* PMI_FD names no socket to the launcher here: a parent closed it before starting
             * this process (Python's subprocess does). MPI would wait on it forever or fail:
             * this process stays out of MPI, without a wait. */
            return false;
        }
        sluice_log_warn("cannot make sure that only one process of rank %d initializes MPI (%s)", l->rank,
                        why);
        return true;
    case SLUICE_CLAIM_TAKEN:
        R.owner_pid = (int)holder;
        if (who)
            sluice_log_warn("%s: MPI of rank %d already belongs to process %d of the same rank "
                            "(sluice initialized it there); a second initialization may fail",
                            who, l->rank, (int)holder);
        return false;
    }
    return false;
}

/* Capture on, under hydra, in a job of several ranks: every start of MPI is put to the vote first
 * (start_vote.h), once per process. Caller holds R.lock and owns the rank. */
static bool start_vote_applies(void)
{
    const char *cap = sluice_config.CAPTURE;
    return !R.voted && cap && cap[0] && sluice_launcher_fd >= 0 && L()->size >= 2 &&
           sluice_pmi_server() == SLUICE_PMI_HYDRA;
}

/* The start vote, in shared memory where every rank runs on this node (node_vote.h), else over
 * hydra's PMI. */
static enum sluice_start_vote start_vote(bool start)
{
    if (sluice_node_vote_applies(L()))
        return sluice_node_vote(SLUICE_NODE_VOTE_START, L(), sluice_launcher_pid(L()), start, NULL);
    return sluice_start_vote(sluice_launcher_fd, L()->rank, start);
}

static void vote_before_start(void)
{
    if (!start_vote_applies())
        return;
    R.voted = true;
    start_vote(true);
}

bool sluice_mpi_start_needed(void)
{
    bool needed = true;
    pthread_mutex_lock(&R.lock);
    if (atomic_load(&R.state) == ST_IDLE && !R.sluice_initialized && !R.app_initialized &&
        start_vote_applies() && claim_rank(NULL)) {
        R.voted = true;
        if (start_vote(false) == SLUICE_VOTE_NONE) {
            atomic_store(&R.state, ST_FINALIZED); /* the launcher counts this process as done */
            needed = false;
        }
    }
    pthread_mutex_unlock(&R.lock);
    return needed;
}

int sluice_mpi_exit_vote(bool busy, void (*all_arrived)(void))
{
    const char *cap = sluice_config.CAPTURE;
    if (!(cap && cap[0] && sluice_launcher_fd >= 0 && L()->size >= 2 &&
          sluice_pmi_server() == SLUICE_PMI_HYDRA))
        return -1;
    /* A failed exchange counts as busy: the rank then goes on to the notice counts over MPI. */
    if (sluice_node_vote_applies(L()))
        return sluice_node_vote(SLUICE_NODE_VOTE_EXIT, L(), sluice_launcher_pid(L()), busy, all_arrived) !=
               SLUICE_VOTE_NONE;
    return sluice_exit_vote(sluice_launcher_fd, L()->rank, busy, all_arrived) != SLUICE_VOTE_NONE;
}

/* With MPI initialized by anyone: make sluice's communicator. Caller holds R.lock. */
static void make_comm_locked(void)
{
    if (R.lib_provided < MPI_THREAD_MULTIPLE) {
        sluice_log_warn("the MPI library gave thread level %d, below MPI_THREAD_MULTIPLE; "
                        "sluice will not use MPI in this process",
                        R.lib_provided);
        atomic_store_explicit(&R.state, ST_UNUSABLE, memory_order_release);
        return;
    }
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    MPI_Comm c = MPI_COMM_NULL;
    int rc = sluice_quiet_comm_dup(MPI_COMM_WORLD, &c);
    if (rc == MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        PMPI_Comm_set_name(c, "sluice");
    }
    sluice_time_leave(prev);
    if (rc != MPI_SUCCESS) {
        sluice_log_warn("MPI_Comm_dup of MPI_COMM_WORLD failed (error %d); sluice will not use "
                        "MPI in this process",
                        rc);
        atomic_store_explicit(&R.state, ST_UNUSABLE, memory_order_release);
        return;
    }
    int *ub = NULL, flag = 0;
    char err[160];
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (sluice_tags_check(flag && ub ? *ub : 32767, err, sizeof err) != 0) {
        sluice_log_warn("%s; sluice will not use MPI in this process", err);
        atomic_store_explicit(&R.state, ST_UNUSABLE, memory_order_release);
        return;
    }
    R.comm = c;
    atomic_store_explicit(&R.state, ST_READY, memory_order_release);
    sluice_trace_clock_sync_start(c); /* collective, as the dup above */
    for (int i = 0; i < R.ncomm_hooks; i++)
        R.comm_hooks[i](c); /* collective too */
}

static void trace_init(int by_sluice)
{
    if (!sluice_trace_active())
        return;
    int size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    sluice_trace_instant(SLUICE_EV_MPI_INIT, (uint64_t)R.lib_provided, (uint64_t)size, (uint64_t)by_sluice);
}

/* Lazy initialization for a feature. Caller holds R.lock; state is IDLE. */
static void lazy_init_locked(void)
{
    int inited = 0, finalized = 0;
    if (sluice_mpi_library_load() != 0) {
        atomic_store(&R.state, ST_UNUSABLE);
        return;
    }
    PMPI_Initialized(&inited);
    PMPI_Finalized(&finalized);
    if (finalized) {
        atomic_store(&R.state, ST_FINALIZED);
        return;
    }
    if (inited) {
        /* Initialized behind our back (through a name sluice does not interpose): use it. */
        PMPI_Query_thread(&R.lib_provided);
        make_comm_locked();
        return;
    }
    if (!claim_rank(NULL)) {
        atomic_store(&R.state, ST_UNUSABLE);
        return;
    }
    vote_before_start();
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    int rc = next_init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &R.lib_provided);
    sluice_time_leave(prev);
    if (rc != MPI_SUCCESS) {
        sluice_log_warn("MPI_Init_thread failed (error %d); sluice will not use MPI", rc);
        atomic_store(&R.state, ST_UNUSABLE);
        return;
    }
    R.sluice_initialized = true;
    trace_init(1);
    make_comm_locked();
}

MPI_Comm sluice_comm(void)
{
    if (atomic_load_explicit(&R.state, memory_order_acquire) == ST_READY)
        return R.comm;
    pthread_mutex_lock(&R.lock);
    if (atomic_load(&R.state) == ST_IDLE)
        lazy_init_locked();
    MPI_Comm c = atomic_load(&R.state) == ST_READY ? R.comm : MPI_COMM_NULL;
    pthread_mutex_unlock(&R.lock);
    return c;
}

int sluice_mpi_owner_pid(void)
{
    pthread_mutex_lock(&R.lock);
    int pid = R.owner_pid;
    pthread_mutex_unlock(&R.lock);
    return pid;
}

/* ---- finalization ------------------------------------------------------------------------- */

void sluice_mpi_on_app_init(void (*hook)(void))
{
    pthread_mutex_lock(&R.lock);
    if (R.ninit_hooks < MAX_HOOKS)
        R.init_hooks[R.ninit_hooks++] = hook;
    pthread_mutex_unlock(&R.lock);
}

void sluice_mpi_on_finalize(void (*hook)(void))
{
    pthread_mutex_lock(&R.lock);
    if (R.nhooks < MAX_HOOKS)
        R.hooks[R.nhooks++] = hook;
    else
        sluice_log_error("more than %d MPI finalize hooks; one is dropped", MAX_HOOKS);
    pthread_mutex_unlock(&R.lock);
}

void sluice_mpi_on_comm(void (*hook)(MPI_Comm))
{
    pthread_mutex_lock(&R.lock);
    if (R.ncomm_hooks < MAX_HOOKS)
        R.comm_hooks[R.ncomm_hooks++] = hook;
    else
        sluice_log_error("more than %d MPI communicator hooks; one is dropped", MAX_HOOKS);
    pthread_mutex_unlock(&R.lock);
}

/* Runs every hook not run yet, in registration order, without holding the lock: hooks use
 * sluice_comm() and may register further hooks (which then run too). */
static void run_hooks(void)
{
    for (;;) {
        pthread_mutex_lock(&R.lock);
        void (*hook)(void) = R.hooks_run < R.nhooks ? R.hooks[R.hooks_run++] : NULL;
        pthread_mutex_unlock(&R.lock);
        if (hook == NULL)
            return;
        hook();
    }
}

/* Hooks, then the progress thread (its pollers may use sluice's communicator), then the
 * communicator, then MPI. Returns PMPI_Finalize's result. */
static int finalize_sequence(int by_sluice)
{
    run_hooks();
    sluice_trace_clock_sync_exit(); /* collective, as finalizing */
    sluice_progress_stop();
    pthread_mutex_lock(&R.lock);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    if (R.comm != MPI_COMM_NULL)
        PMPI_Comm_free(&R.comm);
    R.comm = MPI_COMM_NULL;
    atomic_store(&R.state, ST_FINALIZED);
    int rc = next_finalize();
    sluice_time_leave(prev);
    pthread_mutex_unlock(&R.lock);
    sluice_trace_instant(SLUICE_EV_MPI_FINALIZE, (uint64_t)by_sluice, 0, 0);
    return rc;
}

/* ---- the application's MPI life cycle (shim/mpi.c) ---------------------------------------- */

static int plain_init(int *argc, char ***argv, bool thread_call, int required, int *provided)
{
    return thread_call ? next_init_thread(argc, argv, required, provided) : next_init(argc, argv);
}

int sluice_mpi_app_init(int *argc, char ***argv, bool thread_call, int required, int *provided)
{
    if (!active())
        return plain_init(argc, argv, thread_call, required, provided);
    int level = thread_call ? required : MPI_THREAD_SINGLE;

    pthread_mutex_lock(&R.lock);
    int state = atomic_load(&R.state);
    if (R.sluice_initialized && !R.app_initialized && (state == ST_READY || state == ST_UNUSABLE)) {
        /* sluice got there first (a feature needed MPI before main called MPI_Init): the
         * library is initialized already; the application takes it over. */
        R.app_initialized = true;
        R.app_provided = level < R.lib_provided ? level : R.lib_provided;
        if (provided)
            *provided = R.app_provided;
        pthread_mutex_unlock(&R.lock);
        return MPI_SUCCESS;
    }
    int inited = 0;
    PMPI_Initialized(&inited);
    if (state != ST_IDLE || inited) {
        /* A forked child, a rank owned elsewhere, or a second MPI_Init: whatever MPI says. */
        pthread_mutex_unlock(&R.lock);
        return plain_init(argc, argv, thread_call, required, provided);
    }
    if (!claim_rank("MPI_Init")) {
        atomic_store(&R.state, ST_UNUSABLE);
        pthread_mutex_unlock(&R.lock);
        return plain_init(argc, argv, thread_call, required, provided);
    }
    vote_before_start();
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_MPI);
    int rc = next_init_thread(argc, argv, MPI_THREAD_MULTIPLE, &R.lib_provided);
    sluice_time_leave(prev);
    if (rc != MPI_SUCCESS) {
        atomic_store(&R.state, ST_UNUSABLE);
        pthread_mutex_unlock(&R.lock);
        return rc;
    }
    R.app_initialized = true;
    R.app_provided = level < R.lib_provided ? level : R.lib_provided;
    if (provided)
        *provided = R.app_provided;
    trace_init(0);
    make_comm_locked(); /* collective, like the MPI_Init every rank is in */
    int nhooks = R.ninit_hooks;
    pthread_mutex_unlock(&R.lock);
    for (int i = 0; i < nhooks; i++) /* registered by constructors, before main: never changes */
        R.init_hooks[i]();
    return MPI_SUCCESS;
}

int sluice_mpi_app_finalize(void)
{
    if (!active())
        return next_finalize();
    pthread_mutex_lock(&R.lock);
    int state = atomic_load(&R.state);
    /* READY also covers MPI that sluice adopted after the application initialized it through
     * a name sluice does not interpose: sluice's communicator and pollers must go before MPI
     * does, whoever initialized it. */
    bool ours = !R.app_finalized &&
                (state == ST_READY || (state == ST_UNUSABLE && (R.app_initialized || R.sluice_initialized)));
    if (ours)
        R.app_finalized = true;
    pthread_mutex_unlock(&R.lock);
    if (!ours)
        return next_finalize();
    return finalize_sequence(0);
}

int sluice_mpi_app_initialized(int *flag)
{
    if (active()) {
        pthread_mutex_lock(&R.lock);
        bool hidden = R.sluice_initialized && !R.app_initialized;
        pthread_mutex_unlock(&R.lock);
        if (hidden) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Initialized(flag);
}

int sluice_mpi_app_finalized(int *flag)
{
    if (active()) {
        pthread_mutex_lock(&R.lock);
        bool hidden = R.sluice_initialized && !R.app_initialized;
        pthread_mutex_unlock(&R.lock);
        if (hidden) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Finalized(flag);
}

int sluice_mpi_app_query_thread(int *provided)
{
    if (active()) {
        pthread_mutex_lock(&R.lock);
        bool ours = R.app_initialized;
        int level = R.app_provided;
        pthread_mutex_unlock(&R.lock);
        if (ours) {
            *provided = level;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Query_thread(provided);
}

/* ---- fork and exit ------------------------------------------------------------------------ */

/* A forked child shares the parent's PMI connection and a copy of its MPI state, but not its
 * threads: it must never use MPI if the parent did or owns the rank. A child of a parent that
 * never touched MPI may still claim the rank itself. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&R.lock);
}
static void atfork_parent(void)
{
    pthread_mutex_unlock(&R.lock);
}
static void atfork_child(void)
{
    int state = atomic_load(&R.state);
    if (state != ST_IDLE || R.sluice_initialized || R.app_initialized) {
        atomic_store(&R.state, ST_UNUSABLE);
        R.hooks_run = R.nhooks; /* the parent's finalization is the parent's */
    }
    R.sluice_initialized = false; /* the child must not finalize the parent's MPI at exit */
    R.claimed = false;            /* the claim file names the parent */
    R.comm = MPI_COMM_NULL;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&R.lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

int sluice_launcher_fd = -1;

/* Features that need the ranks to talk: checkpoint capture and distributed OpenCL. */
static bool needs_world(void)
{
    const char *cl = sluice_config.OPENCL;
    return (sluice_config.CAPTURE && sluice_config.CAPTURE[0]) || (cl && strcmp(cl, "distributed") == 0);
}

/* Distributed OpenCL on more than one rank: every rank takes part in MPI, whatever it runs. */
static bool serves_world(void)
{
    const char *cl = sluice_config.OPENCL;
    return cl && strcmp(cl, "distributed") == 0 && L()->size >= 2;
}

__attribute__((constructor(SLUICE_PRIO_MPI))) static void mpi_load(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    const struct sluice_launch *l = L();
    if (active() && launch_warning[0])
        sluice_log_warn("%s", launch_warning);
    if (needs_world() && l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd > 2) {
        int type = 0;
        socklen_t len = sizeof type;
        if (getsockopt(l->pmi_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0)
            sluice_launcher_fd = l->pmi_fd;
    }
    /* Before main, so that nothing is written that the job could only leave in pieces. */
    char msg[320];
    if (needs_world() && sluice_launch_without_pmi(getenv_cb, NULL, l, msg, sizeof msg))
        sluice_fatal(2, "%s", msg);
    /* Every rank of a distributed OpenCL job starts and finalizes MPI (serving ranks now, rank 0
     * at its first OpenCL call or at exit): from here on, a rank that ends before that ends the
     * job through its launcher (launcher_watch.h). */
    if (sluice_launcher_fd >= 0 && serves_world())
        sluice_launcher_watch();
}

/* At exit, finalize hooks run while the progress thread still serves (hooks may post work
 * and wait for pollers): after the checkpoint part's destructor, before the progress engine's.
 * Only where sluice itself will finalize MPI below. */
#define SLUICE_PRIO_MPI_EXIT_HOOKS (SLUICE_PRIO_PROGRESS + 1)

static bool sluice_finalizes_at_exit(void)
{
    pthread_mutex_lock(&R.lock);
    int state = atomic_load(&R.state);
    bool ours = R.sluice_initialized && !R.app_finalized && (state == ST_READY || state == ST_UNUSABLE);
    pthread_mutex_unlock(&R.lock);
    return ours;
}

__attribute__((destructor(SLUICE_PRIO_MPI_EXIT_HOOKS))) static void mpi_exit_hooks(void)
{
    if (sluice_finalizes_at_exit())
        run_hooks();
}

/* Runs after the progress engine's destructor (which stopped the thread). Finalizes only what
 * sluice initialized itself; hooks registered since mpi_exit_hooks run first. */
__attribute__((destructor(SLUICE_PRIO_MPI))) static void mpi_unload(void)
{
    pthread_mutex_lock(&R.lock);
    int state = atomic_load(&R.state);
    bool ours = R.sluice_initialized && !R.app_finalized && (state == ST_READY || state == ST_UNUSABLE);
    if (ours)
        R.app_finalized = true; /* nobody finalizes twice */
    pthread_mutex_unlock(&R.lock);
    if (ours)
        finalize_sequence(1);
}

void sluice_mpi_abandon(void)
{
    /* No lock: the thread that holds it may be the one stuck on the dead peer. */
    atomic_store(&R.state, ST_FINALIZED);
}

void sluice_mpi_finalize_before_exit(void)
{
    mpi_exit_hooks();
    mpi_unload();
}
