/* SPDX-License-Identifier: MIT */
/* Commit engine start-up and exit: the engine starts on the first captured close (or read,
 * or exit), and at exit everything staged is committed before the process ends.
 *
 * The exit flush is collective-ish: the ranks first vote whether any of them has anything to
 * commit (over the launcher where it can hold the vote, roles.h; else one word over MPI): if
 * none has, the flush ends there. Otherwise a rank cannot know how many "member closed" notices
 * are still travelling to the homes it serves, so every rank adds up what it sent to each home
 * (MPI_Reduce_scatter_block); each home then waits for exactly that many notices, commits every
 * pending set at once and reports quiet. A rank leaves when its home duties are quiet,
 * its own members are committed (or failed) and its messages are delivered; a final
 * MPI_Allreduce shares the worst error so that every rank of a failed job exits non-zero. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/commit_array.h"
#include "ckpt/commit/commit_term.h"

#include "ckpt/commit/pattern.h"
#include "ckpt/commit/stage.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/lifecycle.h"
#include "mpi/roles.h"
#include "mpi/wait_help.h"
#include "progress/control.h"
#include "progress/progress.h"
#include "trace/trace.h"

#include <errno.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

const struct commit_member *commit_members_first_failed(void); /* commit_member.c */
void commit_members_find_adopted(void);                        /* commit_adopt.c */
int commit_members_adopted_pending(void);                      /* commit_adopt.c */
void commit_members_adopt_locked(void);                        /* commit_member.c */
MPI_Comm commit_transport_comm(void);                          /* commit_msg.c */
void commit_home_reset_counts(void);                           /* commit_home.c */

/* The engine's process-wide state (commit_internal.h), set up, reset after fork and torn
 * down here, beside the start-up and exit code that owns its life. */
struct commit_state commit_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
    .size = 1,
};

static struct sluice_pattern_set patterns;
static int engine_enabled;
static int flush_failed;         /* -errno of a failed exit flush: never retried alone */
static int flush_done;           /* a flush completed ... */
static uint64_t flush_announced; /* ... when this many notices had been sent */
static char flush_message[3 * PATH_MAX + 256];

int commit_key_of(const char *path, char *key, size_t cap)
{
    int rank;
    if (!engine_enabled || cap < strlen(path) + 2)
        return -ENOENT;
    return sluice_pattern_match(&patterns, path, &rank, key, cap) ? 0 : -ENOENT;
}

static int poller_registered; /* under commit_g.lock */

/* Capture's hooks (commit.h): set once by capture's constructor, read by any thread. */
static const struct sluice_commit_client *_Atomic client;

void sluice_commit_set_client(const struct sluice_commit_client *c)
{
    atomic_store_explicit(&client, c, memory_order_release);
}

static void client_announce_open(void)
{
    const struct sluice_commit_client *c = atomic_load_explicit(&client, memory_order_acquire);
    if (c && c->announce_open)
        c->announce_open();
}

static void client_close_all(void)
{
    const struct sluice_commit_client *c = atomic_load_explicit(&client, memory_order_acquire);
    if (c && c->close_all)
        c->close_all();
}

/* Every message handler, registered with the transport before it starts. */
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;
static void register_handlers(void)
{
    commit_home_register();
    commit_rank_register();
    commit_twophase_register();
    commit_direct_register();
    commit_red_handlers();
}

static int transport_start(void)
{
    pthread_once(&handlers_once, register_handlers);
    return commit_transport_start();
}

/* The commit poller. In a multi-rank job it is installed when the program's own MPI_Init
 * returns, before the engine starts: a rank that never writes may still be the home of a set, so
 * the engine starts here by itself and serves. It never initializes MPI. A process that never
 * calls MPI_Init and never captures starts no poller (nor the progress thread). */
static int quiet_waiters; /* threads in wait_quiet */
static int commit_quiet_locked(void)
{
    return commit_home_quiet() && commit_members_quiet() && !commit_transport_busy() && !commit_red_busy();
}
/* While this process awaits another rank's answer in a commit (its members not yet durable, a
 * request unanswered, a version it homes in flight, its messages unsent, a version's
 * redundancy under way, a thread in wait_quiet), the progress thread
 * stays out of deep idle: each answer of a commit otherwise waited up to SLUICE_PROGRESS_IDLE_SLEEP
 * (50 ms) after the quiet spell before it (the plan, the writes, the fsync: docs/PERFORMANCE.md,
 * "The fixed cost of a version"). Poller context (never on two threads at once). */
static int expecting;
static void expect_answers(void)
{
    pthread_mutex_lock(&commit_g.lock);
    int want = commit_members_awaiting() || commit_home_busy() || commit_transport_busy() ||
               commit_red_awaiting() || __atomic_load_n(&quiet_waiters, __ATOMIC_ACQUIRE) != 0;
    pthread_mutex_unlock(&commit_g.lock);
    if (want != expecting) {
        expecting = want;
        sluice_progress_expect(want ? 1 : -1);
    }
}

static int commit_poll(void *arg)
{
    (void)arg;
    if (!__atomic_load_n(&commit_g.started, __ATOMIC_ACQUIRE)) {
        if (!sluice_mpi_ready())
            return 0;
        pthread_mutex_lock(&commit_g.lock);
        int now_started = 0;
        if (!commit_g.started && transport_start() == 0) {
            __atomic_store_n(&commit_g.started, 1, __ATOMIC_RELEASE);
            commit_members_adopt_locked();
            now_started = 1;
        }
        pthread_mutex_unlock(&commit_g.lock);
        if (!commit_g.started)
            return 0;
        if (now_started)
            client_announce_open();
    }
    int did = commit_transport_poll() + commit_home_poll() + commit_red_poll();
    expect_answers();
    if (__atomic_load_n(&quiet_waiters, __ATOMIC_ACQUIRE)) {
        /* A thread in wait_quiet: tell it as soon as it may stop waiting. */
        pthread_mutex_lock(&commit_g.lock);
        if (commit_quiet_locked())
            pthread_cond_broadcast(&commit_g.cv);
        pthread_mutex_unlock(&commit_g.lock);
    }
    return did;
}

static void install_poller(void)
{
    pthread_mutex_lock(&commit_g.lock);
    int needed = !poller_registered;
    poller_registered = 1;
    pthread_mutex_unlock(&commit_g.lock);
    if (needed)
        commit_g.poller_id = sluice_progress_add_poller_any_thread(commit_poll, NULL);
}

int commit_ensure_started(void)
{
    pthread_mutex_lock(&commit_g.lock);
    int rc = 0, now_started = 0;
    if (!commit_g.started) {
        rc = transport_start();
        if (rc == 0) {
            __atomic_store_n(&commit_g.started, 1, __ATOMIC_RELEASE);
            commit_members_adopt_locked();
            now_started = 1;
        }
    }
    pthread_mutex_unlock(&commit_g.lock);
    if (rc == 0)
        install_poller();
    if (now_started)
        client_announce_open(); /* opened before the engine ran */
    return rc;
}

static uint64_t final_expected_arg;
static void go_final(void *arg)
{
    commit_home_final(*(uint64_t *)arg);
}
static void go_stop(void *arg)
{
    (void)arg;
    commit_transport_stop();
    commit_home_reset_counts();
    pthread_mutex_lock(&commit_g.lock);
    memset(commit_g.closed_sent, 0, sizeof(uint64_t));
    pthread_mutex_unlock(&commit_g.lock);
}

static void wait_quiet(void)
{
    sluice_progress_urgent(1); /* this thread waits on the answers: no back-off for them */
    pthread_mutex_lock(&commit_g.lock);
    __atomic_add_fetch(&quiet_waiters, 1, __ATOMIC_RELEASE);
    while (!commit_quiet_locked()) {
        /* Quiet is decided on the progress thread, which signals after each pass of its poller
         * while someone waits here (commit_poll); the timed wait is only a backstop. */
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 2000000;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&commit_g.cv, &commit_g.lock, &dl);
    }
    __atomic_sub_fetch(&quiet_waiters, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&commit_g.lock);
    sluice_progress_urgent(-1);
}

static int exiting; /* set by the finalize hook and the destructor */

int sluice_commit_launcher_child(void)
{
    const char *v = getenv("PMI_FD");
    if (!v || !*v)
        return 0;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(atoi(v), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return 0;
    return cred.pid > 0 && cred.pid == getppid();
}

/* Not at exit (capture calls flush_all when the stage folder passes SLUICE_STAGE_LIMIT): the
 * other ranks are busy computing, so nothing collective; ask each home to commit the sets that
 * this process has members in, and wait for them. */
int commit_flush_own_sets(uint64_t timeout_ns); /* commit_member.c */

/* How long a rank that leaves without MPI_Finalize waits for each home's answer. */
#define COMMIT_EXIT_ALONE_WAIT_NS (10000000000ull)

/* The program initialized MPI itself and leaves without MPI_Finalize (exit(1) on an error,
 * typically): the other ranks may never reach a collective, nor even exit (they wait in
 * MPI_Barrier until the launcher ends the job once this process is gone). */
static int finalizing; /* in the finalize hook: every rank is in MPI_Finalize, collectives are fine */
static int leaving_without_finalize(void)
{
    if (__atomic_load_n(&finalizing, __ATOMIC_RELAXED) || !sluice_mpi_ready())
        return 0; /* never touches MPI (nor loads it) in a process that did not use it */
    int inited = 0, finalized = 1;
    if (sluice_mpi_app_initialized(&inited) != MPI_SUCCESS ||
        sluice_mpi_app_finalized(&finalized) != MPI_SUCCESS)
        return 0;
    return inited && !finalized;
}

/* Exit work of such a rank: point-to-point only, every wait bounded. Each home is asked to
 * commit the sets this process has members in; whatever is not committed in time stays
 * staged for `sluice-ckpt recover`, and one line says so. */
static int flush_alone(void)
{
    client_close_all();
    pthread_mutex_lock(&commit_g.lock);
    int idle = !commit_g.started && !commit_members_adopted_pending();
    pthread_mutex_unlock(&commit_g.lock);
    if (idle)
        return 0;
    int rc = commit_ensure_started();
    if (rc == 0) {
        pthread_mutex_lock(&commit_g.lock);
        commit_members_retry();
        pthread_mutex_unlock(&commit_g.lock);
        rc = commit_flush_own_sets(COMMIT_EXIT_ALONE_WAIT_NS);
    }
    if (rc == 0) {
        pthread_mutex_lock(&commit_g.lock);
        rc = commit_members_error();
        pthread_mutex_unlock(&commit_g.lock);
    }
    if (rc) {
        const char *dir = sluice_stage_dir();
        snprintf(flush_message, sizeof flush_message,
                 "leaving without MPI_Finalize: checkpoint members not committed (%s); staged data "
                 "kept in %s for `sluice-ckpt recover`",
                 rc == -ETIMEDOUT ? "no answer from the set's home rank in 10 s" : strerror(-rc),
                 dir ? dir : "the stage folder");
    }
    flush_failed = rc;
    pthread_mutex_lock(&commit_g.lock);
    flush_done = 1;
    flush_announced = commit_g.announced;
    pthread_mutex_unlock(&commit_g.lock);
    return rc;
}

/* Whether any rank of the job has something to commit or report at exit: one vote of every rank
 * over the launcher where it can hold one (asleep in PMI's barrier: roles.h), else an MPI_Allreduce
 * of one word. Either way O(1) bytes per rank; the O(N) notice counts follow only if a rank is
 * busy. */
static int exit_any_busy(bool busy, MPI_Comm comm)
{
    /* A rank with nothing to commit asks its progress thread to end once every rank has entered
     * the vote (before that, a rank still running the program may wait for this one's thread: a
     * flush at the stage limit, a served OpenCL call): the thread's end overlaps the vote's second
     * barrier, and where no rank is busy it has ended by the time it is joined. Where another rank
     * is busy, the final protocol's post starts it again (or calls the stop off). */
    int v = sluice_mpi_exit_vote(busy, busy ? NULL : sluice_progress_stop_begin);
    if (v >= 0)
        return v;
    uint64_t mine = busy, any = 0;
    sluice_quiet_allreduce(&mine, &any, 1, MPI_UINT64_T, MPI_MAX, comm);
    return any != 0;
}

/* The notices every rank sent this one, as a home (MPI_Reduce_scatter_block of the per-home
 * counts): the number the final flush waits for. Collective; 0 or -ENOMEM (on every rank
 * alike only if the allocation fails everywhere: out of memory here ends in a hang elsewhere,
 * as it did before). */
static int exit_notice_count(MPI_Comm comm, uint64_t *expected)
{
    pthread_mutex_lock(&commit_g.lock);
    uint64_t *sent = malloc((size_t)commit_g.size * sizeof(uint64_t));
    if (sent)
        memcpy(sent, commit_g.closed_sent, (size_t)commit_g.size * sizeof(uint64_t));
    pthread_mutex_unlock(&commit_g.lock);
    if (!sent)
        return -ENOMEM;
    MPI_Reduce_scatter_block(sent, expected, 1, MPI_UINT64_T, MPI_SUM, comm);
    free(sent);
    return 0;
}

int sluice_commit_flush_all(void)
{
    if (!engine_enabled)
        return 0;
    if (!__atomic_load_n(&exiting, __ATOMIC_RELAXED))
        return commit_flush_own_sets(0);
    if (flush_failed)
        return flush_failed;
    if (leaving_without_finalize())
        return flush_alone();
    client_close_all();
    /* Called from the finalize hook and again from the destructor: the second call has
     * nothing to do unless files were closed in between. */
    pthread_mutex_lock(&commit_g.lock);
    int nothing_new = flush_done && commit_g.announced == flush_announced;
    pthread_mutex_unlock(&commit_g.lock);
    if (nothing_new)
        return 0;
    /* A process that never closed a captured file and never used MPI takes part only if it
     * is the launcher's own process of its rank: writers of other ranks may be waiting in
     * MPI_Init for it (a non-MPI program where this rank writes nothing). Its children (a
     * program's system("mkdir ..."), the stages of a shell pipeline) stay out: MPI belongs
     * to one process per rank, and they have nothing to commit. */
    pthread_mutex_lock(&commit_g.lock);
    int bystander = !commit_g.started && !commit_members_adopted_pending();
    pthread_mutex_unlock(&commit_g.lock);
    if (bystander && !sluice_mpi_ready() && !sluice_commit_launcher_child())
        return 0;
    /* A rank's own process with nothing to commit starts MPI only if another rank does (its
     * writers would wait in MPI_Init for it): under hydra the job votes first (start_vote.h). */
    if (bystander && !sluice_mpi_ready() && !sluice_mpi_start_needed())
        return 0;
    int rc = commit_ensure_started();
    if (rc)
        return rc;

    uint64_t t0 = sluice_now_ns();
    pthread_mutex_lock(&commit_g.lock);
    commit_members_retry();
    int use_mpi = commit_g.use_mpi;
    /* Whether this rank has anything at all to commit or report. A home's own work is its ranks'
     * notices, which make those ranks busy: its home side is not asked (before the final flush it
     * never says quiet, and every rank would count busy). */
    bool busy = commit_g.announced != 0 || commit_members_error() != 0 || !commit_members_quiet() ||
                commit_transport_busy();
    uint64_t expected = commit_g.closed_sent[0]; /* alone: the notices this process sent itself */
    pthread_mutex_unlock(&commit_g.lock);
    MPI_Comm comm = use_mpi ? commit_transport_comm() : MPI_COMM_NULL;
    int any = use_mpi ? exit_any_busy(busy, comm) : busy;
    if (any && use_mpi && exit_notice_count(comm, &expected) != 0)
        return -ENOMEM;
    if (!any) {
        /* No rank captured anything or has an error: nothing to commit, nothing to agree on (the
         * notice counts, the final protocol's collective and hand-offs to the progress thread
         * cost an MPI program's MPI_Finalize 2x plain at 4 ranks). The progress thread has nothing
         * left to serve either: asked to end during the vote, it is joined here, and the
         * transport's stop, its last item, runs on this thread (no hand-off: a post would wait for
         * a thread to be scheduled; MPI_Finalize's own stop finds none). A later post starts it
         * again. */
        sluice_progress_stop();
        sluice_progress_run_here(go_stop, NULL);
        pthread_mutex_lock(&commit_g.lock);
        flush_done = 1;
        flush_announced = commit_g.announced;
        pthread_mutex_unlock(&commit_g.lock);
        return 0;
    }
    final_expected_arg = expected;
    sluice_progress_post(go_final, &final_expected_arg);
    sluice_progress_wake();
    wait_quiet();

    pthread_mutex_lock(&commit_g.lock);
    int err = commit_members_error();
    const struct commit_member *bad = commit_members_first_failed();
    if (bad)
        snprintf(flush_message, sizeof flush_message,
                 "checkpoint commit failed for %s: %s; staged data kept in %s for "
                 "`sluice-ckpt recover`",
                 bad->m.path, strerror(-bad->err), bad->m.stage_path);
    pthread_mutex_unlock(&commit_g.lock);

    int worst = err;
    if (use_mpi) {
        sluice_quiet_allreduce(&err, &worst, 1, MPI_INT, MPI_MIN, comm);
        wait_quiet(); /* answers to late requests of other ranks are delivered */
    }
    if (worst && !flush_message[0])
        snprintf(flush_message, sizeof flush_message,
                 "checkpoint commit failed on another rank: %s; staged data kept for "
                 "`sluice-ckpt recover`",
                 strerror(-worst));
    /* From now on this process commits alone (e.g. files closed after MPI_Finalize). */
    sluice_progress_post(go_stop, NULL);
    sluice_progress_drain();
    flush_failed = worst;
    /* What the program waited for at exit: every set's last commit, until durable. */
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_COMMIT_END, worst ? SLUICE_EVF_ERROR : 0, t0, sluice_now_ns() - t0,
                            sluice_trace_string("(exit: all sets)"), 0, sluice_now_ns() - t0);
    pthread_mutex_lock(&commit_g.lock);
    flush_done = 1;
    flush_announced = commit_g.announced;
    pthread_mutex_unlock(&commit_g.lock);
    return worst;
}

/* A forked child owns none of its parent's members, requests or home duties, has no
 * progress thread and must not touch the parent's MPI: it starts from scratch on first use. */
void commit_member_forget_all(void); /* commit_member.c */
void commit_home_forget_all(void);   /* commit_home.c */
void commit_transport_forget(void);  /* commit_msg.c */
static void commit_after_fork_child(void)
{
    pthread_mutex_init(&commit_g.lock, NULL);
    pthread_cond_init(&commit_g.cv, NULL);
    commit_g.started = 0;
    commit_g.use_mpi = 0;
    commit_g.rank = 0;
    commit_g.size = 1;
    commit_g.closed_sent = NULL;
    poller_registered = 0; /* the child has no progress thread and no pollers */
    commit_member_forget_all();
    commit_home_forget_all();
    commit_transport_forget();
    flush_failed = 0;
}

/* A failed commit must make the exit status non-zero, but only once MPI is finalized (a rank
 * that leaves without finalizing makes the launcher kill its peers before they can report).
 * This on_exit handler is registered by our constructor, before ld.so registers the
 * destructors' runner, so it runs after every library destructor, MPI's finalization
 * included. It keeps a non-zero status that the program chose itself. */
static int commit_failed;
static void exit_status_on_failure(int status, void *arg)
{
    (void)arg;
    if (commit_failed) /* the real one: sluice's _exit wrapper would run our destructors again */
        SLUICE_REAL(_exit)(status ? status : 1);
}

int sluice_commit_exit_failed(void)
{
    return commit_failed;
}

static void on_finalize(void)
{
    __atomic_store_n(&finalizing, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&exiting, 1, __ATOMIC_RELAXED);
    sluice_commit_flush_all();
}

int commit_engine_enable(const char *capture_spec, const char *cwd)
{
    char err[512];
    if (sluice_pattern_compile(&patterns, capture_spec, cwd, err, sizeof err) != 0)
        return -EINVAL;
    commit_array_enable(cwd);
    if (sluice_stage_exec_marked()) /* an earlier image of this pid staged (stage.h) */
        commit_members_find_adopted();
    pthread_atfork(NULL, NULL, commit_after_fork_child);
    on_exit(exit_status_on_failure, NULL);
    engine_enabled = 1;
    sluice_mpi_on_finalize(on_finalize);
    commit_red_register(); /* first: the agreement then sees what it rebuilt */
    commit_level_agree_register();
    if (sluice_config.DRAIN_EVERY > 1)
        commit_term_arm(); /* node-local versions: a SIGTERM drains them first */
    if (sluice_launch_size() > 1)
        sluice_mpi_on_app_init(install_poller);
    return 0;
}

__attribute__((constructor(SLUICE_PRIO_CKPT))) static void commit_init(void)
{
    if (!sluice_config.CAPTURE || !sluice_config.CAPTURE[0])
        return;
    char cwd[PATH_MAX];
    /* Capture validates the patterns and reports errors; a failure here just disables reads. */
    if (SLUICE_REAL(getcwd)(cwd, sizeof cwd))
        commit_engine_enable(sluice_config.CAPTURE, cwd);
}

__attribute__((destructor(SLUICE_PRIO_CKPT))) static void commit_fini(void)
{
    static int done; /* capture's _exit wrapper may run the library's destructors once more */
    if (!engine_enabled || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&exiting, 1, __ATOMIC_RELAXED);
    int rc = sluice_commit_flush_all();
    sluice_stage_unmark_exec(); /* no image follows an exit: what is left is recover's */
    if (rc == 0)
        return;
    sluice_log_error("%s", flush_message[0] ? flush_message : strerror(-rc));
    commit_failed = 1;
}
