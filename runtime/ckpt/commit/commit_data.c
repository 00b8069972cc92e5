/* SPDX-License-Identifier: MIT */
/* Data movement of a commit, direct path: each writer rank copies its own staged members into
 * the new container at the offsets the home rank planned, checksumming on the way, and makes
 * its writes durable before it reports back (on a parallel file system each client must flush
 * its own dirty pages; the home's fsync would not cover them). The home's own process is the
 * exception: its fsync of the version, after the index and before the rename, flushes every
 * dirty page of the file that this process wrote, so a writer there does not sync first (one
 * sync of the version's file fewer on the home's node, where a version is waited for).
 *
 * The two-phase writer (twophase_exec.c, docs/TWOPHASE.md) replaces this step when the home
 * chooses it: it receives the same list of (member, offset) from the planner and moves the bytes
 * through aggregators instead. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/container/container.h"
#include "common/full_io.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK (4u << 20) /* large requests; the last one of a member may be short */

uint32_t commit_data_runs(int fd, uint64_t size, struct commit_run *runs)
{
    uint32_t n = 0;
    for (uint64_t pos = 0; pos < size;) {
        off_t d = SLUICE_REAL(lseek)(fd, (off_t)pos, SEEK_DATA);
        if (d < 0 && errno == ENXIO)
            break; /* holes to the end */
        off_t h = d < 0 ? -1 : SLUICE_REAL(lseek)(fd, d, SEEK_HOLE);
        if (d < 0 || h < 0 || n == COMMIT_MAX_RUNS) { /* cannot tell, or too fragmented: dense */
            runs[0] = (struct commit_run){0, size};
            return 1;
        }
        uint64_t end = (uint64_t)h < size ? (uint64_t)h : size;
        if ((uint64_t)d >= end)
            break;
        runs[n++] = (struct commit_run){(uint64_t)d, end - (uint64_t)d};
        pos = end;
    }
    return n;
}

void commit_put_runs(struct cmsg *m, const struct commit_run *runs, uint32_t n)
{
    cmsg_put_u32(m, n);
    for (uint32_t i = 0; i < n; i++) {
        cmsg_put_u64(m, runs[i].logical);
        cmsg_put_u64(m, runs[i].length);
    }
}

/* Copies one data run of a member (holes are skipped by the caller: never written, the new
 * file reads zeros there). */
static int copy_run(int in, int out, const char *tmp, struct commit_copy *c, const struct commit_run *run,
                    unsigned char *buf, uint32_t *crc)
{
    uint64_t done = run->logical, end = run->logical + run->length;
    int rc = 0;
    while (done < end) {
        size_t want = end - done < COPY_CHUNK ? (size_t)(end - done) : COPY_CHUNK;
        ssize_t r = sluice_pread_retry(in, buf, want, done);
        if (r < 0) {
            rc = (int)r;
            break;
        }
        if (r == 0) {
            rc = -EIO; /* the staging file shrank: it is no longer what was closed */
            break;
        }
        *crc = sluice_crc32c_update(*crc, buf, (size_t)r);
        rc = commit_fs_pwrite_full(out, buf, (size_t)r, c->offset + done);
        if (rc)
            break;
        commit_trace_write(tmp, c->offset + done, (uint64_t)r);
        done += (uint64_t)r;
    }
    return rc;
}

static int copy_one(int out, const char *tmp, struct commit_copy *c, unsigned char *buf)
{
    int in = commit_fs_open(c->src_path, O_RDONLY, 0);
    if (in == -ENOENT) {
        c->vanished = 1; /* unlinked meanwhile: not an error, the member is just gone */
        return 0;
    }
    if (in < 0)
        return in;
    c->runs = malloc(COMMIT_MAX_RUNS * sizeof *c->runs);
    if (c->runs == NULL) {
        commit_fs_close(in);
        return -ENOMEM;
    }
    c->nruns = commit_data_runs(in, c->size, c->runs);
    uint32_t crc = 0;
    uint64_t pos = 0;
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < c->nruns; i++) {
        crc = sluice_crc32c_zeros(crc, c->runs[i].logical - pos); /* the hole before it */
        rc = copy_run(in, out, tmp, c, &c->runs[i], buf, &crc);
        pos = c->runs[i].logical + c->runs[i].length;
    }
    if (rc == 0 && pos < c->size) {
        struct stat st; /* a hole to the end, unless the staging file shrank */
        if (SLUICE_REAL(fstat)(in, &st) != 0 || (uint64_t)st.st_size < c->size)
            rc = -EIO;
        crc = sluice_crc32c_zeros(crc, c->size - pos);
    }
    commit_fs_close(in);
    c->crc = crc;
    return rc;
}

int commit_data_write(const char *tmp, struct commit_copy *copies, size_t n, int sync)
{
    int out = commit_fs_open(tmp, O_WRONLY, 0);
    if (out < 0)
        return out;
    unsigned char *buf = malloc(COPY_CHUNK);
    int rc = buf ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = copy_one(out, tmp, &copies[i], buf);
    free(buf);
    if (rc == 0 && sync)
        rc = commit_fs_fdatasync(out, tmp);
    int crc = commit_fs_close(out);
    return rc ? rc : crc;
}
