/* SPDX-License-Identifier: MIT */
/* Directory listings that show captured names as if they were files: opendir of a folder that
 * may hold members (or of a virtual per-rank folder) gets a side list of virtual entries, which
 * readdir returns after the real ones (a name that also exists for real is listed once).
 * The DIR* is always a real one (over an empty folder in the stage area for a virtual folder),
 * so dirfd, telldir and the program's own bookkeeping keep working. */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/folder_lock.h"
#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "common/hash.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct ventry {
    struct dirent de;
    bool seen; /* a real entry of the same name was returned */
    UT_hash_handle hh;
};

struct listing {
    DIR *d;
    struct ventry *ents;  /* array */
    struct ventry *index; /* by name */
    size_t n, cap, next;
    bool real_done;
    struct listing *link;
};

static struct listing *listings; /* under capture_lock */
static atomic_int listing_count;

static uint64_t name_hash(const char *s)
{
    return sluice_fnv1a_str(s) | 1;
}

/* Adds `name` (one component) unless present. Builds the array only; index made at the end. */
static void add_entry(struct listing *l, const char *name, size_t len, unsigned char type)
{
    if (len == 0 || len >= sizeof l->ents[0].de.d_name)
        return;
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(l->ents[i].de.d_name, name, len) == 0 && l->ents[i].de.d_name[len] == '\0')
            return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct ventry *e = realloc(l->ents, cap * sizeof *e);
        if (e == NULL)
            return; /* listing less than complete beats failing the program's readdir */
        l->ents = e;
        l->cap = cap;
    }
    struct ventry *v = &l->ents[l->n++];
    memset(v, 0, sizeof *v);
    memcpy(v->de.d_name, name, len);
    v->de.d_name[len] = '\0';
    v->de.d_type = type;
    v->de.d_reclen = sizeof v->de;
    v->de.d_ino = (ino_t)name_hash(name);
}

/* Files the member path under directory dir (len bytes): itself, or its per-rank folder. */
static void consider(struct listing *l, const char *dir, size_t len, const char *path)
{
    if (strncmp(path, dir, len) != 0 || path[len] != '/')
        return;
    const char *rest = path + len + 1;
    const char *slash = strchr(rest, '/');
    if (slash == NULL) {
        add_entry(l, rest, strlen(rest), DT_REG);
        return;
    }
    char sub[PATH_MAX];
    size_t n = (size_t)(slash - path);
    if (n >= sizeof sub)
        return;
    memcpy(sub, path, n);
    sub[n] = '\0';
    if (sluice_pattern_match_dir(&capture_patterns, sub, NULL))
        add_entry(l, rest, (size_t)(slash - rest), DT_DIR);
}

/* Files virtual folder `p` (from a marker or made here) as a folder entry of `dir`. */
static void consider_vdir(struct listing *l, const char *dir, size_t len, const char *p)
{
    consider(l, dir, len, p);
    /* a made folder is a folder even when "consider" sees no '/' after it */
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(p, dir, len) == 0 && p[len] == '/' && strcmp(p + len + 1, l->ents[i].de.d_name) == 0)
            l->ents[i].de.d_type = DT_DIR;
}

/* Virtual folders marked in real folder `root` (capture_vdirs.c), filed under `dir`. */
static void collect_markers(struct listing *l, const char *dir, size_t len, const char *root)
{
    DIR *d = SLUICE_REAL(opendir)(root);
    if (d == NULL)
        return;
    struct dirent *e;
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        char rel[PATH_MAX], p[PATH_MAX];
        if (capture_vdir_marker_decode(e->d_name, rel, sizeof rel) == 0 &&
            snprintf(p, sizeof p, "%.*s/%s", (int)rl, root, rel) < (int)sizeof p &&
            sluice_pattern_match_dir(&capture_patterns, p, NULL))
            consider_vdir(l, dir, len, p);
    }
    SLUICE_REAL(closedir)(d);
}

struct below_ctx {
    const char *dir;
    size_t len;
    int (*fn)(void *arg, const char *path);
    void *arg;
};

static int below_visit(void *ctx, const char *container_path, const struct sluice_container *c, int rc,
                       const char *msg)
{
    struct below_ctx *b = ctx;
    (void)container_path, (void)rc, (void)msg;
    if (c == NULL)
        return 0;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const char *p = c->members[i].path;
        uint64_t size;
        int64_t mt;
        int stop;
        /* The index may still list a member unlinked since: ask the commit engine. */
        if (strncmp(p, b->dir, b->len) == 0 && p[b->len] == '/' &&
            sluice_commit_stat_member(p, &size, &mt, NULL) == 0 && (stop = b->fn(b->arg, p)) != 0)
            return stop;
    }
    return 0;
}

void capture_scan_committed_below(const char *root, const char *dir, size_t len,
                                  int (*fn)(void *arg, const char *path), void *arg)
{
    struct below_ctx b = {dir, len, fn, arg};
    sluice_container_scan_dir(root, below_visit, &b);
}

struct scan_ctx {
    struct listing *l;
    const char *dir;
    size_t len;
};

static int scan_member(void *ctx, const char *path)
{
    struct scan_ctx *s = ctx;
    consider(s->l, s->dir, s->len, path);
    return 0;
}

static void collect(struct listing *l, const char *dir, bool virtual_dir)
{
    size_t len = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    pthread_mutex_lock(&capture_lock);
    for (struct sluice_capture_member *m = capture_open; m; m = m->hh.next)
        consider(l, dir, len, m->path);
    for (struct capture_vdir *v = capture_vdirs; v; v = v->hh.next)
        consider_vdir(l, dir, len, v->path);
    pthread_mutex_unlock(&capture_lock);
    struct scan_ctx s = {l, dir, len};
    capture_closed_below(dir, len, scan_member, &s);
    sluice_commit_staged_below(dir, len, scan_member, &s);
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", dir);
    /* Containers live in the nearest real folder: the listed one, or above a virtual one. */
    while (virtual_dir && strcmp(root, "/") != 0 && sluice_pattern_match_dir(&capture_patterns, root, NULL)) {
        char *slash = strrchr(root, '/');
        if (slash == root)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    capture_scan_committed_below(root, dir, len, scan_member, &s);
    collect_markers(l, dir, len, root);
    for (size_t i = 0; i < l->n; i++) {
        struct ventry *v = &l->ents[i];
        HASH_ADD_STR(l->index, de.d_name, v);
    }
}

bool sluice_capture_dir_is_mine(const char *path)
{
    char abs[PATH_MAX];
    if (!sluice_capture_on() || path == NULL || capture_resolve(AT_FDCWD, path, abs, sizeof abs) != 0)
        return false;
    return sluice_pattern_match_parent(&capture_patterns, abs) ||
           sluice_pattern_match_dir(&capture_patterns, abs, NULL);
}

/* Gives d the virtual entries of folder abs (none: d stays a plain DIR*). Guard held. */
static void attach_listing(DIR *d, const char *abs, bool virtual_dir)
{
    struct listing *l = calloc(1, sizeof *l);
    if (l == NULL)
        return;
    l->d = d;
    collect(l, abs, virtual_dir); /* kept with no virtual entry too: readdir hides own_file() */
    pthread_mutex_lock(&capture_lock);
    l->link = listings;
    listings = l;
    atomic_fetch_add(&listing_count, 1);
    pthread_mutex_unlock(&capture_lock);
}

DIR *sluice_capture_opendir(const char *path, bool *handled)
{
    char abs[PATH_MAX], kb[PATH_MAX];
    *handled = false;
    if (!sluice_capture_dir_is_mine(path))
        return NULL;
    capture_resolve(AT_FDCWD, path, abs, sizeof abs);
    const char *kpath = sluice_capture_kpath(AT_FDCWD, path, kb);
    *handled = true;
    sluice_capture_guard_enter();
    DIR *d = SLUICE_REAL(opendir)(kpath);
    bool virtual_dir = false;
    if (d == NULL) {
        int e = errno;
        char standin[PATH_MAX];
        /* A virtual folder: a DIR* over its stand-in ("." and ".." as a real folder has, and
         * a descriptor that names it again for the *at calls). */
        if (e == ENOENT && sluice_pattern_match_dir(&capture_patterns, abs, NULL) &&
            capture_vdir_exists(abs) && capture_standin_of(abs, standin) == 0) {
            d = SLUICE_REAL(opendir)(standin);
            virtual_dir = true;
        }
        if (d == NULL) {
            sluice_capture_guard_leave();
            errno = e;
            return NULL;
        }
    }
    attach_listing(d, abs, virtual_dir);
    sluice_capture_guard_leave();
    return d;
}

DIR *sluice_capture_fdopendir(int fd, bool *handled)
{
    char abs[PATH_MAX];
    *handled = false;
    if (capture_resolve(fd, ".", abs, sizeof abs) != 0 ||
        !(sluice_pattern_match_parent(&capture_patterns, abs) ||
          sluice_pattern_match_dir(&capture_patterns, abs, NULL)))
        return NULL;
    *handled = true;
    sluice_capture_guard_enter();
    DIR *d = SLUICE_REAL(fdopendir)(fd);
    if (d != NULL) {
        struct stat st;
        bool virtual_dir =
            sluice_pattern_match_dir(&capture_patterns, abs, NULL) && SLUICE_REAL(stat)(abs, &st) != 0;
        int e = errno;
        attach_listing(d, abs, virtual_dir);
        errno = e;
    }
    sluice_capture_guard_leave();
    return d;
}

static struct listing *find_listing(DIR *d, bool unlink_it)
{
    if (atomic_load_explicit(&listing_count, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&capture_lock);
    struct listing **pp = &listings;
    while (*pp && (*pp)->d != d)
        pp = &(*pp)->link;
    struct listing *l = *pp;
    if (l != NULL && unlink_it) {
        *pp = l->link;
        atomic_fetch_sub(&listing_count, 1);
    }
    pthread_mutex_unlock(&capture_lock);
    return l;
}

/* sluice's own bookkeeping beside the program's files, like the stage folder: per-rank folder
 * markers, a container being written (the container itself is what capture makes, and shows),
 * the folder's commit lock. */
static bool own_file(const char *name)
{
    return capture_vdir_is_marker(name) || sluice_container_is_temp_name(name) ||
           sluice_folder_lock_is_name(name);
}

struct dirent *sluice_capture_readdir(DIR *d, bool *handled)
{
    struct listing *l = find_listing(d, false);
    *handled = l != NULL;
    if (l == NULL)
        return NULL;
    while (!l->real_done) {
        struct dirent *e = SLUICE_REAL(readdir)(d);
        if (e != NULL && own_file(e->d_name))
            continue;
        if (e != NULL) {
            struct ventry *v = NULL;
            HASH_FIND_STR(l->index, e->d_name, v);
            if (v != NULL)
                v->seen = true;
            return e;
        }
        l->real_done = true;
    }
    while (l->next < l->n) {
        struct ventry *v = &l->ents[l->next++];
        if (!v->seen)
            return &v->de;
    }
    return NULL;
}

int sluice_capture_closedir(DIR *d)
{
    struct listing *l = find_listing(d, true);
    if (l == NULL)
        return SLUICE_CAPTURE_PASS;
    HASH_CLEAR(hh, l->index);
    free(l->ents);
    free(l);
    return SLUICE_REAL(closedir)(d);
}

void sluice_capture_rewinddir(DIR *d)
{
    struct listing *l = find_listing(d, false);
    if (l == NULL)
        return;
    l->real_done = false;
    l->next = 0;
    for (size_t i = 0; i < l->n; i++)
        l->ents[i].seen = false;
}
