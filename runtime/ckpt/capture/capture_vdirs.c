/* SPDX-License-Identifier: MIT */
/* Virtual per-rank folders (a `%r` in a folder component of a pattern: `rank%r/ckpt.dat`).
 * Nothing is created on disk under their name; instead each one that a process made with
 * mkdir (or that lost its last member through unlink) is recorded as an empty marker file in
 * the nearest real folder above it, where its sets' containers live:
 *
 *     D/.<rel>.sluice-dir      rel: the folder's path below D, '/' written "@_", '@' "@@"
 *
 * created O_CREAT|O_EXCL (so two processes racing on mkdir get one success and one EEXIST, as
 * on a real file system) with the program's mkdir mode. Every process of the job, a child
 * shell and a later job see the same markers, so a virtual folder exists from its mkdir (or
 * first member) until its rmdir, empty or not, like a real one. A folder also exists while it
 * holds members (staged here or committed). Markers are reserved names: never captured, and
 * hidden from listings (docs/CAPTURE.md, "Per-rank folders"). */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/container/container.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void capture_vdir_root(const char *abs, char *out)
{
    snprintf(out, PATH_MAX, "%s", abs);
    while (strcmp(out, "/") != 0 && sluice_pattern_match_dir(&capture_patterns, out, NULL)) {
        char up[PATH_MAX];
        capture_parent_of(out, up);
        memcpy(out, up, strlen(up) + 1);
    }
}

/* The marker's path for virtual folder `abs`. 0, or -ENAMETOOLONG. */
static int marker_path(const char *abs, char *out)
{
    char root[PATH_MAX];
    capture_vdir_root(abs, root);
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (strncmp(abs, root, rl) != 0 || abs[rl] != '/')
        return -EINVAL;
    char name[NAME_MAX + 1];
    size_t o = 0;
    name[o++] = '.';
    for (const char *p = abs + rl + 1; *p; p++) {
        const char *rep = *p == '/' ? "@_" : *p == '@' ? "@@" : NULL;
        if (o + 2 >= sizeof name)
            return -ENAMETOOLONG;
        if (rep) {
            name[o++] = rep[0];
            name[o++] = rep[1];
        } else {
            name[o++] = *p;
        }
    }
    const char *suffix = SLUICE_VDIR_MARKER_SUFFIX;
    if (o + strlen(suffix) >= sizeof name)
        return -ENAMETOOLONG;
    memcpy(name + o, suffix, strlen(suffix) + 1);
    if (snprintf(out, PATH_MAX, "%.*s/%s", (int)rl, root, name) >= PATH_MAX)
        return -ENAMETOOLONG;
    return 0;
}

int capture_vdir_marker_stat(const char *abs, struct stat *st)
{
    char m[PATH_MAX];
    if (marker_path(abs, m) != 0)
        return -1;
    return SLUICE_REAL(lstat)(m, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
}

/* Creates the marker. 0, -EEXIST, or the errno of the real folder. */
static int mark(const char *abs, mode_t mode)
{
    char m[PATH_MAX];
    int rc = marker_path(abs, m);
    if (rc != 0)
        return rc;
    int fd = SLUICE_REAL(open)(m, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
    if (fd < 0)
        return -errno;
    SLUICE_REAL(close)(fd);
    return 0;
}

void capture_vdir_keep(const char *abs)
{
    struct stat st;
    if (SLUICE_REAL(stat)(abs, &st) == 0 || capture_vdir_marker_stat(abs, &st) == 0)
        return;
    (void)mark(abs, 0777 & ~capture_file_umask());
}

/* Members (open or closed here, committed) or marked subfolders below `abs`? */
static int found_one(void *arg, const char *path)
{
    (void)path;
    *(bool *)arg = true;
    return 1; /* one is enough */
}

static bool holds_anything(const char *abs)
{
    size_t len = strlen(abs);
    bool found = false;
    pthread_mutex_lock(&capture_lock);
    for (struct sluice_capture_member *m = capture_open; !found && m; m = m->hh.next)
        found = strncmp(m->path, abs, len) == 0 && m->path[len] == '/';
    for (struct capture_vdir *v = capture_vdirs; !found && v; v = v->hh.next)
        found = strncmp(v->path, abs, len) == 0 && v->path[len] == '/';
    pthread_mutex_unlock(&capture_lock);
    if (found)
        return true;
    capture_closed_below(abs, len, found_one, &found);
    if (found)
        return true;
    char root[PATH_MAX];
    capture_vdir_root(abs, root);
    capture_scan_committed_below(root, abs, len, found_one, &found);
    if (!found) /* another process of the node closed a member here, not committed yet */
        sluice_commit_staged_below(abs, len, found_one, &found);
    if (found)
        return true;
    /* A marked subfolder (nested per-rank folders): its marker starts with ours, minus the
     * suffix, followed by "@_". */
    char m[PATH_MAX];
    if (marker_path(abs, m) != 0)
        return false;
    const char *base = strrchr(m, '/') + 1;
    size_t blen = strlen(base) - strlen(SLUICE_VDIR_MARKER_SUFFIX);
    DIR *d = SLUICE_REAL(opendir)(root);
    if (d == NULL)
        return false;
    struct dirent *e;
    while (!found && (e = SLUICE_REAL(readdir)(d)) != NULL)
        found = strncmp(e->d_name, base, blen) == 0 && strncmp(e->d_name + blen, "@_", 2) == 0 &&
                capture_vdir_is_marker(e->d_name);
    SLUICE_REAL(closedir)(d);
    return found;
}

bool capture_vdir_is_marker(const char *name)
{
    size_t l = strlen(name), sl = strlen(SLUICE_VDIR_MARKER_SUFFIX);
    return name[0] == '.' && l > sl + 1 && strcmp(name + l - sl, SLUICE_VDIR_MARKER_SUFFIX) == 0;
}

int capture_vdir_marker_decode(const char *name, char *rel, size_t cap)
{
    if (!capture_vdir_is_marker(name))
        return -1;
    size_t end = strlen(name) - strlen(SLUICE_VDIR_MARKER_SUFFIX), o = 0;
    for (size_t i = 1; i < end; i++) {
        char c = name[i];
        if (c == '@') {
            if (i + 1 >= end || (name[i + 1] != '_' && name[i + 1] != '@'))
                return -1;
            c = name[++i] == '_' ? '/' : '@';
        }
        if (o + 1 >= cap)
            return -1;
        rel[o++] = c;
    }
    rel[o] = '\0';
    return o ? 0 : -1;
}

static bool in_process(const char *abs)
{
    pthread_mutex_lock(&capture_lock);
    struct capture_vdir *v = NULL;
    HASH_FIND_STR(capture_vdirs, abs, v);
    pthread_mutex_unlock(&capture_lock);
    return v != NULL;
}

bool capture_vdir_exists(const char *abs)
{
    struct stat st;
    if (SLUICE_REAL(stat)(abs, &st) == 0)
        return S_ISDIR(st.st_mode);
    return capture_vdir_marker_stat(abs, &st) == 0 || in_process(abs) || holds_anything(abs);
}

int sluice_capture_mkdir(int dirfd, const char *path, mode_t mode)
{
    struct capture_name n;
    if (!capture_classify(dirfd, path, &n, true) || !n.vdir)
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    int rc = 0;
    char parent[PATH_MAX];
    capture_parent_of(n.abs, parent);
    struct stat st;
    if (capture_vdir_exists(n.abs)) {
        rc = -EEXIST;
    } else if (SLUICE_REAL(stat)(parent, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            rc = -ENOTDIR;
        else if (SLUICE_REAL(faccessat)(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) != 0)
            rc = -errno;
    } else if (errno != ENOENT || !sluice_pattern_match_dir(&capture_patterns, parent, NULL) ||
               !capture_vdir_exists(parent)) {
        rc = -ENOENT;
    }
    if (rc == 0) {
        rc = mark(n.abs, mode & ~capture_file_umask());
        if (rc == -ENAMETOOLONG) { /* no room for a marker name: this process only */
            struct capture_vdir *v = calloc(1, sizeof *v);
            rc = v ? 0 : -ENOMEM;
            if (v) {
                snprintf(v->path, sizeof v->path, "%s", n.abs);
                pthread_mutex_lock(&capture_lock);
                HASH_ADD_STR(capture_vdirs, path, v);
                pthread_mutex_unlock(&capture_lock);
            }
        }
    }
    sluice_capture_guard_leave();
    return capture_result(rc);
}

int sluice_capture_rmdir(const char *path)
{
    struct capture_name n;
    if (!capture_classify(AT_FDCWD, path, &n, true) || !n.vdir)
        return SLUICE_CAPTURE_PASS;
    sluice_capture_guard_enter();
    int rc;
    struct stat st;
    char m[PATH_MAX];
    if (SLUICE_REAL(stat)(n.abs, &st) == 0) {
        rc = SLUICE_CAPTURE_PASS; /* a real directory */
    } else if (holds_anything(n.abs)) {
        rc = -ENOTEMPTY;
    } else {
        rc = -ENOENT;
        if (marker_path(n.abs, m) == 0 && SLUICE_REAL(unlink)(m) == 0)
            rc = 0;
        pthread_mutex_lock(&capture_lock);
        struct capture_vdir *v = NULL;
        HASH_FIND_STR(capture_vdirs, n.abs, v);
        if (v != NULL) {
            HASH_DEL(capture_vdirs, v);
            free(v);
            rc = 0;
        }
        pthread_mutex_unlock(&capture_lock);
        if (rc == 0)
            capture_standin_drop(n.abs);
    }
    sluice_capture_guard_leave();
    if (rc == SLUICE_CAPTURE_PASS)
        return rc;
    return capture_result(rc);
}

int capture_vdir_set_attr(const char *abs, enum capture_vdir_attr what, unsigned a, unsigned b,
                          const struct timespec *ts)
{
    char m[PATH_MAX];
    int rc = 0;
    sluice_capture_guard_enter();
    if (!capture_vdir_exists(abs))
        rc = -ENOENT;
    else if ((rc = marker_path(abs, m)) == 0) {
        capture_vdir_keep(abs); /* a folder known only from its members gets its marker now */
        int r = what == CAPTURE_VDIR_CHMOD ? SLUICE_REAL(fchmodat)(AT_FDCWD, m, (mode_t)a, 0)
                : what == CAPTURE_VDIR_CHOWN
                    ? SLUICE_REAL(fchownat)(AT_FDCWD, m, (uid_t)a, (gid_t)b, AT_SYMLINK_NOFOLLOW)
                    : SLUICE_REAL(utimensat)(AT_FDCWD, m, ts, AT_SYMLINK_NOFOLLOW);
        rc = r == 0 ? 0 : -errno;
    }
    sluice_capture_guard_leave();
    return capture_result(rc);
}

int sluice_capture_vdir_chown(int dirfd, const char *path, uid_t uid, gid_t gid)
{
    struct capture_name n;
    struct stat st;
    if (!capture_classify(dirfd, path, &n, true) || !n.vdir || SLUICE_REAL(stat)(n.abs, &st) == 0)
        return SLUICE_CAPTURE_PASS;
    return capture_vdir_set_attr(n.abs, CAPTURE_VDIR_CHOWN, (unsigned)uid, (unsigned)gid, NULL);
}

int sluice_capture_vdir_utimens(int dirfd, const char *path, const struct timespec ts[2])
{
    struct capture_name n;
    struct stat st;
    if (path == NULL || !capture_classify(dirfd, path, &n, true) || !n.vdir ||
        SLUICE_REAL(stat)(n.abs, &st) == 0)
        return SLUICE_CAPTURE_PASS;
    return capture_vdir_set_attr(n.abs, CAPTURE_VDIR_UTIMENS, 0, 0, ts);
}
