/* SPDX-License-Identifier: MIT */
/* Shared rounds of a two-phase aggregator: the file and the GO message (twophase_shm.h). */
#include "ckpt/commit/twophase_shm.h"

#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/stage.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int commit_tp_shm_create(struct commit_tp_shm *s, int tag, size_t len, size_t reserve)
{
    memset(s, 0, sizeof *s);
    char prefix[SLUICE_STAGE_PREFIX_MAX];
    sluice_stage_prefix(prefix, (long)getpid());
    if (snprintf(s->path, sizeof s->path, "%s/%stp%d.round", sluice_stage_dir(), prefix, tag) >=
        (int)sizeof s->path) {
        s->path[0] = '\0';
        return -ENAMETOOLONG;
    }
    int fd = SLUICE_REAL(open)(s->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = -errno;
        s->path[0] = '\0';
        return e;
    }
    int rc = SLUICE_REAL(ftruncate)(fd, (off_t)len) == 0 ? 0 : -errno;
    if (rc == 0 && reserve)
        rc = SLUICE_REAL(fallocate)(fd, 0, 0, (off_t)reserve) == 0 ? 0 : -errno;
    void *map = MAP_FAILED;
    if (rc == 0) {
        map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    if (rc) {
        SLUICE_REAL(close)(fd);
        SLUICE_REAL(unlink)(s->path);
        s->path[0] = '\0';
        return rc;
    }
    s->fd = fd;
    s->owner = 1;
    s->map = map;
    s->len = len;
    return 0;
}

int commit_tp_shm_reserve(struct commit_tp_shm *s, size_t off, size_t n)
{
    return SLUICE_REAL(fallocate)(s->fd, 0, (off_t)off, (off_t)n) == 0 ? 0 : -errno;
}

void commit_tp_shm_remove(struct commit_tp_shm *s)
{
    if (s->path[0])
        SLUICE_REAL(unlink)(s->path);
    if (s->owner)
        SLUICE_REAL(close)(s->fd);
    s->owner = 0;
    commit_tp_shm_close(s);
}

int commit_tp_shm_open(struct commit_tp_shm *s, const char *path, size_t len)
{
    memset(s, 0, sizeof *s);
    int fd = SLUICE_REAL(open)(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* The aggregator sized the file before it sent the path (and reserved each slot before it
     * announced it): a shorter file is another's. */
    off_t end = lseek(fd, 0, SEEK_END);
    void *map = end >= 0 && (uint64_t)end >= len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                                 : MAP_FAILED;
    int rc = map == MAP_FAILED ? (end >= 0 && (uint64_t)end < len ? -EINVAL : -errno) : 0;
    SLUICE_REAL(close)(fd);
    if (rc)
        return rc;
    snprintf(s->path, sizeof s->path, "%s", path);
    s->map = map;
    s->len = len;
    return 0;
}

void commit_tp_shm_close(struct commit_tp_shm *s)
{
    if (s->map)
        munmap(s->map, s->len);
    s->map = NULL;
    s->path[0] = '\0';
}

/* Not a message of the commit transport (the GO has a tag of its own): a marker in its place. */
enum { GO_MARK = 0x474f };

void commit_tp_go_encode(const struct commit_tp_go *g, struct cmsg *msg)
{
    cmsg_init(msg, GO_MARK);
    cmsg_put_u32(msg, g->round);
    cmsg_put_u64(msg, g->off);
    cmsg_put_u64(msg, g->len);
    cmsg_put_str(msg, g->path);
}

int commit_tp_go_decode(unsigned char *buf, int n, struct commit_tp_go *g)
{
    struct cmsg in = {.p = buf, .len = n > 0 ? (size_t)n : 0};
    uint32_t mark = cmsg_get_u32(&in);
    g->round = cmsg_get_u32(&in);
    g->off = cmsg_get_u64(&in);
    g->len = cmsg_get_u64(&in);
    const char *path = cmsg_get_str(&in);
    if (in.bad || mark != GO_MARK || strlen(path) >= sizeof g->path || (path[0] && g->off > g->len))
        return -EPROTO;
    snprintf(g->path, sizeof g->path, "%s", path);
    return 0;
}
