/* SPDX-License-Identifier: MIT */
/* What the kernel sees of a virtual per-rank folder V (capture_vdirs.c): a real, empty stand-in
 * folder <stage>/vd<V> (mode 0500: nothing can be made in it behind sluice's back). A
 * descriptor of V (open, opendir), and the working directory after chdir(V), are the stand-in's;
 * its name, read back from /proc/self/fd or getcwd, says which V it stands for, so a child
 * process, an fchdir or an *at call with such a descriptor finds V again.
 *
 * The kernel cannot walk through V ("rank3/..", "../x" with V as the working directory, "x"
 * relative to a descriptor of V): such names are resolved lexically, and the call is made on
 * the absolute name (sluice_capture_kpath), as a real folder would resolve them. */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/stage.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define STANDIN_DIR "/vd"

bool sluice_capture_vdirs;
atomic_bool capture_cwd_virtual;
static atomic_bool standins_used; /* this process made a descriptor or cwd of a stand-in */

/* "<stage>/vd" in out (PATH_MAX); its length, or -1. stage: the folder's name (made and
 * checked or not). */
static int standin_prefix_of(const char *stage, char *out)
{
    if (stage == NULL)
        return -1;
    int n = snprintf(out, PATH_MAX, "%s" STANDIN_DIR, stage);
    return n > 0 && n < PATH_MAX ? n : -1;
}

static int standin_prefix(char *out)
{
    return standin_prefix_of(sluice_stage_dir(), out);
}

bool capture_standin_decode(const char *real, char *v, size_t cap)
{
    char prefix[PATH_MAX];
    /* By name first: the folder is made and checked only for a path inside it (every start
     * decodes its cwd; most never stage anything). */
    int n = standin_prefix_of(sluice_stage_dir_name(), prefix);
    if (n < 0 || strncmp(real, prefix, (size_t)n) != 0 || real[n] != '/' || standin_prefix(prefix) != n)
        return false;
    if (snprintf(v, cap, "%s", real + n) >= (int)cap)
        return false;
    atomic_store_explicit(&standins_used, true, memory_order_relaxed);
    return true;
}

/* Makes the stand-in of existing virtual folder v (and the folders above it), 0 or -errno. */
static int standin_make(const char *v, char *out)
{
    int n = standin_prefix(out);
    if (n < 0)
        return -(errno ? errno : EACCES);
    if (snprintf(out + n, PATH_MAX - (size_t)n, "%s", v) >= PATH_MAX - n)
        return -ENAMETOOLONG;
    atomic_store_explicit(&standins_used, true, memory_order_relaxed);
    struct stat st;
    if (SLUICE_REAL(lstat)(out, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
    for (char *slash = out + n; slash != NULL; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (SLUICE_REAL(mkdir)(out, 0700) != 0 && errno != EEXIST) {
            int e = errno;
            *slash = '/';
            return -e;
        }
        *slash = '/';
    }
    if (SLUICE_REAL(mkdir)(out, 0500) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int capture_standin_of(const char *v, char *out)
{
    return standin_make(v, out);
}

void capture_standin_drop(const char *v)
{
    char p[PATH_MAX];
    int n = standin_prefix(p);
    if (n >= 0 && snprintf(p + n, PATH_MAX - (size_t)n, "%s", v) < PATH_MAX - n)
        SLUICE_REAL(rmdir)(p); /* best effort: gone already, or another process's cwd */
}

/* ---- names through a virtual folder -------------------------------------------------------- */

/* Does the walk of `path` from folder `base` (absolute, normalized) go through a per-rank folder
 * (a component after which more follow)? Lexical, no system call. */
static bool walks_through_vdir(const char *base, const char *path)
{
    char cur[PATH_MAX];
    size_t o = path[0] == '/' ? 0 : strlen(base);
    if (o >= sizeof cur)
        return false;
    memcpy(cur, base, o);
    if (o == 1)
        o = 0; /* "/" */
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *c = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - c);
        while (*p == '/')
            p++;
        if (n == 0 || *p == '\0')
            return false; /* the last component: the call is about that name itself */
        if (n == 1 && c[0] == '.')
            continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            while (o > 0 && cur[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        if (o + 1 + n >= sizeof cur)
            return false;
        cur[o++] = '/';
        memcpy(cur + o, c, n);
        o += n;
        cur[o] = '\0';
        bool digit = false;
        for (size_t i = 0; i < n && !digit; i++)
            digit = c[i] >= '0' && c[i] <= '9';
        if (digit && sluice_pattern_match_dir(&capture_patterns, cur, NULL))
            return true;
    }
    return false;
}

const char *sluice_capture_kpath_slow(int dirfd, const char *path, char *buf)
{
    if (path == NULL || path[0] == '\0')
        return path;
    bool rel = path[0] != '/';
    bool through = false;
    if (rel && dirfd == AT_FDCWD) {
        through = atomic_load_explicit(&capture_cwd_virtual, memory_order_relaxed);
    } else if (rel && atomic_load_explicit(&standins_used, memory_order_relaxed)) {
        char link[64], target[PATH_MAX], v[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = SLUICE_REAL(readlink)(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            through = capture_standin_decode(target, v, sizeof v);
        }
    }
    if (!through) {
        /* A per-rank folder's name holds a digit, and something must follow it. */
        const char *d = path;
        while (*d && (*d < '0' || *d > '9'))
            d++;
        if (*d == '\0' || strchr(d, '/') == NULL)
            return path;
        char base[PATH_MAX];
        if (rel && capture_resolve(dirfd, ".", base, sizeof base) != 0)
            return path;
        through = walks_through_vdir(rel ? base : "/", path);
    }
    if (!through || capture_resolve(dirfd, path, buf, PATH_MAX) != 0)
        return path;
    return buf;
}

/* ---- calls on a virtual folder itself -------------------------------------------------------- */

/* An existing virtual folder named by (dirfd, path): its absolute name in abs, true. */
static bool existing_vdir(int dirfd, const char *path, struct capture_name *n)
{
    struct stat st;
    if (!capture_classify(dirfd, path, n, true) || !n->vdir)
        return false;
    sluice_capture_guard_enter();
    bool yes = SLUICE_REAL(stat)(n->abs, &st) != 0 && capture_vdir_exists(n->abs);
    sluice_capture_guard_leave();
    return yes;
}

int capture_open_vdir(const struct capture_name *n, int flags)
{
    struct stat st;
    char standin[PATH_MAX];
    sluice_capture_guard_enter();
    int rc = SLUICE_CAPTURE_PASS; /* missing or real: the kernel answers */
    if (SLUICE_REAL(stat)(n->abs, &st) != 0 && capture_vdir_exists(n->abs)) {
        rc = standin_make(n->abs, standin);
        /* The kernel's answers for a folder: EISDIR for writing, EEXIST with O_EXCL. */
        if (rc == 0 && (rc = SLUICE_REAL(open)(standin, flags, 0)) < 0)
            rc = -errno;
    }
    sluice_capture_guard_leave();
    if (rc < 0 && rc != SLUICE_CAPTURE_PASS) {
        errno = -rc;
        return -1;
    }
    return rc;
}

int sluice_capture_chdir(const char *path)
{
    struct capture_name n;
    if (!existing_vdir(AT_FDCWD, path, &n))
        return SLUICE_CAPTURE_PASS;
    char standin[PATH_MAX];
    sluice_capture_guard_enter();
    int rc = standin_make(n.abs, standin);
    if (rc == 0 && SLUICE_REAL(chdir)(standin) != 0)
        rc = -errno;
    sluice_capture_guard_leave();
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    sluice_capture_cwd_changed();
    return 0;
}

/* A virtual folder lives on the file system of the real folder that holds its marker. */
static int vdir_fs_root(const char *path, char *root)
{
    struct capture_name n;
    if (!existing_vdir(AT_FDCWD, path, &n))
        return SLUICE_CAPTURE_PASS;
    capture_vdir_root(n.abs, root);
    return 0;
}

int sluice_capture_statfs(const char *path, struct statfs *sf)
{
    char root[PATH_MAX];
    if (vdir_fs_root(path, root) != 0)
        return SLUICE_CAPTURE_PASS;
    return SLUICE_REAL(statfs)(root, sf);
}

int sluice_capture_statvfs(const char *path, struct statvfs *sv)
{
    char root[PATH_MAX];
    if (vdir_fs_root(path, root) != 0)
        return SLUICE_CAPTURE_PASS;
    return SLUICE_REAL(statvfs)(root, sv);
}

ssize_t sluice_capture_readlink(int dirfd, const char *path)
{
    struct capture_name n;
    if (!capture_classify(dirfd, path, &n, true))
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    struct stat st;
    bool real = SLUICE_REAL(lstat)(n.abs, &st) == 0;
    bool exists = !real && (n.member ? capture_member_exists(n.abs) : capture_vdir_exists(n.abs));
    sluice_capture_guard_leave();
    if (real)
        return SLUICE_CAPTURE_PASS;
    errno = exists ? EINVAL : ENOENT; /* a member or folder is never a symbolic link */
    return -1;
}

/* getcwd's contract on a name we already hold. */
static char *give_cwd(const char *name, char *buf, size_t size)
{
    size_t len = strlen(name) + 1;
    if (buf == NULL) {
        buf = malloc(size > len ? size : len);
        if (buf == NULL) {
            errno = ENOMEM;
            return NULL;
        }
        size = size > len ? size : len;
    } else if (size == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (len > size) {
        errno = ERANGE;
        return NULL;
    }
    memcpy(buf, name, len);
    return buf;
}

char *sluice_capture_getcwd(char *buf, size_t size, bool *handled)
{
    char real[PATH_MAX], v[PATH_MAX];
    *handled = false;
    if (!atomic_load_explicit(&capture_cwd_virtual, memory_order_relaxed) ||
        SLUICE_REAL(getcwd)(real, sizeof real) == NULL)
        return NULL;
    sluice_capture_guard_enter();
    bool ok = capture_standin_decode(real, v, sizeof v);
    sluice_capture_guard_leave();
    if (!ok)
        return NULL;
    *handled = true;
    return give_cwd(v, buf, size);
}

void sluice_capture_fix_dir_fstat(int fd, struct stat *st)
{
    static _Atomic dev_t stage_dev; /* the stand-ins' device, once known */
    if (!atomic_load_explicit(&standins_used, memory_order_relaxed))
        return;
    dev_t dev = atomic_load_explicit(&stage_dev, memory_order_relaxed);
    if (dev != 0 && st->st_dev != dev)
        return; /* the common case: a folder elsewhere, no system call */
    char link[64], real[PATH_MAX], v[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = SLUICE_REAL(readlink)(link, real, sizeof real - 1);
    if (n <= 0)
        return;
    real[n] = '\0';
    sluice_capture_guard_enter();
    if (capture_standin_decode(real, v, sizeof v)) {
        atomic_store_explicit(&stage_dev, st->st_dev, memory_order_relaxed);
        capture_vdir_stat(v, st); /* fstat agrees with stat of its name (fts, os.fwalk check) */
    }
    sluice_capture_guard_leave();
}
