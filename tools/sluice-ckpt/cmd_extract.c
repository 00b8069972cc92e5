/* SPDX-License-Identifier: MIT */
/* sluice-ckpt extract [-o OUTDIR] [--member NAME]... [--force] PATH...
 * Writes members back out as ordinary files, at their path relative to the set's folder:
 * beside the container, or under OUTDIR. Each file is written to a hidden temporary name,
 * its checksum verified while copying, and only then renamed into place, so a corrupt member
 * never leaves a plausible-looking file behind. Existing files are kept unless --force.
 * Holes stay holes; the member's modification time is restored. */
#include "ckpt_tool.h"
#include "common/full_io.h"
#include "common/private_dir.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct extract_opts {
    const char *outdir;
    char **names; /* --member values */
    int *name_used;
    int nnames;
    int force;
    int flags;
    int to_stdout; /* -c: member bytes to stdout, in index order, instead of files */
    int quiet;     /* -q: no progress line */
    struct tool_progress *progress;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt extract [-o OUTDIR] [-m NAME]... [-f] [-r] [-c] [-q] PATH...\n"
                 "Writes the members of each container back out as ordinary files, at their path\n"
                 "relative to the set's folder: beside the container, or under OUTDIR. Checksums\n"
                 "are verified while copying; a corrupt member is reported and not written.\n"
                 "  -o, --output OUTDIR  write under OUTDIR (created if missing)\n"
                 "  -m, --member NAME    only this member (full path, path relative to the set's\n"
                 "                       folder, or file name); may be repeated\n"
                 "  -f, --force          overwrite existing files\n"
                 "  -c, --stdout         write the selected members' bytes to stdout instead (like\n"
                 "                       gzip -c; a corrupt member still fails with status 1)\n"
                 "  -r, --recursive      also the containers in subfolders (under OUTDIR, each\n"
                 "                       keeps its subfolder)\n"
                 "  -q, --quiet          no progress line (shown on a terminal for large containers)\n"
                 "A container that holds one global array (SLUICE_LAYOUT, docs/LAYOUT.md) also gives:\n"
                 "  --raw FILE           the global array alone, in canonical order\n"
                 "  --ranks M            the per-rank files of an M-rank decomposition\n"
                 "  --grid PxQxR         their process grid (default: as MPI_Dims_create)\n"
                 "  --h5 FILE            an HDF5 view: dataset /array stored in the container\n");
}

/* mkdir -p for every directory of `path` below its first `keep` bytes. */
static int make_parents(char *path, size_t keep)
{
    for (char *p = path + keep + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(path, 0777);
        int e = errno;
        *p = '/';
        if (rc != 0 && e != EEXIST)
            return -e;
    }
    return 0;
}

/* Member path relative to the set's folder D, or NULL if it does not lie safely under D. */
static const char *relative_path(const char *dir, const char *path)
{
    size_t dl = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
        return NULL;
    const char *rel = path + dl + 1;
    /* No empty, "." or ".." components: extraction must never escape the output folder. */
    for (const char *c = rel;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return NULL;
        if (!e)
            break;
        c = e + 1;
    }
    return rel;
}

static int selected(struct extract_opts *o, const char *path, const char *rel)
{
    if (o->nnames == 0)
        return 1;
    const char *base = strrchr(path, '/') + 1;
    int hit = 0;
    for (int i = 0; i < o->nnames; i++)
        if (strcmp(o->names[i], path) == 0 || strcmp(o->names[i], rel) == 0 ||
            strcmp(o->names[i], base) == 0) {
            o->name_used[i] = 1;
            hit = 1;
        }
    return hit;
}

static int put_in_place(const char *tmp, const char *dest, int force)
{
    if (force)
        return rename(tmp, dest) == 0 ? 0 : -errno;
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dest, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -errno;
    /* File system without RENAME_NOREPLACE: link() also refuses to replace. */
    if (link(tmp, dest) != 0)
        return -errno;
    unlink(tmp);
    return 0;
}

static int extract_member(struct extract_opts *o, const struct sluice_container *c, uint32_t i,
                          const char *root, const char *rel)
{
    const struct sluice_member *m = &c->members[i];
    char dest[PATH_MAX], tmp[PATH_MAX], msg[8192];
    size_t rootlen = strlen(root);
    if (tool_snprintf(dest, sizeof dest, "%s/%s", root, rel) != 0) {
        tool_error("%s: member %s: destination path too long", c->path, m->path);
        return 1;
    }
    struct stat st;
    if (!o->force && lstat(dest, &st) == 0) {
        tool_error("%s: exists, not overwritten (use --force)", dest);
        return 1;
    }
    /* Folders below OUTDIR (a container's subfolder, a per-rank folder) are created; beside a
     * container only the per-rank ones. */
    int rc = make_parents(dest, o->outdir ? strlen(o->outdir) : rootlen);
    if (rc < 0) {
        tool_error("%s: cannot create its folder: %s", dest, strerror(-rc));
        return 1;
    }
    const char *slash = strrchr(dest, '/');
    if (tool_snprintf(tmp, sizeof tmp, "%.*s/.%s.sluice-extract.%016llx", (int)(slash - dest), dest,
                      slash + 1, sluice_random_u64()) != 0) {
        tool_error("%s: path too long for its temporary name", dest);
        return 1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        tool_error("%s: %s", tmp, strerror(errno));
        return 1;
    }
    tool_progress_watch(o->progress, fd);
    rc = sluice_container_copy_member(c, i, fd, msg, sizeof msg);
    tool_progress_unwatch(o->progress);
    if (rc == 0 && m->mtime_ns > 0) {
        struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT},
                                 {.tv_sec = m->mtime_ns / 1000000000, .tv_nsec = m->mtime_ns % 1000000000}};
        futimens(fd, ts);
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: %s", dest, strerror(errno));
    }
    if (rc == 0 && (rc = put_in_place(tmp, dest, o->force)) < 0)
        (void)tool_snprintf(msg, sizeof msg, "%s: %s%s", dest, strerror(-rc),
                            rc == -EEXIST ? " (use --force)" : "");
    if (rc < 0) {
        unlink(tmp);
        tool_error("%s", msg);
        return 1;
    }
    return 0;
}

static int sink_stdout(void *ctx, uint64_t logical, const void *buf, size_t len)
{
    static const unsigned char zeros[65536];
    if (buf)
        return sluice_full_write(1, buf, len);
    while (len > 0) { /* a hole: zeros, a piece at a time */
        size_t n = len < sizeof zeros ? len : sizeof zeros;
        int rc = sluice_full_write(1, zeros, n);
        if (rc != 0)
            return rc;
        len -= n;
    }
    return 0;
}

static int extract_one(void *ctx, const struct sluice_container *c, const char *rel_dir)
{
    struct extract_opts *o = ctx;
    char dir[PATH_MAX], root[PATH_MAX];
    if (sluice_container_dir(c->meta.set_key, dir, sizeof dir) != 0) {
        tool_error("%s: set key %s has no folder", c->path, c->meta.set_key);
        return 1;
    }
    if (o->outdir) {
        /* Containers found in subfolders keep that subfolder under OUTDIR (chk_10/, chk_20/
         * would otherwise collide). */
        if (tool_snprintf(root, sizeof root, "%s%s%s", o->outdir, rel_dir[0] ? "/" : "", rel_dir) != 0) {
            tool_error("%s: output path too long", c->path);
            return 1;
        }
    } else {
        const char *slash = strrchr(c->path, '/');
        if (slash)
            (void)tool_snprintf(root, sizeof root, "%.*s", slash == c->path ? 1 : (int)(slash - c->path),
                                c->path);
        else
            (void)tool_snprintf(root, sizeof root, ".");
    }
    int bad = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const char *rel = relative_path(dir, c->members[i].path);
        if (rel && selected(o, c->members[i].path, rel))
            total += c->members[i].size;
    }
    struct tool_progress progress;
    tool_progress_start(&progress, c->path, total, o->quiet || o->to_stdout);
    o->progress = &progress;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const char *rel = relative_path(dir, c->members[i].path);
        if (!rel) {
            tool_error("%s: member %s does not lie under the set's folder %s; not extracted", c->path,
                       c->members[i].path, dir);
            bad = 1;
            continue;
        }
        if (!selected(o, c->members[i].path, rel))
            continue;
        if (o->to_stdout) {
            char msg[8192];
            if (sluice_container_read_member(c, i, sink_stdout, NULL, msg, sizeof msg) != 0) {
                tool_error("%s", msg);
                bad = 1;
            }
        } else {
            bad |= extract_member(o, c, i, root, rel);
        }
        tool_progress_add(&progress, c->members[i].size);
    }
    tool_progress_clear(&progress);
    o->progress = NULL;
    return bad;
}

int cmd_extract(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'},         {"output", required_argument, 0, 'o'},
        {"member", required_argument, 0, 'm'}, {"force", no_argument, 0, 'f'},
        {"recursive", no_argument, 0, 'r'},    {"stdout", no_argument, 0, 'c'},
        {"quiet", no_argument, 0, 'q'},        {"raw", required_argument, 0, 'R'},
        {"h5", required_argument, 0, 'H'},     {"ranks", required_argument, 0, 'N'},
        {"grid", required_argument, 0, 'G'},   {0, 0, 0, 0}};
    struct tool_array_opts ao = {0};
    struct extract_opts o = {0};
    o.names = calloc((size_t)argc, sizeof *o.names);
    o.name_used = calloc((size_t)argc, sizeof *o.name_used);
    if (!o.names || !o.name_used) {
        tool_error("out of memory");
        return EXIT_BAD_DATA;
    }
    opterr = 0;
    int c, status = EXIT_OK;
    while ((c = getopt_long(argc, argv, ":ho:m:frcq", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            goto out;
        case 'o':
            o.outdir = optarg;
            break;
        case 'm':
            o.names[o.nnames++] = optarg;
            break;
        case 'f':
            o.force = 1;
            break;
        case 'r':
            o.flags |= TOOL_RECURSIVE;
            break;
        case 'c':
            o.to_stdout = 1;
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'R':
            ao.raw = optarg;
            break;
        case 'H':
            ao.h5 = optarg;
            break;
        case 'N':
            ao.ranks = (uint32_t)strtoul(optarg, NULL, 10);
            if (ao.ranks == 0) {
                status = tool_usage_error("extract", "--ranks wants a rank count of 1 or more");
                goto out;
            }
            break;
        case 'G':
            ao.grid = optarg;
            break;
        default:
            status = tool_bad_option("extract", c, argv);
            goto out;
        }
    }
    if (optind >= argc) {
        status = tool_usage_error("extract", "which container? give a PATH");
        goto out;
    }
    if (o.to_stdout && (o.outdir || o.force)) {
        status = tool_usage_error("extract", "--stdout writes no files: it takes no -o or --force");
        goto out;
    }
    if (o.outdir) {
        char tmp[PATH_MAX];
        int rc = tool_snprintf(tmp, sizeof tmp, "%s/", o.outdir) == 0 ? make_parents(tmp, 0) : -ENAMETOOLONG;
        if (rc < 0) {
            tool_error("%s: cannot create: %s", o.outdir, strerror(-rc));
            status = EXIT_BAD_DATA;
            goto out;
        }
    }
    if (ao.raw || ao.h5 || ao.ranks) {
        /* A global array (docs/LAYOUT.md): one container, other views of it. */
        ao.outdir = o.outdir;
        ao.force = o.force;
        if (optind + 1 != argc || o.nnames || o.to_stdout)
            status =
                tool_usage_error("extract", "--raw, --h5 and --ranks take one container and no -m or -c");
        else
            status = tool_array_extract(argv[optind], &ao);
        goto out;
    }
    status = tool_for_each_container(argv + optind, argc - optind, o.flags, extract_one, &o);
    for (int i = 0; i < o.nnames; i++)
        if (!o.name_used[i]) {
            tool_error("no member named %s", o.names[i]);
            status = EXIT_BAD_DATA;
        }
out:
    free(o.names);
    free(o.name_used);
    return status;
}
