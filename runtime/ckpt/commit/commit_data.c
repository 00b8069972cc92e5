/* SPDX-License-Identifier: MIT */
/* Data movement of a commit, direct path: each writer rank copies its own staged members into
 * the new container at the offsets the home rank planned, checksumming on the way, and makes
 * its writes durable before it reports back (on a parallel file system each client must flush
 * its own dirty pages; the home's fsync would not cover them).
 *
 * This is the step the two-phase writer (issue 4) replaces: it will receive the same list of
 * (member, offset) from the planner and move the bytes through aggregators instead. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/container/container.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define COPY_CHUNK (4u << 20) /* large requests; the last one of a member may be short */

static int copy_one(int out, struct commit_copy *c, unsigned char *buf)
{
    int in = commit_fs_open(c->src_path, O_RDONLY, 0);
    if (in == -ENOENT) {
        c->vanished = 1; /* unlinked meanwhile: not an error, the member is just gone */
        return 0;
    }
    if (in < 0)
        return in;
    uint32_t crc = 0;
    uint64_t done = 0;
    int rc = 0;
    while (done < c->size) {
        size_t want = c->size - done < COPY_CHUNK ? (size_t)(c->size - done) : COPY_CHUNK;
        ssize_t r = SLUICE_REAL(pread)(in, buf, want, (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        if (r == 0) {
            rc = -EIO; /* the staging file shrank: it is no longer what was closed */
            break;
        }
        crc = sluice_crc32c_update(crc, buf, (size_t)r);
        rc = commit_fs_pwrite_full(out, buf, (size_t)r, c->offset + done);
        if (rc)
            break;
        commit_trace_write(c->offset + done, (uint64_t)r);
        done += (uint64_t)r;
    }
    commit_fs_close(in);
    c->crc = crc;
    return rc;
}

int commit_data_write(const char *tmp, struct commit_copy *copies, size_t n)
{
    int out = commit_fs_open(tmp, O_WRONLY, 0);
    if (out < 0)
        return out;
    unsigned char *buf = malloc(COPY_CHUNK);
    int rc = buf ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = copy_one(out, &copies[i], buf);
    free(buf);
    if (rc == 0)
        rc = commit_fs_fdatasync(out, tmp);
    int crc = commit_fs_close(out);
    return rc ? rc : crc;
}
