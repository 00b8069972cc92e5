/* SPDX-License-Identifier: MIT */
/* See whatif.h. The model (docs/TRACE.md gives it in full, and the command prints it):
 *
 * A file system of T storage targets of bandwidth B each, stripe unit U, a metadata service of
 * latency L per operation and throughput X operations/s; clients on nodes of R ranks with
 * injection bandwidth I per node, a node's file-system client writing at most F bytes/s (one
 * stream: a node's writes queue in its one client), a node's commit pass P (bytes/s it reads
 * from its stage, checksums and copies to the file system: memory and CPU), the direct path's pass
 * P_d (a writer copying staged members into the file through a buffer), aggregation bandwidth M
 * (what an aggregator receives per second from other ranks of its own node) and E (from ranks of
 * other nodes, through MPI), and the control messages of a commit of several ranks: H per commit
 * (the plan out and the answers back, each waking a progress thread) and c per rank at the home;
 * the CPU-bound ones (P, P_d, M, E, H, c) at a whole CPU, scaled by the CPU share S the run got.
 * From the trace
 * (whatif_measure.h): the mean member size b of the last checkpoint version, the metadata operations of the
 * container commit (m_c, serial at the home), per member file of file-per-process m_f (the program's open,
 * close, fsync), the share x of the shuffled bytes that went to an aggregator on another node, the share s
 * that stayed with their writer (its own aggregator side: no message; 1 on the direct path), the round size
 * Q, and the path the version took (direct: no shuffle).
 *
 *   file per process, N ranks: every file on one target, round-robin over the targets
 *     metadata  L + N m_f / X                 (one latency, then the service's throughput)
 *     data      max(ceil(N / T) b / B,        (the most loaded target)
 *                   R b / min(I, F, P))       (a node's injection, client, commit pass)
 *   container, N ranks: one file striped over c targets, two-phase with one aggregator per node,
 *   whose domain is D = min(N, R) b
 *     control   m_c L                          (create, rename, fsyncs: one after the other)
 *               + H + c N when N > 1           (the commit's messages: plan out, answers back)
 *     gather    G = D ((1 - x - s) / M + x / E) (the messages into the aggregator's round
 *                                              buffers; a writer's own pieces are none)
 *     write     W = max(N b / (c B),           (the striped targets,
 *                       D / min(I, F, P))      the node's link, client or commit pass; P_d
 *                                              for P where the version took the direct path)
 *               with --write-back (a client that caches, flushed by the fsync: one host's disk)
 *               W = D / min(I, P) + max(N b / (c B), D / F): the pass, then the flush; the same
 *               for file per process's data
 *     data      min(k, 2) / k (G + W) + max(k - 2, 0) / k max(G, W), k = ceil(D / Q) rounds:
 *               two round buffers are filled at once and written, then each further round is
 *               gathered while the one before is written (G + W up to two rounds)
 *   time = metadata + data (no overlap assumed), for N = 1k, 10k, 100k.
 *
 * Defaults: NERSC Perlmutter's scratch file system (docs.nersc.gov/filesystems/perlmutter-scratch:
 * 274 OSS, >5 TB/s aggregate, 16 MDS; a CPU node has 2x64 cores and one 200 Gb/s Slingshot NIC)
 * with T = 274 targets of 5 TB/s / 274 = 18.2 GB/s, U = 1 MiB, c = 72 (its widest progressive
 * layout), R = 128, I = 25 GB/s; L = 0.5 ms, X = 16 x 25000 ops/s, M = P = P_d = 10 GB/s, F = E =
 * I (the client and MPI no narrower than the NIC), H = 1 ms and c = 1 us are assumptions (the
 * source gives no metadata rates, copy, client or message costs); S = 1 (a job's nodes are its
 * own). Everything is overridable. */
#include "whatif.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "traceset.h"
#include "whatif_measure.h"

struct model {
    double targets, target_bw, stripe_unit, stripe_count, md_latency, md_rate, ranks_per_node, node_bw,
        agg_bw, client_bw, commit_bw, direct_bw, remote_bw, commit_latency, rank_cost, cpu_share;
    int write_back; /* --write-back: the client caches the pass, the fsync flushes it after */
};

/* The inputs that are the CPU's work are given at a whole CPU; a run whose processes had a CPU
 * for a share S of the time they wanted one (--cpu-share) copies, checksums and gathers S times
 * as fast (P, P_d, M, and E no faster than the link I) and waits 1/S as long for the progress
 * threads that carry its messages (H, c). */
static void apply_cpu_share(struct model *m)
{
    double s = m->cpu_share;
    m->commit_bw *= s;
    m->direct_bw *= s;
    m->agg_bw *= s;
    m->remote_bw = fmin(m->node_bw, m->remote_bw * s);
    m->commit_latency /= s;
    m->rank_cost /= s;
}

/* What one node moves to the file system per second: its link, its client or its commit pass
 * (the direct path's when the version took it), the narrowest. */
static double node_out_bw(const struct model *m, int direct)
{
    return fmin(fmin(m->node_bw, m->client_bw), direct ? m->direct_bw : m->commit_bw);
}

/* The time to write a node's `node` bytes, `target` bytes on the busiest target of bandwidth `bw`:
 * through (the pass, the link, the client and the targets at once, the narrowest binds) or, with
 * --write-back, the pass into the client's cache (link and pass) and then the flush at the fsync
 * (client and targets), one after the other. */
static double write_time(const struct model *m, int direct, double node, double target, double bw)
{
    if (!m->write_back)
        return fmax(target / bw, node / node_out_bw(m, direct));
    double pass = fmin(m->node_bw, direct ? m->direct_bw : m->commit_bw);
    return node / pass + fmax(target / bw, node / m->client_bw);
}

static double fpp_time(const struct model *m, const struct whatif_measured *w, double n, double *meta,
                       double *data)
{
    *meta = m->md_latency + n * w->file_meta / m->md_rate;
    *data = write_time(m, 0, fmin(n, m->ranks_per_node) * w->member_bytes,
                       ceil(n / m->targets) * w->member_bytes, m->target_bw);
    return *meta + *data;
}

struct container_terms {
    double meta, gather, write, data;
};

static double container_time(const struct model *m, const struct whatif_measured *w, double n,
                             struct container_terms *t)
{
    /* One rank commits alone; several wait for the plan's messages and each other's answers. */
    t->meta = w->container_meta * m->md_latency + (n > 1 ? m->commit_latency + m->rank_cost * n : 0);
    double domain = fmin(n, m->ranks_per_node) * w->member_bytes;
    double c = fmin(m->stripe_count, m->targets);
    /* A writer's own pieces (and the direct path's bytes) are written from its stage: no gather. */
    double local = fmax(0, 1 - w->remote_share - w->self_share);
    t->gather = domain * (local / m->agg_bw + w->remote_share / m->remote_bw);
    t->write = write_time(m, w->direct, domain, n * w->member_bytes / c, m->target_bw);
    /* Both round buffers are posted at once, so the first two rounds arrive together and are
     * written after; from the third on, a round is gathered while the one before is written. */
    double k = fmax(1, ceil(domain / w->round_bytes));
    t->data = fmin(k, 2) / k * (t->gather + t->write) + fmax(k - 2, 0) / k * fmax(t->gather, t->write);
    return t->meta + t->data;
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
                "  --agg-bw M         bytes/s an aggregator gathers from its own node (10e9)\n"
                "  --client-bw F      bytes/s one node's file-system client writes (the node's I)\n"
                "  --commit-bw P      bytes/s a node's commit reads from its stage, checksums and\n"
                "                     copies to the file system (10e9)\n"
                "  --direct-bw P_d    the same on the direct path, through a buffer (P)\n"
                "  --remote-bw E      bytes/s an aggregator gathers from other nodes, MPI (I)\n"
                "  --commit-latency H s a commit of several ranks spends in its messages (0.001)\n"
                "  --rank-cost c      s per rank at the commit's home (1e-6)\n"
                "  --cpu-share S      the share of the time they wanted a CPU that the job's\n"
                "                     processes had one (1); P, P_d, M, E, H and c are given at a\n"
                "                     whole CPU: rates times S (E at most I), H and c over S\n"
                "  --write-back       the client caches what the pass writes and the fsync flushes it:\n"
                "                     W = pass (min(I, P)) + flush (max(targets B, F)), not the max of all\n"
                "  --ranks N          estimate for N ranks too (e.g. the traced run's, to compare)\n"
                "  --window           print only the last version's commit window at its home and the\n"
                "                     threads with commit events in it: T0 T1 RANK:TID... (CLOCK_MONOTONIC\n"
                "                     ns; bench/whatif_cpu.py --window gives their CPU share in it)\n");
}

/* The inputs read from the trace, the model's parameters and assumptions, and the rows. */
static void print_model(const struct model *m, const struct whatif_measured *w, double extra)
{
    printf(
        "From the trace (%d ranks on %d hosts): last version %d members of %.0f bytes on average; container "
        "commit %.0f metadata operations; file per process %.2f per file (open, close, fsync); shuffle %.0f "
        "bytes, share %.4f to another host's aggregator, share %.4f kept by the writer, rounds of %.0f "
        "bytes; path %s; measured until durable %.6f s\n",
        w->ranks, w->hosts, w->members, w->member_bytes, w->container_meta, w->file_meta, w->shuffle_bytes,
        w->remote_share, w->self_share, w->round_bytes, w->direct ? "direct" : "two-phase", w->durable_s);
    printf("Model: %.0f targets x %.3g B/s, stripe unit %.0f B, container over %.0f targets; metadata %.3g s "
           "per op, %.3g ops/s; %.0f ranks per node at %.3g B/s, client %.3g B/s, commit pass %.3g B/s, "
           "direct %.3g B/s, aggregation %.3g B/s, from other nodes %.3g B/s; commit messages %.3g s + "
           "%.3g s per rank (these six at CPU share %.3g)%s\n",
           m->targets, m->target_bw, m->stripe_unit, m->stripe_count, m->md_latency, m->md_rate,
           m->ranks_per_node, m->node_bw, m->client_bw, m->commit_bw, m->direct_bw, m->agg_bw, m->remote_bw,
           m->commit_latency, m->rank_cost, m->cpu_share,
           m->write_back ? "; write-back client (pass, then flush)" : "");
    printf("Assumes: members of the mean size everywhere; file per process on one target each, round-robin;\n"
           "the container in full-stripe writes (no lock contention), one aggregator per node, a round\n"
           "gathered then written while the next is gathered; metadata and data do not overlap; no caching,\n"
           "no other jobs.\n\n");
    printf("%9s %14s %12s %12s %14s %12s %12s %12s %12s %9s\n", "ranks", "per-process s", "metadata s",
           "data s", "container s", "control s", "gather s", "write s", "data s", "speed-up");
    double ns[4] = {1000, 10000, 100000, extra};
    for (int i = 0; i < 4; i++) {
        if (ns[i] <= 0)
            continue;
        double fm, fd;
        struct container_terms t;
        double f = fpp_time(m, w, ns[i], &fm, &fd), k = container_time(m, w, ns[i], &t);
        printf("%9.0f %14.6f %12.6f %12.6f %14.6f %12.6f %12.6f %12.6f %12.6f %8.2fx\n", ns[i], f, fm, fd, k,
               t.meta, t.gather, t.write, t.data, f / k);
    }
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
                                         {"agg-bw", required_argument, NULL, 'M'},
                                         {"client-bw", required_argument, NULL, 'F'},
                                         {"commit-bw", required_argument, NULL, 'P'},
                                         {"direct-bw", required_argument, NULL, 'D'},
                                         {"remote-bw", required_argument, NULL, 'E'},
                                         {"commit-latency", required_argument, NULL, 'H'},
                                         {"rank-cost", required_argument, NULL, 'K'},
                                         {"cpu-share", required_argument, NULL, 'S'},
                                         {"ranks", required_argument, NULL, 'N'},
                                         {"window", no_argument, NULL, 'w'},
                                         {"write-back", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct model m = {274, 5e12 / 274, 1048576, 72, 0.0005, 16 * 25000.0, 128, 25e9, 10e9,
                      0,   10e9,       0,       0,  0.001,  1e-6,         1,   0};
    double extra = 0;
    int c, window = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'w' || c == 'k') {
            *(c == 'w' ? &window : &m.write_back) = 1;
            continue;
        }
        char *end;
        double v = optarg ? strtod(optarg, &end) : 0;
        int may_be_zero = c == 'H' || c == 'K'; /* message costs: none is a model too */
        if (c == '?' || !optarg || *end || !(v > 0 || (may_be_zero && v == 0)) || !isfinite(v)) {
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
                    : c == 'M' ? &m.agg_bw
                    : c == 'F' ? &m.client_bw
                    : c == 'P' ? &m.commit_bw
                    : c == 'D' ? &m.direct_bw
                    : c == 'E' ? &m.remote_bw
                    : c == 'H' ? &m.commit_latency
                    : c == 'K' ? &m.rank_cost
                    : c == 'S' ? &m.cpu_share
                               : &extra;
        *p = v;
    }
    if (m.cpu_share > 1) {
        fprintf(stderr, "sluice-trace whatif: --cpu-share is a share of the time, at most 1, not '%g'\n",
                m.cpu_share);
        return 2;
    }
    if (m.client_bw <= 0)
        m.client_bw = m.node_bw;
    if (m.remote_bw <= 0)
        m.remote_bw = m.node_bw;
    if (m.direct_bw <= 0)
        m.direct_bw = m.commit_bw;
    apply_cpu_share(&m);
    if (optind >= argc) {
        fprintf(stderr, "sluice-trace whatif: no trace folder or file given\n");
        usage(stderr);
        return 2;
    }
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "whatif", stderr) != 0)
        return 1;
    struct whatif_measured w;
    whatif_measure(&set, &w);
    int status = (set.unreadable || set.incomplete) ? 1 : 0;
    if (w.members == 0) {
        fprintf(stderr,
                "sluice-trace whatif: no checkpoint version in the trace (COMMIT_BEGIN/COMMIT_MEMBER)\n");
        trace_set_free(&set);
        return 1;
    }
    if (window) {
        if (w.durable_s < 0) {
            fprintf(stderr,
                    "sluice-trace whatif: the last version never became durable (no COMMIT_DURABLE at "
                    "its home): no commit window\n");
            status = 1;
        } else
            whatif_print_window(&set, &w, stdout);
        trace_set_free(&set);
        return status;
    }
    print_model(&m, &w, extra);
    trace_set_free(&set);
    return status;
}
