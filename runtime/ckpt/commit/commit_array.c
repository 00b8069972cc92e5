/* SPDX-License-Identifier: MIT */
/* Sets laid out as one global array (SLUICE_LAYOUT, docs/LAYOUT.md), at the home: which set has
 * a layout, whether a version's members fit it, and where headers, array and index then go.
 * The headers start on a stripe boundary and the array on the next one (a one-rank set packs
 * its header right before the array: one contiguous member, written by the direct path); members become
 * extents into it (planner_array.h), and the two-phase writer moves them (twophase_home.c). A set that does
 * not fit gets one line and is stored as plain members. */
#include "ckpt/commit/commit_array.h"

#include "ckpt/commit/pattern.h"
#include "ckpt/twophase/planner_array.h"
#include "ckpt/twophase/stripe.h"
#include "common/align.h"
#include "common/hash.h"
#include "common/log.h"
#include "config/config.h"
#include "mpi/roles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYOUTS_MAX 8

struct layout {
    struct sluice_pattern_set pat;
    struct sluice_array spec;
};
static struct layout *layouts; /* set once at enable, read-only after */
static int nlayouts;

/* Progress thread only: sets already told that they do not fit (one line per set). */
static uint64_t warned[64];

static void warn_once(const char *key, const char *fmt, const char *why)
{
    uint64_t h = sluice_fnv1a_str(key);
    for (size_t i = 0; i < sizeof warned / sizeof warned[0]; i++) {
        if (warned[i] == h)
            return;
        if (warned[i] == 0) {
            warned[i] = h;
            break;
        }
    }
    sluice_log_warn(fmt, key, why);
}

/* Progress thread only: how many ranks wrote the last version of each array set with
 * grid=auto (commit_array_blocks); a set's record at the home is freed when idle. */
static struct {
    uint64_t key;
    int n;
} writers[64];

static void learn_writers(const char *key, int n)
{
    uint64_t h = sluice_fnv1a_str(key);
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        if (writers[i].key == h || writers[i].key == 0) {
            writers[i].key = h;
            writers[i].n = n;
            return;
        }
}

int commit_array_blocks(const char *key)
{
    struct sluice_array a;
    if (!commit_array_spec_for_key(key, &a))
        return 0;
    uint64_t n = 1;
    if (a.grid[0] == 0) {
        n = (uint64_t)commit_g.size;
        uint64_t h = sluice_fnv1a_str(key);
        for (size_t i = 0; i < sizeof writers / sizeof writers[0] && writers[i].key; i++)
            if (writers[i].key == h)
                n = (uint64_t)writers[i].n;
    } else {
        for (int d = 0; d < a.ndims; d++)
            n *= a.grid[d];
    }
    return n < (uint64_t)commit_g.size ? (int)n : commit_g.size;
}

void commit_array_enable(const char *cwd)
{
    const char *spec = sluice_config.LAYOUT;
    if (!spec || !*spec)
        return;
    layouts = calloc(LAYOUTS_MAX, sizeof *layouts);
    char *copy = strdup(spec);
    int loud = sluice_launch_rank() <= 0;
    for (char *save = NULL, *ent = copy ? strtok_r(copy, ";", &save) : NULL; layouts && ent;
         ent = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(ent, ':'), err[512];
        struct layout *l = &layouts[nlayouts];
        if (nlayouts == LAYOUTS_MAX) {
            if (loud)
                sluice_log_warn("SLUICE_LAYOUT: more than %d layouts; '%s' and later ones ignored",
                                LAYOUTS_MAX, ent);
            break;
        }
        if (!colon) {
            if (loud)
                sluice_log_warn("SLUICE_LAYOUT: '%s' is not PATTERN:SPEC; ignored", ent);
            continue;
        }
        *colon = 0;
        if (sluice_pattern_compile(&l->pat, ent, cwd, err, sizeof err) != 0 || l->pat.count != 1) {
            if (loud)
                sluice_log_warn("SLUICE_LAYOUT: pattern '%s': %s; ignored", ent,
                                l->pat.count != 1 ? "want one pattern with %r" : err);
            sluice_pattern_free(&l->pat);
            continue;
        }
        if (sluice_array_parse(colon + 1, &l->spec, err, sizeof err) != 0) {
            if (loud)
                sluice_log_warn("SLUICE_LAYOUT: '%s': %s; ignored", colon + 1, err);
            sluice_pattern_free(&l->pat);
            continue;
        }
        nlayouts++;
    }
    free(copy);
}

int commit_array_spec_for_key(const char *key, struct sluice_array *out)
{
    if (!nlayouts)
        return 0;
    /* The key with every %r written 0 is a member's path; it must give this key back. */
    char path[4096], back[4096 + 16];
    size_t at = 0;
    for (const char *p = key; *p && at + 2 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            path[at++] = '0';
            p++;
        } else {
            path[at++] = *p;
        }
    }
    path[at] = 0;
    for (int i = 0; i < nlayouts; i++) {
        int rank;
        if (sluice_pattern_match(&layouts[i].pat, path, &rank, back, sizeof back) && strcmp(back, key) == 0) {
            *out = layouts[i].spec;
            return 1;
        }
    }
    return 0;
}

/* One line why the members cannot be the array, or NULL when they can. */
static const char *misfit(const struct hcommit *c, size_t nkeep, const struct sluice_array *a, uint32_t *grid,
                          char *why, size_t cap)
{
    if (nkeep > INT32_MAX)
        return "too many members";
    uint32_t n = (uint32_t)nkeep;
    if (sluice_array_grid(a, n, grid, why, cap) != 0)
        return why;
    unsigned char *seen = calloc(n, 1);
    if (!seen)
        return "no memory";
    const char *bad = NULL;
    for (size_t i = 0; !bad && i < c->nmem; i++) {
        const struct gm *g = &c->mem[i];
        if (!g->keep)
            continue;
        if (g->src < 0) {
            snprintf(why, cap, "member %s is left from an earlier version", g->path);
            bad = why;
        } else if (g->member_rank < 0 || (uint32_t)g->member_rank >= n || seen[g->member_rank]) {
            snprintf(why, cap, "member %s: rank %d is not one of 0..%u once each", g->path, g->member_rank,
                     n - 1);
            bad = why;
        } else {
            seen[g->member_rank] = 1;
            struct sluice_array_block b;
            sluice_array_block(a, grid, (uint32_t)g->member_rank, &b);
            uint64_t want = sluice_array_member_bytes(a, &b);
            if (g->size != want) {
                snprintf(why, cap, "member %s has %llu bytes, its header and block take %llu", g->path,
                         (unsigned long long)g->size, (unsigned long long)want);
                bad = why;
            }
        }
    }
    free(seen);
    if (!bad && n > 1 && (!commit_g.use_mpi || commit_g.size < 2))
        bad = "several members but no MPI for the two-phase writer";
    return bad;
}

static uint64_t round_up(uint64_t v, uint64_t unit)
{
    return (v + unit - 1) / unit * unit;
}

int commit_array_plan(struct hcommit *c, size_t nkeep)
{
    struct sluice_array a;
    free(c->array);
    c->array = NULL;
    if (!commit_array_spec_for_key(c->set->key, &a) || nkeep == 0)
        return 0;
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    char why[512];
    const char *bad = misfit(c, nkeep, &a, grid, why, sizeof why);
    if (bad) {
        warn_once(c->set->key, "SLUICE_LAYOUT: set %s does not fit its layout (%s): stored as plain members",
                  bad);
        return 0;
    }
    uint64_t unit = c->block;
    if (commit_g.use_mpi && commit_g.size > 1)
        unit = sluice_stripe_unit(c->dir, sluice_config.STRIPING_UNIT, c->block, NULL);
    /* The header holds the record after the key: leave room for the longest one. */
    uint64_t start =
        sluice_align_up(sluice_container_header_size(c->set->key) + SLUICE_CONTAINER_ARRAY_MAX, c->block);
    uint64_t heads = a.header * nkeep;
    a.nprocs = (uint32_t)nkeep;
    for (int d = 0; d < a.ndims; d++)
        a.grid[d] = grid[d];
    if (nkeep > 1) {
        /* Headers in stripes of their own, the array from the next stripe boundary: no stripe
         * holds both the home's header and an aggregator's bytes, or headers and array rows. */
        a.header_offset = round_up(start, unit);
        a.array_offset = round_up(a.header_offset + heads, unit);
    } else {
        /* One member, written directly: header right before the array, one contiguous run. */
        a.array_offset = round_up(start + heads, unit);
        a.header_offset = a.array_offset - heads;
    }
    char rec[SLUICE_CONTAINER_ARRAY_MAX];
    if (sluice_array_format(&a, rec, sizeof rec) < 0 ||
        sluice_container_header_size(c->set->key) + sluice_pad8(strlen(rec)) >
            SLUICE_CONTAINER_HEADER_FIXED + sluice_pad8(SLUICE_CONTAINER_KEY_MAX)) {
        warn_once(c->set->key, "SLUICE_LAYOUT: set %s: %s: stored as plain members",
                  "the set key and layout record do not fit the container header");
        return 0;
    }
    c->array = malloc(sizeof *c->array);
    if (!c->array)
        return -ENOMEM;
    *c->array = a;
    /* The blocks the set's next versions wait for: with grid=auto, the ranks that wrote it (a
     * job may have ranks that write no block), not the whole job. */
    c->set->blocks = (int)nkeep;
    learn_writers(c->set->key, (int)nkeep);
    for (size_t i = 0; i < c->nmem; i++)
        if (c->mem[i].keep)
            c->mem[i].offset = a.header_offset + (uint64_t)c->mem[i].member_rank * a.header;
    uint64_t end = a.array_offset + sluice_array_bytes(&a);
    c->index_offset = unit > c->block ? round_up(end, unit) : sluice_pad8(end);
    return 1;
}

uint32_t commit_array_member_extents(const struct hcommit *c, const struct gm *g, struct sluice_extent *ext)
{
    size_t n = sluice_tp_array_extent_count(c->array, g->member_rank);
    if (!ext || n == 0)
        return (uint32_t)n;
    uint64_t(*e)[3] = malloc(n * sizeof *e);
    if (!e)
        sluice_fatal(1, "checkpoint commit: out of memory for %zu extents", n);
    sluice_tp_array_extents(c->array, g->member_rank, e);
    for (size_t k = 0; k < n; k++)
        ext[k] = (struct sluice_extent){e[k][0], e[k][1], e[k][2]};
    free(e);
    return (uint32_t)n;
}

void commit_array_record(const struct hcommit *c, char *out, size_t cap)
{
    out[0] = 0;
    if (c->array && sluice_array_format(c->array, out, cap) < 0)
        out[0] = 0;
}
