/* SPDX-License-Identifier: MIT */
/* See whatif.h. The model (docs/TRACE.md gives it in full, and the command prints it):
 *
 * A file system of T storage targets of bandwidth B each, stripe unit U, a metadata service of
 * latency L per operation and throughput X operations/s; clients on nodes of R ranks with
 * injection bandwidth I per node. From the trace: the mean member size b of the last checkpoint
 * version, the metadata operations per version of the container commit (m_c, serial at the home)
 * and per member file of file-per-process (m_f: the program's open, close, fsync of its file).
 *
 *   file per process, N ranks: every file on one target, round-robin over the targets
 *     metadata  L + N m_f / X                 (one latency, then the service's throughput)
 *     data      max(ceil(N / T) b / B,        (the most loaded target)
 *                   R b / I)                  (a node's injection)
 *   container, N ranks: one file striped over c targets, two-phase with one aggregator per node
 *     metadata  m_c L                          (create, rename, fsyncs: one after the other)
 *     data      max(N b / (c B),               (the striped targets, full-stripe writes)
 *                   R b / I)                   (a node sends R b to its aggregator and the
 *                                               aggregator writes as much)
 *   time = metadata + data (no overlap assumed), for N = 1k, 10k, 100k.
 *
 * Defaults: NERSC Perlmutter's scratch file system (docs.nersc.gov/filesystems/perlmutter-scratch:
 * 274 OSS, >5 TB/s aggregate, 16 MDS; a CPU node has 2x64 cores and one 200 Gb/s Slingshot NIC)
 * with T = 274 targets of 5 TB/s / 274 = 18.2 GB/s, U = 1 MiB, c = 72 (its widest progressive
 * layout), R = 128, I = 25 GB/s; L = 0.5 ms and X = 16 x 25000 ops/s are assumptions (the
 * source gives no metadata rates). Everything is overridable. */
#include "whatif.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "traceset.h"

struct model {
    double targets, target_bw, stripe_unit, stripe_count, md_latency, md_rate, ranks_per_node, node_bw;
};

struct measured {
    double member_bytes; /* mean member size of the last version */
    int members;
    double container_meta; /* metadata operations of that version */
    double file_meta;      /* per member file: opens, closes, fsyncs of the program, per rank and step */
    double durable_s;      /* that version's time until durable, or -1 */
    int ranks;
};

static double fpp_time(const struct model *m, const struct measured *w, double n, double *meta, double *data)
{
    *meta = m->md_latency + n * w->file_meta / m->md_rate;
    double per_target = ceil(n / m->targets) * w->member_bytes / m->target_bw;
    double per_node = fmin(n, m->ranks_per_node) * w->member_bytes / m->node_bw;
    *data = fmax(per_target, per_node);
    return *meta + *data;
}

static double container_time(const struct model *m, const struct measured *w, double n, double *meta,
                             double *data)
{
    *meta = w->container_meta * m->md_latency;
    double c = fmin(m->stripe_count, m->targets);
    double striped = n * w->member_bytes / (c * m->target_bw);
    double per_node = fmin(n, m->ranks_per_node) * w->member_bytes / m->node_bw;
    *data = fmax(striped, per_node);
    return *meta + *data;
}

static void measure(const struct trace_set *set, struct measured *w)
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
    if (!hf)
        return;
    int km = trace_kind_number(hf, "COMMIT_MEMBER"), kd = trace_kind_number(hf, "COMMIT_DURABLE");
    double bytes = 0;
    for (uint64_t e = he + 1; e < ht->info.events && (int)ht->events[e].kind == km; e++) {
        bytes += (double)ht->events[e].b;
        w->members++;
    }
    w->member_bytes = w->members ? bytes / w->members : 0;
    /* Its metadata operations: those of the home's thread between the durable start and end. */
    int kmeta = trace_kind_number(hf, "COMMIT_FS_META");
    for (size_t t = 0; t < hf->nthreads; t++)
        for (uint64_t e = 0; e < hf->threads[t].info.events; e++) {
            const struct sluice_tf_event *ev = &hf->threads[t].events[e];
            const char *s = sluice_trace_file_string(hf, ev->a);
            if ((int)ev->kind == kd && ev->b == version && s && vset && strcmp(s, vset) == 0) {
                w->durable_s = (double)ev->dur_ns / 1e9;
                for (size_t u = 0; u < hf->nthreads; u++)
                    for (uint64_t k = 0; k < hf->threads[u].info.events; k++) {
                        const struct sluice_tf_event *mv = &hf->threads[u].events[k];
                        if ((int)mv->kind == kmeta && mv->t_ns >= ev->t_ns &&
                            mv->t_ns <= ev->t_ns + ev->dur_ns)
                            w->container_meta++;
                    }
            }
        }
    /* Per member file of file-per-process: what the program did to its files, per file written. */
    w->file_meta = closes ? (double)(opens + closes + fsyncs) / (double)closes : 3;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace whatif [options] DIR|FILE...\n"
                "  Checkpoint time of file-per-process against the sluice container at 1k, 10k and 100k\n"
                "  ranks, from this run's checkpoint, through a model of a parallel file system\n"
                "  (docs/TRACE.md). Defaults: NERSC Perlmutter scratch.\n"
                "  --targets T        storage targets (274)        --target-bw B   bytes/s each (18.2e9)\n"
                "  --stripe-unit U    bytes (1048576)               --stripe-count C container targets (72)\n"
                "  --md-latency S     s per metadata op (0.0005)    --md-rate X     ops/s (400000)\n"
                "  --ranks-per-node R (128)                         --node-bw I     bytes/s per node (25e9)\n"
                "  --ranks N          estimate for N ranks too (e.g. the traced run's, to compare)\n");
}

int whatif_main(int argc, char **argv)
{
    static const struct option opts[] = {{"targets", required_argument, NULL, 'T'},
                                         {"target-bw", required_argument, NULL, 'B'},
                                         {"stripe-unit", required_argument, NULL, 'U'},
                                         {"stripe-count", required_argument, NULL, 'C'},
                                         {"md-latency", required_argument, NULL, 'L'},
                                         {"md-rate", required_argument, NULL, 'X'},
                                         {"ranks-per-node", required_argument, NULL, 'R'},
                                         {"node-bw", required_argument, NULL, 'I'},
                                         {"ranks", required_argument, NULL, 'N'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct model m = {274, 5e12 / 274, 1048576, 72, 0.0005, 16 * 25000.0, 128, 25e9};
    double extra = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        char *end;
        double v = optarg ? strtod(optarg, &end) : 0;
        if (c == '?' || !optarg || *end || !(v > 0) || !isfinite(v)) {
            if (c != '?')
                fprintf(stderr, "sluice-trace whatif: a positive number, not '%s'\n", optarg ? optarg : "");
            usage(stderr);
            return 2;
        }
        double *p = c == 'T'   ? &m.targets
                    : c == 'B' ? &m.target_bw
                    : c == 'U' ? &m.stripe_unit
                    : c == 'C' ? &m.stripe_count
                    : c == 'L' ? &m.md_latency
                    : c == 'X' ? &m.md_rate
                    : c == 'R' ? &m.ranks_per_node
                    : c == 'I' ? &m.node_bw
                               : &extra;
        *p = v;
    }
    if (optind >= argc) {
        fprintf(stderr, "sluice-trace whatif: no trace folder or file given\n");
        usage(stderr);
        return 2;
    }
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "whatif", stderr) != 0)
        return 1;
    struct measured w;
    measure(&set, &w);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    if (w.members == 0) {
        fprintf(stderr,
                "sluice-trace whatif: no checkpoint version in the trace (COMMIT_BEGIN/COMMIT_MEMBER)\n");
        trace_set_free(&set);
        return 1;
    }
    printf("From the trace (%d ranks): last version %d members of %.0f bytes on average; container commit "
           "%.0f metadata operations; file per process %.2f per file (open, close, fsync); measured until "
           "durable %.6f s\n",
           w.ranks, w.members, w.member_bytes, w.container_meta, w.file_meta, w.durable_s);
    printf("Model: %.0f targets x %.3g B/s, stripe unit %.0f B, container over %.0f targets; metadata %.3g s "
           "per op, %.3g ops/s; %.0f ranks per node at %.3g B/s\n",
           m.targets, m.target_bw, m.stripe_unit, m.stripe_count, m.md_latency, m.md_rate, m.ranks_per_node,
           m.node_bw);
    printf("Assumes: members of the mean size everywhere; file per process on one target each, round-robin;\n"
           "the container in full-stripe writes (no lock contention), one aggregator per node; metadata and\n"
           "data do not overlap; no caching, no other jobs.\n\n");
    printf("%9s %14s %12s %12s %14s %12s %12s %9s\n", "ranks", "per-process s", "metadata s", "data s",
           "container s", "metadata s", "data s", "speed-up");
    double ns[4] = {1000, 10000, 100000, extra};
    for (int i = 0; i < 4; i++) {
        if (ns[i] <= 0)
            continue;
        double fm, fd, cm, cd;
        double f = fpp_time(&m, &w, ns[i], &fm, &fd), k = container_time(&m, &w, ns[i], &cm, &cd);
        printf("%9.0f %14.6f %12.6f %12.6f %14.6f %12.6f %12.6f %8.2fx\n", ns[i], f, fm, fd, k, cm, cd,
               f / k);
    }
    trace_set_free(&set);
    return status;
}
