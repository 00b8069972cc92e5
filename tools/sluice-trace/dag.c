/* SPDX-License-Identifier: MIT */
/* See dag.h. Nodes are rank 0's CL_DAG_NODE records (command id, the rank it ran on, its kind,
 * its start to end), grouped in one cluster per rank; edges are CL_DAG_EDGE (command, the
 * command it depends on, why: bits 1 wait list, 2 queue order, 4 read after write, 8 write
 * after read, 16 write after write). A dependency on a command the trace has no node for (not
 * retired when the file was written, or outside the window) is drawn as a dashed box. With an
 * .svg output, Graphviz's `dot` draws it. Rewrites are rank 0's CL_DCR records (operation, command,
 * source rank): a host write that collective replacement made part of a broadcast (`bcast`) or a
 * scatter, or a host read it made part of a gather, is drawn bold in its operation's colour under
 * an ellipse for its collective (the CL_DCR records of an operation after the CL_DIST_DATA record
 * of its direction are its commands), one that copy removal made a transfer from a serving rank
 * (`p2p`) bold green, each labelled with what replaced it. */
#include "dag.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/trace.h"
#include "traceset.h"

struct node {
    uint64_t id;
    int64_t rank;
    const char *kind;
    uint64_t dur_ns;
    bool error;
};

struct edge {
    uint64_t to, from, why;
};

/* The rewrites a CL_DCR record names. The collectives are rooted on rank 0 (an allgather runs
 * among the serving ranks), each announced by a CL_DIST_DATA record of direction `dir`; copy
 * removal (p2p) has none. */
enum op { OP_BCAST, OP_SCATTER, OP_GATHER, OP_ALLGATHER, OP_P2P, OP_OTHER, NOPS };

static const struct {
    const char *name, *noun, *what, *color;
    int dir;
} ops[NOPS] = {
    {"bcast", "broadcast", "write", "#7b3294", 2}, {"scatter", "scatter", "write", "#2166ac", 3},
    {"gather", "gather", "read", "#e66101", 4},    {"allgather", "allgather", "write", "#a6611a", 5},
    {"p2p", "transfer", "write", "#008837", -1},   {"?", "rewrite", "command", "#4d4d4d", -1},
};

/* A CL_DCR record: command `id` rewritten by `op`; group: its collective's number (from 1) among
 * those of its operation, 0 for p2p. */
struct rewrite {
    uint64_t id;
    enum op op;
    int64_t from;
    uint64_t group;
};

/* A collective rank 0 started (CL_DIST_DATA direction 2 to 5): its bytes, the number of
 * other ranks in it and the commands it replaced. */
struct coll {
    enum op op;
    uint64_t number, bytes, ranks, cmds;
};

static bool is_coll(enum op op)
{
    return op == OP_BCAST || op == OP_SCATTER || op == OP_GATHER || op == OP_ALLGATHER;
}

static int rewrite_by_id(const void *a, const void *b)
{
    const struct rewrite *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static void *grow_array(void *p, size_t *cap, size_t need, size_t size)
{
    return trace_grow(p, cap, need, size, "dag");
}

static int by_id(const void *a, const void *b)
{
    const struct node *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static const char *why_text(uint64_t why, char *buf, size_t len)
{
    static const char *const names[] = {"wait list", "queue order", "RAW", "WAR", "WAW"};
    buf[0] = '\0';
    size_t used = 0;
    for (int b = 0; b < 5; b++)
        if (why & (1u << b))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[b]);
    return buf;
}

/* A DOT string: quotes and backslashes escaped, a newline as DOT's centred line break, other
 * control bytes dropped. */
static void dot_string(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(o, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", o);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, o);
    }
    fputc('"', o);
}

/* n: sorted by rank, then id (clusters); byid: the same nodes by id (edge ends). */
static void write_dot(FILE *o, const struct node *n, const struct node *byid, size_t nn, const struct edge *e,
                      size_t ne, const struct rewrite *rw, size_t nrw, const struct coll *co, size_t nco,
                      uint64_t lo, uint64_t hi, const char *title)
{
    static const char *const colors[] = {"#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9"};
    fprintf(o, "digraph sluice_dag {\n  label=");
    dot_string(o, title);
    fprintf(o,
            ";\n  labelloc=t;\n  rankdir=LR;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n");
    for (size_t i = 0; i < nn;) {
        int64_t rank = n[i].rank;
        fprintf(o, "  subgraph cluster_rank_%" PRId64 " {\n    label=\"ran on rank %" PRId64 "\";\n",
                rank < 0 ? -rank + 1000000 : rank, rank);
        for (size_t j = 0; j < nn; j++) {
            if (n[j].rank != rank || n[j].id < lo || n[j].id > hi)
                continue;
            struct rewrite key = {.id = n[j].id};
            const struct rewrite *r = nrw ? bsearch(&key, rw, nrw, sizeof *rw, rewrite_by_id) : NULL;
            char label[256], how[128] = "";
            if (r && r->op == OP_ALLGATHER)
                snprintf(how, sizeof how,
                         "\nhost write replaced by\nallgather %" PRIu64 " among serving ranks", r->group);
            else if (r && is_coll(r->op))
                snprintf(how, sizeof how, "\nhost %s replaced by\n%s %" PRIu64 " %s rank 0", ops[r->op].what,
                         ops[r->op].noun, r->group, r->op == OP_GATHER ? "to" : "from");
            else if (r && r->op == OP_P2P)
                snprintf(how, sizeof how,
                         "\nhost write replaced by\ntransfer from rank %" PRId64 " (copy removal)", r->from);
            else if (r)
                snprintf(how, sizeof how, "\nrewritten (%s) from rank %" PRId64, ops[r->op].name, r->from);
            snprintf(label, sizeof label, "#%" PRIu64 " %s\n%.1f us%s%s", n[j].id, n[j].kind,
                     (double)n[j].dur_ns / 1e3, how, n[j].error ? "\nfailed" : "");
            fprintf(o, "    n%" PRIu64 " [label=", n[j].id);
            dot_string(o, label);
            fprintf(o, ", fillcolor=\"%s\"", colors[(rank < 0 ? 5 : rank) % 6]);
            if (n[j].error)
                fprintf(o, ", color=red");
            else if (r)
                fprintf(o, ", color=\"%s\", penwidth=3", ops[r->op].color);
            fprintf(o, "];\n");
        }
        fprintf(o, "  }\n");
        while (i < nn && n[i].rank == rank)
            i++;
    }
    /* Each collective: an ellipse with an arrow to every command it replaced (in the window). */
    for (size_t g = 0; g < nco; g++) {
        const struct coll *c = &co[g];
        bool any = false;
        for (size_t k = 0; k < nrw; k++)
            any |= rw[k].op == c->op && rw[k].group == c->number && rw[k].id >= lo && rw[k].id <= hi;
        if (!any)
            continue;
        char label[160];
        if (c->op == OP_ALLGATHER)
            snprintf(label, sizeof label,
                     "allgather %" PRIu64 " among serving ranks\n(collective replacement)\n%" PRIu64
                     " bytes to each of %" PRIu64 " ranks, %" PRIu64 " writes",
                     c->number, c->bytes, c->ranks, c->cmds);
        else
            snprintf(label, sizeof label,
                     "%s %" PRIu64 " %s rank 0\n(collective replacement)\n%" PRIu64 " bytes %s %" PRIu64
                     " ranks, %" PRIu64 " %ss",
                     ops[c->op].noun, c->number, c->op == OP_GATHER ? "to" : "from", c->bytes,
                     c->op == OP_GATHER ? "from" : "to", c->ranks, c->cmds, ops[c->op].what);
        fprintf(o, "  %s%" PRIu64 " [label=", ops[c->op].name, c->number);
        dot_string(o, label);
        fprintf(o, ", shape=ellipse, fillcolor=white, color=\"%s\", penwidth=2];\n", ops[c->op].color);
        for (size_t k = 0; k < nrw; k++)
            if (rw[k].op == c->op && rw[k].group == c->number && rw[k].id >= lo && rw[k].id <= hi)
                fprintf(o,
                        "  %s%" PRIu64 " -> n%" PRIu64 " [label=\"replaces\", color=\"%s\", style=bold];\n",
                        ops[c->op].name, c->number, rw[k].id, ops[c->op].color);
    }
    for (size_t k = 0; k < ne; k++) {
        if (e[k].to < lo || e[k].to > hi)
            continue;
        struct node key = {.id = e[k].from};
        const struct node *from = byid ? bsearch(&key, byid, nn, sizeof *byid, by_id) : NULL;
        if (!from || e[k].from < lo || e[k].from > hi)
            fprintf(o, "  n%" PRIu64 " [label=\"#%" PRIu64 "\\n%s\", style=dashed];\n", e[k].from, e[k].from,
                    from ? "outside the window" : "not recorded");
        char why[64];
        fprintf(o, "  n%" PRIu64 " -> n%" PRIu64 " [label=\"%s\"%s];\n", e[k].from, e[k].to,
                why_text(e[k].why, why, sizeof why), e[k].why & 3 ? ", style=dashed" : "");
    }
    fprintf(o, "}\n");
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sluice-trace dag [--from ID] [--to ID] OUT.dot|OUT.svg DIR|FILE...\n"
                "  The distributed OpenCL command DAG (rank 0's records): a box per command in a cluster\n"
                "  per rank it ran on, arrows for dependencies labelled by why (data hazards solid,\n"
                "  wait lists and queue order dashed); host writes and reads that collective replacement\n"
                "  (broadcast, scatter, gather) or copy removal rewrote are bold and say what replaced\n"
                "  them. --from/--to keep a window of command ids.\n"
                "  .svg needs Graphviz's dot (Debian: graphviz).\n");
}

static int parse_id(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*s == '\0' || *end || errno)
        return -1;
    *v = x;
    return 0;
}

static int by_rank_id(const void *a, const void *b)
{
    const struct node *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return by_id(a, b);
}

/* What dag reads from a trace set: the DAG's nodes and edges, the rewrites, the collectives. */
struct dag_read {
    struct node *n;
    struct edge *e;
    struct rewrite *rw;
    struct coll *co;
    size_t nn, ne, cn, ce, nrw, crw, nco, cco;
    uint64_t made[NOPS], done[NOPS]; /* collectives of each operation; commands replaced */
    size_t last[NOPS];               /* 1 + the index in co of each operation's latest */
};

static void read_event(struct dag_read *d, const struct sluice_trace_file *f,
                       const struct sluice_tf_event *ev, const int k[4])
{
    if ((int)ev->kind == k[3] && ev->c >= 2 && ev->c <= 5) { /* CL_DIST_DATA of a collective */
        enum op op = ev->c == 2 ? OP_BCAST : ev->c == 3 ? OP_SCATTER : ev->c == 4 ? OP_GATHER : OP_ALLGATHER;
        d->co = grow_array(d->co, &d->cco, d->nco + 1, sizeof *d->co);
        d->co[d->nco++] = (struct coll){op, ++d->made[op], ev->b, ev->a, 0};
        d->last[op] = d->nco;
    } else if ((int)ev->kind == k[2]) { /* CL_DCR */
        const char *name = sluice_trace_file_string(f, ev->a);
        enum op op = OP_BCAST;
        while (op < OP_OTHER && !(name && strcmp(name, ops[op].name) == 0))
            op++;
        /* a collective's commands follow its CL_DIST_DATA record on rank 0 */
        uint64_t group = is_coll(op) && d->last[op] ? d->co[d->last[op] - 1].number : 0;
        if (group)
            d->co[d->last[op] - 1].cmds++;
        d->done[op]++;
        d->rw = grow_array(d->rw, &d->crw, d->nrw + 1, sizeof *d->rw);
        d->rw[d->nrw++] = (struct rewrite){ev->b, op, (int64_t)ev->c, group};
    } else if ((int)ev->kind == k[0]) { /* CL_DAG_NODE */
        d->n = grow_array(d->n, &d->cn, d->nn + 1, sizeof *d->n);
        const char *kind = sluice_trace_file_string(f, ev->c);
        d->n[d->nn++] = (struct node){ev->a, (int64_t)ev->b, kind ? kind : "?", ev->dur_ns,
                                      (ev->flags & SLUICE_EVF_ERROR) != 0};
    } else if ((int)ev->kind == k[1]) { /* CL_DAG_EDGE */
        d->e = grow_array(d->e, &d->ce, d->ne + 1, sizeof *d->e);
        d->e[d->ne++] = (struct edge){ev->a, ev->b, ev->c};
    }
}

static void read_set(struct dag_read *d, const struct trace_set *set)
{
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        const int k[4] = {trace_kind_number(f, "CL_DAG_NODE"), trace_kind_number(f, "CL_DAG_EDGE"),
                          trace_kind_number(f, "CL_DCR"), trace_kind_number(f, "CL_DIST_DATA")};
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t j = 0; j < f->threads[t].info.events; j++)
                read_event(d, f, &f->threads[t].events[j], k);
    }
}

static void make_title(const struct dag_read *d, const char *what, char *title, size_t len)
{
    const uint64_t *made = d->made, *done = d->done;
    int used = snprintf(title, len,
                        "%s: %zu commands, %zu dependencies; rewritten: %" PRIu64 " writes into %" PRIu64
                        " broadcast%s, %" PRIu64 " writes into %" PRIu64 " scatter%s, %" PRIu64
                        " reads into %" PRIu64 " gather%s, %" PRIu64 " writes into %" PRIu64
                        " allgather%s (collective replacement), %" PRIu64 " by copy removal",
                        what, d->nn, d->ne, done[OP_BCAST], made[OP_BCAST], made[OP_BCAST] == 1 ? "" : "s",
                        done[OP_SCATTER], made[OP_SCATTER], made[OP_SCATTER] == 1 ? "" : "s", done[OP_GATHER],
                        made[OP_GATHER], made[OP_GATHER] == 1 ? "" : "s", done[OP_ALLGATHER],
                        made[OP_ALLGATHER], made[OP_ALLGATHER] == 1 ? "" : "s", done[OP_P2P]);
    if (done[OP_OTHER] && used > 0 && (size_t)used < len)
        snprintf(title + used, len - (size_t)used, ", %" PRIu64 " by an unknown rewrite", done[OP_OTHER]);
}

/* The output stream: a file, stdout for "-", or for an .svg a pipe into Graphviz's dot, which
 * writes the SVG itself (*pid is then dot's). */
static FILE *open_out(const char *out, pid_t *pid)
{
    size_t ol = strlen(out);
    *pid = -1;
    if (!(ol > 4 && strcmp(out + ol - 4, ".svg") == 0))
        return strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    int fds[2] = {-1, -1};
    if (pipe(fds) == 0 && (*pid = fork()) == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        execlp("dot", "dot", "-Tsvg", "-o", out, (char *)NULL);
        fprintf(stderr, "sluice-trace dag: an .svg needs Graphviz's dot (Debian: graphviz): %s\n",
                strerror(errno));
        _exit(127);
    }
    if (*pid <= 0)
        return NULL;
    close(fds[0]);
    return fdopen(fds[1], "w");
}

static int write_graph(struct dag_read *d, const char *out, const char *title, uint64_t lo, uint64_t hi)
{
    int status = 0;
    pid_t pid;
    FILE *o = open_out(out, &pid);
    if (!o) {
        perror(out);
        status = 1;
    } else {
        /* Clusters want the nodes of one rank together; edges want lookups by id. */
        qsort(d->n, d->nn, sizeof *d->n, by_rank_id);
        struct node *byid = malloc(sizeof *d->n * d->nn);
        if (byid) {
            memcpy(byid, d->n, sizeof *d->n * d->nn);
            qsort(byid, d->nn, sizeof *d->n, by_id);
        }
        if (d->nrw > 1)
            qsort(d->rw, d->nrw, sizeof *d->rw, rewrite_by_id);
        write_dot(o, d->n, byid, d->nn, d->e, d->ne, d->rw, d->nrw, d->co, d->nco, lo, hi, title);
        free(byid);
        if (o != stdout && fclose(o) != 0)
            status = 1;
    }
    if (pid > 0) {
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            status = 1;
    }
    return status;
}

int dag_main(int argc, char **argv)
{
    static const struct option opts[] = {{"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    uint64_t lo = 0, hi = UINT64_MAX;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+f:t:h", opts, NULL)) != -1) {
        if (c != 'f' && c != 't')
            return trace_opt_help(c, usage);
        if (parse_id(optarg, c == 'f' ? &lo : &hi) != 0) {
            fprintf(stderr, "sluice-trace dag: --%s wants a command id, not '%s'\n", c == 'f' ? "from" : "to",
                    optarg);
            return 2;
        }
    }
    if (trace_args_missing(argc - optind, 2, "dag", "wants an output and a trace folder or file", usage))
        return 2;
    const char *out = argv[optind++];
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "dag", stderr) != 0)
        return 1;
    struct dag_read d = {0};
    read_set(&d, &set);
    int status = 0;
    if (d.nn == 0) {
        fprintf(stderr, "sluice-trace dag: no DAG nodes in the trace (a run with SLUICE_OPENCL=distributed "
                        "records them on rank 0)\n");
        status = 1;
    } else {
        char title[768];
        make_title(&d, argv[optind], title, sizeof title);
        status = write_graph(&d, out, title, lo, hi);
    }
    free(d.n);
    free(d.e);
    free(d.rw);
    free(d.co);
    if (set.unreadable || set.incomplete)
        status = 1;
    trace_set_free(&set);
    return status;
}
