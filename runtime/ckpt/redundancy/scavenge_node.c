/* SPDX-License-Identifier: MIT */
/* The node step of a scavenge (scavenge.h): this node's records of the versions newer than the
 * container's, with the staging files they name, copied into its part folder. */
#include "ckpt/redundancy/scavenge.h"

#include "ckpt/container/container.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_xor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sluice_scavenge_root(const char *key, char *out, size_t cap)
{
    char container[PATH_MAX], dir[PATH_MAX];
    if (sluice_container_name(key, container, sizeof container) != 0 ||
        sluice_container_dir(key, dir, sizeof dir) != 0)
        return -EINVAL;
    const char *base = strrchr(container, '/');
    int n = snprintf(out, cap, "%s/.%s" SLUICE_SCAVENGE_DIR_SUFFIX, dir, base ? base + 1 : container);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

void sluice_scavenge_remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}

/* Copies staging file name from src_dir to dst_dir unless there already (members a version did
 * not rewrite are shared with older versions); it must be whole: `size` bytes. 0 or -errno. */
static int copy_staged(const char *src_dir, const char *dst_dir, const char *name, uint64_t size)
{
    char src[PATH_MAX], dst[PATH_MAX];
    if (snprintf(src, sizeof src, "%s/%s", src_dir, name) >= (int)sizeof src ||
        snprintf(dst, sizeof dst, "%s/%s", dst_dir, name) >= (int)sizeof dst)
        return -ENAMETOOLONG;
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -errno;
    struct stat st;
    int rc = fstat(in, &st) != 0 ? -errno : (uint64_t)st.st_size != size ? -EIO : 0;
    int out = rc ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (rc == 0 && out < 0)
        rc = errno == EEXIST ? 1 : -errno;
    static char buf[1 << 20];
    for (uint64_t done = 0; rc == 0 && done < size;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            break;
        }
        for (ssize_t w = 0; rc == 0 && w < r;) {
            ssize_t k = write(out, buf + w, (size_t)(r - w));
            if (k < 0 && errno != EINTR)
                rc = -errno;
            w += k > 0 ? k : 0;
        }
        done += (uint64_t)r;
    }
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0 && out >= 0)
        unlink(dst);
    close(in);
    return rc > 0 ? 0 : rc;
}

/* One record of the stage folder into the part, with its staging files; a record whose files
 * are not all whole is left out (its version is then incomplete over the parts, and named). */
static int copy_record(const char *stage, const char *part, const char *file, FILE *report)
{
    struct sluice_level_record r;
    int rc = sluice_level_record_read(file, &r);
    if (rc == -ENOENT)
        return 0;
    if (rc != 0) {
        if (report)
            fprintf(report, "sluice-ckpt scavenge: %s: unreadable record, left out: %s\n", file,
                    strerror(-rc));
        return 0;
    }
    for (uint32_t i = 0; rc == 0 && i < r.n; i++) {
        rc = copy_staged(stage, part, r.m[i].data, r.m[i].size);
        if (rc != 0 && report)
            fprintf(report,
                    "sluice-ckpt scavenge: %s: member %s of version %" PRIu64
                    " (rank %d) is not whole in %s/%s "
                    "(%s): its record is left out\n",
                    r.set_key, r.m[i].path, r.version, r.rank, stage, r.m[i].data, strerror(-rc));
    }
    /* The record's own bytes (not re-encoded): an XOR rebuild regenerates the node's stream
     * from the part, and the parity holds the stream of these bytes (scavenge_xor.c). */
    struct stat st;
    if (rc == 0)
        rc = stat(file, &st) != 0 ? -errno
                                  : copy_staged(stage, part, strrchr(file, '/') + 1, (uint64_t)st.st_size);
    sluice_level_record_free(&r);
    return rc == -EIO || rc == -ENOENT ? 0 : rc;
}

/* The redundancy this node holds of versions above `durable` whose protection mark it holds,
 * for the finish to rebuild lost nodes' parts from: partner copies ("rc-<hash>-<version>-
 * <host>.red", scavenge_rebuild.c) and XOR parity ("rx-<hash>-<version>.xor", scavenge_xor.c).
 * A copy or parity being received keeps its temporary name and a version not yet protected has
 * no mark: neither is taken. */
static int copy_redundancy(const char *stage, const char *part, const char *key, uint64_t durable,
                           const char *pfx, const char *suffix, const char *what, FILE *report)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s%016" PRIx64 "-", pfx, sluice_level_key_hash(key));
    size_t pl = strlen(prefix), sl = strlen(suffix);
    DIR *d = opendir(stage);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX];
        struct stat st;
        if (len <= pl + sl || strncmp(e->d_name, prefix, pl) != 0 ||
            strcmp(e->d_name + len - sl, suffix) != 0)
            continue;
        uint64_t v = strtoull(e->d_name + pl, NULL, 10);
        if (v <= durable || !sluice_red_marked(stage, key, v) ||
            snprintf(path, sizeof path, "%s/%s", stage, e->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0)
            continue;
        rc = copy_staged(stage, part, e->d_name, (uint64_t)st.st_size);
        if (rc != 0 && report)
            fprintf(report, "sluice-ckpt scavenge: %s: the %s %s/%s of version %" PRIu64 " is left out: %s\n",
                    key, what, stage, e->d_name, v, strerror(-rc));
        rc = rc == -EIO || rc == -ENOENT ? 0 : rc; /* removed meanwhile: only this one is missing */
    }
    closedir(d);
    return rc;
}

static uint64_t container_version(const char *key)
{
    char container[PATH_MAX], err[2 * PATH_MAX];
    struct sluice_container *c = NULL;
    uint64_t v = 0;
    if (sluice_container_name(key, container, sizeof container) == 0 &&
        sluice_container_open(container, &c, err, sizeof err) == 0) {
        v = c->meta.version;
        sluice_container_close(c);
    }
    return v;
}

int sluice_scavenge_node(const char *stage_dir, const char *key, const char *name, FILE *report)
{
    char root[PATH_MAX], tmp[PATH_MAX], part[PATH_MAX], file[PATH_MAX];
    int rc = sluice_scavenge_root(key, root, sizeof root);
    if (rc == 0 &&
        (snprintf(part, sizeof part, "%s/%s" SLUICE_SCAVENGE_PART_SUFFIX, root, name) >= (int)sizeof part ||
         snprintf(tmp, sizeof tmp, "%s.tmp-%ld", part, (long)getpid()) >= (int)sizeof tmp))
        rc = -ENAMETOOLONG;
    if (rc == 0 && mkdir(root, 0700) != 0 && errno != EEXIST)
        rc = -errno;
    sluice_scavenge_remove_folder(tmp);
    if (rc == 0 && mkdir(tmp, 0700) != 0)
        rc = -errno;
    if (rc != 0) {
        if (report)
            fprintf(report, "sluice-ckpt scavenge: %s: cannot make this node's part in %s: %s\n", key, root,
                    strerror(-rc));
        return rc;
    }
    uint64_t durable = container_version(key);
    struct sluice_level_version v[64];
    int n = sluice_level_versions(stage_dir, key, v, 64);
    for (int i = 0; rc == 0 && i < n && v[i].version > durable; i++)
        for (int r = 0; rc == 0 && r < v[i].nprocs; r++)
            if (sluice_level_record_path(stage_dir, key, v[i].version, r, file, sizeof file) == 0)
                rc = copy_record(stage_dir, tmp, file, report);
    if (rc == 0)
        rc = copy_redundancy(stage_dir, tmp, key, durable, SLUICE_RED_COPY_PREFIX, SLUICE_RED_COPY_SUFFIX,
                             "partner copy", report);
    if (rc == 0)
        rc = copy_redundancy(stage_dir, tmp, key, durable, SLUICE_RED_XOR_PREFIX, SLUICE_RED_XOR_SUFFIX,
                             "XOR parity", report);
    if (rc == 0) {
        sluice_scavenge_remove_folder(part); /* this process's part of an earlier run: replaced whole */
        if (rename(tmp, part) != 0)
            rc = -errno;
    }
    if (rc != 0) {
        if (report)
            fprintf(report, "sluice-ckpt scavenge: %s: this node's part %s not made: %s\n", key, part,
                    strerror(-rc));
        sluice_scavenge_remove_folder(tmp);
    }
    return rc;
}

int sluice_scavenge_parts(const char *key)
{
    char root[PATH_MAX];
    if (sluice_scavenge_root(key, root, sizeof root) != 0)
        return 0;
    DIR *d = opendir(root);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    size_t sl = strlen(SLUICE_SCAVENGE_PART_SUFFIX);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l > sl && strcmp(e->d_name + l - sl, SLUICE_SCAVENGE_PART_SUFFIX) == 0;
    }
    closedir(d);
    return n;
}
