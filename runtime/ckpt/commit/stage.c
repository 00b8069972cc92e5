/* SPDX-License-Identifier: MIT */
/* The stage folder: creation of staging files and their sidecars (layout and format: stage.h).
 * Every call here uses the real libc functions (SLUICE_REAL), never capture's wrappers. */
#include "ckpt/commit/stage.h"
#include "ckpt/commit/stage_index.h"

#include "common/host_id.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char stage_dir[PATH_MAX];
static pthread_once_t stage_once = PTHREAD_ONCE_INIT, stage_name_once = PTHREAD_ONCE_INIT;
static int stage_errno;      /* the folder's, under stage_once */
static int stage_name_errno; /* its name's, under stage_name_once */
static atomic_ulong stage_seq;
static char stage_why[PATH_MAX + 160]; /* why the folder is refused: said once, when staging */

/* The folder's name alone (SLUICE_STAGE_DIR or the default, made absolute): what the exec mark
 * is looked for in at start, before anything needs the folder itself. */
static void stage_name_init(void)
{
    const char *cfg = sluice_config.STAGE_DIR;
    if (cfg != NULL && cfg[0] != '\0' &&
        snprintf(stage_dir, sizeof stage_dir, "%s", cfg) >= (int)sizeof stage_dir) {
        snprintf(stage_why, sizeof stage_why, "SLUICE_STAGE_DIR is %zu bytes, longer than PATH_MAX",
                 strlen(cfg));
        stage_name_errno = ENAMETOOLONG; /* never a cut path: another folder */
        return;
    }
    if (cfg == NULL || cfg[0] == '\0')
        sluice_stage_default_dir(stage_dir, sizeof stage_dir);
    if (stage_dir[0] != '/') { /* relative: pin it to the cwd at first use */
        char cwd[PATH_MAX], rel[PATH_MAX];
        snprintf(rel, sizeof rel, "%s", stage_dir);
        if (SLUICE_REAL(getcwd)(cwd, sizeof cwd) == NULL ||
            snprintf(stage_dir, sizeof stage_dir, "%s/%s", cwd, rel) >= (int)sizeof stage_dir) {
            snprintf(stage_why, sizeof stage_why, "%s made absolute is longer than PATH_MAX", rel);
            stage_name_errno = ENAMETOOLONG;
            return;
        }
    }
}

static void stage_init(void)
{
    pthread_once(&stage_name_once, stage_name_init);
    stage_errno = stage_name_errno;
    if (stage_errno != 0)
        return;
    /* Created 0700 if absent, and checked whoever created it (docs/SECURITY.md): in a folder
     * that another user can write, they could plant links and sidecars or read members. */
    int rc = sluice_private_dir(stage_dir, 1, stage_why, sizeof stage_why);
    if (rc != 0)
        stage_errno = -rc;
}

const char *sluice_stage_dir_name(void)
{
    pthread_once(&stage_name_once, stage_name_init);
    return stage_name_errno == 0 ? stage_dir : NULL;
}

const char *sluice_stage_dir(void)
{
    pthread_once(&stage_once, stage_init);
    if (stage_errno != 0) {
        errno = stage_errno;
        return NULL;
    }
    return stage_dir;
}

long sluice_stage_read_meta(const char *path, char *buf, size_t cap)
{
    unsigned owner = 0;
    long n = sluice_stage_read_own(path, buf, cap, &owner);
    static atomic_bool told;
    if (n == -EPERM && !atomic_exchange(&told, true))
        sluice_log_warn("ignored %s: it belongs to uid %u, not to you", path, owner);
    return n;
}

int sluice_stage_write_meta(const char *meta_path, const struct sluice_stage_meta *sm)
{
    char buf[SLUICE_STAGE_META_MAX], tmp[PATH_MAX + 32];
    struct sluice_stage_meta own = *sm; /* every sidecar is written by its writer: its host */
    sluice_host_id(own.host);
    int len = sluice_stage_meta_format(&own, buf, sizeof buf);
    if (len < 0)
        return -ENAMETOOLONG;
    /* A fresh random name, created exclusively and never through a link, then renamed. */
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp%016llx", meta_path, sluice_random_u64()) >= (int)sizeof tmp)
            return -ENAMETOOLONG;
        fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -errno;
    }
    if (fd < 0)
        return -EEXIST;
    ssize_t w = SLUICE_REAL(write)(fd, buf, (size_t)len);
    int e = w == len ? 0 : (w < 0 ? errno : ENOSPC);
    if (SLUICE_REAL(close)(fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && SLUICE_REAL(rename)(tmp, meta_path) != 0)
        e = errno;
    if (e != 0) {
        SLUICE_REAL(unlink)(tmp);
        return -e;
    }
    if (sm->closed)
        sluice_stage_index_set(sm->m.path, meta_path); /* found by path (stage_index.h) */
    return 0;
}

int sluice_stage_create(const struct sluice_staged_member *m, char *stage_path, char *meta_path)
{
    const char *dir = sluice_stage_dir();
    if (dir == NULL) {
        int e = errno;
        static atomic_bool told;
        if (stage_why[0] && !atomic_exchange(&told, true))
            sluice_log_error("stage folder (SLUICE_STAGE_DIR) refused: %s", stage_why);
        return -e;
    }
    /* Sequence numbers start from the monotonic clock in ns: an image exec'ed by this same
     * process (same pid) never reuses a name that its predecessor staged and passed on. */
    if (atomic_load(&stage_seq) == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long expect = 0, start = (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
        atomic_compare_exchange_strong(&stage_seq, &expect, start);
    }
    int mark = sluice_stage_mark_exec();
    if (mark != 0)
        return mark;
    unsigned long seq = atomic_fetch_add(&stage_seq, 1);
    long pid = (long)getpid();
    char prefix[SLUICE_STAGE_PREFIX_MAX];
    sluice_stage_prefix(prefix, pid);
    if (snprintf(stage_path, PATH_MAX, "%s/%s%lu" SLUICE_STAGE_DATA_SUFFIX, dir, prefix, seq) >= PATH_MAX ||
        snprintf(meta_path, PATH_MAX, "%s/%s%lu" SLUICE_STAGE_META_SUFFIX, dir, prefix, seq) >= PATH_MAX)
        return -ENAMETOOLONG;
    struct sluice_stage_meta sm;
    memset(&sm, 0, sizeof sm);
    sm.m = *m;
    sm.m.size = 0;
    sm.closed = 0;
    sm.pid = pid;
    /* Sidecar first: a data file is never without its description, even after a crash. */
    int rc = sluice_stage_write_meta(meta_path, &sm);
    if (rc != 0)
        return rc;
    /* Staged data is 0600 whatever the program asked: its mode travels in the sidecar. */
    int fd = SLUICE_REAL(open)(stage_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
        SLUICE_REAL(unlink)(meta_path);
        return rc;
    }
    return fd;
}

void sluice_stage_remove(const char *stage_path, const char *meta_path)
{
    SLUICE_REAL(unlink)(stage_path);
    SLUICE_REAL(unlink)(meta_path);
}
