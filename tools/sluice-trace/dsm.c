/* SPDX-License-Identifier: MIT */
/* See dsm.h. What the software DSM did, from its records (runtime/trace/events.def, docs/DSM.md):
 *  - allocations: DSM_ALLOC, DSM_LOOKUP (a chain made local here) and DSM_FREE in time order,
 *    with the bytes of chains live on the rank after each (alloc and lookup add, free removes);
 *  - accesses: DSM_ACCESS, one per chunk per scope from the acquire call to RELEASE (the time
 *    the chunk is held), by kind (read/write, hit/miss): per rank and per chunk;
 *  - messages: the DSM's MPI_SEND/MPI_RECV (messages.h, purpose DSM);
 *  - time: each rank's user / sluice / MPI / sleep thread time beside the time its threads held
 *    chunks (the union of their DSM_ACCESS spans, per thread, so the chunks of one scope count
 *    once).
 * Printed as text; --csv and --png write the numbers and the picture (sluice-trace-plot.py). */
#include "dsm.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "messages.h"
#include "plot.h"
#include "summary.h"
#include "timeline.h"
#include "traceset.h"

enum { OP_ALLOC, OP_LOOKUP, OP_FREE };
static const char *const op_names[] = {"alloc", "lookup", "free"};

struct alloc {
    int64_t t;
    int rank;
    int op;
    uint64_t base, chunks, bytes, live;
};

struct access {
    uint64_t addr;
    int rank;
    int kind; /* 1 read hit, 2 read miss, 3 write hit, 4 write miss */
    uint64_t held;
};

struct span {
    uint64_t t, end;
};

struct rank_stats {
    int rank;
    uint64_t n[5]; /* by access kind 1..4 */
    uint64_t held, held_max, in_scopes;
    uint64_t allocs, lookups, frees, live, peak;
    double time_s[4];
};

struct dsm {
    struct alloc *al;
    size_t nal, cal;
    struct access *ac;
    size_t nac, cac;
    struct rank_stats *rs; /* one per rank of the set, in its order */
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    return trace_grow(p, cap, need, size, "dsm");
}

static int by_t(const void *a, const void *b)
{
    const struct alloc *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static int by_addr(const void *a, const void *b)
{
    const struct access *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int by_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Time covered by the union of the spans (sorted here). */
static uint64_t union_ns(struct span *s, size_t n)
{
    if (n > 1)
        qsort(s, n, sizeof *s, by_span);
    uint64_t sum = 0, cur = 0, end = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || s[i].t > end) {
            sum += end - cur;
            cur = s[i].t;
            end = s[i].end;
        } else if (s[i].end > end) {
            end = s[i].end;
        }
    }
    return n ? sum + (end - cur) : 0;
}

static void collect(struct dsm *d, const struct trace_set *set, const struct timeline *tl)
{
    d->rs = calloc(set->nranks ? set->nranks : 1, sizeof *d->rs);
    if (!d->rs) {
        fprintf(stderr, "sluice-trace dsm: out of memory\n");
        exit(1);
    }
    struct span *sp = NULL;
    size_t csp = 0;
    for (size_t r = 0; r < set->nranks; r++) {
        struct rank_stats *st = &d->rs[r];
        st->rank = set->ranks[r].rank;
        for (size_t i = 0; i < set->ranks[r].nfiles; i++) {
            const struct sluice_trace_file *f = set->ranks[r].files[i];
            int k_op[3] = {trace_kind_number(f, "DSM_ALLOC"), trace_kind_number(f, "DSM_LOOKUP"),
                           trace_kind_number(f, "DSM_FREE")};
            int k_access = trace_kind_number(f, "DSM_ACCESS");
            for (size_t t = 0; t < f->nthreads; t++) {
                const struct sluice_trace_rthread *th = &f->threads[t];
                if (th->info.index != SLUICE_TF_NO_THREAD)
                    for (int k = 0; k < 4; k++)
                        st->time_s[k] += (double)th->info.time_ns[k] / 1e9;
                size_t nsp = 0;
                for (uint64_t e = 0; e < th->info.events; e++) {
                    const struct sluice_tf_event *ev = &th->events[e];
                    int k = (int)ev->kind;
                    if (k == k_access && ev->c >= 1 && ev->c <= 4) {
                        d->ac = grow(d->ac, &d->cac, d->nac + 1, sizeof *d->ac);
                        d->ac[d->nac++] = (struct access){ev->a, st->rank, (int)ev->c, ev->dur_ns};
                        st->n[ev->c]++;
                        st->held += ev->dur_ns;
                        if (ev->dur_ns > st->held_max)
                            st->held_max = ev->dur_ns;
                        sp = grow(sp, &csp, nsp + 1, sizeof *sp);
                        uint64_t end =
                            ev->dur_ns > UINT64_MAX - ev->t_ns ? UINT64_MAX : ev->t_ns + ev->dur_ns;
                        sp[nsp++] = (struct span){ev->t_ns, end};
                        continue;
                    }
                    for (int op = 0; op < 3; op++)
                        if (k == k_op[op]) {
                            d->al = grow(d->al, &d->cal, d->nal + 1, sizeof *d->al);
                            d->al[d->nal++] = (struct alloc){
                                timeline_ns(tl, f, ev->t_ns), st->rank, op, ev->a, ev->b, ev->c, 0};
                        }
                }
                st->in_scopes += union_ns(sp, nsp);
            }
        }
    }
    free(sp);
    /* Live bytes per rank, in time order. */
    if (d->nal > 1)
        qsort(d->al, d->nal, sizeof *d->al, by_t);
    for (size_t i = 0; i < d->nal; i++) {
        struct alloc *a = &d->al[i];
        struct rank_stats *st = NULL;
        for (size_t r = 0; r < set->nranks && !st; r++)
            if (d->rs[r].rank == a->rank)
                st = &d->rs[r];
        if (a->op == OP_FREE) {
            st->live = st->live > a->bytes ? st->live - a->bytes : 0;
            st->frees++;
        } else {
            st->live += a->bytes;
            if (a->op == OP_ALLOC)
                st->allocs++;
            else
                st->lookups++;
        }
        if (st->live > st->peak)
            st->peak = st->live;
        a->live = st->live;
    }
    if (d->nac > 1)
        qsort(d->ac, d->nac, sizeof *d->ac, by_addr);
}

static double pct(uint64_t a, uint64_t b)
{
    return a + b ? 100.0 * (double)a / (double)(a + b) : 0.0;
}

/* Per chunk address, over every rank: accesses by kind, hold times and how many ranks (d->ac is
 * sorted by address, then rank). */
struct chunk {
    uint64_t addr, n[5], held, held_max;
    int ranks;
};

static size_t chunks_of(const struct dsm *d, struct chunk **out)
{
    struct chunk *c = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < d->nac;) {
        c = grow(c, &cap, n + 1, sizeof *c);
        struct chunk *k = &c[n++];
        memset(k, 0, sizeof *k);
        k->addr = d->ac[i].addr;
        int last = -1;
        for (; i < d->nac && d->ac[i].addr == k->addr; i++) {
            k->n[d->ac[i].kind]++;
            k->held += d->ac[i].held;
            if (d->ac[i].held > k->held_max)
                k->held_max = d->ac[i].held;
            if (d->ac[i].rank != last)
                k->ranks++;
            last = d->ac[i].rank;
        }
    }
    *out = c;
    return n;
}

static int by_accesses(const void *a, const void *b)
{
    const struct chunk *x = a, *y = b;
    uint64_t nx = x->n[1] + x->n[2] + x->n[3] + x->n[4], ny = y->n[1] + y->n[2] + y->n[3] + y->n[4];
    if (nx != ny)
        return nx > ny ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static void report(FILE *o, const struct dsm *d, const struct trace_set *set, const struct timeline *tl,
                   int top)
{
    char b1[32], b2[32];
    fprintf(o, "== DSM allocations ==\n%-6s %7s %8s %6s %12s %12s\n", "rank", "allocs", "lookups", "frees",
            "peak live", "live at end");
    for (size_t r = 0; r < set->nranks; r++) {
        const struct rank_stats *s = &d->rs[r];
        fprintf(o, "%-6d %7" PRIu64 " %8" PRIu64 " %6" PRIu64 " %12s %12s\n", s->rank, s->allocs, s->lookups,
                s->frees, summary_bytes((double)s->peak, b1, sizeof b1),
                summary_bytes((double)s->live, b2, sizeof b2));
    }
    fprintf(o, "timeline (seconds since the first process started; live = the rank's chains after it):\n");
    for (size_t i = 0; i < d->nal && (int)i < top; i++) {
        const struct alloc *a = &d->al[i];
        fprintf(o, "  %10.6f s  rank %-3d %-6s chain %" PRIu64 ": %" PRIu64 " chunks, %s (live %s)\n",
                (double)a->t / 1e9, a->rank, op_names[a->op], a->base, a->chunks,
                summary_bytes((double)a->bytes, b1, sizeof b1),
                summary_bytes((double)a->live, b2, sizeof b2));
    }
    if (d->nal > (size_t)top)
        fprintf(o, "  ... %zu more (--top N)\n", d->nal - (size_t)top);

    fprintf(o, "\n== DSM accesses per rank (one per chunk per scope; held = acquire to release) ==\n");
    fprintf(o, "%-6s %8s %10s %10s %11s %11s %9s %12s %12s %12s\n", "rank", "accesses", "read hit",
            "read miss", "write hit", "write miss", "hit rate", "held total", "held mean", "held max");
    for (size_t r = 0; r < set->nranks; r++) {
        const struct rank_stats *s = &d->rs[r];
        uint64_t n = s->n[1] + s->n[2] + s->n[3] + s->n[4];
        fprintf(o,
                "%-6d %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %11" PRIu64 " %11" PRIu64
                " %8.1f%% %10.6f s %10.6f s %10.6f s\n",
                s->rank, n, s->n[1], s->n[2], s->n[3], s->n[4], pct(s->n[1] + s->n[3], s->n[2] + s->n[4]),
                (double)s->held / 1e9, n ? (double)s->held / 1e9 / (double)n : 0.0,
                (double)s->held_max / 1e9);
    }

    struct chunk *c;
    size_t nc = chunks_of(d, &c);
    if (nc > 1)
        qsort(c, nc, sizeof *c, by_accesses);
    fprintf(o, "\n== DSM chunks (%zu; the %d most accessed) ==\n", nc, top);
    fprintf(o, "%-20s %8s %6s %14s %14s %12s %12s\n", "chunk", "accesses", "ranks", "read hit/miss",
            "write hit/miss", "held total", "held max");
    for (size_t i = 0; i < nc && (int)i < top; i++) {
        char rd[32], wr[32];
        snprintf(rd, sizeof rd, "%" PRIu64 "/%" PRIu64, c[i].n[1], c[i].n[2]);
        snprintf(wr, sizeof wr, "%" PRIu64 "/%" PRIu64, c[i].n[3], c[i].n[4]);
        fprintf(o, "%-20" PRIu64 " %8" PRIu64 " %6d %14s %14s %10.6f s %10.6f s\n", c[i].addr,
                c[i].n[1] + c[i].n[2] + c[i].n[3] + c[i].n[4], c[i].ranks, rd, wr, (double)c[i].held / 1e9,
                (double)c[i].held_max / 1e9);
    }
    free(c);

    fprintf(o, "\n== DSM messages ==\n");
    struct message *m;
    size_t nm;
    if (messages_collect(set, tl, &m, &nm) == 0) {
        uint64_t bytes = 0, count = 0;
        for (size_t i = 0; i < nm; i++)
            if (m[i].purpose == MSG_DSM) {
                bytes += m[i].bytes;
                count++;
            }
        fprintf(o, "%s in %" PRIu64 " messages (sluice-trace heatmap OUT.png DIR: rank to rank)\n",
                summary_bytes((double)bytes, b1, sizeof b1), count);
        free(m);
    }

    fprintf(o,
            "\n== Time per rank (seconds of thread time; DSM calls count as sluice, its waits as MPI) ==\n");
    fprintf(o, "%-6s %10s %10s %10s %10s %16s\n", "rank", "user", "sluice", "MPI", "sleep", "holding chunks");
    for (size_t r = 0; r < set->nranks; r++) {
        const struct rank_stats *s = &d->rs[r];
        fprintf(o, "%-6d %10.6f %10.6f %10.6f %10.6f %16.6f\n", s->rank, s->time_s[0], s->time_s[1],
                s->time_s[2], s->time_s[3], (double)s->in_scopes / 1e9);
    }
}

static void csv(FILE *o, const struct dsm *d, const struct trace_set *set)
{
    fputs("kind,rank,t_s,op,address,chunks,bytes,live_bytes,read_hits,read_misses,write_hits,write_misses,"
          "held_s,held_max_s,ranks,user_s,sluice_s,mpi_s,sleep_s,in_scopes_s\n",
          o);
    for (size_t i = 0; i < d->nal; i++) {
        const struct alloc *a = &d->al[i];
        fprintf(o, "alloc,%d,%.9f,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",,,,,,,,,,,,\n", a->rank,
                (double)a->t / 1e9, op_names[a->op], a->base, a->chunks, a->bytes, a->live);
    }
    for (size_t r = 0; r < set->nranks; r++) {
        const struct rank_stats *s = &d->rs[r];
        fprintf(o,
                "rank,%d,,,,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%.9f,%.9f,,%.9f,%.9f,%.9f,"
                "%.9f,%.9f\n",
                s->rank, s->peak, s->n[1], s->n[2], s->n[3], s->n[4], (double)s->held / 1e9,
                (double)s->held_max / 1e9, s->time_s[0], s->time_s[1], s->time_s[2], s->time_s[3],
                (double)s->in_scopes / 1e9);
    }
    struct chunk *c;
    size_t nc = chunks_of(d, &c);
    for (size_t i = 0; i < nc; i++)
        fprintf(o,
                "chunk,,,,%" PRIu64 ",,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9f,%.9f,%d,,,,,\n",
                c[i].addr, c[i].n[1], c[i].n[2], c[i].n[3], c[i].n[4], (double)c[i].held / 1e9,
                (double)c[i].held_max / 1e9, c[i].ranks);
    free(c);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace dsm [--top N] [--csv OUT.csv] [--png OUT.png] DIR|FILE...\n"
                "  The software DSM of a run: allocations over time, accesses and hit rates per rank and\n"
                "  per chunk, how long chunks were held (acquire to release), its messages, and each\n"
                "  rank's time. --top N: lines of the timeline and chunks printed (default 20); --csv\n"
                "  writes the numbers ('-' for stdout, then no report), --png the picture.\n");
}

int dsm_main(int argc, char **argv)
{
    static const struct option opts[] = {{"top", required_argument, NULL, 't'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"png", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int top = 20, c;
    const char *csv_out = NULL, *png_out = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+t:c:p:h", opts, NULL)) != -1) {
        if (c == 't') {
            if (trace_opt_int("dsm", "top", optarg, 1, 1000000, &top) != 0)
                return 2;
        } else if (c == 'c') {
            csv_out = optarg;
        } else if (c == 'p') {
            png_out = optarg;
        } else {
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 1, "dsm", "wants a trace folder or file", usage))
        return 2;
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "dsm", stderr) != 0)
        return 1;
    struct timeline tl;
    timeline_init(&tl, &set);
    struct dsm d = {0};
    collect(&d, &set, &tl);
    int status = 0;
    if (d.nal == 0 && d.nac == 0) {
        fprintf(stderr, "sluice-trace dsm: no DSM records in the trace (a program using sluice_dsm.h, run "
                        "with SLUICE_TRACE_DIR, records them)\n");
        status = 1;
    } else {
        bool to_stdout = csv_out && strcmp(csv_out, "-") == 0;
        if (!to_stdout)
            report(stdout, &d, &set, &tl, top);
        if (csv_out) {
            FILE *o = to_stdout ? stdout : fopen(csv_out, "w");
            if (!o) {
                perror(csv_out);
                status = 1;
            } else {
                csv(o, &d, &set);
                if (o != stdout && fclose(o) != 0) {
                    perror(csv_out);
                    status = 1;
                }
            }
        }
        if (png_out && status == 0) {
            char tmp[4096], title[256];
            FILE *o = plot_tmp_csv(tmp, sizeof tmp);
            if (!o) {
                status = 1;
            } else {
                csv(o, &d, &set);
                status = fclose(o) != 0;
                snprintf(title, sizeof title, "%s: software DSM of %zu ranks", argv[optind], set.nranks);
                if (status == 0)
                    status = plot_run("dsm", tmp, png_out, title);
                unlink(tmp);
            }
        }
    }
    if (set.unreadable || set.incomplete)
        status = 1;
    free(d.al);
    free(d.ac);
    free(d.rs);
    timeline_free(&tl);
    trace_set_free(&set);
    return status;
}
