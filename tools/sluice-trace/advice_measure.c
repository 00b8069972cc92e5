/* SPDX-License-Identifier: MIT */
/* See advice_measure.h. */
#include "advice_measure.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

struct member_spans {
    uint64_t path; /* string id in the file that opened it */
    const struct sluice_trace_file *f;
    int64_t *ns;
    size_t n, cap;
};

struct rank_spans {
    struct member_spans *m;
    size_t n, cap;
};

static void add_span(struct rank_spans *rs, const struct sluice_trace_file *f, uint64_t path, int64_t ns)
{
    const char *name = sluice_trace_file_string(f, path);
    struct member_spans *m = NULL;
    for (size_t i = 0; i < rs->n && !m; i++) {
        const char *other = sluice_trace_file_string(rs->m[i].f, rs->m[i].path);
        if (name && other && strcmp(name, other) == 0)
            m = &rs->m[i];
    }
    if (!m) {
        rs->m = trace_grow(rs->m, &rs->cap, rs->n + 1, sizeof *rs->m, "io");
        m = &rs->m[rs->n++];
        *m = (struct member_spans){.path = path, .f = f};
    }
    m->ns = trace_grow(m->ns, &m->cap, m->n + 1, sizeof *m->ns, "io");
    m->ns[m->n++] = ns;
}

/* One rank's spans: opens for writing paired, per thread, with the closes that follow in order
 * (a close event names no descriptor; a member is released at its last close). */
static void collect_rank(const struct trace_rank *tr, struct rank_spans *rs)
{
    for (size_t i = 0; i < tr->nfiles; i++) {
        const struct sluice_trace_file *f = tr->files[i];
        int k_open = trace_kind_number(f, "CKPT_OPEN"), k_close = trace_kind_number(f, "CKPT_CLOSE");
        if (k_open < 0 || k_close < 0)
            continue;
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            struct {
                uint64_t path;
                int64_t t;
            } *open = NULL;
            size_t head = 0, nopen = 0, cap = 0;
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                if ((int)ev->kind == k_open && (ev->b & O_ACCMODE) != O_RDONLY && (int64_t)ev->c >= 0) {
                    open = trace_grow(open, &cap, nopen + 1, sizeof *open, "io");
                    open[nopen].path = ev->a;
                    open[nopen++].t = (int64_t)ev->t_ns;
                } else if ((int)ev->kind == k_close && head < nopen) {
                    add_span(rs, f, open[head].path, (int64_t)ev->t_ns - open[head].t);
                    head++;
                }
            }
            free(open);
        }
    }
}

double advice_measure_staging(const struct trace_set *set, int *steps)
{
    struct rank_spans *rs = calloc(set->nranks ? set->nranks : 1, sizeof *rs);
    size_t nsteps = 0;
    for (size_t r = 0; rs && r < set->nranks; r++) {
        collect_rank(&set->ranks[r], &rs[r]);
        for (size_t i = 0; i < rs[r].n; i++)
            nsteps = rs[r].m[i].n > nsteps ? rs[r].m[i].n : nsteps;
    }
    double total = 0;
    for (size_t k = 0; k < nsteps; k++) {
        int64_t slowest = 0;
        for (size_t r = 0; r < set->nranks; r++) {
            int64_t mine = 0;
            for (size_t i = 0; i < rs[r].n; i++)
                mine += k < rs[r].m[i].n ? rs[r].m[i].ns[k] : 0;
            slowest = mine > slowest ? mine : slowest;
        }
        total += (double)slowest / 1e9;
    }
    for (size_t r = 0; rs && r < set->nranks; r++) {
        for (size_t i = 0; i < rs[r].n; i++)
            free(rs[r].m[i].ns);
        free(rs[r].m);
    }
    free(rs);
    *steps = (int)nsteps;
    return nsteps ? total / (double)nsteps : -1;
}
