/* SPDX-License-Identifier: MIT */
/* Commit engine, rank side: the members this process closed (owned by the commit engine from
 * sluice_commit_member_closed until their set is committed), the capture-facing calls of
 * commit.h that change them, the answers to the home rank's requests, and waiting for them.
 *
 * Ownership of a staged member: capture -> here at close; here -> gone once a DONE without
 * error names it (its staging file and sidecar are deleted then, never before the container
 * holding it is durable). A failed commit leaves the member staged with its error, for a
 * retry at fsync or exit and, if that fails too, for `sluice-ckpt recover`. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/stage.h"
#include "ckpt/commit/stage_index.h"
#include "ckpt/container/container.h"
#include "common/full_io.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct commit_member *members; /* newest last */

/* Open members whose current bytes an fsync committed: if the program closes one without
 * writing again (the common write-fsync-close), that close needs no new version. */
struct synced {
    char stage_path[PATH_MAX];
    uint64_t size;
    int64_t mtime_ns;
    struct synced *next;
};
static struct synced *synced_list;

static int stage_stat(const char *path, uint64_t *size, int64_t *mtime_ns)
{
    struct stat st;
    if (SLUICE_REAL(stat)(path, &st) != 0)
        return -errno;
    *size = (uint64_t)st.st_size;
    *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return 0;
}

/* Removes and returns 1 if the staging file is unchanged since its committed fsync (lock held). */
static int synced_take(const char *stage_path)
{
    for (struct synced **pp = &synced_list; *pp; pp = &(*pp)->next) {
        struct synced *e = *pp;
        if (strcmp(e->stage_path, stage_path) != 0)
            continue;
        uint64_t size;
        int64_t mt;
        int same = stage_stat(stage_path, &size, &mt) == 0 && size == e->size && mt == e->mtime_ns;
        *pp = e->next;
        free(e);
        return same;
    }
    return 0;
}
static uint64_t member_seq;

struct request {
    uint64_t id;
    int done, err;
    int acked; /* the home said a commit is coming (COMMIT_QUERY_PENDING) */
    uint64_t version;
    struct request *next;
};
static struct request *requests;
static uint64_t request_seq;

/* FNV-1a: every rank must pick the same home for a set key. */
int commit_home_of(const char *set_key)
{
    uint64_t h = sluice_fnv1a_str(set_key);
    return commit_g.size > 1 ? (int)(h % (uint64_t)commit_g.size) : 0;
}

struct commit_member *commit_member_find(const char *path)
{
    struct commit_member *found = NULL;
    for (struct commit_member *c = members; c; c = c->next)
        if (strcmp(c->m.path, path) == 0)
            found = c; /* keep going: newest last */
    return found;
}

static void meta_path_of(const char *stage_path, char *out, size_t cap)
{
    size_t l = strlen(stage_path), dl = strlen(SLUICE_STAGE_DATA_SUFFIX);
    if (l > dl && strcmp(stage_path + l - dl, SLUICE_STAGE_DATA_SUFFIX) == 0)
        snprintf(out, cap, "%.*s%s", (int)(l - dl), stage_path, SLUICE_STAGE_META_SUFFIX);
    else
        snprintf(out, cap, "%s%s", stage_path, SLUICE_STAGE_META_SUFFIX);
}

static void unlink_staged(struct commit_member *c)
{
    sluice_stage_index_drop(c->m.path, c->meta_path);
    SLUICE_REAL(unlink)(c->m.stage_path);
    SLUICE_REAL(unlink)(c->meta_path);
}

static void member_remove(struct commit_member *c)
{
    for (struct commit_member **pp = &members; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            free(c);
            return;
        }
    }
}

uint64_t commit_announce(const char *set_key, const char *path)
{
    int home = commit_home_of(set_key);
    uint64_t n = ++commit_g.closed_sent[home];
    struct cmsg m;
    cmsg_init(&m, MSG_CLOSED);
    cmsg_put_str(&m, set_key);
    cmsg_put_str(&m, path);
    cmsg_put_u64(&m, n);
    commit_g.announced++;
    commit_send(home, &m);
    return n;
}

/* Takes over a closed member (lock held). */
static struct commit_member *member_add(const struct sluice_staged_member *m)
{
    struct commit_member *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->m = *m;
    meta_path_of(m->stage_path, c->meta_path, sizeof c->meta_path);
    c->seq = ++member_seq;
    struct stat st;
    if (SLUICE_REAL(stat)(m->stage_path, &st) == 0)
        c->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    /* An older closed version of the same path that no commit took yet is superseded: it
     * never needs to reach the file system. One in flight is committed, then replaced. Over
     * MPI it stays until the home collects: the home may already have seen its step complete,
     * and then that version, not this one, belongs to it (on_collect drops what is left). */
    for (struct commit_member *o = commit_g.use_mpi ? NULL : members; o;) {
        struct commit_member *next = o->next;
        if (o->inflight_id == 0 && strcmp(o->m.path, m->path) == 0) {
            unlink_staged(o);
            member_remove(o);
        }
        o = next;
    }
    struct commit_member **pp = &members;
    while (*pp)
        pp = &(*pp)->next;
    *pp = c;
    c->notice = commit_announce(m->set_key, m->path);
    return c;
}

/* A process of a multi-rank job that has not used MPI yet does not start it at a close: it
 * may be a shell or a wrapper about to exec the program (`bash -c 'echo x > ckpt.$r && rm
 * ckpt.$r'` execs rm), and MPI started in an image that then execs is lost with it. The member
 * waits, staged and closed, for the engine's start (MPI_Init of the program, a read, unlink,
 * fsync or the stage limit that needs it, or exit), and an exec'ed image adopts it from its
 * sidecar. Returns 1 if deferred. */
static int commit_defer_closed(const struct sluice_staged_member *m)
{
    if (sluice_launch_size() < 2 || sluice_mpi_ready())
        return 0;
    pthread_mutex_lock(&commit_g.lock);
    int deferred = !commit_g.started && commit_members_defer_locked(m) == 0;
    pthread_mutex_unlock(&commit_g.lock);
    return deferred;
}

void sluice_commit_member_closed(const struct sluice_staged_member *m)
{
    pthread_mutex_lock(&commit_g.lock);
    int unchanged = synced_take(m->stage_path);
    pthread_mutex_unlock(&commit_g.lock);
    if (unchanged) {
        /* Already committed by fsync, byte for byte: nothing more to do but drop the stage. */
        char meta[PATH_MAX];
        meta_path_of(m->stage_path, meta, sizeof meta);
        sluice_stage_index_drop(m->path, meta);
        SLUICE_REAL(unlink)(m->stage_path);
        SLUICE_REAL(unlink)(meta);
        return;
    }
    if (commit_defer_closed(m))
        return;
    if (commit_ensure_started() != 0) {
        sluice_log_error("checkpoint commit unavailable; %s stays staged in %s for "
                         "`sluice-ckpt recover`",
                         m->path, m->stage_path);
        return;
    }
    pthread_mutex_lock(&commit_g.lock);
    if (!member_add(m))
        sluice_log_error("out of memory: %s stays staged in %s", m->path, m->stage_path);
    pthread_mutex_unlock(&commit_g.lock);
}

/* ---- requests (FLUSH/UNLINK answers) ------------------------------------------------------ */

uint64_t commit_request_new(void)
{
    struct request *r = calloc(1, sizeof(*r));
    if (!r)
        return 0;
    r->id = ++request_seq;
    r->next = requests;
    requests = r;
    return r->id;
}

static struct request *request_find(uint64_t id)
{
    struct request *r = requests;
    while (r && r->id != id)
        r = r->next;
    return r;
}

/* Waits (lock held) until r is answered, or also acked if `or_acked`, or timeout_ns passes
 * (0: forever). */
static void request_wait_until(struct request *r, uint64_t timeout_ns, int or_acked)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(timeout_ns / 1000000000ull);
    dl.tv_nsec += (long)(timeout_ns % 1000000000ull);
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (!r->done && !(or_acked && r->acked) && rc == 0) {
        if (timeout_ns)
            rc = pthread_cond_timedwait(&commit_g.cv, &commit_g.lock, &dl);
        else
            pthread_cond_wait(&commit_g.cv, &commit_g.lock);
    }
}

/* Unlinks and frees r; returns its answer, or -ETIMEDOUT if none came (lock held; an answer
 * arriving later finds nothing and is dropped). */
static int request_finish(struct request *r)
{
    int result = r->done ? r->err : -ETIMEDOUT;
    /* Unlink the request (an answer arriving after a timeout finds nothing and is dropped). */
    for (struct request **pp = &requests; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    free(r);
    return result;
}

int commit_request_wait(uint64_t id, uint64_t timeout_ns)
{
    struct request *r = request_find(id);
    if (!r)
        return -ENOMEM;
    request_wait_until(r, timeout_ns, 0);
    return request_finish(r);
}

/* Sends FLUSH for the set and waits for the answer (lock held). */
static int flush_set_wait(const char *set_key, uint64_t timeout_ns)
{
    uint64_t req = commit_request_new();
    if (!req)
        return -ENOMEM;
    struct cmsg m;
    cmsg_init(&m, MSG_FLUSH);
    cmsg_put_str(&m, set_key);
    cmsg_put_u64(&m, req);
    commit_send(commit_home_of(set_key), &m);
    return commit_request_wait(req, timeout_ns);
}

/* A query's wait (lock held): the home answers or acknowledges at once when it runs. One that
 * does not answer is stopped, gone or swamped: say so after a few seconds, and fail after
 * COMMIT_READ_ANSWER_NS rather than hang or serve what may be stale. */
static int query_wait(struct request *r, int home, const char *set_key, const char *path, uint64_t timeout_ns)
{
    if (!r)
        return -ENOMEM;
    request_wait_until(r, COMMIT_READ_NOTICE_NS, 1);
    if (!r->done && !r->acked) {
        sluice_log_warn(
            "reading %s: rank %d, the home of checkpoint set %s, has not answered for %llu s "
            "(stopped or overloaded?); the read fails in %llu s unless it does",
            path, home, set_key, (unsigned long long)(COMMIT_READ_NOTICE_NS / 1000000000ull),
            (unsigned long long)((COMMIT_READ_ANSWER_NS - COMMIT_READ_NOTICE_NS) / 1000000000ull));
        request_wait_until(r, COMMIT_READ_ANSWER_NS - COMMIT_READ_NOTICE_NS, 1);
    }
    int answered = r->done || r->acked;
    if (!answered) {
        sluice_log_error("reading %s: rank %d, the home of checkpoint set %s, did not answer in %llu s: "
                         "the read fails (ETIMEDOUT)",
                         path, home, set_key, (unsigned long long)(COMMIT_READ_ANSWER_NS / 1000000000ull));
        return request_finish(r);
    }
    request_wait_until(r, timeout_ns, 0);
    int rc = request_finish(r);
    if (rc == -ETIMEDOUT)
        sluice_log_error("reading %s: the commit of checkpoint set %s that holds it (home rank %d) did not "
                         "end in %llu s: the read fails (ETIMEDOUT)",
                         path, set_key, home, (unsigned long long)(timeout_ns / 1000000000ull));
    return rc;
}

int commit_query_wait(const char *set_key, const char *path, uint64_t timeout_ns)
{
    if (commit_ensure_started() != 0)
        return -EIO;
    pthread_mutex_lock(&commit_g.lock);
    uint64_t req = commit_request_new();
    int rc = -ENOMEM;
    if (req) {
        struct cmsg m;
        cmsg_init(&m, MSG_QUERY);
        cmsg_put_str(&m, set_key);
        cmsg_put_str(&m, path);
        cmsg_put_u64(&m, req);
        int home = commit_home_of(set_key);
        commit_send(home, &m);
        rc = query_wait(request_find(req), home, set_key, path, timeout_ns);
    }
    pthread_mutex_unlock(&commit_g.lock);
    return rc;
}

void sluice_commit_member_opened(const char *set_key)
{
    /* Only where the engine already runs over MPI: a process that has not started it yet
     * announces its open members when it starts (commit_announce_open_members). */
    if (!__atomic_load_n(&commit_g.started, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&commit_g.lock);
    if (commit_g.use_mpi) {
        struct cmsg m;
        cmsg_init(&m, MSG_OPENED);
        cmsg_put_str(&m, set_key);
        commit_send(commit_home_of(set_key), &m);
    }
    pthread_mutex_unlock(&commit_g.lock);
}

/* ---- fsync ------------------------------------------------------------------------------- */

/* Copies an open member's current bytes into a new staging pair owned by the commit engine:
 * the program may go on writing its file while this version is committed. */
static int snapshot(const struct sluice_staged_member *m, struct sluice_staged_member *out)
{
    static unsigned long snap_seq;
    *out = *m;
    size_t l = strlen(m->stage_path), dl = strlen(SLUICE_STAGE_DATA_SUFFIX);
    if (l <= dl)
        return -EINVAL;
    unsigned long n = __atomic_add_fetch(&snap_seq, 1, __ATOMIC_RELAXED);
    if (snprintf(out->stage_path, sizeof out->stage_path, "%.*s-sync%lu%s", (int)(l - dl), m->stage_path, n,
                 SLUICE_STAGE_DATA_SUFFIX) >= (int)sizeof out->stage_path)
        return -ENAMETOOLONG;

    int in = SLUICE_REAL(open)(m->stage_path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int outfd =
        SLUICE_REAL(open)(out->stage_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (outfd < 0) {
        int e = errno;
        SLUICE_REAL(close)(in);
        return -e;
    }
    int rc = 0;
    uint64_t done = 0;
    /* On the heap: a thread-local buffer was 64 KiB of static TLS in every thread of every
     * process that loads sluice (zeroed at each thread's start), for this rare copy. */
    const size_t cap = 1 << 16;
    char *buf = malloc(cap);
    if (!buf)
        rc = -ENOMEM;
    for (; buf;) {
        ssize_t r = sluice_pread_retry(in, buf, cap, done);
        if (r <= 0) {
            rc = (int)r;
            break;
        }
        if ((rc = commit_fs_pwrite_full(outfd, buf, (size_t)r, done)) != 0)
            break;
        done += (uint64_t)r;
    }
    free(buf);
    SLUICE_REAL(close)(in);
    SLUICE_REAL(close)(outfd);
    out->size = done;

    /* The sidecar says "closed": a crash from here on leaves it to recover. */
    struct sluice_stage_meta sm = {.m = *out, .closed = 1, .pid = (long)getpid()};
    char meta[PATH_MAX];
    meta_path_of(out->stage_path, meta, sizeof meta);
    if (rc == 0)
        rc = sluice_stage_write_meta(meta, &sm); /* random temporary name, O_EXCL|O_NOFOLLOW */
    if (rc)
        SLUICE_REAL(unlink)(out->stage_path);
    return rc;
}

int sluice_commit_member_sync(const struct sluice_staged_member *m)
{
    int rc = commit_ensure_started();
    if (rc)
        return rc;
    uint64_t t0 = sluice_now_ns();
    pthread_mutex_lock(&commit_g.lock);
    struct commit_member *c = NULL;
    for (struct commit_member *o = members; o; o = o->next)
        if (strcmp(o->m.stage_path, m->stage_path) == 0)
            c = o;
    pthread_mutex_unlock(&commit_g.lock);

    uint64_t src_size = 0;
    int64_t src_mtime = 0;
    int open_member = !c;
    if (!c) {
        /* Still open (the usual fsync): commit a snapshot of what is staged now. */
        struct sluice_staged_member snap;
        rc = stage_stat(m->stage_path, &src_size, &src_mtime);
        if (rc == 0)
            rc = snapshot(m, &snap);
        if (rc)
            return rc;
        pthread_mutex_lock(&commit_g.lock);
        c = member_add(&snap);
        if (!c) {
            pthread_mutex_unlock(&commit_g.lock);
            return -ENOMEM;
        }
    } else {
        /* Look again under the lock: it may have been committed and freed meanwhile. */
        pthread_mutex_lock(&commit_g.lock);
        struct commit_member *again = NULL;
        for (struct commit_member *o = members; o; o = o->next)
            if (strcmp(o->m.stage_path, m->stage_path) == 0)
                again = o;
        c = again;
        if (!c) {
            pthread_mutex_unlock(&commit_g.lock);
            return 0; /* closed, and committed since: durable */
        }
        if (c->err && c->inflight_id == 0) {
            c->err = 0; /* retry the commit that failed */
            c->notice = commit_announce(c->m.set_key, c->m.path);
        }
    }
    /* The answer says the set has nothing pending; whether *this* member made it is in its
     * record: gone means committed, an error means its commit failed (the answer may come
     * from a later, empty round), still there means a commit is yet to take it. */
    uint64_t seq = c->seq;
    rc = flush_set_wait(m->set_key, 0);
    for (int round = 0; rc == 0 && round < 1000; round++) {
        struct commit_member *r = members;
        while (r && r->seq != seq)
            r = r->next;
        if (!r)
            break;
        if (r->err) {
            rc = r->err;
            break;
        }
        rc = flush_set_wait(m->set_key, 0);
    }
    if (rc == 0 && open_member) {
        struct synced *e = calloc(1, sizeof(*e));
        if (e) {
            snprintf(e->stage_path, sizeof e->stage_path, "%s", m->stage_path);
            e->size = src_size;
            e->mtime_ns = src_mtime;
            for (struct synced **pp = &synced_list; *pp; pp = &(*pp)->next) {
                if (strcmp((*pp)->stage_path, m->stage_path) == 0) {
                    struct synced *old = *pp;
                    *pp = old->next;
                    free(old);
                    break;
                }
            }
            e->next = synced_list;
            synced_list = e;
        }
    }
    pthread_mutex_unlock(&commit_g.lock);
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_COMMIT_END, rc ? SLUICE_EVF_ERROR : 0, t0, sluice_now_ns() - t0,
                            sluice_trace_string(m->set_key), 0, sluice_now_ns() - t0);
    return rc;
}

/* ---- unlink ------------------------------------------------------------------------------- */

int commit_unlink_committed(const char *set_key, const char *path);             /* commit_read.c */
int commit_unlink_staged_elsewhere(const char *path, char *key, size_t keycap); /* commit_read.c */

int sluice_commit_member_unlinked(const char *path)
{
    int rc = commit_ensure_started();
    if (rc)
        return rc;
    int found = 0;
    char key[PATH_MAX] = "";
    pthread_mutex_lock(&commit_g.lock);
    for (struct commit_member *c = members; c;) {
        struct commit_member *next = c->next;
        if (strcmp(c->m.path, path) == 0) {
            found = 1;
            snprintf(key, sizeof key, "%s", c->m.set_key);
            if (c->inflight_id == 0) {
                unlink_staged(c);
                member_remove(c);
            } else {
                c->unlinked = 1; /* its commit goes on; the home drops it again below */
            }
        }
        c = next;
    }
    pthread_mutex_unlock(&commit_g.lock);
    /* Closed versions staged by other processes of this node (the program's shell wrote the
     * file, its rm child removes it): taking their staging files away drops them. */
    if (commit_unlink_staged_elsewhere(path, key, sizeof key) > 0)
        found = 1;
    rc = commit_unlink_committed(key[0] ? key : NULL, path);
    if (rc == 0 || (rc == -ENOENT && found))
        return 0;
    return rc;
}

int commit_key_of(const char *path, char *key, size_t cap); /* commit_exit.c */

/* ---- chmod ------------------------------------------------------------------------------- */

/* A closed version of path that no commit took yet (own or deferred) takes the mode, its
 * sidecar too (recover commits with it). 1 if found (lock held). */
static int chmod_closed_locked(const char *path, unsigned mode)
{
    struct commit_member *own = commit_member_find(path);
    if (own != NULL && own->inflight_id == 0) {
        own->m.mode = mode;
        struct sluice_stage_meta sm = {.m = own->m, .closed = 1, .pid = (long)getpid()};
        sluice_stage_write_meta(own->meta_path, &sm);
        return 1;
    }
    return own == NULL && commit_adopted_chmod(path, mode);
}

int sluice_commit_member_chmod(const char *path, unsigned mode)
{
    pthread_mutex_lock(&commit_g.lock);
    int done = chmod_closed_locked(path, mode);
    struct commit_member *own = done ? NULL : commit_member_find(path);
    int rc = 0;
    if (own != NULL) /* in flight: the container it goes into takes the mode */
        rc = flush_set_wait(own->m.set_key, COMMIT_READ_WAIT_NS);
    pthread_mutex_unlock(&commit_g.lock);
    if (done)
        return 0;
    if (rc != 0)
        return rc;
    char key[PATH_MAX], container[PATH_MAX];
    uint64_t size;
    int64_t mtime_ns;
    if (commit_key_of(path, key, sizeof key) != 0 ||
        sluice_container_name(key, container, sizeof container) != 0 ||
        sluice_commit_stat_member(path, &size, &mtime_ns, NULL) != 0)
        return -ENOENT;
    return SLUICE_REAL(chmod)(container, (mode_t)mode) == 0 ? 0 : -errno;
}

/* Asks the home to drop `path` from its set's container and waits (commit_read.c finds the key). */
int commit_request_unlink(const char *set_key, const char *path)
{
    pthread_mutex_lock(&commit_g.lock);
    uint64_t req = commit_request_new();
    int rc = -ENOMEM;
    if (req) {
        struct cmsg m;
        cmsg_init(&m, MSG_UNLINK);
        cmsg_put_str(&m, set_key);
        cmsg_put_str(&m, path);
        cmsg_put_u64(&m, req);
        commit_send(commit_home_of(set_key), &m);
        rc = commit_request_wait(req, 0);
    }
    pthread_mutex_unlock(&commit_g.lock);
    return rc;
}

/* ---- exit accounting ------------------------------------------------------------------------ */

int commit_members_quiet(void)
{
    for (struct commit_member *c = members; c; c = c->next)
        if (c->inflight_id != 0 || c->err == 0)
            return 0;
    return 1;
}

int commit_members_awaiting(void)
{
    if (requests)
        return 1; /* a FLUSH, UNLINK or QUERY waits for its answer */
    for (struct commit_member *c = members; c; c = c->next)
        if (c->inflight_id != 0 || (c->err == 0 && !c->sealed && !c->held))
            return 1; /* in a version in flight, or announced and not yet collected */
    return 0;
}

int commit_members_retry(void)
{
    int n = 0;
    for (struct commit_member *c = members; c; c = c->next) {
        if (c->err && c->inflight_id == 0) {
            c->err = 0;
            c->notice = commit_announce(c->m.set_key, c->m.path);
            n++;
        }
    }
    return n;
}

int commit_members_error(void)
{
    int err = 0;
    for (struct commit_member *c = members; c; c = c->next)
        if (c->err)
            err = c->err;
    return err;
}

const struct commit_member *commit_members_first_failed(void)
{
    for (struct commit_member *c = members; c; c = c->next)
        if (c->err)
            return c;
    return NULL;
}

/* ---- messages from the home rank (progress thread) ------------------------------------------ */

/* Is c the member that a collection up to notice `upto` of set `key` takes? The newest such
 * version of its path; older ones are dropped by the caller. (lock held) */
static int collectable(const struct commit_member *c, const char *key, uint64_t upto)
{
    return c->inflight_id == 0 && !c->held && c->notice <= upto && strcmp(c->m.set_key, key) == 0;
}

static void on_collect(int home, struct cmsg *in)
{
    uint32_t id = cmsg_get_u32(in);
    const char *key = cmsg_get_str(in);
    uint64_t upto = cmsg_get_u64(in);
    struct cmsg out;
    cmsg_init(&out, MSG_MEMBERS);
    cmsg_put_u32(&out, id);
    pthread_mutex_lock(&commit_g.lock);
    /* A staging file that vanished was unlinked by another process of this node (the program
     * removed the name): that member is dropped, never committed. Of several versions of one
     * path in the collection, only the newest reaches the file system. */
    for (struct commit_member *c = members; c;) {
        struct commit_member *next = c->next;
        struct stat st;
        int drop = 0;
        if (collectable(c, key, upto)) {
            if (SLUICE_REAL(stat)(c->m.stage_path, &st) != 0 && errno == ENOENT) {
                SLUICE_REAL(unlink)(c->meta_path);
                member_remove(c);
                c = next;
                continue;
            }
            for (struct commit_member *o = next; o && !drop; o = o->next)
                drop = collectable(o, key, upto) && strcmp(o->m.path, c->m.path) == 0;
        }
        if (drop && c->sealed) {
            c->held = 1; /* an older node-local version still names it: goes once this one is durable */
        } else if (drop) {
            unlink_staged(c);
            member_remove(c);
        }
        c = next;
    }
    uint32_t n = 0;
    for (struct commit_member *c = members; c; c = c->next)
        n += collectable(c, key, upto);
    cmsg_put_u32(&out, n);
    for (struct commit_member *c = members; c; c = c->next) {
        if (!collectable(c, key, upto))
            continue;
        c->inflight_id = id;
        c->inflight_home = home;
        c->err = 0;
        cmsg_put_u64(&out, c->seq);
        cmsg_put_str(&out, c->m.path);
        cmsg_put_u32(&out, (uint32_t)c->m.member_rank);
        cmsg_put_u32(&out, (uint32_t)c->m.writer_rank);
        cmsg_put_u64(&out, c->m.size);
        cmsg_put_u64(&out, (uint64_t)c->mtime_ns);
        cmsg_put_u32(&out, c->m.mode);
        const char *slash = strrchr(c->m.stage_path, '/');
        cmsg_put_str(&out, slash ? slash + 1 : c->m.stage_path); /* its node's writer opens it */
    }
    pthread_mutex_unlock(&commit_g.lock);
    cmsg_put_u64(&out, commit_twophase_node_id()); /* aggregator selection (twophase_home.c) */
    cmsg_put_u64(&out, commit_direct_stage_key()); /* who writes it (direct_writers.c) */
    commit_send(home, &out);
}

const char *commit_member_stage_path(int home, uint32_t id, uint64_t seq)
{
    const char *path = NULL;
    pthread_mutex_lock(&commit_g.lock);
    for (struct commit_member *c = members; c && !path; c = c->next)
        if (c->seq == seq && c->inflight_id == id && c->inflight_home == home)
            path = c->m.stage_path; /* in flight: the record and its file stay until DONE */
    pthread_mutex_unlock(&commit_g.lock);
    return path;
}

static void on_done(int home, struct cmsg *in)
{
    uint32_t id = cmsg_get_u32(in);
    int err = (int)cmsg_get_u32(in);
    uint64_t version = cmsg_get_u64(in);
    char key[PATH_MAX] = "";
    pthread_mutex_lock(&commit_g.lock);
    for (struct commit_member *c = members; c;) {
        struct commit_member *next = c->next;
        if (c->inflight_id == id && c->inflight_home == home) {
            snprintf(key, sizeof key, "%s", c->m.set_key);
            c->inflight_id = 0;
            if (err == 0) {
                unlink_staged(c);
                member_remove(c);
            } else {
                c->err = err;
            }
        }
        c = next;
    }
    if (err == 0 && key[0]) { /* a durable version: older node-local ones are obsolete */
        for (struct commit_member *c = members; c;) {
            struct commit_member *next = c->next;
            if (c->held && strcmp(c->m.set_key, key) == 0) {
                unlink_staged(c);
                member_remove(c);
            }
            c = next;
        }
        commit_level_drained(key, version);
    }
    pthread_cond_broadcast(&commit_g.cv);
    pthread_mutex_unlock(&commit_g.lock);
}

/* The home keeps this collection node-local as `version` (redundancy/level_rank.c). Of several
 * versions of one path in it only the newest counts; members of older node-local versions that
 * no version among the newest SLUICE_KEEP needs go. (progress thread) */
static void on_seal(struct cmsg *in)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cmsg_get_str(in));
    uint64_t upto = cmsg_get_u64(in), version = cmsg_get_u64(in);
    int nprocs = (int)cmsg_get_u32(in);
    if (in->bad)
        return;
    pthread_mutex_lock(&commit_g.lock);
    size_t n = 0;
    for (struct commit_member *c = members; c; c = c->next)
        n += collectable(c, key, upto) && !c->sealed;
    struct commit_member **mine = calloc(n ? n : 1, sizeof(*mine));
    size_t k = 0;
    for (struct commit_member *c = members; mine && c; c = c->next)
        if (collectable(c, key, upto) && !c->sealed)
            mine[k++] = c;
    for (size_t i = 0; i < k; i++) { /* newest per path: later in the list, larger seq */
        for (size_t j = i + 1; mine[i] && j < k; j++) {
            if (mine[j] && strcmp(mine[i]->m.path, mine[j]->m.path) == 0) {
                unlink_staged(mine[i]);
                member_remove(mine[i]);
                mine[i] = NULL;
            }
        }
        if (mine[i])
            mine[i]->sealed = version;
    }
    commit_level_sealed(key, version, nprocs, (const struct commit_member *const *)mine, k);
    free(mine);
    /* Keep what the newest SLUICE_KEEP versions need: an older copy superseded by one sealed at or
     * before the oldest of them serves none of them. */
    uint64_t keep_from = version + 1 > sluice_config.KEEP ? version + 1 - sluice_config.KEEP : 1;
    for (struct commit_member *c = members; c;) {
        struct commit_member *next = c->next;
        int old = c->sealed && c->inflight_id == 0 && strcmp(c->m.set_key, key) == 0;
        for (struct commit_member *o = members; old && o; o = o->next) {
            if (o->sealed > c->sealed && o->sealed <= keep_from && strcmp(o->m.path, c->m.path) == 0 &&
                strcmp(o->m.set_key, key) == 0) {
                unlink_staged(c);
                member_remove(c);
                break;
            }
        }
        c = next;
    }
    uint64_t oldest = version;
    for (struct commit_member *c = members; c; c = c->next)
        if (c->sealed && c->sealed < oldest && strcmp(c->m.set_key, key) == 0)
            oldest = c->sealed;
    commit_level_forget(key, oldest - 1);
    pthread_mutex_unlock(&commit_g.lock);
}

static void on_flushed(struct cmsg *in)
{
    uint64_t req = cmsg_get_u64(in);
    int err = (int)cmsg_get_u32(in);
    uint64_t version = cmsg_get_u64(in);
    pthread_mutex_lock(&commit_g.lock);
    for (struct request *r = requests; r; r = r->next) {
        if (r->id == req && err == COMMIT_QUERY_PENDING) {
            r->acked = 1;
        } else if (r->id == req) {
            r->done = 1;
            r->err = err;
            r->version = version;
        }
    }
    pthread_cond_broadcast(&commit_g.cv);
    pthread_mutex_unlock(&commit_g.lock);
}

static void rank_handle(int src, uint32_t type, struct cmsg *m)
{
    switch (type) {
    case MSG_COLLECT:
        on_collect(src, m);
        break;
    case MSG_SEAL:
        on_seal(m);
        break;
    case MSG_DONE:
        on_done(src, m);
        break;
    case MSG_FLUSHED:
        on_flushed(m);
        break;
    default:
        break;
    }
}

void commit_rank_register(void)
{
    static const uint32_t types[] = {MSG_COLLECT, MSG_DONE, MSG_FLUSHED, MSG_SEAL};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        commit_transport_on(types[i], rank_handle);
}

/* Forked child: the parent still owns these (their memory is simply not reused). */
void commit_member_forget_all(void)
{
    members = NULL;
    requests = NULL;
    synced_list = NULL;
}

/* Asks the home of each set this process has members in to commit it; each wait is bounded
 * by timeout_ns (0: unbounded). */
int commit_flush_own_sets(uint64_t timeout_ns)
{
    if (commit_ensure_started() != 0)
        return -EIO;
    int worst = 0;
    pthread_mutex_lock(&commit_g.lock);
    for (;;) {
        /* One set at a time; the list changes while we wait, so look again each round. */
        char key[PATH_MAX] = "";
        /* In flight too: the answer to FLUSH comes after that commit's DONE. */
        for (struct commit_member *c = members; c && !key[0]; c = c->next)
            if (c->err == 0)
                snprintf(key, sizeof key, "%s", c->m.set_key);
        if (!key[0])
            break;
        int rc = flush_set_wait(key, timeout_ns);
        if (rc) {
            worst = rc;
            break;
        }
    }
    pthread_mutex_unlock(&commit_g.lock);
    return worst;
}

int commit_flush_sets_once(uint64_t deadline_ns, int *nsets)
{
    *nsets = 0;
    if (commit_ensure_started() != 0)
        return -EIO;
    /* The sets this process holds members of now (node-local versions' members included), each
     * asked once: what the program closes later is no version this drain owes. */
    char(*keys)[PATH_MAX] = NULL;
    int n = 0, worst = 0;
    pthread_mutex_lock(&commit_g.lock);
    for (struct commit_member *c = members; c; c = c->next) {
        int seen = c->err != 0;
        for (int i = 0; !seen && i < n; i++)
            seen = strcmp(keys[i], c->m.set_key) == 0;
        void *k = seen ? NULL : realloc(keys, (size_t)(n + 1) * sizeof *keys);
        if (k) {
            keys = k;
            snprintf(keys[n++], PATH_MAX, "%s", c->m.set_key);
        }
    }
    for (int i = 0; i < n && worst == 0; i++) {
        uint64_t now = sluice_now_ns();
        worst = now >= deadline_ns ? -ETIMEDOUT : flush_set_wait(keys[i], deadline_ns - now);
    }
    pthread_mutex_unlock(&commit_g.lock);
    free(keys);
    *nsets = n;
    return worst;
}

/* Right after the transport starts (lock held): the members adopted from the image that
 * exec'ed this one (commit_adopt.c) enter like fresh closes. */
void commit_members_adopt_locked(void)
{
    size_t n = 0;
    struct sluice_staged_member *v = commit_adopted_take(&n);
    for (size_t i = 0; i < n; i++)
        member_add(&v[i]);
    free(v);
}
