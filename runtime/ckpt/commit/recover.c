/* SPDX-License-Identifier: MIT */
/* `sluice-ckpt recover`: commits what a crashed job left in the stage folder (recover.h).
 *
 * Single process, plain libc (this is util code: the tool links it without the shim). The
 * sidecars (stage.h) say what each staging file holds; members whose writer still runs are left
 * to it. For each selected set the new version holds the staged members plus every member of
 * the previous version that was not staged again, so recovering never loses committed data.
 * A member still open when its writer died is not taken (it may be half of a rewrite: the
 * previous version stays) unless the caller asks for it (SLUICE_RECOVER_TAKE_OPEN). */
#include "ckpt/commit/recover.h"
#include "ckpt/commit/folder_lock.h"

#include "ckpt/commit/stage.h"
#include "ckpt/commit/stage_index.h"
#include "ckpt/container/container.h"
#include "common/pid_alive.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "config/config.h"
#include "sluice_version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct staged {
    struct sluice_stage_meta meta;
    char data_path[PATH_MAX];
    char meta_path[PATH_MAX];
    int64_t mtime_ns;
    int superseded; /* an newer staged version of the same path exists */
    int aside;      /* open at the crash and not taken: reported, its files kept */
};

struct staged_list {
    struct staged *v;
    size_t n, cap;
};

static void say(FILE *report, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *report, const char *fmt, ...)
{
    if (!report)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(report, fmt, ap);
    va_end(ap);
    fputc('\n', report);
}

/* Absolute form of a user argument, without requiring it to exist; -1 when it does not fit
 * (never a cut path, which would name other files). */
static int absolute(const char *p, char *out, size_t cap)
{
    if (realpath(p, out))
        return 0;
    int n;
    if (p[0] == '/') {
        n = snprintf(out, cap, "%s", p);
    } else {
        char cwd[PATH_MAX];
        if (!SLUICE_REAL(getcwd)(cwd, sizeof cwd))
            return -1;
        n = snprintf(out, cap, "%s/%s", cwd, p);
    }
    if (n < 0 || (size_t)n >= cap)
        return -1;
    size_t l = strlen(out);
    while (l > 1 && out[l - 1] == '/')
        out[--l] = '\0';
    return 0;
}

static int under(const char *path, const char *dir)
{
    size_t l = strlen(dir);
    if (strcmp(path, dir) == 0)
        return 1;
    if (l == 1 && dir[0] == '/')
        return 1;
    return strncmp(path, dir, l) == 0 && path[l] == '/';
}

static int selected(const struct staged *s, const char *container, char **abs, int npaths)
{
    if (npaths == 0)
        return 1;
    for (int i = 0; i < npaths; i++) {
        if (strcmp(abs[i], s->meta.m.set_key) == 0 || under(s->meta.m.path, abs[i]) ||
            under(container, abs[i]))
            return 1;
    }
    return 0;
}

/* A sidecar's temporary file (m-<host>-<pid>-<seq>.meta.tmp...) whose writer died while writing
 * it describes nothing: removed, with a line; so are the shared round buffers of a two-phase
 * aggregator that died during a commit (m-<host>-<pid>-tp<tag>.round, twophase_shm.h). Only this
 * host's: another's writer cannot be probed. */
static void remove_dead_temp(const char *stage_dir, const char *name, FILE *report)
{
    char path[PATH_MAX], host[SLUICE_HOST_ID_LEN + 1];
    struct stat st;
    long pid = 0;
    if (sluice_stage_name_writer(name, host, &pid) != 0 || !sluice_host_id_is_mine(host) ||
        snprintf(path, sizeof path, "%s/%s", stage_dir, name) >= (int)sizeof path || lstat(path, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
        sluice_pid_running(pid, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec))
        return;
    if (unlink(path) == 0)
        say(report, "removed %s, left by a process killed while writing it", path);
}

/* An exec mark (m-<host>-<pid>-exec, stage_mark.c) of a process that is gone: it describes no
 * data, and would only make the next process of that pid look for inherited members. Removed
 * without a line: this host's once its process is gone, another host's only with
 * --other-hosts (that host's job is gone: its process cannot be probed from here). */
static void remove_dead_mark(const char *stage_dir, const char *name, unsigned flags)
{
    char path[PATH_MAX], host[SLUICE_HOST_ID_LEN + 1];
    struct stat st;
    long pid = 0;
    size_t n = strlen(name), ml = strlen("-" SLUICE_STAGE_EXEC_MARK);
    if (n <= ml || strcmp(name + n - ml, "-" SLUICE_STAGE_EXEC_MARK) != 0 ||
        sluice_stage_name_writer(name, host, &pid) != 0 || !host[0] ||
        snprintf(path, sizeof path, "%s/%s", stage_dir, name) >= (int)sizeof path || lstat(path, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != getuid())
        return;
    bool mine = sluice_host_id_is_mine(host);
    if (mine ? sluice_pid_running(pid, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)
             : !(flags & SLUICE_RECOVER_OTHER_HOSTS))
        return;
    unlink(path);
}

static int collect(const char *stage_dir, struct staged_list *out, unsigned flags, FILE *report)
{
    DIR *d = opendir(stage_dir);
    if (!d)
        return -errno;
    struct dirent *e;
    static char buf[SLUICE_STAGE_META_MAX];
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (strstr(e->d_name, SLUICE_STAGE_META_SUFFIX ".tmp") ||
            (nl > 6 && strcmp(e->d_name + nl - 6, ".round") == 0)) {
            remove_dead_temp(stage_dir, e->d_name, report);
            continue;
        }
        remove_dead_mark(stage_dir, e->d_name, flags);
        struct staged s;
        memset(&s, 0, sizeof s);
        if (!sluice_stage_sidecar(stage_dir, e->d_name, s.meta_path, sizeof s.meta_path, s.data_path,
                                  sizeof s.data_path))
            continue;
        unsigned owner = 0;
        long len = sluice_stage_read_own(s.meta_path, buf, sizeof buf, &owner);
        if (len == -EPERM) {
            say(report, "warning: skipped %s: it belongs to uid %u, not to you", s.meta_path, owner);
            continue;
        }
        if (len <= 0 || (size_t)len >= sizeof buf ||
            sluice_stage_meta_parse(buf, (size_t)len, &s.meta) != 0) {
            say(report, "skipped %s: not a sluice stage sidecar", s.meta_path);
            continue;
        }
        struct stat mst;
        int64_t meta_ns = lstat(s.meta_path, &mst) == 0
                              ? (int64_t)mst.st_mtim.tv_sec * 1000000000 + mst.st_mtim.tv_nsec
                              : INT64_MAX;
        if (!sluice_host_id_is_mine(s.meta.host)) {
            if (!(flags & SLUICE_RECOVER_OTHER_HOSTS)) {
                say(report,
                    "skipped %s: staged on another host (id %s, pid %ld), whose writer cannot be probed from "
                    "here: recover there, or with --other-hosts once that host's job is gone",
                    s.meta.m.path, s.meta.host, s.meta.pid);
                continue;
            }
        } else if (s.meta.pid != (long)getpid() && sluice_pid_running(s.meta.pid, meta_ns)) {
            say(report, "skipped %s: its writer (pid %ld) is still running", s.meta.m.path, s.meta.pid);
            continue;
        }
        struct stat st;
        if (lstat(s.data_path, &st) != 0) {
            /* Its writer is gone (checked above) and staged nothing: a process killed between
             * its sidecar and its staging file, or between removing the two after a commit. */
            if (errno == ENOENT && s.meta.pid != (long)getpid() && unlink(s.meta_path) == 0)
                say(report, "removed %s: its writer (pid %ld) ended before staging any data of %s",
                    s.meta_path, s.meta.pid, s.meta.m.path);
            else
                say(report, "skipped %s: staging file %s is missing", s.meta.m.path, s.data_path);
            continue;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            say(report, "warning: skipped %s: staging file %s is not a file of yours", s.meta.m.path,
                s.data_path);
            continue;
        }
        if (!s.meta.closed) {
            /* A crash left it open: possibly torn (the writer died between two writes). */
            s.meta.m.size = (uint64_t)st.st_size;
            s.aside = !(flags & SLUICE_RECOVER_TAKE_OPEN);
        } else if ((uint64_t)st.st_size != s.meta.m.size) {
            say(report, "skipped %s: staging file %s holds %lld bytes, its sidecar says %llu", s.meta.m.path,
                s.data_path, (long long)st.st_size, (unsigned long long)s.meta.m.size);
            continue;
        }
        snprintf(s.meta.m.stage_path, sizeof s.meta.m.stage_path, "%s", s.data_path);
        s.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 64;
            struct staged *v = realloc(out->v, cap * sizeof(*v));
            if (!v) {
                closedir(d);
                return -ENOMEM;
            }
            out->v = v;
            out->cap = cap;
        }
        out->v[out->n++] = s;
    }
    closedir(d);
    return 0;
}

/* Sort: by set, then path, newest last. */
static int staged_cmp(const void *a, const void *b)
{
    const struct staged *x = a, *y = b;
    int c = strcmp(x->meta.m.set_key, y->meta.m.set_key);
    if (c)
        return c;
    c = strcmp(x->meta.m.path, y->meta.m.path);
    if (c)
        return c;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->data_path, y->data_path);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* SLUICE_BLOCK_SIZE as the library reads it (config); unset or invalid: fallback, and an invalid
 * one says so. */
static uint32_t block_size_from_env(uint32_t fallback, FILE *report)
{
    const char *v = getenv("SLUICE_BLOCK_SIZE");
    struct sluice_config cfg;
    if (v == NULL || *v == '\0')
        return fallback;
    if (sluice_config_parse_one(&cfg, SLUICE_CFG_BLOCK_SIZE, v) != 0) {
        say(report, "invalid value SLUICE_BLOCK_SIZE='%s': expected %s; the block size stays %u", v,
            sluice_cfg_table[SLUICE_CFG_BLOCK_SIZE].accepts, (unsigned)fallback);
        return fallback;
    }
    return (uint32_t)cfg.BLOCK_SIZE;
}

/* The permissions of the recovered version: never more open than the previous version's file,
 * nor than a new file of this process would be (0666 less the umask). */
static mode_t container_mode(const struct staged *v, size_t n, const struct sluice_container *old)
{
    mode_t mode = 0, known = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].meta.m.mode) {
            mode = known ? (mode & v[i].meta.m.mode) : v[i].meta.m.mode;
            known = 1;
        }
    }
    if (!known)
        mode = 0666 & ~sluice_process_umask();
    struct stat st;
    if (old && old->fd >= 0 && fstat(old->fd, &st) == 0)
        mode &= st.st_mode & 07777;
    return mode;
}

/* Makes the new version durable and visible: fsync the file, rename over the old version,
 * fsync the folder so that the rename itself survives a crash. */
static int publish(int fd, const char *tmp, const char *final, const char *dir)
{
    if (fsync(fd) != 0)
        return -errno;
    if (rename(tmp, final) != 0)
        return -errno;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        int rc = fsync(dfd) != 0 ? -errno : 0;
        close(dfd);
        if (rc && rc != -EINVAL)
            return rc;
    }
    return 0;
}

/* The previous version cannot be read: the recovered one must not replace it (its members
 * would go with it). It is kept as .NAME.damaged-tNS beside the container, as the engine's
 * commits keep one (commit_home.c), and the staged members alone make the new version. */
static int set_aside_damaged(const char *container, const char *why, FILE *report)
{
    char aside[PATH_MAX], tag[32];
    snprintf(tag, sizeof tag, "t%lld", (long long)now_ns());
    if (sluice_container_damaged_name(container, tag, aside, sizeof aside) != 0)
        return -ENAMETOOLONG;
    if (rename(container, aside) != 0) {
        int rc = -errno;
        say(report, "%s: previous version unreadable (%s) and cannot be set aside: %s", container, why,
            strerror(-rc));
        return rc;
    }
    say(report, "%s: previous version unreadable (%s); kept as %s, recovering the staged members alone",
        container, why, aside);
    return 0;
}

/* Temporary files of `container` that crashed commits left (random names: nobody overwrites
 * them). Called with the folder lock held: every live commit takes it, so none is in flight.
 * Only regular files of this user; unlinkat never follows a link. */
static void remove_leftover_temps(const char *dir, const char *container, FILE *report)
{
    const char *base = strrchr(container, '/');
    base = base ? base + 1 : container;
    char prefix[PATH_MAX];
    int plen = snprintf(prefix, sizeof prefix, ".%s.tmp.", base);
    DIR *d = opendir(dir);
    if (!d || plen <= 0 || (size_t)plen >= sizeof prefix) {
        if (d)
            closedir(d);
        return;
    }
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || !sluice_container_is_temp_name(e->d_name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            say(report, "removed %s/%s, left by an interrupted commit", dir, e->d_name);
    }
    closedir(d);
}

/* A lock's owner line written by a process killed before it linked the file to the lock's name
 * (DIR/.sluice.lock.<host>-<pid>-<tid>, folder_lock.h): this host's, once its process is gone. */
static void remove_dead_lock_lines(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    const char *prefix = SLUICE_FOLDER_LOCK_NAME ".";
    size_t plen = strlen(prefix);
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        char host[SLUICE_HOST_ID_LEN + 1];
        long pid = 0, tid = 0;
        int used = 0;
        if (strncmp(e->d_name, prefix, plen) != 0 ||
            sscanf(e->d_name + plen, "%16[0-9a-f]-%ld-%ld%n", host, &pid, &tid, &used) != 3 ||
            e->d_name[plen + (size_t)used] != '\0' || !sluice_host_id_is_mine(host) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid() ||
            sluice_pid_running(pid, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec))
            continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* Members kept aside (open when their writer died) are reported; returns how many are taken. */
static size_t report_aside(const struct staged *v, size_t n, FILE *report)
{
    size_t taken = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].aside) {
            taken++;
            continue;
        }
        say(report,
            "%s: kept aside, not committed: it was still open when its writer (pid %ld) died, so it "
            "may be torn; the previous version stays; staging file %s (%llu bytes); "
            "`sluice-ckpt recover --take-open` commits it as it is",
            v[i].meta.m.path, v[i].meta.pid, v[i].data_path, (unsigned long long)v[i].meta.m.size);
    }
    return taken;
}

/* What the new version is written from: sources and the descriptors they read (closed after). */
struct sources {
    struct sluice_container_source *src;
    int *fds;
    size_t nsrc, nfds;
    uint64_t bytes, staged_members;
};

/* The newest taken staged copy of each path; older staged versions are marked superseded. */
static int add_staged(struct staged *v, size_t n, struct sources *s, FILE *report)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].aside)
            continue;
        size_t later = i + 1; /* the newest staged copy of this path that is taken */
        while (later < n && v[later].aside && strcmp(v[i].meta.m.path, v[later].meta.m.path) == 0)
            later++;
        if (later < n && strcmp(v[i].meta.m.path, v[later].meta.m.path) == 0) {
            v[i].superseded = 1; /* an older staged version: dropped with the set's files */
            continue;
        }
        int fd = open(v[i].data_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            int rc = -errno;
            say(report, "%s: cannot open staging file %s: %s", v[i].meta.m.path, v[i].data_path,
                strerror(errno));
            return rc;
        }
        s->fds[s->nfds++] = fd;
        s->src[s->nsrc++] = (struct sluice_container_source){.path = v[i].meta.m.path,
                                                             .member_rank = v[i].meta.m.member_rank,
                                                             .writer_rank = v[i].meta.m.writer_rank,
                                                             .mtime_ns = v[i].mtime_ns,
                                                             .fd = fd,
                                                             .buf = NULL,
                                                             .size = v[i].meta.m.size};
        s->bytes += v[i].meta.m.size;
        s->staged_members++;
    }
    return 0;
}

/* Members of the previous version that were not staged again are carried over, through a
 * verified private copy (a corrupt one is dropped with a message rather than copied). */
static int carry_old(const struct staged *v, size_t n, const struct sluice_container *old, struct sources *s,
                     FILE *report)
{
    for (uint32_t k = 0; old && k < old->n_members; k++) {
        const struct sluice_member *om = &old->members[k];
        int again = 0;
        for (size_t i = 0; i < n && !again; i++)
            again = !v[i].aside && strcmp(v[i].meta.m.path, om->path) == 0;
        if (again)
            continue;
        int fd = memfd_create("sluice-recover", MFD_CLOEXEC);
        if (fd < 0)
            return -errno;
        s->fds[s->nfds++] = fd;
        char merr[2 * PATH_MAX + 64];
        if (sluice_container_copy_member(old, k, fd, merr, sizeof merr) != 0) {
            say(report, "%s (dropped from the recovered version)", merr);
            continue;
        }
        s->src[s->nsrc++] = (struct sluice_container_source){.path = om->path,
                                                             .member_rank = om->member_rank,
                                                             .writer_rank = om->writer_rank,
                                                             .mtime_ns = om->mtime_ns,
                                                             .fd = fd,
                                                             .buf = NULL,
                                                             .size = om->size};
    }
    return 0;
}

static void fill_meta(struct sluice_container_meta *meta, const char *key, const struct sluice_container *old,
                      FILE *report)
{
    memset(meta, 0, sizeof *meta);
    meta->set_key = key;
    meta->flags = SLUICE_CONTAINER_F_PARTIAL;
    meta->block_size = block_size_from_env(old ? old->meta.block_size : 4096, report);
    meta->version = old ? old->meta.version + 1 : 1;
    meta->created_ns = now_ns();
    meta->writer_nprocs = old ? old->meta.writer_nprocs : 1;
    meta->writer_pid = (uint32_t)getpid();
    sluice_host_name(meta->writer_host);
    snprintf(meta->writer_software, sizeof meta->writer_software, "sluice %s recover", SLUICE_VERSION_STRING);
}

/* Writes the new version beside the container under a temporary name and publishes it durably;
 * the temporary file goes on failure. err gets the reason. */
int sluice_recover_write_version(const char *container, const char *dir, mode_t mode,
                                 const struct sluice_container_meta *meta,
                                 const struct sluice_container_source *src, size_t nsrc, char *err,
                                 size_t errlen)
{
    char tmp[PATH_MAX];
    int fd = -1, rc = 0;
    /* A random token, created exclusively and never through a link (the folder may be shared:
     * a name planted there must not make us write somewhere else), as in the engine. */
    for (int tries = 0; rc == 0 && fd < 0 && tries < 16; tries++) {
        if (sluice_container_temp_name(container, (unsigned long)sluice_random_u64(), tmp, sizeof tmp) != 0) {
            rc = -ENAMETOOLONG;
            break;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && (errno != EEXIST || tries == 15)) {
            rc = -errno;
            snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        }
    }
    if (rc == 0 && fchmod(fd, mode) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot set its mode: %s", tmp, strerror(errno));
    }
    if (rc == 0)
        rc = sluice_container_write(fd, meta, src, (uint32_t)nsrc, err, errlen);
    if (rc == 0) {
        rc = publish(fd, tmp, container, dir);
        if (rc)
            snprintf(err, errlen, "%s: cannot make durable: %s", container, strerror(-rc));
    }
    if (fd >= 0) {
        close(fd);
        if (rc)
            unlink(tmp);
    }
    return rc;
}

/* Takes the lock of folder `dir`, waiting while a live commit holds it: a dead owner's lock is
 * stale at once on its own host, within SLUICE_FOLDER_LOCK_STALE_S seconds from another host
 * (folder_lock.h), so the wait is bounded unless a live commit keeps it. One line after 3 s. */
int sluice_recover_wait_lock(const char *dir, struct sluice_folder_lock *l, FILE *report)
{
    char owner[64] = "";
    for (int waited_ms = 0;; waited_ms += 50) {
        int rc = sluice_folder_lock_try(dir, l, owner, sizeof owner);
        if (rc != -EWOULDBLOCK)
            return rc;
        if (waited_ms == 3000)
            say(report,
                "%s: waiting for its lock (%s/%s, %s): a commit in flight, or a dead owner's (stale after %d "
                "s of silence)",
                dir, dir, SLUICE_FOLDER_LOCK_NAME, owner, SLUICE_FOLDER_LOCK_STALE_S);
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
}

/* Commits one set: staged members v[0..n) (sorted by path, newest last per path). */
static int recover_set(struct staged *v, size_t n, FILE *report)
{
    const char *key = v[0].meta.m.set_key;
    if (report_aside(v, n, report) == 0)
        return 0;
    char container[PATH_MAX], dir[PATH_MAX], err[2 * PATH_MAX + 64] = "";
    if (sluice_container_name(key, container, sizeof container) != 0 ||
        sluice_container_dir(key, dir, sizeof dir) != 0) {
        say(report, "set %s: cannot name its container", key);
        return -EINVAL;
    }

    /* Every commit takes the folder's lock the same way (folder_lock.h): no lost members. */
    struct sluice_folder_lock lock;
    int locked = sluice_recover_wait_lock(dir, &lock, report) == 0;
    struct sluice_container *old = NULL;
    int rc = sluice_container_open(container, &old, err, sizeof err);
    if (rc != 0 && rc != -ENOENT) {
        old = NULL;
        rc = set_aside_damaged(container, err, report);
        if (rc) {
            sluice_folder_lock_release(&lock);
            return rc;
        }
    }

    size_t nsrc_max = n + (old ? old->n_members : 0);
    struct sources s = {.src = calloc(nsrc_max ? nsrc_max : 1, sizeof(*s.src)),
                        .fds = malloc((nsrc_max ? nsrc_max : 1) * sizeof(int))};
    rc = (s.src && s.fds) ? 0 : -ENOMEM;
    if (rc == 0)
        rc = add_staged(v, n, &s, report);
    if (rc == 0)
        rc = carry_old(v, n, old, &s, report);
    struct sluice_container_meta meta;
    fill_meta(&meta, key, old, report);
    if (rc == 0)
        rc = sluice_recover_write_version(container, dir, container_mode(v, n, old), &meta, s.src, s.nsrc,
                                          err, sizeof err);
    if (rc == 0 && locked) {
        remove_leftover_temps(dir, container, report);
        remove_dead_lock_lines(dir);
    }
    for (size_t i = 0; i < s.nfds; i++)
        close(s.fds[i]);
    free(s.fds);
    free(s.src);
    if (old)
        sluice_container_close(old);
    sluice_folder_lock_release(&lock);

    if (rc) {
        say(report, "%s: not recovered, staged data kept: %s", container, err[0] ? err : strerror(-rc));
        return rc;
    }
    /* Durable: the staged copies (and older staged versions of the same paths) can go. */
    for (size_t i = 0; i < n; i++) {
        if (v[i].aside)
            continue;
        unlink(v[i].data_path);
        unlink(v[i].meta_path);
    }
    say(report, "%s: recovered version %llu, %llu staged member(s), %llu bytes, %zu member(s) in all",
        container, (unsigned long long)meta.version, (unsigned long long)s.staged_members,
        (unsigned long long)s.bytes, s.nsrc);
    return 0;
}

/* Links of the stage folder's index by path (stage_index.h) whose member is gone: its process
 * died, or recover just committed it. Only links of this user; unlinkat never follows one. */
static void remove_dead_links(const char *stage_dir)
{
    DIR *d = opendir(stage_dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        char target[NAME_MAX + 1], meta[NAME_MAX + 16];
        if (strncmp(e->d_name, SLUICE_STAGE_INDEX_PREFIX, strlen(SLUICE_STAGE_INDEX_PREFIX)) != 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            snprintf(meta, sizeof meta, "%s" SLUICE_STAGE_META_SUFFIX, target);
        }
        if (n <= 0 || strchr(target, '/') || faccessat(dirfd(d), meta, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

int sluice_ckpt_recover(const char *stage_dir, char *const *paths, int npaths, unsigned flags, FILE *report)
{
    if (!stage_dir || !*stage_dir || npaths < 0 || (npaths > 0 && !paths)) {
        say(report, "sluice-ckpt recover: no stage folder given");
        return 2;
    }
    /* A folder that another user could write may hold anything they planted (docs/SECURITY.md). */
    char why[PATH_MAX + 160];
    if (sluice_private_dir(stage_dir, 0, why, sizeof why) != 0) {
        say(report, "sluice-ckpt recover: stage folder refused: %s", why);
        return 2;
    }
    char **abs = NULL;
    if (npaths) {
        abs = calloc((size_t)npaths, sizeof(*abs));
        if (!abs)
            return 1;
        for (int i = 0; i < npaths; i++) {
            abs[i] = malloc(PATH_MAX);
            if (!abs[i]) {
                for (int j = 0; j < i; j++)
                    free(abs[j]);
                free(abs);
                return 1;
            }
            if (absolute(paths[i], abs[i], PATH_MAX) != 0) {
                say(report,
                    "sluice-ckpt recover: %s: cannot be made absolute (longer than PATH_MAX, or no working "
                    "folder)",
                    paths[i]);
                for (int j = 0; j <= i; j++)
                    free(abs[j]);
                free(abs);
                return 2;
            }
        }
    }

    struct staged_list list = {0};
    int rc = collect(stage_dir, &list, flags, report);
    int status = 0;
    if (rc != 0) {
        say(report, "sluice-ckpt recover: cannot read stage folder %s: %s", stage_dir, strerror(-rc));
        status = rc == -ENOMEM ? 1 : 2;
    } else {
        qsort(list.v, list.n, sizeof(*list.v), staged_cmp);
        size_t sets = 0;
        for (size_t i = 0; i < list.n;) {
            size_t j = i + 1;
            while (j < list.n && strcmp(list.v[j].meta.m.set_key, list.v[i].meta.m.set_key) == 0)
                j++;
            char container[PATH_MAX] = "";
            sluice_container_name(list.v[i].meta.m.set_key, container, sizeof container);
            /* A set is recovered whole or not at all: selecting any of its members selects it. */
            int any = 0;
            for (size_t k = i; k < j && !any; k++)
                any = selected(&list.v[k], container, abs, npaths);
            if (any) {
                sets++;
                if (recover_set(&list.v[i], j - i, report) != 0)
                    status = 1;
            }
            i = j;
        }
        if (sets == 0)
            say(report, "nothing to recover in %s", stage_dir);
    }
    if (rc == 0)
        remove_dead_links(stage_dir);
    for (int i = 0; i < npaths; i++)
        free(abs[i]);
    free(abs);
    free(list.v);
    return status;
}
