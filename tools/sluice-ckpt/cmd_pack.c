/* SPDX-License-Identifier: MIT */
/* sluice-ckpt pack [-b BLOCK] [-o CONTAINER] [-f] SETKEY FILE...
 * Builds a container from per-rank files that already exist (a checkpoint written without
 * sluice, or files extracted earlier), so that a job run under sluice restarts from it. The
 * rank of each file is read from its name through SETKEY ("%r" stands for the rank digits).
 * The container is written under its temporary name, flushed, and renamed into place. */
#include "ckpt_tool.h"
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

/* p made absolute against the working directory; 0, or -1 if too long. */
static int absolute(const char *p, char *out, size_t len)
{
    char cwd[PATH_MAX];
    int n;
    if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
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

int cmd_pack(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"output", required_argument, 0, 'o'},
                                         {"block-size", required_argument, 0, 'b'},
                                         {"force", no_argument, 0, 'f'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {0, 0, 0, 0}};
    const char *output = NULL;
    uint64_t block = 4096;
    int force = 0, quiet = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:b:fq", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 'o':
            output = optarg;
            break;
        case 'f':
            force = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'b':
            if (sluice_parse_size(optarg, &block) != 0 || block < SLUICE_CONTAINER_BLOCK_MIN ||
                block > SLUICE_CONTAINER_BLOCK_MAX || (block & (block - 1)))
                return tool_usage_error("pack", "block size '%s': a power of two from 512 to 64M", optarg);
            break;
        default:
            return tool_bad_option("pack", c, argv);
        }
    }
    if (argc - optind < 2)
        return tool_usage_error("pack", "give a SETKEY and at least one FILE");
    char key[PATH_MAX];
    if (absolute(argv[optind], key, sizeof key) != 0)
        return tool_usage_error("pack", "SETKEY is too long");
    if (!strstr(key, "%r"))
        return tool_usage_error("pack", "SETKEY '%s' has no %%r where the rank number goes", key);
    char container[PATH_MAX], tmp[PATH_MAX], msg[8192];
    if (output) {
        if (tool_snprintf(container, sizeof container, "%s", output) != 0)
            return tool_usage_error("pack", "output path too long");
    } else if (sluice_container_name(key, container, sizeof container) != 0)
        return tool_usage_error("pack", "SETKEY '%s' is not a usable set key", key);

    int nfiles = argc - optind - 1, status = EXIT_OK;
    struct sluice_container_source *src = calloc((size_t)nfiles, sizeof *src);
    char(*paths)[PATH_MAX] = calloc((size_t)nfiles, PATH_MAX);
    if (!src || !paths) {
        tool_error("out of memory");
        return EXIT_BAD_DATA;
    }
    for (int i = 0; i < nfiles; i++)
        src[i].fd = -1;
    for (int i = 0; i < nfiles; i++) {
        const char *f = argv[optind + 1 + i];
        if (absolute(f, paths[i], PATH_MAX) != 0) {
            status = tool_usage_error("pack", "%s: path too long", f);
            goto out;
        }
        long rank = match_rank(key, paths[i], -1);
        if (rank < 0) {
            status = tool_usage_error("pack", "%s does not match the set key %s", paths[i], key);
            goto out;
        }
        int fd = open(f, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            tool_error("%s: %s", f, fd < 0 ? strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            status = EXIT_BAD_DATA;
            goto out;
        }
        src[i] = (struct sluice_container_source){.path = paths[i],
                                                  .member_rank = (int32_t)rank,
                                                  .writer_rank = -1,
                                                  .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
                                                              st.st_mtim.tv_nsec,
                                                  .fd = fd,
                                                  .size = (uint64_t)st.st_size};
    }

    struct sluice_container_meta meta = {.set_key = key,
                                         .block_size = (uint32_t)block,
                                         .version = 1,
                                         .writer_nprocs = 1,
                                         .writer_pid = (uint32_t)getpid()};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    meta.created_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    gethostname(meta.writer_host, sizeof meta.writer_host - 1);
    (void)tool_snprintf(meta.writer_software, sizeof meta.writer_software, "sluice-ckpt %s",
                        SLUICE_VERSION_STRING);
    struct sluice_container *old = NULL;
    if (sluice_container_open(container, &old, msg, sizeof msg) == 0 || access(container, F_OK) == 0) {
        if (!force) {
            tool_error("%s exists, not replaced (use --force)", container);
            sluice_container_close(old);
            status = EXIT_BAD_DATA;
            goto out;
        }
        if (old)
            meta.version = old->meta.version + 1;
        sluice_container_close(old);
    }
    if (sluice_container_temp_name(container, (unsigned long)getpid(), tmp, sizeof tmp) != 0) {
        tool_error("%s: name too long", container);
        status = EXIT_BAD_DATA;
        goto out;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        tool_error("%s: %s", tmp, strerror(errno));
        status = EXIT_BAD_DATA;
        goto out;
    }
    uint64_t total = 0;
    for (int i = 0; i < nfiles; i++)
        total += src[i].size;
    struct tool_progress progress;
    tool_progress_start(&progress, container, total, quiet);
    tool_progress_watch(&progress, fd);
    int rc = sluice_container_write(fd, &meta, src, (uint32_t)nfiles, msg, sizeof msg);
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
    if (rc == 0 && rename(tmp, container) != 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: %s", container, strerror(errno));
    }
    if (rc != 0) {
        unlink(tmp);
        tool_error("%s", msg);
        status = EXIT_BAD_DATA;
    }
out:
    for (int i = 0; i < nfiles; i++)
        if (src[i].fd >= 0)
            close(src[i].fd);
    free(src);
    free(paths);
    return status;
}
