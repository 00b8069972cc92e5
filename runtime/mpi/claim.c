/* SPDX-License-Identifier: MIT */
/* See claim.h. File operations use raw system calls: sluice wraps open/unlink/... for
 * checkpoint capture, and the claim must never be seen (or traced) as the program's I/O. */
#include "mpi/claim.h"

#include "common/host_id.h"
#include "common/private_dir.h"
#include "common/proc_stat.h"
#include "common/real.h"

#include "common/fd_guard.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Job folders without a launcher process to check (see sluice_claim_job_key) are removed
 * when older than this. */
#define STALE_JOB_SECONDS (7 * 24 * 3600)

static int raw_open(const char *path, int flags, int mode)
{
    return sluice_fd_guard_openat(AT_FDCWD, path, flags | O_CLOEXEC, mode);
}
static int raw_mkdir(const char *path)
{
    return (int)syscall(SYS_mkdirat, AT_FDCWD, path, 0700);
}

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot; 0 if unknown. */
static unsigned long long start_time_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = raw_open(path, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *start = sluice_proc_stat_field(buf, 22);
    return start ? strtoull(start, NULL, 10) : 0;
}

/* Job folder names end in "@<pid>-<start time>-<host id>" when a launcher process is known that
 * lives exactly as long as the job on this node: the folder is stale once that process is gone.
 * The host id (common/host_id.h) keeps nodes apart where they share TMPDIR: pids and start times
 * repeat across nodes. */
int sluice_claim_job_key(const struct sluice_launch *l, char *key, size_t len)
{
    char host[SLUICE_HOST_ID_LEN + 1];
    sluice_host_id(host);
    if (l->job[0]) {
        if (l->anchor_pid > 0)
            snprintf(key, len, "%s@%d-%llu-%s", l->job, l->anchor_pid, start_time_of(l->anchor_pid), host);
        else
            snprintf(key, len, "%s", l->job);
        return 0;
    }
    if (l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd >= 0) {
        /* Every process of a rank (and only of that job) shares the socket to the same hydra
         * proxy; the proxy's pid plus start time names the job on this node uniquely. */
        struct ucred cred;
        socklen_t clen = sizeof cred;
        if (getsockopt(l->pmi_fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.pid > 0) {
            snprintf(key, len, "hydra@%d-%llu-%s", (int)cred.pid, start_time_of(cred.pid), host);
            return 0;
        }
    }
    return -1;
}

/* False when TMPDIR is too long for the folder's path (never a cut path: another folder). */
static bool default_root(char *out, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] != '/')
        tmp = "/tmp";
    int n = snprintf(out, len, "%s/sluice-%u/claims", tmp, (unsigned)getuid());
    return n >= 0 && (size_t)n < len;
}

/* mkdir -p for the two levels above the job folder; EEXIST is fine. */
static int make_parents(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", root);
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        *slash = '\0';
        if (raw_mkdir(path) != 0 && errno != EEXIST)
            return -1;
    }
    if (raw_mkdir(root) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

bool sluice_claim_job_is_over(int rootfd, const char *name)
{
    int pid;
    unsigned long long start;
    const char *at = strrchr(name, '@');
    int used = 0;
    if (at && sscanf(at + 1, "%d-%llu%n", &pid, &start, &used) == 2) {
        /* A job of another host (a TMPDIR shared by nodes): its pid means nothing here. */
        if (at[1 + used] == '-' && !sluice_host_id_is_mine(at + 2 + used))
            return false;
        unsigned long long now = start_time_of(pid); /* 0: no such process */
        return now == 0 || now != start;
    }
    struct stat st;
    if (syscall(SYS_newfstatat, rootfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    return time(NULL) - st.st_mtime > STALE_JOB_SECONDS;
}

/* Never through a link: a job folder is opened O_NOFOLLOW and must be ours, and its claim
 * files are removed relative to it (a link planted in the claims folder would otherwise make
 * us delete files wherever it points). */
static void remove_job_folder(int rootfd, const char *name)
{
    int fd = sluice_fd_guard_openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    struct stat st;
    DIR *d = NULL;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_uid != geteuid() ||
        (d = SLUICE_REAL(fdopendir)(fd)) == NULL) {
        syscall(SYS_close, fd);
        return;
    }
    struct dirent *e;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL)
        if (strncmp(e->d_name, "rank.", 5) == 0 || strncmp(e->d_name, "fin.", 4) == 0 ||
            strncmp(e->d_name, "abort.", 6) == 0 || /* node_report.h's marks */
            strcmp(e->d_name, "vote") == 0)         /* node_vote.h's counts */
            syscall(SYS_unlinkat, dirfd(d), e->d_name, 0);
    SLUICE_REAL(closedir)(d);
    syscall(SYS_unlinkat, rootfd, name, AT_REMOVEDIR);
}

static char owned_folder[4096 + 128]; /* the job folder of this process's claim, once owned */

/* Called by the first process of a job on this node: clears folders of finished jobs. */
static void collect_stale_jobs(const char *root, const char *current)
{
    int rootfd = sluice_fd_guard_openat(AT_FDCWD, root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (rootfd < 0)
        return;
    DIR *d = SLUICE_REAL(fdopendir)(rootfd);
    if (d == NULL) {
        syscall(SYS_close, rootfd);
        return;
    }
    struct dirent *e;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, current) == 0)
            continue;
        if (sluice_claim_job_is_over(dirfd(d), e->d_name))
            remove_job_folder(dirfd(d), e->d_name);
    }
    SLUICE_REAL(closedir)(d);
}

static pid_t read_holder(const char *path)
{
    char buf[32] = {0};
    int fd = raw_open(path, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    return n > 0 ? (pid_t)atoi(buf) : 0;
}

sluice_claim_result sluice_claim_rank(const struct sluice_launch *l, const char *root, pid_t *holder,
                                      char *why, size_t whylen)
{
    char rootbuf[4096], key[128], jobdir[4096 + 128], file[4096 + 160];
    if (holder)
        *holder = 0;
    if (why && whylen)
        why[0] = '\0';
    if (sluice_claim_job_key(l, key, sizeof key) != 0) {
        if (why)
            snprintf(why, whylen, "the %s launcher's job cannot be identified",
                     sluice_launcher_name(l->kind));
        return SLUICE_CLAIM_UNKNOWN;
    }
    if (root == NULL) {
        if (!default_root(rootbuf, sizeof rootbuf)) {
            if (why)
                snprintf(why, whylen, "TMPDIR is too long: the claims folder under it would pass %zu bytes",
                         sizeof rootbuf - 1);
            return SLUICE_CLAIM_UNKNOWN;
        }
        root = rootbuf;
    }
    int jn = snprintf(jobdir, sizeof jobdir, "%s/%s", root, key);
    if (jn < 0 || (size_t)jn >= sizeof rootbuf) { /* also the parents' copies below */
        if (why)
            snprintf(why, whylen, "the claims folder's path is longer than %zu bytes", sizeof rootbuf - 1);
        return SLUICE_CLAIM_UNKNOWN;
    }
    if (make_parents(root) != 0) {
        if (why)
            snprintf(why, whylen, "cannot create %s: %s", root, strerror(errno));
        return SLUICE_CLAIM_UNKNOWN;
    }
    /* Private folders, checked whoever made them (docs/SECURITY.md); the default's parent too. */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", root);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    if ((root == rootbuf && sluice_private_dir(parent, 0, why, whylen) != 0) ||
        sluice_private_dir(root, 0, why, whylen) != 0)
        return SLUICE_CLAIM_UNKNOWN;
    if (raw_mkdir(jobdir) == 0)
        collect_stale_jobs(root, key);
    else if (errno != EEXIST) {
        if (why)
            snprintf(why, whylen, "cannot create %s: %s", jobdir, strerror(errno));
        return SLUICE_CLAIM_UNKNOWN;
    }

    snprintf(file, sizeof file, "%s/rank.%d", jobdir, l->rank);
    int fd = raw_open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            if (holder)
                *holder = read_holder(file);
            return SLUICE_CLAIM_TAKEN;
        }
        if (why)
            snprintf(why, whylen, "cannot create %s: %s", file, strerror(errno));
        return SLUICE_CLAIM_UNKNOWN;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (syscall(SYS_write, fd, pid, (size_t)n) != n) {
        /* the claim holds anyway (the file exists); only the holder's pid is lost */
    }
    syscall(SYS_close, fd);
    snprintf(owned_folder, sizeof owned_folder, "%s", jobdir);
    return SLUICE_CLAIM_OWNED;
}

const char *sluice_claim_owned_folder(void)
{
    return owned_folder[0] ? owned_folder : NULL;
}
