/* SPDX-License-Identifier: MIT */
/* sluice-ckpt salvage CONTAINER...: writes a healthy new version of a damaged container. The
 * reader already serves members through the index copy when the index or footer proper fails
 * its checksum (docs/FORMAT.md, "Index copy"); salvage makes that permanent: every member that
 * verifies goes into version N+1 (temporary name, fsync, rename), corrupt members are named and
 * left out (flag PARTIAL), and the damaged file stays beside it as .NAME.damaged-vN (a hard
 * link made before the rename), so nothing is lost. An intact container is left alone. */
#include "ckpt/container/container.h"
#include "ckpt_tool.h"
#include "common/private_dir.h"
#include "sluice_version.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt salvage CONTAINER...\n"
                 "Rewrites a container whose index or footer is damaged (read through its index\n"
                 "copy) or whose members fail their checksums, as a new version holding every\n"
                 "intact member. Corrupt members are named on stderr and left out; the damaged\n"
                 "file is kept beside it as .NAME.damaged-vVERSION. An intact container is left\n"
                 "as it is. Exit 0 when every container is intact or salvaged with all its\n"
                 "members, 1 when a member was lost or a container could not be read or written.\n");
}

/* Hidden name for the damaged version, in the container's folder. */
static int damaged_name(const char *container, uint64_t version, char *out, size_t len)
{
    char tag[32];
    snprintf(tag, sizeof tag, "v%llu", (unsigned long long)version);
    return sluice_container_damaged_name(container, tag, out, len);
}

static int write_version(const struct sluice_container *c, struct sluice_container_source *src, uint32_t n,
                         int partial)
{
    char tmp[PATH_MAX], keep[PATH_MAX], msg[8192];
    struct sluice_container_meta meta = c->meta;
    meta.version = c->meta.version + 1;
    if (partial)
        meta.flags |= SLUICE_CONTAINER_F_PARTIAL;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    meta.created_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    meta.writer_pid = (uint32_t)getpid();
    (void)tool_snprintf(meta.writer_software, sizeof meta.writer_software, "sluice-ckpt %s salvage",
                        SLUICE_VERSION_STRING);
    if (sluice_container_temp_name(c->path, (unsigned long)sluice_random_u64(), tmp, sizeof tmp) != 0 ||
        damaged_name(c->path, c->meta.version, keep, sizeof keep) != 0) {
        tool_error("%s: name too long", c->path);
        return -ENAMETOOLONG;
    }
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        tool_error("%s: %s", tmp, strerror(errno));
        return -errno;
    }
    struct stat st;
    if (fstat(c->fd, &st) == 0)
        fchmod(fd, st.st_mode & 07777); /* the damaged version's mode, no more open */
    int rc = sluice_container_write(fd, &meta, src, n, msg, sizeof msg);
    if (rc == 0 && fsync(fd) != 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: fsync: %s", tmp, strerror(errno));
    }
    close(fd);
    if (rc == 0 && link(c->path, keep) != 0 && errno != EEXIST) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: cannot keep the damaged version: %s", keep,
                            strerror(errno));
    }
    if (rc == 0 && rename(tmp, c->path) != 0) {
        rc = -errno;
        (void)tool_snprintf(msg, sizeof msg, "%s: %s", c->path, strerror(errno));
    }
    if (rc != 0) {
        unlink(tmp);
        tool_error("%s", msg);
        return rc;
    }
    fprintf(stderr, "%s: salvaged as version %llu with %u member(s); the damaged version is kept as %s\n",
            c->path, (unsigned long long)meta.version, n, keep);
    return 0;
}

static int salvage_one(void *ctx, const struct sluice_container *c, const char *rel)
{
    (void)ctx, (void)rel;
    struct sluice_container_source *src = calloc(c->n_members ? c->n_members : 1, sizeof *src);
    if (!src)
        return 1;
    uint32_t n = 0, lost = 0;
    int status = 0;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        char msg[8192];
        int fd = memfd_create("sluice-salvage", MFD_CLOEXEC);
        if (fd < 0 || sluice_container_copy_member(c, i, fd, msg, sizeof msg) != 0) {
            tool_error("%s (left out of the salvaged version)", fd < 0 ? strerror(errno) : msg);
            if (fd >= 0)
                close(fd);
            lost++;
            continue;
        }
        src[n++] = (struct sluice_container_source){.path = m->path,
                                                    .member_rank = m->member_rank,
                                                    .writer_rank = m->writer_rank,
                                                    .mtime_ns = m->mtime_ns,
                                                    .fd = fd,
                                                    .size = m->size};
    }
    if (!c->index_from_copy && lost == 0)
        fprintf(stderr, "%s: intact (%u members), nothing to salvage\n", c->path, c->n_members);
    else if (n == 0)
        tool_error("%s: no intact member to salvage", c->path), status = 1;
    else if (write_version(c, src, n, lost != 0) != 0 || lost)
        status = 1;
    for (uint32_t i = 0; i < n; i++)
        close(src[i].fd);
    free(src);
    return status;
}

int cmd_salvage(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (o == 'h') {
            usage(stdout);
            return EXIT_OK;
        }
        return tool_bad_option("salvage", o, argv);
    }
    if (optind >= argc)
        return tool_usage_error("salvage", "which container? give a PATH");
    return tool_for_each_container(argv + optind, argc - optind, 0, salvage_one, NULL);
}
