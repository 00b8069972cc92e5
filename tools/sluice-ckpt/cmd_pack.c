/* SPDX-License-Identifier: MIT */
/* sluice-ckpt pack [-b BLOCK] [-o CONTAINER] [-f] SETKEY FILE...
 * Builds a container from per-rank files that already exist (a checkpoint written without
 * sluice, or files extracted earlier), so that a job run under sluice restarts from it. The
 * rank of each file is read from its name through SETKEY ("%r" stands for the rank digits).
 * The container is written under its temporary name, flushed, and renamed into place. */
#include "ckpt_tool.h"
#include "common/private_dir.h"
#include "config/config.h"
#include "progress.h"
#include "sluice_version.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt pack [-b BLOCK] [-o CONTAINER] [-f] [-q] SETKEY FILE...\n"
                 "Builds one container from existing per-rank files. SETKEY is the files' path with\n"
                 "the rank number written as %%r (e.g. 'run/ckpt.%%r'); every FILE must match it.\n"
                 "  -o, --output CONTAINER  write here instead of the set's container name\n"
                 "  -b, --block-size SIZE   data alignment (power of two, 512..64M; default 4K)\n"
                 "  -f, --force             replace an existing container (its version + 1)\n"
                 "  -q, --quiet             no progress line (shown on a terminal for large files)\n");
}

/* p made absolute against the working directory; 0, or -1 if too long (the working directory
 * too: never a relative path taken for an absolute one). */
static int absolute(const char *p, char *out, size_t len)
{
    char cwd[PATH_MAX];
    int n;
    if (p[0] != '/' && !getcwd(cwd, sizeof cwd))
        return -1;
    if (p[0] == '/')
        n = snprintf(out, len, "%s", p);
    else
        n = snprintf(out, len, "%s/%s", cwd, p[0] == '.' && p[1] == '/' ? p + 2 : p);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Matches path against key, "%r" taking one or more digits; all of them the same number.
 * Returns the rank or -1. */
static long match_rank(const char *key, const char *path, long rank)
{
    for (;;) {
        if (key[0] == '%' && key[1] == 'r') {
            size_t n = 0;
            while (path[n] >= '0' && path[n] <= '9' && n < 9)
                n++;
            for (; n > 0; n--) { /* greedy, with backtracking */
                char num[10];
                memcpy(num, path, n);
                num[n] = 0;
                long v = strtol(num, NULL, 10);
                if (rank >= 0 && v != rank)
                    continue;
                long r = match_rank(key + 2, path + n, v);
                if (r >= 0)
                    return r;
            }
            return -1;
        }
        if (*key != *path)
            return -1;
        if (!*key)
            return rank;
        key++;
        path++;
    }
}

struct pack_args {
    const char *output;
    uint64_t block;
    int force, quiet;
    char key[PATH_MAX];       /* SETKEY made absolute */
    char container[PATH_MAX]; /* where the container goes */
};

/* Options and SETKEY into a; returns -1 to go on, or the exit status (help, usage error). */
static int pack_parse(int argc, char **argv, struct pack_args *a)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"output", required_argument, 0, 'o'},
                                         {"block-size", required_argument, 0, 'b'},
                                         {"force", no_argument, 0, 'f'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:b:fq", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 'o':
            a->output = optarg;
            break;
        case 'f':
            a->force = 1;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'b':
            if (sluice_parse_size(optarg, &a->block) != 0 || a->block < SLUICE_CONTAINER_BLOCK_MIN ||
                a->block > SLUICE_CONTAINER_BLOCK_MAX || (a->block & (a->block - 1)))
                return tool_usage_error("pack", "block size '%s': a power of two from 512 to 64M", optarg);
            break;
        default:
            return tool_bad_option("pack", c, argv);
        }
    }
    if (argc - optind < 2)
        return tool_usage_error("pack", "give a SETKEY and at least one FILE");
    if (absolute(argv[optind], a->key, sizeof a->key) != 0)
        return tool_usage_error("pack", "SETKEY is too long");
    if (!strstr(a->key, "%r"))
        return tool_usage_error("pack", "SETKEY '%s' has no %%r where the rank number goes", a->key);
    if (a->output) {
        if (tool_snprintf(a->container, sizeof a->container, "%s", a->output) != 0)
            return tool_usage_error("pack", "output path too long");
    } else if (sluice_container_name(a->key, a->container, sizeof a->container) != 0)
        return tool_usage_error("pack", "SETKEY '%s' is not a usable set key", a->key);
    return -1;
}

/* Opens FILE f as the member source src, its rank read from its name through key;
 * path_i (PATH_MAX) gets its absolute name. EXIT_OK or the exit status of the error. */
static int pack_source(const char *key, const char *f, char *path_i, struct sluice_container_source *src)
{
    if (absolute(f, path_i, PATH_MAX) != 0)
        return tool_usage_error("pack", "%s: path too long", f);
    long rank = match_rank(key, path_i, -1);
    if (rank < 0)
        return tool_usage_error("pack", "%s does not match the set key %s", path_i, key);
    int fd = open(f, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tool_error("%s: %s", f, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return EXIT_BAD_DATA;
    }
    *src = (struct sluice_container_source){.path = path_i,
                                            .member_rank = (int32_t)rank,
                                            .writer_rank = -1,
                                            .mtime_ns =
                                                (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                                            .fd = fd,
                                            .size = (uint64_t)st.st_size};
    return EXIT_OK;
}

/* The header of the new container: version 1, or the replaced container's version + 1 with
 * --force (without it, an existing container is an error). EXIT_OK or EXIT_BAD_DATA. */
static int pack_meta(const struct pack_args *a, struct sluice_container_meta *meta)
{
    char msg[8192];
    *meta = (struct sluice_container_meta){.set_key = a->key,
                                           .block_size = (uint32_t)a->block,
                                           .version = 1,
                                           .writer_nprocs = 1,
                                           .writer_pid = (uint32_t)getpid()};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    meta->created_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    sluice_host_name(meta->writer_host);
    (void)tool_snprintf(meta->writer_software, sizeof meta->writer_software, "sluice-ckpt %s",
                        SLUICE_VERSION_STRING);
    struct sluice_container *old = NULL;
    if (sluice_container_open(a->container, &old, msg, sizeof msg) == 0 || access(a->container, F_OK) == 0) {
        if (!a->force) {
            tool_error("%s exists, not replaced (use --force)", a->container);
            sluice_container_close(old);
            return EXIT_BAD_DATA;
        }
        if (old)
            meta->version = old->meta.version + 1;
        sluice_container_close(old);
    }
    return EXIT_OK;
}

/* Writes the container under its temporary name, flushes it and renames it into place; on
 * failure the temporary file is removed and the line says why. EXIT_OK or EXIT_BAD_DATA. */
static int pack_write(const struct pack_args *a, const struct sluice_container_meta *meta,
                      const struct sluice_container_source *src, int nfiles)
{
    char tmp[PATH_MAX], msg[8192];
    if (sluice_container_temp_name(a->container, (unsigned long)sluice_random_u64(), tmp, sizeof tmp) != 0) {
        tool_error("%s: name too long", a->container);
        return EXIT_BAD_DATA;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        tool_error("%s: %s", tmp, strerror(errno));
        return EXIT_BAD_DATA;
    }
    uint64_t total = 0;
    for (int i = 0; i < nfiles; i++)
        total += src[i].size;
    struct tool_progress progress;
    tool_progress_start(&progress, a->container, total, a->quiet);
    tool_progress_watch(&progress, fd);
    int rc = sluice_container_write(fd, meta, src, (uint32_t)nfiles, msg, sizeof msg);
    tool_progress_unwatch(&progress);
    tool_progress_add(&progress, total);
    tool_progress_clear(&progress);
    if (rc == 0 && fsync(fd) != 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: fsync: %s", tmp, strerror(errno));
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: %s", tmp, strerror(errno));
    }
    if (rc == 0 && rename(tmp, a->container) != 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: %s", a->container, strerror(errno));
    }
    if (rc == 0)
        return EXIT_OK;
    unlink(tmp);
    tool_error("%s", msg);
    return EXIT_BAD_DATA;
}

int cmd_pack(int argc, char **argv)
{
    struct pack_args a = {.block = 4096};
    int status = pack_parse(argc, argv, &a);
    if (status >= 0)
        return status;
    int nfiles = argc - optind - 1;
    struct sluice_container_source *src = calloc((size_t)nfiles, sizeof *src);
    char(*paths)[PATH_MAX] = calloc((size_t)nfiles, PATH_MAX);
    if (!src || !paths) {
        tool_error("out of memory");
        return EXIT_BAD_DATA;
    }
    for (int i = 0; i < nfiles; i++)
        src[i].fd = -1;
    status = EXIT_OK;
    for (int i = 0; status == EXIT_OK && i < nfiles; i++)
        status = pack_source(a.key, argv[optind + 1 + i], paths[i], &src[i]);
    struct sluice_container_meta meta;
    if (status == EXIT_OK)
        status = pack_meta(&a, &meta);
    if (status == EXIT_OK)
        status = pack_write(&a, &meta, src, nfiles);
    for (int i = 0; i < nfiles; i++)
        if (src[i].fd >= 0)
            close(src[i].fd);
    free(src);
    free(paths);
    return status;
}
