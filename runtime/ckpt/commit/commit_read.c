/* SPDX-License-Identifier: MIT */
/* Reads for capture: the latest readable version of a member, from (in this order of
 * preference) this process's closed members, a closed member staged by another process of this
 * node, or the committed container. Before looking, a multi-rank job asks the set's home
 * whether another rank's closed version of the member is waiting for a commit, and if so waits
 * (bounded) for that commit without forcing it, so that a member closed anywhere is visible
 * once its writer closed it and a read never splits a step into partial versions. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/commit_array.h"

#include "ckpt/commit/pattern.h"
#include "ckpt/commit/stage.h"
#include "ckpt/commit/stage_index.h"
#include "ckpt/container/container.h"
#include "common/host_id.h"
#include "common/log.h"
#include "common/pid_alive.h"
#include "common/real.h"
#include "mpi/roles.h"
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int commit_request_unlink(const char *set_key, const char *path); /* commit_member.c */
int commit_key_of(const char *path, char *key, size_t cap);       /* commit_exit.c */

/* A closed member staged by another running process of this node (another rank). */
struct staged_hit {
    char data_path[PATH_MAX];
    uint64_t size;
    int64_t mtime_ns;
    unsigned mode;
};

/* The member of sidecar meta (parsed into sm) if it is closed and written by a running process
 * of this host whose data file is whole: 1 (hit filled if newer than what it holds, or found is
 * 0), else 0. */
static int staged_whole(const char *meta, const struct sluice_stage_meta *sm, int found,
                        struct staged_hit *hit)
{
    char data[PATH_MAX];
    size_t ml = strlen(meta), sl = strlen(SLUICE_STAGE_META_SUFFIX);
    if (!sm->closed || ml < sl ||
        snprintf(data, sizeof data, "%.*s%s", (int)(ml - sl), meta, SLUICE_STAGE_DATA_SUFFIX) >=
            (int)sizeof data)
        return 0;
    /* Only members of running processes: what a dead one left is a crash leftover, which
     * `sluice-ckpt recover` decides about; until then the committed version stands. A writer
     * of another host (a shared stage folder) cannot be probed: its member reaches this read
     * through its set's home (sync_with_home). */
    struct stat st;
    if (!sluice_host_id_is_mine(sm->host) || SLUICE_REAL(stat)(data, &st) != 0 ||
        (uint64_t)st.st_size != sm->m.size)
        return 0;
    /* Its writer wrote it last at mt: a process with its pid that started later is another. */
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (sm->pid != (long)getpid() && !sluice_pid_running(sm->pid, mt))
        return 0;
    if (!found || mt > hit->mtime_ns) {
        snprintf(hit->data_path, sizeof hit->data_path, "%s", data);
        hit->size = sm->m.size;
        hit->mtime_ns = mt;
        hit->mode = sm->m.mode;
    }
    return 1;
}

/* Sidecar meta parsed into sm (buf: SLUICE_STAGE_META_MAX bytes): 0, else -1. */
static int read_sidecar(const char *meta, char *buf, struct sluice_stage_meta *sm)
{
    ssize_t n = sluice_stage_read_meta(meta, buf, SLUICE_STAGE_META_MAX);
    return n > 0 && sluice_stage_meta_parse(buf, (size_t)n, sm) == 0 ? 0 : -1;
}

/* The member of sidecar meta if it is a closed copy of path by a running process whose data
 * file is whole: 1 (hit filled as staged_whole does), else 0. */
static int staged_copy(const char *meta, const char *path, char *buf, int found, struct staged_hit *hit)
{
    struct sluice_stage_meta sm;
    return read_sidecar(meta, buf, &sm) == 0 && strcmp(sm.m.path, path) == 0 &&
           staged_whole(meta, &sm, found, hit);
}

/* The path of the closed member of sidecar meta staged by another running process of this node
 * (staged_copy's rules, whatever its path), in out (PATH_MAX): 1, else 0. */
static int staged_elsewhere_path(const char *meta, char *buf, char *out)
{
    struct sluice_stage_meta sm;
    struct staged_hit hit;
    if (read_sidecar(meta, buf, &sm) != 0 || sm.pid == (long)getpid() || !staged_whole(meta, &sm, 0, &hit))
        return 0;
    snprintf(out, PATH_MAX, "%s", sm.m.path);
    return 1;
}

int sluice_commit_staged_below(const char *dir, size_t len, int (*fn)(void *arg, const char *path), void *arg)
{
    const char *stage = sluice_stage_dir();
    DIR *d = stage ? SLUICE_REAL(opendir)(stage) : NULL;
    if (!d)
        return 0;
    char *buf = malloc(SLUICE_STAGE_META_MAX);
    int stop = 0;
    struct dirent *e;
    while (buf && !stop && (e = SLUICE_REAL(readdir)(d)) != NULL) {
        char meta[PATH_MAX], data[PATH_MAX], path[PATH_MAX];
        uint64_t size;
        int64_t mt;
        /* stat's answer decides (a newer unlink or rename of the path), as for committed
         * members: a listing shows what stat and open find. */
        if (sluice_stage_sidecar(stage, e->d_name, meta, sizeof meta, data, sizeof data) &&
            staged_elsewhere_path(meta, buf, path) && strncmp(path, dir, len) == 0 && path[len] == '/' &&
            sluice_commit_stat_member(path, &size, &mt, NULL) == 0)
            stop = fn(arg, path);
    }
    free(buf);
    SLUICE_REAL(closedir)(d);
    return stop;
}

/* The newest closed copy of path staged on this node, through the stage folder's index by
 * path (stage_index.h): a link and a sidecar, whatever the number of processes of the node. */
static int find_staged_elsewhere(const char *path, struct staged_hit *hit)
{
    char meta[PATH_MAX];
    if (!sluice_stage_index_get(path, meta, sizeof meta))
        return 0;
    char *buf = malloc(SLUICE_STAGE_META_MAX);
    int found = buf && staged_copy(meta, path, buf, 0, hit);
    free(buf);
    return found;
}

/* Every closed copy of path staged on this node, by a scan of all sidecars (unlink must find
 * older copies too, which the index does not name). */
static int find_staged_scan(const char *path, struct staged_hit *hit)
{
    const char *dir = sluice_stage_dir();
    if (!dir)
        return 0;
    DIR *d = SLUICE_REAL(opendir)(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    char *buf = malloc(SLUICE_STAGE_META_MAX);
    while (buf && (e = SLUICE_REAL(readdir)(d)) != NULL) {
        char meta[PATH_MAX], data[PATH_MAX];
        if (sluice_stage_sidecar(dir, e->d_name, meta, sizeof meta, data, sizeof data) &&
            staged_copy(meta, path, buf, found, hit))
            found = 1;
    }
    free(buf);
    SLUICE_REAL(closedir)(d);
    return found;
}

/* Makes sure that a version of path closed by another rank, if one is waiting for its set's
 * commit, has reached the container: asks the home, which answers at once when none is
 * waiting, else once the set's commit (complete, stale or at exit: never forced by a read, so
 * that a read does not split a step into partial versions) is durable. Bounded. A process
 * that has not used MPI yet does not start it just to read: it may be a shell about to exec
 * the real reader (which then owns the rank), and a restart reads committed data anyway;
 * closed members of other ranks on this node are seen through the stage folder. */
static int sync_with_home(const char *key, const char *path)
{
    pthread_mutex_lock(&commit_g.lock);
    int started = commit_g.started;
    pthread_mutex_unlock(&commit_g.lock);
    if (!started && !sluice_mpi_ready())
        return 0;
    if (commit_ensure_started() != 0 || !commit_g.use_mpi)
        return 0;
    /* Bounded, and said in a line (commit_query_wait): a home that does not answer fails the
     * read with ETIMEDOUT rather than let it read what may be an older version. */
    int rc = commit_query_wait(key, path, COMMIT_READ_WAIT_NS);
    return rc == -ETIMEDOUT ? rc : 0;
}

static int open_latest(const char *path, const char *key, int cloexec);

/* The member in a node-local version newer than the container's version `above` (a version
 * kept with SLUICE_DRAIN_EVERY above 1, docs/REDUNDANCY.md), as a staged hit. */
static int find_kept(const char *key, const char *path, uint64_t above, struct staged_hit *hit,
                     uint64_t *version)
{
    return commit_level_find(key, path, above, hit->data_path, sizeof hit->data_path, &hit->size,
                             &hit->mtime_ns, &hit->mode, version);
}

int sluice_commit_open_member(const char *path, int open_flags)
{
    int cloexec = (open_flags & O_CLOEXEC) ? O_CLOEXEC : 0;

    /* Our own closed member: its staging file is exactly its bytes and is never modified. */
    pthread_mutex_lock(&commit_g.lock);
    struct commit_member *own = commit_member_find(path);
    int fd = own ? SLUICE_REAL(open)(own->m.stage_path, O_RDONLY | cloexec) : -1;
    pthread_mutex_unlock(&commit_g.lock);
    if (fd >= 0)
        return fd;

    char key[PATH_MAX];
    if (commit_key_of(path, key, sizeof key) != 0)
        return -ENOENT;
    /* A closed copy staged on this node is the newest one there is (or, once committed, the
     * container has it): no need to ask the home. */
    struct staged_hit hit;
    if (!find_staged_elsewhere(path, &hit) && (fd = sync_with_home(key, path)) != 0)
        return fd;
    /* A staged copy found by the scan is deleted once the container holding it is durable, so
     * it can vanish before we open it: the container has it by then, so look again. */
    for (int attempt = 0;; attempt++) {
        fd = open_latest(path, key, cloexec);
        if (fd != -EAGAIN)
            return fd;
        if (attempt == 8)
            return -ENOENT;
    }
}

/* The newest of a staged copy of another local process and the container's member, opened.
 * -EAGAIN if the staged copy vanished between the scan and the open. */
static int open_latest(const char *path, const char *key, int cloexec)
{
    int fd;
    struct staged_hit hit;
    int staged = find_staged_elsewhere(path, &hit);

    char container[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    long idx = -1;
    if (sluice_container_name(key, container, sizeof container) == 0) {
        int rc = sluice_container_open(container, &c, err, sizeof err);
        if (rc == -EIO) {
            sluice_log_error("%s (reading member %s)", err, path);
            if (!staged)
                return -EIO;
        }
        if (c)
            idx = sluice_container_find(c, path);
    }
    uint64_t kept_version = 0;
    int kept = staged ? 0 : find_kept(key, path, c ? c->meta.version : 0, &hit, &kept_version);
    if (kept < 0) {
        if (c)
            sluice_container_close(c);
        return kept;
    }
    if (kept) {
        staged = 1;
        idx = -1; /* a newer version than the container's */
        if (sluice_trace_active())
            sluice_trace_instant(SLUICE_EV_CKPT_LOCAL_READ, sluice_trace_string(path), kept_version,
                                 hit.size);
    }
    if (staged && (idx < 0 || hit.mtime_ns >= c->members[idx].mtime_ns)) {
        if (c)
            sluice_container_close(c);
        fd = SLUICE_REAL(open)(hit.data_path, O_RDONLY | cloexec);
        return fd >= 0 ? fd : errno == ENOENT ? -EAGAIN : -errno;
    }
    /* A global array read by a job of another decomposition: its block is cut from the array. */
    if (c && c->meta.array_record[0] && (fd = commit_array_open(c, key, path, cloexec)) != 1) {
        sluice_container_close(c);
        return fd;
    }
    if (idx < 0) {
        if (c)
            sluice_container_close(c);
        return -ENOENT;
    }

    /* A private copy, verified before the program sees a byte of it. */
    fd = memfd_create("sluice-member", cloexec ? MFD_CLOEXEC : 0);
    int rc = fd < 0 ? -errno : sluice_container_copy_member(c, (uint32_t)idx, fd, err, sizeof err);
    if (rc == 0 && SLUICE_REAL(lseek)(fd, 0, SEEK_SET) != 0)
        rc = -errno;
    if (rc == 0 && sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_CONTAINER_READ, sluice_trace_string(container), c->members[idx].size,
                             (uint64_t)c->members[idx].member_rank);
    if (rc == -EIO)
        sluice_log_error("%s", err);
    sluice_container_close(c);
    if (rc) {
        if (fd >= 0)
            SLUICE_REAL(close)(fd);
        return rc;
    }
    return fd;
}

/* Size and time of the latest version, or -ENOENT. */
static int stat_once(const char *path, const char *key, uint64_t *size, int64_t *mtime_ns, unsigned *mode)
{
    struct staged_hit hit;
    int staged = find_staged_elsewhere(path, &hit);
    char container[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    uint64_t kept_version;
    if (sluice_container_name(key, container, sizeof container) == 0 &&
        sluice_container_open(container, &c, err, sizeof err) == 0) {
        int kept = staged ? 0 : find_kept(key, path, c->meta.version, &hit, &kept_version);
        if (kept < 0) {
            sluice_container_close(c);
            return kept;
        }
        if (kept) {
            sluice_container_close(c);
            c = NULL;
            staged = 1;
        }
    } else if (!staged) {
        staged = find_kept(key, path, 0, &hit, &kept_version);
        if (staged < 0)
            return staged;
    }
    if (c) {
        long idx = sluice_container_find(c, path);
        if (!staged && c->meta.array_record[0]) {
            int a = commit_array_size(c, key, path, size);
            if (a != 1) {
                *mtime_ns = c->meta.created_ns;
                *mode = 0;
                sluice_container_close(c);
                return a;
            }
        }
        if (idx >= 0 && (!staged || c->members[idx].mtime_ns > hit.mtime_ns)) {
            *size = c->members[idx].size;
            *mtime_ns = c->members[idx].mtime_ns;
            *mode = 0;
            sluice_container_close(c);
            return 0;
        }
        sluice_container_close(c);
    }
    if (staged) {
        *size = hit.size;
        *mtime_ns = hit.mtime_ns;
        *mode = hit.mode;
        return 0;
    }
    return -ENOENT;
}

int sluice_commit_stat_member(const char *path, uint64_t *size, int64_t *mtime_ns, unsigned *mode)
{
    unsigned ignored;
    if (mode == NULL)
        mode = &ignored;
    pthread_mutex_lock(&commit_g.lock);
    struct commit_member *own = commit_member_find(path);
    if (own) {
        *size = own->m.size;
        *mtime_ns = own->mtime_ns;
        *mode = own->m.mode;
    }
    pthread_mutex_unlock(&commit_g.lock);
    if (own)
        return 0;
    char key[PATH_MAX];
    if (commit_key_of(path, key, sizeof key) != 0)
        return -ENOENT;
    /* Cheap first; only a miss asks the home (stat is frequent, a miss is rare). */
    if (stat_once(path, key, size, mtime_ns, mode) == 0)
        return 0;
    int rc = sync_with_home(key, path);
    return rc != 0 ? rc : stat_once(path, key, size, mtime_ns, mode);
}

int commit_unlink_committed(const char *set_key, const char *path)
{
    char key[PATH_MAX];
    if (set_key)
        snprintf(key, sizeof key, "%s", set_key);
    else if (commit_key_of(path, key, sizeof key) != 0)
        return -ENOENT;
    char container[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    int present = 0;
    if (sluice_container_name(key, container, sizeof container) == 0 &&
        sluice_container_open(container, &c, err, sizeof err) == 0) {
        present = sluice_container_find(c, path) >= 0;
        sluice_container_close(c);
    }
    if (!present && !set_key)
        return -ENOENT;
    int rc = commit_request_unlink(key, path);
    if (rc)
        return rc;
    return present ? 0 : -ENOENT;
}

/* Removes closed members of `path` staged by other running processes of this node; fills key
 * with their set key. Returns how many were taken away. */
int commit_unlink_staged_elsewhere(const char *path, char *key, size_t keycap)
{
    int n = 0;
    struct staged_hit hit;
    while (find_staged_scan(path, &hit)) {
        char meta[PATH_MAX];
        size_t l = strlen(hit.data_path), dl = strlen(SLUICE_STAGE_DATA_SUFFIX);
        snprintf(meta, sizeof meta, "%.*s%s", (int)(l - dl), hit.data_path, SLUICE_STAGE_META_SUFFIX);
        sluice_stage_index_drop(path, meta);
        if (SLUICE_REAL(unlink)(hit.data_path) != 0)
            break;
        SLUICE_REAL(unlink)(meta);
        if (!key[0])
            commit_key_of(path, key, keycap);
        n++;
    }
    return n;
}
