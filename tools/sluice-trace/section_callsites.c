/* SPDX-License-Identifier: MIT */
/* Summary section: the call sites that produced the most events (SLUICE_BACKTRACE=N), merged
 * across processes by module+offset (addresses differ between processes; offsets do not). */
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "symbolize.h"

struct site {
    char *key; /* frames as "module+off;module+off" */
    uint64_t count;
    const struct sluice_trace_file *file; /* one occurrence, for printing */
    const struct sluice_trace_rcallsite *cs;
    uint64_t *kinds; /* events per kind (file numbering) */
    size_t ranks_seen;
    int last_rank;
};

static char *site_key(const struct sluice_trace_file *f, const struct sluice_trace_rcallsite *cs)
{
    size_t cap = 64 * (size_t)cs->depth + 1, len = 0;
    char *key = malloc(cap);
    if (!key)
        return NULL;
    key[0] = '\0';
    for (uint32_t i = 0; i < cs->depth; i++) {
        char mo[256];
        const struct sluice_trace_rmodule *m = sluice_trace_file_module(f, cs->frames[i]);
        if (m)
            snprintf(mo, sizeof mo, "%s+%llx;", m->path, (unsigned long long)(cs->frames[i] - m->m.bias));
        else
            snprintf(mo, sizeof mo, "%llx;", (unsigned long long)cs->frames[i]);
        size_t n = strlen(mo);
        if (len + n + 1 > cap) {
            char *grown = realloc(key, (len + n + 1) * 2);
            if (!grown)
                break;
            key = grown;
            cap = (len + n + 1) * 2;
        }
        memcpy(key + len, mo, n + 1);
        len += n;
    }
    return key;
}

/* "MARK 12, CKPT_WRITE 3": the kinds recorded at a site, most frequent first (at most 3). */
static void print_kinds(FILE *o, const struct site *s)
{
    size_t nk = s->file->nkinds;
    uint64_t shown = 0;
    for (int n = 0; n < 3 && s->kinds; n++) {
        size_t best = nk;
        for (size_t k = 0; k < nk; k++)
            if (s->kinds[k] && (best == nk || s->kinds[k] > s->kinds[best]))
                best = k;
        if (best == nk)
            break;
        const char *name = sluice_trace_file_kind(s->file, (unsigned)best);
        fprintf(o, "%s%s %llu", n ? ", " : "", name ? name : "?", (unsigned long long)s->kinds[best]);
        shown += s->kinds[best];
        s->kinds[best] = 0; /* printed once; the table is not used afterwards */
    }
    if (shown < s->count)
        fprintf(o, "%s%llu more", shown ? ", " : "", (unsigned long long)(s->count - shown));
}

static int by_count(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    return (x->count < y->count) - (x->count > y->count);
}

static void print_callsites(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    struct site *sites = NULL;
    size_t nsites = 0;
    uint64_t with_site = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        if (f->ncallsites == 0)
            continue;
        /* per file: events per call-site id (ids are dense, starting at 1) */
        uint32_t maxid = f->callsites[f->ncallsites - 1].id;
        /* events per (call-site id, kind) */
        size_t nk = f->nkinds;
        uint64_t *per_id = calloc((size_t)maxid + 1, sizeof *per_id);
        uint64_t *per_kind = calloc(((size_t)maxid + 1) * nk, sizeof *per_kind);
        if (!per_id || !per_kind) {
            free(per_id);
            free(per_kind);
            continue;
        }
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
                uint32_t id = f->threads[t].events[e].callsite;
                if (id && id <= maxid) {
                    per_id[id]++;
                    per_kind[(size_t)id * nk + f->threads[t].events[e].kind]++;
                    with_site++;
                }
            }
        for (size_t c = 0; c < f->ncallsites; c++) {
            const struct sluice_trace_rcallsite *cs = &f->callsites[c];
            if (per_id[cs->id] == 0)
                continue;
            char *key = site_key(f, cs);
            if (!key)
                continue;
            size_t j = 0;
            while (j < nsites && strcmp(sites[j].key, key) != 0)
                j++;
            if (j == nsites) {
                struct site *grown = realloc(sites, sizeof *sites * (nsites + 1));
                if (!grown) {
                    free(key);
                    continue;
                }
                sites = grown;
                sites[nsites++] = (struct site){
                    .key = key, .file = f, .cs = cs, .kinds = calloc(nk, sizeof(uint64_t)), .last_rank = -1};
            } else {
                free(key);
            }
            if (sites[j].kinds && sites[j].file->nkinds == nk)
                for (size_t k = 0; k < nk; k++)
                    sites[j].kinds[k] += per_kind[(size_t)cs->id * nk + k];
            sites[j].count += per_id[cs->id];
            if (sites[j].last_rank != f->header.rank) {
                sites[j].ranks_seen++;
                sites[j].last_rank = f->header.rank;
            }
        }
        free(per_id);
        free(per_kind);
    }
    if (nsites == 0)
        return; /* not recorded (SLUICE_BACKTRACE=0): nothing to say */
    qsort(sites, nsites, sizeof *sites, by_count);
    if (ctx->symbolize)
        symbolize_batch(set);
    summary_heading(ctx, "Top call sites");
    fprintf(ctx->out, "%llu events carry a call site; %zu distinct sites\n", (unsigned long long)with_site,
            nsites);
    for (size_t j = 0; j < nsites && (int)j < ctx->top; j++) {
        fprintf(ctx->out, "#%zu  %llu events (", j + 1, (unsigned long long)sites[j].count);
        print_kinds(ctx->out, &sites[j]);
        fprintf(ctx->out, "), %zu rank%s\n", sites[j].ranks_seen, sites[j].ranks_seen == 1 ? "" : "s");
        for (uint32_t k = 0; k < sites[j].cs->depth; k++) {
            char frame[2048];
            symbolize_frame(sites[j].file, sites[j].cs->frames[k], ctx->symbolize, frame, sizeof frame);
            fprintf(ctx->out, "      %s\n", frame);
        }
    }
    for (size_t j = 0; j < nsites; j++) {
        free(sites[j].key);
        free(sites[j].kinds);
    }
    free(sites);
}

SUMMARY_SECTION(callsites_section, "call sites", 40, print_callsites)
