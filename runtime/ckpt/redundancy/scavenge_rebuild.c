/* SPDX-License-Identifier: MIT */
/* The rebuild of a scavenge (scavenge_internal.h): the parts of a lost node, which took no part
 * in the scavenge, restored from the partner copies that the surviving nodes' parts hold
 * (scavenge_node.c copies a node's protected copies into its part), else from the XOR parity
 * of its set (scavenge_xor.c). Each copy is checked by every checksum
 * (sluice_red_copy_restore) and never used when one fails. */
#include "ckpt/redundancy/scavenge_internal.h"

#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void add_text(char *buf, size_t cap, const char *sep, const char *s)
{
    size_t l = strlen(buf);
    if (l + strlen(sep) + strlen(s) + 4 < cap)
        snprintf(buf + l, cap - l, "%s%s", l ? sep : "", s);
    else if (l + 4 < cap && strcmp(buf + l - 3, "...") != 0)
        snprintf(buf + l, cap - l, "...");
}

void scavenge_ranks_text(const int *r, int n, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char one[16];
        snprintf(one, sizeof one, "%d", r[i]);
        add_text(out, cap, ",", one);
    }
}

void scavenge_lost_add(struct scavenge_lost *l, int *nl, const char *host, const char *from,
                       const char *ranks, uint64_t v, int64_t bytes)
{
    struct scavenge_lost *x = NULL;
    for (int i = 0; i < *nl && !x; i++)
        if (strcmp(l[i].from, from) == 0 && strcmp(l[i].host, host) == 0)
            x = &l[i];
    if (!x && *nl < SCAVENGE_MAX_LOST) {
        x = &l[(*nl)++];
        memset(x, 0, sizeof *x);
        snprintf(x->host, sizeof x->host, "%s", host);
        snprintf(x->from, sizeof x->from, "%s", from);
    }
    if (!x)
        return;
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64, v);
    add_text(x->versions, sizeof x->versions, ", ", text);
    if (!x->ranks[0])
        snprintf(x->ranks, sizeof x->ranks, "%s", ranks);
    x->bytes += bytes;
}

/* Restores the ranks of version m that no part holds from the copy `file` of part `holder`.
 * Returns the ranks restored (0: the copy holds none of them, or was refused). */
static int restore_one(const char *key, const struct scavenge_parts *p, int holder, const char *file,
                       const struct scavenge_version *m, unsigned char *got, const char *rebuilt,
                       struct scavenge_lost *l, int *nl, FILE *report)
{
    struct sluice_red_header *h = malloc(sizeof *h);
    int *want = malloc((size_t)m->nprocs * sizeof *want), k = 0;
    if (!h || !want || sluice_red_copy_header(file, h) != 0 || h->version != m->version ||
        strcmp(h->key, key) != 0) {
        free(h);
        free(want);
        return 0;
    }
    for (int i = 0; i < h->nranks; i++)
        if (h->ranks[i] >= 0 && h->ranks[i] < m->nprocs && !m->have[h->ranks[i]] && !got[h->ranks[i]])
            want[k++] = h->ranks[i];
    char err[2 * PATH_MAX], ranks[160];
    scavenge_ranks_text(want, k, ranks, sizeof ranks);
    int64_t bytes = k ? sluice_red_copy_restore(file, rebuilt, want, k, err, sizeof err) : 0;
    if (bytes < 0) {
        if (report)
            fprintf(report,
                    "sluice-ckpt scavenge: %s: version %" PRIu64
                    ": the partner copy of ranks %s (the part of "
                    "lost node %s) in the part of %s is not used: %s\n",
                    key, m->version, ranks, h->host, p->name[holder], err);
        k = 0;
    }
    for (int i = 0; i < k; i++)
        got[want[i]] = 1;
    if (k) {
        char from[NAME_MAX + 64];
        snprintf(from, sizeof from, "the partner copies in the part of %s", p->name[holder]);
        scavenge_lost_add(l, nl, h->host, from, ranks, m->version, bytes);
    }
    free(h);
    free(want);
    return k;
}

/* The copies of version m in part `holder`: each restores what no part holds. */
static int restore_version(const char *key, const struct scavenge_parts *p, int holder,
                           const struct scavenge_version *m, unsigned char *got, const char *rebuilt,
                           struct scavenge_lost *l, int *nl, FILE *report)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, SLUICE_RED_COPY_PREFIX "%016" PRIx64 "-%020" PRIu64 "-",
             sluice_level_key_hash(key), m->version);
    size_t pl = strlen(prefix), sl = strlen(SLUICE_RED_COPY_SUFFIX);
    DIR *d = opendir(p->dir[holder]);
    if (!d)
        return 0;
    int restored = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char file[PATH_MAX];
        /* Whole copies only: one being received keeps its temporary name (".red.tmp.PID"). */
        if (len <= pl + sl || strncmp(e->d_name, prefix, pl) != 0 ||
            strcmp(e->d_name + len - sl, SLUICE_RED_COPY_SUFFIX) != 0 ||
            snprintf(file, sizeof file, "%s/%s", p->dir[holder], e->d_name) >= (int)sizeof file)
            continue;
        restored += restore_one(key, p, holder, file, m, got, rebuilt, l, nl, report);
    }
    closedir(d);
    return restored;
}

static int incomplete(const struct scavenge_version *m)
{
    for (int r = 0; m->have && r < m->nprocs; r++)
        if (!m->have[r])
            return 1;
    return 0;
}

int scavenge_rebuild(const char *key, const struct scavenge_parts *p, const struct scavenge_version *mv,
                     int n, const char *rebuilt, FILE *report)
{
    int needed = 0;
    for (int i = 0; i < n; i++)
        needed |= incomplete(&mv[i]);
    if (!needed)
        return 0;
    if (mkdir(rebuilt, 0700) != 0 && errno != EEXIST)
        return -errno;
    static struct scavenge_lost l[SCAVENGE_MAX_LOST];
    int nl = 0, restored = 0;
    for (int i = 0; i < n; i++) {
        if (!incomplete(&mv[i]))
            continue;
        unsigned char *got = calloc((size_t)mv[i].nprocs, 1);
        for (int j = 0; got && j < p->nodes; j++)
            restored += restore_version(key, p, j, &mv[i], got, rebuilt, l, &nl, report);
        if (got) /* what no partner copy restored, from the XOR parity of the lost node's set */
            restored += scavenge_xor_restore(key, p, &mv[i], got, rebuilt, l, &nl, report);
        free(got);
    }
    for (int i = 0; report && i < nl; i++)
        fprintf(
            report,
            "sluice-ckpt scavenge: %s: rebuilt ranks %s (the part of lost node %s) of version%s %s, %" PRId64
            " bytes, from %s\n",
            key, l[i].ranks, l[i].host, strchr(l[i].versions, ',') ? "s" : "", l[i].versions, l[i].bytes,
            l[i].from);
    if (restored == 0)
        rmdir(rebuilt);
    return restored;
}
