/* SPDX-License-Identifier: MIT */
/* See io.h. A version is the COMMIT_BEGIN of its home rank, with the COMMIT_MEMBER records that
 * follow it on that thread, and its temporary file (COMMIT_FILE). Its window on the shared time
 * axis runs from the commit's start to durable (COMMIT_DURABLE's slice), or, when it never became
 * durable, from its begin to the next begin or the end of the trace. File-system writes and
 * metadata operations (COMMIT_FS_WRITE, COMMIT_FS_META, recorded by whichever rank did them)
 * belong to the version whose file they name (COMMIT_FS_FOR before a write, the third field of a
 * metadata operation); calls that name none (a staging file read for a commit, a container
 * removed with its last member) are counted apart. Traces written before versions were named
 * fall back to time: the version whose window holds the call, the latest begun when windows
 * overlap (counted as "overlapping"). App-visible time is the longest COMMIT_END wait of any rank
 * for that set and version. A wait that names no version (0: a member waiting in fsync does not
 * know it) belongs to the version of its set whose window overlaps the wait most; a version
 * committed during the exit flush (COMMIT_END "(exit: all sets)") gets the longest exit wait. */
#include "io.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "advice_measure.h"
#include "interval.h"
#include "summary.h"
#include "timeline.h"
#include "traceset.h"

#define NHIST 6
static const char *const hist_names[NHIST] = {"<4K", "4K-64K", "64K-1M", "1M-4M", "4M-16M", ">=16M"};
static const uint64_t hist_top[NHIST - 1] = {4096, 65536, 1u << 20, 4u << 20, 16u << 20};

struct meta_op {
    const char *name;
    uint64_t count;
};

struct version {
    const char *set;
    const char *file; /* its temporary file (COMMIT_FILE), NULL in older traces */
    uint64_t version;
    int home, declared_members;
    int64_t begin, win0, win1;
    bool durable;
    int64_t durable_ns;
    int64_t app_ns; /* -1: none recorded */
    bool app_from_exit;
    uint64_t members, member_bytes;
    uint64_t writes, write_bytes, extent, aligned, full_stripe, hist[NHIST], overlapping;
    struct meta_op *ops;
    size_t nops;
    int *writers;
    size_t nwriters;
};

struct exit_wait {
    const char *set; /* NULL for the exit flush of all sets */
    int64_t t0, t1, app_ns;
};

struct io {
    struct version *v;
    size_t n, cap;
    uint64_t staging_ops, unversioned_ops; /* calls that name no version */
    struct exit_wait *exits;
    size_t nexits, cap_exits;
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    return trace_grow(p, cap, need, size, "io");
}

static struct version *find(struct io *io, const char *set, uint64_t version)
{
    for (size_t i = 0; i < io->n; i++)
        if (io->v[i].version == version && strcmp(io->v[i].set, set) == 0)
            return &io->v[i];
    return NULL;
}

static const char *str(const struct sluice_trace_file *f, uint64_t id)
{
    const char *s = sluice_trace_file_string(f, id);
    return s ? s : "?";
}

static struct version *add_version(struct io *io, const char *set, uint64_t version)
{
    struct version *v = find(io, set, version);
    if (v)
        return v;
    io->v = grow(io->v, &io->cap, io->n + 1, sizeof *io->v);
    v = &io->v[io->n++];
    *v = (struct version){.set = set, .version = version, .app_ns = -1, .home = -1};
    return v;
}

static struct version *find_file(struct io *io, const char *file)
{
    for (size_t i = 0; i < io->n; i++)
        if (io->v[i].file && strcmp(io->v[i].file, file) == 0)
            return &io->v[i];
    return NULL;
}

/* Pass 1: versions, members, durable windows, waits. */
static void collect_versions(struct io *io, const struct trace_set *set, const struct timeline *tl)
{
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        int k_begin = trace_kind_number(f, "COMMIT_BEGIN"), k_member = trace_kind_number(f, "COMMIT_MEMBER");
        int k_durable = trace_kind_number(f, "COMMIT_DURABLE"), k_end = trace_kind_number(f, "COMMIT_END");
        int k_file = trace_kind_number(f, "COMMIT_FILE");
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            size_t last = SIZE_MAX;
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                int64_t ts = timeline_ns(tl, f, ev->t_ns);
                if ((int)ev->kind == k_file) {
                    add_version(io, str(f, ev->a), ev->b)->file = str(f, ev->c);
                } else if ((int)ev->kind == k_begin) {
                    struct version *v = add_version(io, str(f, ev->a), ev->b);
                    v->home = f->header.rank;
                    v->declared_members = (int)ev->c;
                    v->begin = ts;
                    last = (size_t)(v - io->v);
                } else if ((int)ev->kind == k_member && last != SIZE_MAX) {
                    io->v[last].members++;
                    io->v[last].member_bytes += ev->b;
                }
            }
        }
        /* Durable and waits after every begin of the file is known (they may be on other threads). */
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                int64_t ts = timeline_ns(tl, f, ev->t_ns);
                if ((int)ev->kind == k_durable) {
                    struct version *v = find(io, str(f, ev->a), ev->b);
                    if (v) {
                        v->durable = true;
                        v->durable_ns = (int64_t)ev->dur_ns;
                        v->win0 = ts;
                        v->win1 = ts + (int64_t)ev->dur_ns;
                    }
                } else if ((int)ev->kind == k_end) {
                    bool at_exit = strcmp(str(f, ev->a), "(exit: all sets)") == 0;
                    if (at_exit || ev->b == 0) { /* placed once every window is known */
                        io->exits = grow(io->exits, &io->cap_exits, io->nexits + 1, sizeof *io->exits);
                        io->exits[io->nexits++] = (struct exit_wait){
                            at_exit ? NULL : str(f, ev->a), ts, ts + (int64_t)ev->dur_ns, (int64_t)ev->c};
                        continue;
                    }
                    struct version *v = find(io, str(f, ev->a), ev->b);
                    if (v && (int64_t)ev->c > v->app_ns)
                        v->app_ns = (int64_t)ev->c;
                }
            }
        }
    }
}

static int by_begin(const void *a, const void *b)
{
    const struct version *p = a, *q = b;
    return (p->begin > q->begin) - (p->begin < q->begin);
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi - lo;
}

static void windows(struct io *io, int64_t trace_end)
{
    qsort(io->v, io->n, sizeof *io->v, by_begin);
    for (size_t i = 0; i < io->n; i++) {
        struct version *v = &io->v[i];
        if (!v->durable) {
            v->win0 = v->begin;
            v->win1 = i + 1 < io->n ? io->v[i + 1].begin : trace_end;
        }
    }
    for (size_t k = 0; k < io->nexits; k++) {
        const struct exit_wait *w = &io->exits[k];
        if (!w->set)
            continue;
        struct version *best = NULL;
        int64_t most = INT64_MIN;
        for (size_t i = 0; i < io->n; i++) {
            int64_t o = overlap(w->t0, w->t1, io->v[i].win0, io->v[i].win1);
            if (strcmp(io->v[i].set, w->set) == 0 && o > most) {
                most = o;
                best = &io->v[i];
            }
        }
        if (best && most >= 0 && w->app_ns > best->app_ns)
            best->app_ns = w->app_ns;
    }
    for (size_t i = 0; i < io->n; i++) {
        struct version *v = &io->v[i];
        for (size_t k = 0; v->app_ns < 0 && k < io->nexits; k++)
            if (!io->exits[k].set && v->win0 >= io->exits[k].t0 && v->win0 <= io->exits[k].t1)
                v->app_from_exit = true;
        for (size_t k = 0; v->app_from_exit && k < io->nexits; k++)
            if (!io->exits[k].set && io->exits[k].app_ns > v->app_ns)
                v->app_ns = io->exits[k].app_ns;
    }
}

static struct version *owner(struct io *io, int64_t ts)
{
    struct version *best = NULL;
    int holders = 0;
    for (size_t i = 0; i < io->n; i++)
        if (io->v[i].win0 <= ts && ts <= io->v[i].win1) {
            holders++;
            if (!best || io->v[i].win0 > best->win0)
                best = &io->v[i];
        }
    if (best && holders > 1)
        best->overlapping++;
    return best;
}

static void add_writer(struct version *v, int rank)
{
    for (size_t i = 0; i < v->nwriters; i++)
        if (v->writers[i] == rank)
            return;
    int *w = realloc(v->writers, (v->nwriters + 1) * sizeof *w);
    if (!w)
        return;
    v->writers = w;
    v->writers[v->nwriters++] = rank;
}

static void add_op(struct version *v, const char *name)
{
    for (size_t i = 0; i < v->nops; i++)
        if (strcmp(v->ops[i].name, name) == 0) {
            v->ops[i].count++;
            return;
        }
    struct meta_op *o = realloc(v->ops, (v->nops + 1) * sizeof *o);
    if (!o)
        return;
    v->ops = o;
    v->ops[v->nops++] = (struct meta_op){name, 1};
}

/* Pass 2: requests and metadata operations into their versions. */
static void collect_requests(struct io *io, const struct trace_set *set, const struct timeline *tl)
{
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        int k_write = trace_kind_number(f, "COMMIT_FS_WRITE"),
            k_meta = trace_kind_number(f, "COMMIT_FS_META");
        int k_for = trace_kind_number(f, "COMMIT_FS_FOR");
        bool named = trace_kind_number(f, "COMMIT_FILE") >= 0; /* calls name their version */
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            uint64_t next_for = 0; /* the version file the next write of this thread is for */
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                if ((int)ev->kind == k_for) {
                    next_for = ev->a;
                    continue;
                }
                if ((int)ev->kind != k_write && (int)ev->kind != k_meta)
                    continue;
                uint64_t file = (int)ev->kind == k_write ? next_for : ev->c;
                if ((int)ev->kind == k_write)
                    next_for = 0;
                struct version *v;
                if (!named) {
                    v = owner(io, timeline_ns(tl, f, ev->t_ns));
                } else if (file) {
                    v = find_file(io, str(f, file));
                } else {
                    /* A call for no one version: reading a staging file, or removing a container. */
                    const char *op = (int)ev->kind == k_meta ? str(f, ev->a) : "";
                    if (strcmp(op, "open") == 0 || strcmp(op, "create") == 0)
                        io->staging_ops++;
                    else
                        io->unversioned_ops++;
                    continue;
                }
                if (!v)
                    continue;
                if ((int)ev->kind == k_meta) {
                    add_op(v, str(f, ev->a));
                    continue;
                }
                v->writes++;
                v->write_bytes += ev->b;
                if (ev->a + ev->b > v->extent)
                    v->extent = ev->a + ev->b;
                v->aligned += ev->a % 4096 == 0;
                v->full_stripe += ev->c == 1;
                int h = 0;
                while (h < NHIST - 1 && ev->b >= hist_top[h])
                    h++;
                v->hist[h]++;
                add_writer(v, f->header.rank);
            }
        }
    }
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void print_version(const struct version *v)
{
    char b1[32], b2[32];
    printf("\n%s version %" PRIu64 " (home rank %d)\n", v->set, v->version, v->home);
    printf("  members        %" PRIu64 " of %d declared, %" PRIu64 " bytes (%s)\n", v->members,
           v->declared_members, v->member_bytes, summary_bytes((double)v->member_bytes, b1, sizeof b1));
    printf("  requests       %" PRIu64 " writes, %" PRIu64 " bytes (%s), container extent %" PRIu64
           " bytes (%s)\n",
           v->writes, v->write_bytes, summary_bytes((double)v->write_bytes, b1, sizeof b1), v->extent,
           summary_bytes((double)v->extent, b2, sizeof b2));
    printf("  request sizes ");
    for (int h = 0; h < NHIST; h++)
        printf(" %s %" PRIu64, hist_names[h], v->hist[h]);
    printf("\n  alignment      %" PRIu64 " of %" PRIu64 " at 4 KiB-aligned offsets, %" PRIu64
           " full-stripe\n",
           v->aligned, v->writes, v->full_stripe);
    printf("  metadata ops  ");
    uint64_t nops = 0;
    for (size_t i = 0; i < v->nops; i++) {
        printf(" %s %" PRIu64, v->ops[i].name, v->ops[i].count);
        nops += v->ops[i].count;
    }
    printf("%s (%" PRIu64 " in all)\n", v->nops ? "" : " none", nops);
    if (v->file)
        printf("  file           %s\n", v->file);
    int *w = v->writers;
    if (v->nwriters > 1)
        qsort(w, v->nwriters, sizeof *w, cmp_int);
    printf("  writers        %zu rank%s:", v->nwriters, v->nwriters == 1 ? "" : "s");
    for (size_t i = 0; i < v->nwriters; i++)
        printf(" %d", w[i]);
    printf("\n");
    if (v->app_ns >= 0)
        printf("  app-visible    %.6f s%s\n", (double)v->app_ns / 1e9,
               v->app_from_exit ? " (the longest wait of any rank in the exit flush)"
                                : " (the longest wait of any rank)");
    else
        printf("  app-visible    none recorded (no rank waited for it)\n");
    if (v->durable)
        printf("  until durable  %.6f s\n", (double)v->durable_ns / 1e9);
    else
        printf("  until durable  never (no COMMIT_DURABLE: failed, or the run ended first)\n");
    if (v->overlapping)
        printf("  overlapping    %" PRIu64 " requests fell in the windows of several commits\n",
               v->overlapping);
}

static void print_interval(const char *what, double cost, int n, double mtbf)
{
    printf("  cost = %s: %.6f s (mean of %d version%s): Young %.1f s, Daly %.1f s\n", what, cost, n,
           n == 1 ? "" : "s", interval_young(cost, mtbf), interval_daly(cost, mtbf));
}

/* The levels' costs, measured unless given, and the multi-level advice when failure classes are
 * given (else, without --mtbf T, the costs and how to ask). A protected level's encoding time is not in
 * traces yet: the redundancy's trace event is the call point for it (until then --cost protected=S). */
static void print_levels(struct advice_inputs *adv, bool multi, bool one_level, const struct trace_set *set,
                         double dur, int ndur)
{
    int steps = 0;
    double staging = advice_measure_staging(set, &steps);
    if (adv->cost[ADVICE_STAGED] < 0 && staging >= 0) {
        adv->cost[ADVICE_STAGED] = staging;
        adv->samples[ADVICE_STAGED] = steps;
    }
    if (adv->cost[ADVICE_DURABLE] < 0 && ndur) {
        adv->cost[ADVICE_DURABLE] = dur / ndur;
        adv->samples[ADVICE_DURABLE] = ndur;
    }
    char src_staged[160], src_durable[160];
    snprintf(src_staged, sizeof src_staged,
             "measured: mean over %d checkpoints of the slowest rank's staging, open to close", steps);
    snprintf(src_durable, sizeof src_durable, "measured: mean time until durable of %d drained version%s",
             ndur, ndur == 1 ? "" : "s");
    if (!adv->source[ADVICE_STAGED])
        adv->source[ADVICE_STAGED] = src_staged;
    if (!adv->source[ADVICE_DURABLE])
        adv->source[ADVICE_DURABLE] = src_durable;
    if (multi)
        advice_print(adv, stdout);
    else if (!one_level)
        advice_print_costs(adv, stdout);
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: sluice-trace io [--mtbf T | --mtbf CLASS=T,...] [--cost S | --cost LEVEL=S] DIR|FILE...\n"
            "  Per checkpoint set and version: members, bytes, file-system requests (count, sizes,\n"
            "  alignment), metadata operations, writers, app-visible time and time until durable;\n"
            "  then the measured cost of each checkpoint level (staged, durable).\n"
            "  --mtbf T   mean time between failures (e.g. 24h, 30m, 3600): the checkpoint interval\n"
            "             by Young's and Daly's formulas from the measured costs\n"
            "  --mtbf process=T,node=T,system=T  (any of them) the whole job's mean time between\n"
            "             failures of each class: a process crash (its node's staged copy survives), a\n"
            "             node lost (a protected copy survives), the system (only the file system):\n"
            "             the multi-level optimum of Benoit et al. (IEEE TC 2017): the checkpoint\n"
            "             interval and SLUICE_DRAIN_EVERY, with the formula's inputs\n"
            "  --cost S   also for a checkpoint cost of S seconds (what if)\n"
            "  --cost staged=S,protected=S,durable=S  (any of them) a level's cost instead of the\n"
            "             measured one, or one the trace does not have (repeatable)\n");
}

int io_main(int argc, char **argv)
{
    static const struct option opts[] = {{"mtbf", required_argument, NULL, 'm'},
                                         {"cost", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    double mtbf = -1, cost = -1;
    struct advice_inputs adv = {.cost = {-1, -1, -1}};
    bool multi = false;
    char err[256];
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+m:c:h", opts, NULL)) != -1) {
        int list = c == 'm'   ? advice_parse_mtbf(optarg, &adv, err, sizeof err)
                   : c == 'c' ? advice_parse_cost(optarg, &adv, err, sizeof err)
                              : 0;
        if (list < 0) {
            fprintf(stderr, "sluice-trace io: %s\n", err);
            return 2;
        }
        multi |= list == 1 && c == 'm';
        if (list == 1)
            continue;
        if (c == 'm' || c == 'c') {
            double v = interval_parse_seconds(optarg);
            if (v <= 0) {
                fprintf(stderr, "sluice-trace io: --%s wants a duration such as 24h, 30m or 3600, not '%s'\n",
                        c == 'm' ? "mtbf" : "cost", optarg);
                return 2;
            }
            *(c == 'm' ? &mtbf : &cost) = v;
        } else {
            return trace_opt_help(c, usage);
        }
    }
    if (trace_args_missing(argc - optind, 1, "io", "no trace folder or file given", usage))
        return 2;
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "io", stderr) != 0)
        return 1;
    struct timeline tl;
    timeline_init(&tl, &set);
    int64_t end = 0;
    for (size_t i = 0; i < set.nfiles; i++) {
        int64_t e = timeline_ns(&tl, set.files[i], set.files[i]->header.end_mono_ns);
        end = e > end ? e : end;
    }
    struct io io = {0};
    collect_versions(&io, &set, &tl);
    windows(&io, end);
    collect_requests(&io, &set, &tl);
    printf("%zu checkpoint version%s in %zu files of %zu ranks\n", io.n, io.n == 1 ? "" : "s", set.nfiles,
           set.nranks);
    double app = 0, dur = 0;
    int napp = 0, ndur = 0;
    for (size_t i = 0; i < io.n; i++) {
        print_version(&io.v[i]);
        if (io.v[i].app_ns >= 0) {
            app += (double)io.v[i].app_ns / 1e9;
            napp++;
        }
        if (io.v[i].durable) {
            dur += (double)io.v[i].durable_ns / 1e9;
            ndur++;
        }
    }
    if (io.staging_ops || io.unversioned_ops)
        printf("\nnot container operations: %" PRIu64
               " staging file opens (writers reading what they staged); "
               "%" PRIu64 " calls for no one version (a container removed with its last member, a damaged "
               "one set aside)\n",
               io.staging_ops, io.unversioned_ops);
    print_levels(&adv, multi, mtbf > 0, &set, dur, ndur);
    if (mtbf > 0) {
        printf("\nCheckpoint interval for an MTBF of %.0f s (Young: sqrt(2CM); Daly: sqrt(2CM)(1 + "
               "sqrt(C/2M)/3 + "
               "C/18M) - C):\n",
               mtbf);
        if (napp)
            print_interval("app-visible", app / napp, napp, mtbf);
        if (ndur)
            print_interval("until durable", dur / ndur, ndur, mtbf);
        if (cost > 0)
            printf("  cost = given: %.6f s: Young %.1f s, Daly %.1f s\n", cost, interval_young(cost, mtbf),
                   interval_daly(cost, mtbf));
        if (!napp && !ndur && cost <= 0)
            printf("  no measured cost in this trace (no checkpoint version)\n");
    }
    for (size_t i = 0; i < io.n; i++) {
        free(io.v[i].ops);
        free(io.v[i].writers);
    }
    free(io.v);
    free(io.exits);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    timeline_free(&tl);
    trace_set_free(&set);
    return status;
}
