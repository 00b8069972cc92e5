/* SPDX-License-Identifier: MIT */
/* The direct path, writer side: a rank that the home names (direct_writers.c: its node's
 * aggregator, or the member's own rank) copies the members of MSG_WRITE, its own and those of
 * other ranks that share its stage folder, from their staging files into the version's
 * temporary file (commit_data.c), with one open and one fdatasync of it for all of them (none
 * in the home's process, whose fsync of the version covers them), and
 * answers MSG_WRITTEN with their checksums and data runs. Progress thread. */
#include "ckpt/commit/commit_internal.h"

#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "common/full_io.h"
#include "common/real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A staging file name from MSG_WRITE: a plain name in this rank's stage folder (the home sends
 * a member only to a writer whose folder is its owner's: direct_writers.c). 0 or -EPROTO. */
static int stage_path_of(const char *name, char *out, size_t cap)
{
    const char *dir = sluice_stage_dir();
    if (!dir || !name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return -EPROTO;
    return snprintf(out, cap, "%s/%s", dir, name) < (int)cap ? 0 : -ENAMETOOLONG;
}

/* The CRC32C of each `cs` bytes of a copied member (format 1.3 chunk checksums; a one-rank set
 * laid out as an array, whose restart on more ranks reads parts of it), read again from its
 * staging file, which stays put while the commit holds it, as the two-phase writer's do
 * (twophase_exec.c). None (the reader then verifies the whole member) when not asked for, when
 * the member vanished, or when its bytes cannot be read again. */
static void put_chunks(struct cmsg *out, const struct commit_copy *cp, uint32_t cs)
{
    uint64_t n = cs && !cp->vanished && cp->size ? (cp->size + cs - 1) / cs : 0;
    uint32_t *crc = n && n <= UINT32_MAX ? malloc(n * sizeof *crc) : NULL;
    unsigned char *buf = crc ? malloc(cs) : NULL;
    int fd = buf ? SLUICE_REAL(open)(cp->src_path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        n = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t len = cp->size - k * cs < cs ? cp->size - k * cs : cs;
        if (sluice_full_pread(fd, buf, len, k * cs) != 0) {
            n = 0;
            break;
        }
        crc[k] = sluice_crc32c_update(0, buf, len);
    }
    if (fd >= 0)
        SLUICE_REAL(close)(fd);
    cmsg_put_u32(out, n ? cs : 0);
    cmsg_put_u32(out, (uint32_t)n);
    for (uint64_t k = 0; k < n; k++)
        cmsg_put_u32(out, crc[k]);
    free(crc);
    free(buf);
}

/* This rank copies the members the home lists, its own and those of other ranks of its stage
 * folder, into the version's file: one open and one fdatasync of it for all of them. */
static void on_write(int home, struct cmsg *in)
{
    uint32_t id = cmsg_get_u32(in);
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", cmsg_get_str(in));
    uint32_t n = cmsg_get_u32(in);
    if (in->bad || (uint64_t)n * 29 > in->len)
        n = 0, in->bad = 1;
    struct commit_copy *copies = calloc(n ? n : 1, sizeof(*copies));
    uint64_t *seqs = calloc(n ? n : 1, sizeof(*seqs));
    uint32_t *owners = calloc(n ? n : 1, sizeof(*owners));
    char(*paths)[PATH_MAX] = calloc(n ? n : 1, PATH_MAX);
    int rc = (copies && seqs && owners && paths) ? 0 : -ENOMEM;

    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        owners[i] = cmsg_get_u32(in);
        seqs[i] = cmsg_get_u64(in);
        copies[i].offset = cmsg_get_u64(in);
        copies[i].size = cmsg_get_u64(in);
        const char *name = cmsg_get_str(in);
        copies[i].src_path = paths[i];
        if ((int)owners[i] != commit_g.rank) {
            rc = stage_path_of(name, paths[i], PATH_MAX);
            continue;
        }
        /* In flight, the record and its staging file cannot go away under us (nor, for another
         * rank's member, under its owner: it keeps them until DONE). */
        const char *own = commit_member_stage_path(home, id, seqs[i]);
        if (!own) {
            rc = -ENOENT;
            break;
        }
        snprintf(paths[i], PATH_MAX, "%s", own);
    }
    uint32_t chunk = rc == 0 ? cmsg_get_u32(in) : 0; /* > 0: answer chunk checksums too */
    if (rc == 0 && in->bad)
        rc = -EPROTO;
    if (rc == 0)
        rc = commit_data_write(tmp, copies, n, home != commit_g.rank);

    struct cmsg out;
    cmsg_init(&out, MSG_WRITTEN);
    cmsg_put_u32(&out, id);
    cmsg_put_u32(&out, (uint32_t)rc);
    cmsg_put_u32(&out, rc == 0 ? n : 0);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        cmsg_put_u32(&out, owners[i]);
        cmsg_put_u64(&out, seqs[i]);
        cmsg_put_u32(&out, copies[i].crc);
        cmsg_put_u32(&out, (uint32_t)copies[i].vanished);
        commit_put_runs(&out, copies[i].runs, copies[i].runs ? copies[i].nruns : 0);
        put_chunks(&out, &copies[i], chunk);
    }
    for (uint32_t i = 0; copies && i < n; i++)
        free(copies[i].runs);
    free(copies);
    free(seqs);
    free(owners);
    free(paths);
    commit_send(home, &out);
}

static void write_handle(int src, uint32_t type, struct cmsg *m)
{
    (void)type;
    on_write(src, m);
}

void commit_direct_register(void)
{
    commit_transport_on(MSG_WRITE, write_handle);
}
