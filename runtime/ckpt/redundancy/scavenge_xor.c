/* SPDX-License-Identifier: MIT */
/* The rebuild of a scavenge from XOR parity (scavenge_internal.h): a lost node's part of a
 * version, which no part holds, rebuilt from the parity files and the records and staging files
 * that the surviving members of its XOR set copied into their parts (scavenge_node.c), with the
 * restart rebuild's own entry points (red_xor.h): each survivor's share
 * (sluice_red_xor_contribute, run on its part folder as the restart runs it on its stage
 * folder: the part holds the same records and files) XORed into one stream
 * (sluice_red_xor_into), which is a partner-copy stream: sluice_red_copy_restore checks every
 * chunk's checksum and restores the lost ranks. A parity block that fails its checksum stops
 * that version's rebuild with one line naming it. */
#include "ckpt/redundancy/scavenge_internal.h"

#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_xor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One parity file of the version in a node's part, its trailer read and checked. */
struct parity {
    int part;
    char name[NAME_MAX + 1];
    struct sluice_red_xor_meta *x;
    int grouped;
};

static void free_parities(struct parity *px, int n)
{
    for (int i = 0; i < n; i++) {
        sluice_red_xor_meta_free(px[i].x);
        free(px[i].x);
    }
    free(px);
}

/* The parity files of version v of key in the nodes' parts; one line per unreadable one. */
static int list_parities(const char *key, const struct scavenge_parts *p, uint64_t v, struct parity *px,
                         FILE *report)
{
    int n = 0;
    for (int j = 0; j < p->nodes; j++) {
        char path[PATH_MAX];
        if (sluice_red_xor_path(p->dir[j], key, v, path, sizeof path) != 0 || access(path, F_OK) != 0)
            continue;
        struct sluice_red_xor_meta *x = malloc(sizeof *x);
        int rc = x ? sluice_red_xor_meta_read(path, x) : -ENOMEM;
        if (rc == 0 && (x->version != v || strcmp(x->key, key) != 0)) { /* another set of one hash */
            sluice_red_xor_meta_free(x);
            free(x);
            continue;
        }
        if (rc != 0) {
            if (report)
                fprintf(report,
                        "sluice-ckpt scavenge: %s: version %" PRIu64
                        ": the XOR parity %s in the part of %s is not used: %s\n",
                        key, v, strrchr(path, '/') + 1, p->name[j],
                        rc == -EBADMSG ? "a malformed or corrupt trailer" : strerror(-rc));
            free(x);
            continue;
        }
        px[n] = (struct parity){j, "", x, 0};
        snprintf(px[n].name, sizeof px[n].name, "%s", strrchr(path, '/') + 1);
        n++;
    }
    return n;
}

static int same_set(const struct sluice_red_xor_meta *a, const struct sluice_red_xor_meta *b)
{
    if (a->S != b->S)
        return 0;
    for (int i = 0; i < a->S; i++)
        if (strcmp(a->m[i].host, b->m[i].host) != 0 || a->m[i].len != b->m[i].len)
            return 0;
    return 1;
}

/* 1 when a rank of member i of the set has no record in the parts and none was restored. */
static int member_lost(const struct sluice_red_xor_meta *x, int i, const struct scavenge_version *m,
                       const unsigned char *got)
{
    for (int k = 0; k < x->m[i].nranks; k++) {
        int r = x->m[i].ranks[k];
        if (r >= 0 && r < m->nprocs && !m->have[r] && !got[r])
            return 1;
    }
    return 0;
}

struct sink {
    int fd, err;
};

static void emit(void *ctx, uint64_t off, const unsigned char *p, size_t len)
{
    struct sink *k = ctx;
    if (!k->err)
        k->err = sluice_red_xor_into(k->fd, off, p, len);
}

/* Lost member x of the set whose survivors' parities are px[holder[i]], i != x: its stream
 * rebuilt into `stream`, then the missing ranks want[0..nw) restored from it into rebuilt.
 * Returns the bytes restored, or -1 with one line saying why not. */
static int64_t rebuild_member(const char *key, const struct scavenge_parts *p, const struct parity *px,
                              const int *holder, int x, const int *want, int nw, const char *stream,
                              const char *rebuilt, const char *from, FILE *report)
{
    const struct sluice_red_xor_meta *meta = px[holder[x == 0 ? 1 : 0]].x;
    char text[PATH_MAX + 160] = "", ranks[160];
    scavenge_ranks_text(want, nw, ranks, sizeof ranks);
    struct sink k = {open(stream, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600), 0};
    int rc = k.fd < 0 ? -errno : 0, bad = -1;
    if (rc)
        snprintf(text, sizeof text, "the rebuilt stream %s could not be made (%s)", stream, strerror(-rc));
    for (int i = 0; rc == 0 && i < meta->S; i++)
        if (i != x && (rc = sluice_red_xor_contribute(p->dir[px[holder[i]].part], px[holder[i]].name, x, emit,
                                                      &k, text, sizeof text)) != 0)
            bad = px[holder[i]].part;
    if (rc == 0 && (k.err || ftruncate(k.fd, (off_t)meta->m[x].len) != 0)) {
        rc = k.err ? k.err : -errno;
        snprintf(text, sizeof text, "the rebuilt stream %s could not be written (%s)", stream, strerror(-rc));
    }
    if (k.fd >= 0)
        close(k.fd);
    int64_t bytes = -1;
    if (rc == 0 && (bytes = sluice_red_copy_restore(stream, rebuilt, want, nw, text, sizeof text)) < 0)
        rc = (int)bytes;
    unlink(stream);
    if (rc && report)
        fprintf(report,
                "sluice-ckpt scavenge: %s: version %" PRIu64
                ": ranks %s (the part of lost node %s) are not rebuilt from %s: %s%s%s%s\n",
                key, meta->version, ranks, meta->m[x].host, from, bad >= 0 ? "in the part of " : "",
                bad >= 0 ? p->name[bad] : "", bad >= 0 ? ": " : "", text);
    return rc ? -1 : bytes;
}

/* The set of px[a] for version m: its lost member rebuilt where it is the only one. */
static int restore_set(const char *key, const struct scavenge_parts *p, struct parity *px, int np, int a,
                       const struct scavenge_version *m, unsigned char *got, const char *rebuilt,
                       struct scavenge_lost *l, int *nl, FILE *report)
{
    const struct sluice_red_xor_meta *x = px[a].x;
    int *holder = malloc((size_t)x->S * sizeof *holder), *want = calloc((size_t)m->nprocs + 1, sizeof *want);
    int lost[2] = {-1, -1}, nlost = 0, nw = 0, restored = 0;
    char from[1024], stream[PATH_MAX + 16];
    if (!holder || !want) {
        free(holder);
        free(want);
        return 0;
    }
    for (int i = 0; i < x->S; i++)
        holder[i] = -1;
    for (int j = a; j < np; j++)
        if (!px[j].grouped && same_set(x, px[j].x)) {
            px[j].grouped = 1;
            holder[px[j].x->pos] = j;
        }
    for (int i = 0; i < x->S; i++)
        if (member_lost(x, i, m, got) && nlost++ < 2)
            lost[nlost - 1] = i;
    int missing = -1; /* a survivor whose parity no part holds */
    for (int i = 0; nlost == 1 && i < x->S && missing < 0; i++)
        if (i != lost[0] && holder[i] < 0)
            missing = i;
    int len = snprintf(from, sizeof from, "the XOR parity of its set of %d nodes in the parts of ", x->S);
    for (int i = 0; i < x->S && len > 0 && (size_t)len < sizeof from; i++)
        if (i != lost[0] && holder[i] >= 0)
            len += snprintf(from + len, sizeof from - (size_t)len, "%s%s", from[len - 1] == ' ' ? "" : ", ",
                            p->name[px[holder[i]].part]);
    for (int k = 0; nlost == 1 && k < x->m[lost[0]].nranks; k++) {
        int r = x->m[lost[0]].ranks[k];
        if (r >= 0 && r < m->nprocs && !m->have[r] && !got[r])
            want[nw++] = r;
    }
    if (nlost >= 2 && report)
        fprintf(
            report,
            "sluice-ckpt scavenge: %s: version %" PRIu64
            ": nodes %s and %s of one XOR set of %d nodes are both lost (%d lost); XOR parity rebuilds one "
            "lost node per set\n",
            key, m->version, x->m[lost[0]].host, x->m[lost[1]].host, x->S, nlost);
    else if (nlost == 1 && missing >= 0 && report)
        fprintf(report,
                "sluice-ckpt scavenge: %s: version %" PRIu64
                ": the part of lost node %s is not rebuilt from XOR parity: no part holds the parity of node "
                "%s of its set\n",
                key, m->version, x->m[lost[0]].host, x->m[missing].host);
    else if (nlost == 1 && nw > 0 &&
             snprintf(stream, sizeof stream, "%s.stream", rebuilt) < (int)sizeof stream) {
        int64_t bytes = rebuild_member(key, p, px, holder, lost[0], want, nw, stream, rebuilt, from, report);
        if (bytes >= 0) {
            char ranks[160];
            scavenge_ranks_text(want, nw, ranks, sizeof ranks);
            scavenge_lost_add(l, nl, x->m[lost[0]].host, from, ranks, m->version, bytes);
            for (int k = 0; k < nw; k++)
                got[want[k]] = 1;
            restored = nw;
        }
    }
    free(holder);
    free(want);
    return restored;
}

int scavenge_xor_restore(const char *key, const struct scavenge_parts *p, const struct scavenge_version *m,
                         unsigned char *got, const char *rebuilt, struct scavenge_lost *l, int *nl,
                         FILE *report)
{
    struct parity *px = calloc((size_t)p->nodes + 1, sizeof *px);
    if (!px || !m->have) {
        free(px);
        return 0;
    }
    int np = list_parities(key, p, m->version, px, report), restored = 0;
    for (int a = 0; a < np; a++)
        if (!px[a].grouped)
            restored += restore_set(key, p, px, np, a, m, got, rebuilt, l, nl, report);
    free_parities(px, np);
    return restored;
}
