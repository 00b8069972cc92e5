/* SPDX-License-Identifier: MIT */
/* Directory-listing entry points for checkpoint capture: opendir/readdir/closedir/rewinddir
 * merge captured names into listings of the folders that hold them; scandir and glob are
 * rebuilt on top of those (glibc's own scandir and glob read folders through internal calls
 * that no wrapper sees). */
#include "ckpt/capture/capture.h"
#include "common/export.h"
#include "common/real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent and dirent64 layouts differ");

static DIR *dirs_opendir(const char *path)
{
    if (sluice_capture_on()) {
        bool handled;
        DIR *d = sluice_capture_opendir(path, &handled);
        if (handled)
            return d;
    }
    char kb[PATH_MAX];
    return SLUICE_REAL(opendir)(sluice_capture_kpath(AT_FDCWD, path, kb));
}

static struct dirent *dirs_readdir(DIR *d)
{
    if (sluice_capture_enabled) {
        bool handled;
        struct dirent *e = sluice_capture_readdir(d, &handled);
        if (handled)
            return e;
    }
    return SLUICE_REAL(readdir)(d);
}

static int dirs_closedir(DIR *d)
{
    if (sluice_capture_enabled) {
        int r = sluice_capture_closedir(d);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    return SLUICE_REAL(closedir)(d);
}

SLUICE_EXPORT DIR *opendir(const char *path)
{
    return dirs_opendir(path);
}
/* A descriptor of a folder that holds captured names (os.listdir(fd), fts, find): the same
 * merged listing as opendir. */
SLUICE_EXPORT DIR *fdopendir(int fd)
{
    if (sluice_capture_on()) {
        bool handled;
        DIR *d = sluice_capture_fdopendir(fd, &handled);
        if (handled)
            return d;
    }
    return SLUICE_REAL(fdopendir)(fd);
}
SLUICE_EXPORT struct dirent *readdir(DIR *d)
{
    return dirs_readdir(d);
}
SLUICE_EXPORT struct dirent64 *readdir64(DIR *d)
{
    return (struct dirent64 *)dirs_readdir(d);
}
SLUICE_EXPORT int closedir(DIR *d)
{
    return dirs_closedir(d);
}
SLUICE_EXPORT void rewinddir(DIR *d)
{
    SLUICE_REAL(rewinddir)(d);
    if (sluice_capture_enabled)
        sluice_capture_rewinddir(d);
}

/* scandir over the merged listing; same contract as glibc's (entries malloc'ed one by one). */
typedef int (*scan_filter)(const struct dirent *);
typedef int (*scan_compar)(const struct dirent **, const struct dirent **);

static int scan_merged(const char *path, struct dirent ***out, scan_filter filter, scan_compar compar)
{
    DIR *d = dirs_opendir(path);
    if (d == NULL)
        return -1;
    struct dirent **list = NULL;
    size_t n = 0, cap = 0;
    int saved = errno;
    struct dirent *e;
    errno = 0;
    while ((e = dirs_readdir(d)) != NULL) {
        if (filter != NULL && !filter(e)) {
            errno = 0;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            struct dirent **bigger = realloc(list, cap * sizeof *list);
            if (bigger == NULL)
                goto fail;
            list = bigger;
        }
        struct dirent *copy = malloc(sizeof *copy);
        if (copy == NULL)
            goto fail;
        memcpy(copy, e, offsetof(struct dirent, d_name) + strlen(e->d_name) + 1);
        copy->d_reclen = sizeof *copy;
        list[n++] = copy;
        errno = 0;
    }
    if (errno != 0)
        goto fail;
    dirs_closedir(d);
    if (compar != NULL && n > 1)
        qsort(list, n, sizeof *list, (int (*)(const void *, const void *))compar);
    *out = list;
    errno = saved;
    return (int)n;
fail:;
    int err = errno ? errno : ENOMEM;
    while (n > 0)
        free(list[--n]);
    free(list);
    dirs_closedir(d);
    errno = err;
    return -1;
}

SLUICE_EXPORT int scandir(const char *path, struct dirent ***out, scan_filter filter, scan_compar compar)
{
    char kb[PATH_MAX];
    if (!sluice_capture_dir_is_mine(path))
        return SLUICE_REAL(scandir)(sluice_capture_kpath(AT_FDCWD, path, kb), out, filter, compar);
    return scan_merged(path, out, filter, compar);
}

SLUICE_EXPORT int scandir64(const char *path, struct dirent64 ***out, int (*filter)(const struct dirent64 *),
                            int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
    char kb[PATH_MAX];
    if (!sluice_capture_dir_is_mine(path))
        return SLUICE_REAL(scandir64)(sluice_capture_kpath(AT_FDCWD, path, kb), out, filter, compar);
    return scan_merged(path, (struct dirent ***)out, (scan_filter)filter, (scan_compar)compar);
}

/* glob: glibc's own matching, over sluice's folder functions (GLOB_ALTDIRFUNC). A caller that
 * brings its own folder functions keeps them. */
static void *glob_opendir(const char *path)
{
    return dirs_opendir(path);
}
static struct dirent *glob_readdir(void *d)
{
    return dirs_readdir(d);
}
static void glob_closedir(void *d)
{
    dirs_closedir(d);
}
/* glob's stat sees captured names as the stat wrapper does, without calling the exported name
 * (the runtime never calls its own wrappers through the PLT). */
static int glob_stat_flags(const char *path, struct stat *st, int flags)
{
    int r = sluice_capture_stat(AT_FDCWD, path, st, flags);
    char kb[PATH_MAX];
    return r != SLUICE_CAPTURE_PASS
               ? r
               : SLUICE_REAL(fstatat)(AT_FDCWD, sluice_capture_kpath(AT_FDCWD, path, kb), st, flags);
}
static int glob_stat(const char *path, struct stat *st)
{
    return glob_stat_flags(path, st, 0);
}
static int glob_lstat(const char *path, struct stat *st)
{
    return glob_stat_flags(path, st, AT_SYMLINK_NOFOLLOW);
}

SLUICE_EXPORT int glob(const char *pattern, int flags, int (*errfunc)(const char *, int), glob_t *g)
{
    if (sluice_capture_on() && !(flags & GLOB_ALTDIRFUNC)) {
        g->gl_opendir = glob_opendir;
        g->gl_readdir = glob_readdir;
        g->gl_closedir = glob_closedir;
        g->gl_stat = glob_stat;
        g->gl_lstat = glob_lstat;
        flags |= GLOB_ALTDIRFUNC;
    }
    return SLUICE_REAL(glob)(pattern, flags, errfunc, g);
}

SLUICE_EXPORT int glob64(const char *pattern, int flags, int (*errfunc)(const char *, int), glob64_t *g)
{
    if (sluice_capture_on() && !(flags & GLOB_ALTDIRFUNC)) {
        g->gl_opendir = glob_opendir;
        g->gl_readdir = (struct dirent64 * (*)(void *)) glob_readdir;
        g->gl_closedir = glob_closedir;
        g->gl_stat = (int (*)(const char *, struct stat64 *))glob_stat;
        g->gl_lstat = (int (*)(const char *, struct stat64 *))glob_lstat;
        flags |= GLOB_ALTDIRFUNC;
    }
    return SLUICE_REAL(glob64)(pattern, flags, errfunc, g);
}
