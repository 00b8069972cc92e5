/* SPDX-License-Identifier: MIT */
/* See whatif_measure.h. */
#include "whatif_measure.h"

#include <inttypes.h>
#include <string.h>

/* The file of rank r's first process, or NULL. */
static const struct sluice_trace_file *file_of_rank(const struct trace_set *set, int r)
{
    for (size_t i = 0; i < set->nranks; i++)
        if (set->ranks[i].rank == r && set->ranks[i].nfiles)
            return set->ranks[i].files[0];
    return NULL;
}

static int same_host(const struct sluice_trace_file *a, const struct sluice_trace_file *b)
{
    return strncmp(a->header.hostname, b->header.hostname, sizeof a->header.hostname) == 0;
}

/* Shuffle bytes, the shares that left the writer's host and that stayed with the writer, the round
 * size and the hosts. */
static void measure_shuffle(const struct trace_set *set, struct whatif_measured *w)
{
    double remote = 0, self = 0;
    w->round_bytes = 0;
    w->hosts = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_host(f, set->files[j]);
        w->hosts += !seen;
        int ks = trace_kind_number(f, "COMMIT_SHUFFLE"), km = trace_kind_number(f, "COMMIT_MEMORY");
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
                const struct sluice_tf_event *ev = &f->threads[t].events[e];
                if ((int)ev->kind == km && (double)ev->b > w->round_bytes)
                    w->round_bytes = (double)ev->b;
                if ((int)ev->kind != ks)
                    continue;
                const struct sluice_trace_file *to = file_of_rank(set, (int)ev->a);
                w->shuffle_bytes += (double)ev->b;
                if (to && !same_host(f, to))
                    remote += (double)ev->b;
                if ((int)ev->a == f->header.rank)
                    self += (double)ev->b;
            }
    }
    w->remote_share = w->shuffle_bytes > 0 ? remote / w->shuffle_bytes : 0;
    w->self_share = w->shuffle_bytes > 0 ? self / w->shuffle_bytes : 1;
    w->direct = w->shuffle_bytes <= 0;
    if (w->round_bytes <= 0)
        w->round_bytes = 16.0 * 1024 * 1024; /* SLUICE_CB_BUFFER_SIZE's default */
}

/* The home's metadata operations between the version's start and durable, and that time. */
static void measure_home(const struct sluice_trace_file *hf, uint64_t version, const char *vset,
                         struct whatif_measured *w)
{
    int kd = trace_kind_number(hf, "COMMIT_DURABLE"), kmeta = trace_kind_number(hf, "COMMIT_FS_META");
    for (size_t t = 0; t < hf->nthreads; t++)
        for (uint64_t e = 0; e < hf->threads[t].info.events; e++) {
            const struct sluice_tf_event *ev = &hf->threads[t].events[e];
            const char *s = sluice_trace_file_string(hf, ev->a);
            if ((int)ev->kind != kd || ev->b != version || !s || !vset || strcmp(s, vset) != 0)
                continue;
            w->durable_s = (double)ev->dur_ns / 1e9;
            w->begin_ns = ev->t_ns;
            w->home_rank = hf->header.rank;
            w->home_tid = hf->threads[t].info.tid;
            for (size_t u = 0; u < hf->nthreads; u++)
                for (uint64_t k = 0; k < hf->threads[u].info.events; k++) {
                    const struct sluice_tf_event *mv = &hf->threads[u].events[k];
                    if ((int)mv->kind == kmeta && mv->t_ns >= ev->t_ns && mv->t_ns <= ev->t_ns + ev->dur_ns)
                        w->container_meta++;
                }
        }
}

void whatif_measure(const struct trace_set *set, struct whatif_measured *w)
{
    memset(w, 0, sizeof *w);
    w->durable_s = -1;
    w->ranks = (int)set->nranks;
    /* The last version: the latest COMMIT_BEGIN; its members follow it on the same thread. */
    const struct sluice_trace_file *hf = NULL;
    const struct sluice_trace_rthread *ht = NULL;
    uint64_t he = 0, latest = 0, version = 0;
    const char *vset = NULL;
    uint64_t opens = 0, closes = 0, fsyncs = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        int kb = trace_kind_number(f, "COMMIT_BEGIN"), ko = trace_kind_number(f, "CKPT_OPEN");
        int kc = trace_kind_number(f, "CKPT_CLOSE"), ks = trace_kind_number(f, "CKPT_FSYNC");
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
                const struct sluice_tf_event *ev = &f->threads[t].events[e];
                opens += (int)ev->kind == ko;
                closes += (int)ev->kind == kc;
                fsyncs += (int)ev->kind == ks;
                if ((int)ev->kind == kb && (!hf || ev->t_ns > latest)) {
                    hf = f;
                    ht = &f->threads[t];
                    he = e;
                    latest = ev->t_ns;
                    version = ev->b;
                    vset = sluice_trace_file_string(f, ev->a);
                }
            }
    }
    measure_shuffle(set, w);
    if (!hf)
        return;
    int km = trace_kind_number(hf, "COMMIT_MEMBER");
    double bytes = 0;
    for (uint64_t e = he + 1; e < ht->info.events && (int)ht->events[e].kind == km; e++) {
        bytes += (double)ht->events[e].b;
        w->members++;
    }
    w->member_bytes = w->members ? bytes / w->members : 0;
    measure_home(hf, version, vset, w);
    /* Per member file of file-per-process: what the program did to its files, per file written. */
    w->file_meta = closes ? (double)(opens + closes + fsyncs) / (double)closes : 3;
}
