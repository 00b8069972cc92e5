/* SPDX-License-Identifier: MIT */
/* Export to the trace-event JSON format that Perfetto (ui.perfetto.dev) and chrome://tracing
 * open: one process per rank (JSON pid = rank + 1, named "rank R"), one track per thread named
 * by its role (roles.h), one track per OpenCL device for its commands and one for its transfers,
 * one for checkpoint commits in flight and one per rank for the distributed DAG's commands.
 * Every slice nests on its track: a slice that would overlap another one's end (a commit that
 * spans the progress thread's sleeps and wakes) goes to an extra lane of the same track.
 * Flow arrows join the start of a message's send to the end of its receive (both recorded) and
 * the end of a DAG node to the start of each node that depends on it, so none points back. Times come from
 * timeline.h, exactly (integer nanoseconds printed as microseconds with three decimals). */
#include "perfetto.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "labels.h"
#include "messages.h"
#include "roles.h"
#include "timeline.h"
#include "trace/kinds.h"
#include "traceset.h"

#define MAX_LANES 16
#define MAX_DUR (INT64_MAX / 4) /* a hostile duration cannot overflow ts + dur */
#define SYNTH_TID 0x40000000    /* tids of tracks that are not threads (real tids are below 2^22) */

enum track_kind { TR_THREAD, TR_DEVICE, TR_TRANSFERS, TR_COMMITS, TR_DAG };

struct track {
    const struct sluice_trace_file *f;
    enum track_kind kind;
    uint64_t key; /* thread index, device handle, DAG rank */
    int pid;
    int tid[MAX_LANES]; /* per lane; [0] is the thread's own tid for thread tracks */
    int nlanes;
    int sort;
    char name[512];
    int64_t *stack[MAX_LANES]; /* open slices' ends while lanes are assigned */
    size_t depth[MAX_LANES], cap[MAX_LANES];
};

struct item {
    size_t track;
    int lane;
    uint32_t part; /* output file (--max-events) */
    bool slice;
    int64_t ts, dur; /* ns on the shared axis */
    const struct sluice_trace_file *f;
    const struct sluice_trace_rthread *t;
    uint64_t e; /* index of the event in its thread */
};

struct flow {
    size_t from, to;
    const char *name;
    bool from_end, to_end; /* an end at its slice's last nanosecond, not at its start */
    bool causal;           /* `to` cannot begin before `from` (a DAG dependency): see put_flows */
};

struct exporter {
    const struct trace_set *set;
    struct timeline tl;
    struct track *tracks;
    size_t ntracks;
    struct item *items;
    size_t nitems;
    struct flow *flows;
    size_t nflows;
    int next_synth;
    size_t **base; /* [file][thread]: index of the thread's first event in items */
    uint64_t unmatched_messages;
    uint64_t lane_moves; /* slices moved to an extra lane to keep nesting */
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    return trace_grow(p, cap, need, size, "perfetto");
}

static const struct sluice_tf_event *ev_of(const struct item *it)
{
    return &it->t->events[it->e];
}

static const char *kind_name(const struct sluice_trace_file *f, unsigned kind)
{
    const char *k = sluice_trace_file_kind(f, kind);
    return k ? k : "?";
}

/* True when the file's kind `kind` is the kind of the same name in our events.def. */
static bool known_kind(const struct sluice_trace_file *f, unsigned kind)
{
    const char *k = sluice_trace_file_kind(f, kind);
    return k && kind < SLUICE_EV_COUNT && strcmp(k, sluice_kinds[kind].name) == 0;
}

static bool is_kind(const struct sluice_trace_file *f, const struct sluice_tf_event *ev, const char *name)
{
    return strcmp(kind_name(f, ev->kind), name) == 0;
}

static const char *device_name(const struct sluice_trace_file *f, uint64_t handle)
{
    int k = trace_kind_number(f, "CL_DEVICE");
    for (size_t t = 0; k >= 0 && t < f->nthreads; t++)
        for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
            const struct sluice_tf_event *ev = &f->threads[t].events[e];
            if (ev->kind == (unsigned)k && ev->a == handle) {
                const char *s = sluice_trace_file_string(f, ev->b);
                if (s)
                    return s;
            }
        }
    return NULL;
}

static size_t rank_file_position(const struct trace_set *set, const struct sluice_trace_file *f)
{
    for (size_t r = 0; r < set->nranks; r++)
        for (size_t i = 0; i < set->ranks[r].nfiles; i++)
            if (set->ranks[r].files[i] == f)
                return i;
    return 0;
}

static size_t track_of(struct exporter *x, const struct sluice_trace_file *f,
                       const struct sluice_trace_rthread *t, enum track_kind kind, uint64_t key)
{
    for (size_t i = 0; i < x->ntracks; i++)
        if (x->tracks[i].f == f && x->tracks[i].kind == kind && x->tracks[i].key == key)
            return i;
    static size_t cap;
    x->tracks = grow(x->tracks, &cap, x->ntracks + 1, sizeof *x->tracks);
    struct track *tr = &x->tracks[x->ntracks];
    memset(tr, 0, sizeof *tr);
    tr->f = f;
    tr->kind = kind;
    tr->key = key;
    tr->pid = f->header.rank + 1;
    tr->nlanes = 1;
    char prefix[64] = "";
    if (rank_file_position(x->set, f) > 0)
        snprintf(prefix, sizeof prefix, "pid %d: ", f->header.pid);
    char role[64];
    const char *dev;
    switch (kind) {
    case TR_THREAD:
        tr->tid[0] = t->info.tid;
        tr->sort = (int)t->info.index;
        snprintf(tr->name, sizeof tr->name, "%s%s", prefix, role_of_thread(f, t, role, sizeof role));
        break;
    case TR_DEVICE:
    case TR_TRANSFERS:
        dev = device_name(f, key);
        dev = dev ? dev : "?";
        {
            /* A driver's name can be longer than the label: cut and marked, the kind kept. */
            const char *what = kind == TR_TRANSFERS ? ": transfers" : ": commands";
            int room = (int)(sizeof tr->name - strlen(prefix) - strlen(what)) - 16;
            bool cut = strlen(dev) > (size_t)room;
            snprintf(tr->name, sizeof tr->name, "%sdevice %.*s%s%s", prefix, cut ? room - 3 : room, dev,
                     cut ? "..." : "", what);
        }
        tr->sort = 1000 + (int)x->ntracks;
        break;
    case TR_COMMITS:
        snprintf(tr->name, sizeof tr->name, "%scheckpoint commits (begin to durable)", prefix);
        tr->sort = 900;
        break;
    case TR_DAG:
        snprintf(tr->name, sizeof tr->name, "%sDAG: commands run on rank %" PRId64, prefix, (int64_t)key);
        tr->sort = 2000 + (int)key;
        break;
    }
    if (kind != TR_THREAD)
        tr->tid[0] = x->next_synth++;
    return x->ntracks++;
}

/* The track an event belongs on. */
static size_t place(struct exporter *x, const struct sluice_trace_file *f,
                    const struct sluice_trace_rthread *t, const struct sluice_tf_event *ev)
{
    if (is_kind(f, ev, "CL_DEVICE_EXEC"))
        return track_of(x, f, t, TR_DEVICE, ev->b);
    if (is_kind(f, ev, "CL_TRANSFER"))
        return track_of(x, f, t, TR_TRANSFERS, ev->c);
    if (is_kind(f, ev, "COMMIT_DURABLE"))
        return track_of(x, f, t, TR_COMMITS, 0);
    if (is_kind(f, ev, "CL_DAG_NODE"))
        return track_of(x, f, t, TR_DAG, ev->b);
    return track_of(x, f, t, TR_THREAD, t->info.index);
}

static int64_t clamp(int64_t ns)
{
    return ns > MAX_DUR ? MAX_DUR : ns < -MAX_DUR ? -MAX_DUR : ns;
}

static void collect(struct exporter *x)
{
    static size_t cap;
    x->base = calloc(x->set->nfiles ? x->set->nfiles : 1, sizeof *x->base);
    if (!x->base) {
        fprintf(stderr, "sluice-trace perfetto: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < x->set->nfiles; i++) {
        const struct sluice_trace_file *f = x->set->files[i];
        x->base[i] = calloc(f->nthreads ? f->nthreads : 1, sizeof **x->base);
        if (!x->base[i]) {
            fprintf(stderr, "sluice-trace perfetto: out of memory\n");
            exit(1);
        }
        for (size_t t = 0; t < f->nthreads; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            x->base[i][t] = x->nitems;
            if (r->info.index == SLUICE_TF_NO_THREAD)
                continue;
            track_of(x, f, r, TR_THREAD, r->info.index); /* every thread gets its named track */
            for (uint64_t e = 0; e < r->info.events; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                x->items = grow(x->items, &cap, x->nitems + 1, sizeof *x->items);
                x->items[x->nitems++] = (struct item){
                    .track = place(x, f, r, ev),
                    .slice = ev->dur_ns > 0,
                    .ts = clamp(timeline_ns(&x->tl, f, ev->t_ns)),
                    .dur = ev->dur_ns > MAX_DUR ? MAX_DUR : (int64_t)ev->dur_ns,
                    .f = f,
                    .t = r,
                    .e = e,
                };
            }
        }
    }
}

static void add_flow(struct exporter *x, size_t from, size_t to, const char *name, bool from_end, bool to_end)
{
    static size_t cap;
    x->flows = grow(x->flows, &cap, x->nflows + 1, sizeof *x->flows);
    x->flows[x->nflows++] = (struct flow){from, to, name, from_end, to_end, false};
    /* Flow ends bind to slices: a zero-length record becomes a 1 ns slice. */
    for (int k = 0; k < 2; k++) {
        struct item *it = &x->items[k ? to : from];
        if (!it->slice) {
            it->slice = true;
            it->dur = 1;
        }
    }
}

static size_t item_of(const struct exporter *x, const struct msg_end *end)
{
    size_t i = 0;
    while (x->set->files[i] != end->f)
        i++;
    return x->base[i][end->t - end->f->threads] + end->e;
}

/* A message recorded at both ends becomes an arrow from the start of its send to the end of its
 * receive (a blocking MPI_Recv's slice starts before the message was sent). */
static void match_messages(struct exporter *x)
{
    struct message *m;
    size_t n;
    if (messages_collect(x->set, &x->tl, &m, &n) != 0) {
        fprintf(stderr, "sluice-trace perfetto: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        if (m[i].send.f && m[i].recv.f)
            add_flow(x, item_of(x, &m[i].send), item_of(x, &m[i].recv), msg_purpose_name(m[i].purpose), false,
                     true);
        else
            x->unmatched_messages++;
    }
    free(m);
}

struct node_ref {
    const struct sluice_trace_file *f;
    uint64_t id;
    size_t item;
};

static int by_node(const void *a, const void *b)
{
    const struct node_ref *p = a, *q = b;
    if (p->f != q->f)
        return p->f < q->f ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* CL_DAG_EDGE (command, depends on) becomes an arrow from the end of the dependency's node (its
 * last nanosecond, inside its slice) to the start of the node. */
static void match_dag(struct exporter *x)
{
    struct node_ref *nodes = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < x->nitems; i++)
        if (is_kind(x->items[i].f, ev_of(&x->items[i]), "CL_DAG_NODE")) {
            nodes = grow(nodes, &cap, n + 1, sizeof *nodes);
            nodes[n++] = (struct node_ref){x->items[i].f, ev_of(&x->items[i])->a, i};
        }
    if (n == 0)
        return;
    qsort(nodes, n, sizeof *nodes, by_node);
    for (size_t i = 0; i < x->nitems; i++) {
        const struct item *it = &x->items[i];
        if (!is_kind(it->f, ev_of(it), "CL_DAG_EDGE"))
            continue;
        struct node_ref k1 = {it->f, ev_of(it)->a, 0}, k2 = {it->f, ev_of(it)->b, 0};
        struct node_ref *to = bsearch(&k1, nodes, n, sizeof *nodes, by_node);
        struct node_ref *from = bsearch(&k2, nodes, n, sizeof *nodes, by_node);
        if (to && from) {
            add_flow(x, from->item, to->item, "DAG dependency", true, false);
            x->flows[x->nflows - 1].causal = true;
        }
    }
    free(nodes);
}

static int by_track_time(const void *a, const void *b)
{
    const struct item *p = a, *q = b;
    if (p->track != q->track)
        return p->track < q->track ? -1 : 1;
    if (p->ts != q->ts)
        return p->ts < q->ts ? -1 : 1;
    if (p->dur != q->dur) /* the longer one first: it encloses */
        return p->dur > q->dur ? -1 : 1;
    if (p->f != q->f)
        return p->f < q->f ? -1 : 1;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return (p->e > q->e) - (p->e < q->e);
}

/* Each slice goes to the first lane of its track where it nests inside the open slices. */
static void assign_lanes(struct exporter *x)
{
    for (size_t i = 0; i < x->nitems; i++) {
        struct item *it = &x->items[i];
        struct track *tr = &x->tracks[it->track];
        if (!it->slice)
            continue;
        int64_t end = it->ts + it->dur;
        int lane = 0;
        for (; lane < MAX_LANES; lane++) {
            while (tr->depth[lane] && tr->stack[lane][tr->depth[lane] - 1] <= it->ts)
                tr->depth[lane]--;
            if (tr->depth[lane] == 0 || tr->stack[lane][tr->depth[lane] - 1] >= end)
                break;
        }
        if (lane == MAX_LANES) { /* pathological: show it as an instant rather than break nesting */
            it->slice = false;
            continue;
        }
        tr->stack[lane] = grow(tr->stack[lane], &tr->cap[lane], tr->depth[lane] + 1, sizeof(int64_t));
        tr->stack[lane][tr->depth[lane]++] = end;
        it->lane = lane;
        if (lane > 0)
            x->lane_moves++;
        while (tr->nlanes <= lane)
            tr->tid[tr->nlanes++] = x->next_synth++;
    }
}

static void put_args(FILE *o, const struct item *it)
{
    const struct sluice_trace_file *f = it->f;
    const struct sluice_tf_event *ev = ev_of(it);
    bool known = known_kind(f, ev->kind);
    const uint64_t words[3] = {ev->a, ev->b, ev->c};
    fputc('{', o);
    bool first = true;
    for (int w = 0; w < 3; w++) {
        const char *meaning = known ? sluice_kinds[ev->kind].meaning[w] : (const char *[]){"a", "b", "c"}[w];
        if (meaning[0] == '\0')
            continue;
        char label[128], value[128];
        label_of(meaning, label, sizeof label);
        fputs(first ? "" : ",", o);
        first = false;
        json_string(o, label);
        fputc(':', o);
        const char *s =
            known && sluice_kind_word_is_string(ev->kind, w) ? sluice_trace_file_string(f, words[w]) : NULL;
        const char *en = known ? label_enum_value(meaning, words[w], value, sizeof value) : NULL;
        if (s)
            json_string(o, s);
        else if (en)
            json_string(o, en);
        else if ((int64_t)words[w] < 0 && (int64_t)words[w] >= -65536)
            fprintf(o, "%" PRId64, (int64_t)words[w]);
        else
            fprintf(o, "%" PRIu64, words[w]);
    }
    if (is_kind(f, ev, "CL_CALL")) {
        const char *origin = cl_origin_text(cl_call_origin(f, it->t, it->e));
        if (origin) {
            fputs(first ? "" : ",", o);
            first = false;
            fputs("\"origin\":", o);
            json_string(o, origin);
        }
    }
    if (it->dur && !ev->dur_ns) {
        fprintf(o, "%s\"note\":\"an instant, drawn 1 ns long to carry an arrow\"", first ? "" : ",");
        first = false;
    }
    if (ev->flags & SLUICE_EVF_ERROR)
        fprintf(o, "%s\"error\":true", first ? "" : ",");
    fputc('}', o);
}

/* Calls and enqueues are named by their function; other events by their kind. */
static const char *item_name(const struct item *it)
{
    const struct sluice_tf_event *ev = ev_of(it);
    if (is_kind(it->f, ev, "CL_CALL") || is_kind(it->f, ev, "CL_ENQUEUE")) {
        const char *fn = sluice_trace_file_string(it->f, ev->a);
        if (fn)
            return fn;
    }
    return kind_name(it->f, ev->kind);
}

static const char *item_cat(const struct item *it)
{
    unsigned k = ev_of(it)->kind;
    return known_kind(it->f, k) ? sluice_kinds[k].category : "sluice";
}

static void put_item(FILE *o, const struct exporter *x, const struct item *it)
{
    const struct track *tr = &x->tracks[it->track];
    fputs(",\n{\"name\":", o);
    json_string(o, item_name(it));
    fputs(",\"cat\":", o);
    json_string(o, item_cat(it));
    if (it->slice) {
        fputs(",\"ph\":\"X\",\"ts\":", o);
        json_us(o, it->ts);
        fputs(",\"dur\":", o);
        json_us(o, it->dur);
    } else {
        fputs(",\"ph\":\"i\",\"s\":\"t\",\"ts\":", o);
        json_us(o, it->ts);
    }
    fprintf(o, ",\"pid\":%d,\"tid\":%d,\"args\":", tr->pid, tr->tid[it->lane]);
    put_args(o, it);
    fputc('}', o);
}

static void put_meta(FILE *o, int pid, int tid, const char *what, const char *key, const char *value, int num)
{
    fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d", what, pid);
    if (tid >= 0)
        fprintf(o, ",\"tid\":%d", tid);
    fprintf(o, ",\"args\":{\"%s\":", key);
    if (value)
        json_string(o, value);
    else
        fprintf(o, "%d", num);
    fputs("}}", o);
}

/* Perfetto lists processes by their sort index: the ranks of one host together (hosts in the
 * order of their lowest rank, rank 0's first), by rank within a host, so that a job placed round
 * robin still shows node by node. The host leads each rank's labels. hostno gets each rank's
 * host number. */
static void number_hosts(const struct trace_set *set, int *hostno)
{
    int nhosts = 0;
    for (size_t r = 0; r < set->nranks; r++) {
        const char *h = set->ranks[r].files[0]->header.hostname;
        size_t j = 0;
        while (j < r && strcmp(set->ranks[j].files[0]->header.hostname, h) != 0)
            j++;
        hostno[r] = j < r ? hostno[j] : nhosts++;
    }
}

static void put_processes(FILE *o, const struct exporter *x)
{
    const struct trace_set *set = x->set;
    int *hostno = calloc(set->nranks ? set->nranks : 1, sizeof *hostno);
    if (hostno)
        number_hosts(set, hostno);
    int stride = 1; /* above every rank number (a set may lack some ranks) */
    for (size_t r = 0; r < set->nranks; r++)
        if (set->ranks[r].rank >= stride)
            stride = set->ranks[r].rank + 1;
    for (size_t r = 0; r < set->nranks; r++) {
        const struct trace_rank *rk = &set->ranks[r];
        const struct sluice_tf_header *h = &rk->files[0]->header;
        char name[64], labels[1024];
        snprintf(name, sizeof name, "rank %d", rk->rank);
        size_t used = (size_t)snprintf(labels, sizeof labels, "%s", h->hostname);
        for (size_t i = 0; i < rk->nfiles && used < sizeof labels; i++) {
            const char *exe = strrchr(rk->files[i]->header.exe, '/');
            used += (size_t)snprintf(labels + used, sizeof labels - used, ", pid %d %s",
                                     rk->files[i]->header.pid, exe ? exe + 1 : rk->files[i]->header.exe);
        }
        fprintf(o, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", r ? ",\n" : "",
                rk->rank + 1);
        json_string(o, name);
        fputs("}}", o);
        put_meta(o, rk->rank + 1, -1, "process_labels", "labels", labels, 0);
        put_meta(o, rk->rank + 1, -1, "process_sort_index", "sort_index", NULL,
                 (hostno ? hostno[r] * stride : 0) + rk->rank);
    }
    free(hostno);
    for (size_t i = 0; i < x->ntracks; i++) {
        const struct track *tr = &x->tracks[i];
        for (int l = 0; l < tr->nlanes; l++) {
            char name[sizeof tr->name + 32];
            if (l)
                snprintf(name, sizeof name, "%s (overlapping %d)", tr->name, l);
            else
                snprintf(name, sizeof name, "%s", tr->name);
            put_meta(o, tr->pid, tr->tid[l], "thread_name", "name", name, 0);
            put_meta(o, tr->pid, tr->tid[l], "thread_sort_index", "sort_index", NULL,
                     tr->sort * MAX_LANES + l);
        }
    }
}

static void put_flows(FILE *o, const struct exporter *x, uint32_t part)
{
    for (size_t i = 0; i < x->nflows; i++) {
        const struct flow *fl = &x->flows[i];
        if (x->items[fl->from].part != part || x->items[fl->to].part != part)
            continue; /* counted in the metadata as crossing files */
        int64_t at[2];
        for (int k = 0; k < 2; k++) {
            const struct item *it = &x->items[k ? fl->to : fl->from];
            at[k] = (k ? fl->to_end : fl->from_end) ? it->ts + it->dur - 1 : it->ts;
        }
        /* A DAG node's times on other ranks' devices are mapped onto rank 0's clock with an
         * error of a few microseconds (DISTRIBUTED.md, "Profiling clocks"): a node may then seem
         * to start before the end of one it waited for (1.5-4.8 us seen). Its arrow lands where
         * it cannot be wrong, at that end, inside the node's slice. */
        const struct item *dst = &x->items[fl->to];
        if (fl->causal && at[1] < at[0] && at[0] <= dst->ts + dst->dur - 1)
            at[1] = at[0];
        for (int k = 0; k < 2; k++) {
            const struct item *it = &x->items[k ? fl->to : fl->from];
            const struct track *tr = &x->tracks[it->track];
            fprintf(o, ",\n{\"ph\":\"%s\",%s\"id\":%zu,\"name\":", k ? "f" : "s", k ? "\"bp\":\"e\"," : "",
                    i + 1);
            json_string(o, fl->name);
            fputs(",\"cat\":\"flow\",\"ts\":", o);
            json_us(o, at[k]);
            fprintf(o, ",\"pid\":%d,\"tid\":%d}", tr->pid, tr->tid[it->lane]);
        }
    }
}

/* Counters: bytes staged by the capture (sizes at close, summed) and the two-phase shuffle
 * buffer's peak, per rank. */
static void put_counters(FILE *o, const struct exporter *x, int64_t from, int64_t to)
{
    for (size_t i = 0; i < x->set->nfiles; i++) {
        const struct sluice_trace_file *f = x->set->files[i];
        uint64_t staged = 0;
        for (size_t t = 0; t < f->nthreads; t++)
            for (uint64_t e = 0; e < f->threads[t].info.events; e++) {
                const struct sluice_tf_event *ev = &f->threads[t].events[e];
                const char *name = NULL;
                uint64_t v = 0;
                if (is_kind(f, ev, "CKPT_CLOSE")) {
                    staged += ev->b;
                    name = "staged checkpoint bytes";
                    v = staged;
                } else if (is_kind(f, ev, "COMMIT_MEMORY")) {
                    name = "shuffle buffer peak bytes";
                    v = ev->a;
                }
                int64_t ts = clamp(timeline_ns(&x->tl, f, ev->t_ns));
                if (!name || ts < from || ts >= to)
                    continue;
                fprintf(o, ",\n{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%d,\"ts\":", name, f->header.rank + 1);
                json_us(o, ts);
                fprintf(o, ",\"args\":{\"bytes\":%" PRIu64 "}}", v);
            }
    }
}

static void put_metadata(FILE *o, const struct exporter *x, uint32_t part, uint32_t parts, size_t crossing)
{
    fprintf(o, "\"otherData\":{\"part\":%u,\"parts\":%u,\"flows_across_parts\":%zu,", part + 1, parts,
            crossing);
    const struct trace_set *set = x->set;
    int size = set->nfiles ? set->files[0]->header.size : 0;
    fprintf(o, "\"producer\":\"sluice-trace perfetto\",\"ranks\":%zu,\"launcher_size\":%d,", set->nranks,
            size);
    fputs("\"missing_ranks\":[", o);
    bool first = true;
    for (int r = 0; r < size; r++) {
        bool have = false;
        for (size_t i = 0; i < set->nranks && !have; i++)
            have = set->ranks[i].rank == r;
        if (!have) {
            fprintf(o, "%s%d", first ? "" : ",", r);
            first = false;
        }
    }
    char how[512];
    if (x->tl.ref)
        snprintf(
            how, sizeof how,
            "%zu processes on rank 0's clock by ping-pong with rank 0 at start and exit (CLOCK_SYNC; offset "
            "linear between the two samples, constant outside), %zu by their own CLOCK_REALTIME pair%s",
            x->tl.synced, x->tl.unsynced,
            x->tl.one_host || !x->tl.unsynced ? "" : " (other hosts: as good as their NTP)");
    else
        snprintf(how, sizeof how, "%s",
                 x->tl.one_host
                     ? "one host: CLOCK_REALTIME read with CLOCK_MONOTONIC at each process start"
                     : "several hosts, no CLOCK_SYNC samples: CLOCK_REALTIME at each process start; as "
                       "good as the hosts' clock synchronization");
    fputs("],\"clock_alignment\":", o);
    json_string(o, how);
    fprintf(o, ",\"clock_uncertainty_ns\":%" PRIu64 ",\"clock_sync\":[", x->tl.uncertainty_ns);
    first = true;
    for (size_t i = 0; i < x->tl.nmaps; i++) {
        const struct clock_map *m = &x->tl.maps[i];
        if (!m->samples || m->f->header.rank == 0)
            continue;
        double drift =
            m->samples == 2 ? (double)(m->off[1] - m->off[0]) / (double)(m->t[1] - m->t[0]) * 1e6 : 0;
        fprintf(o,
                "%s{\"rank\":%d,\"pid\":%d,\"offset_start_ns\":%" PRId64 ",\"offset_exit_ns\":%" PRId64
                ",\"uncertainty_ns\":%" PRIu64 ",\"drift_ppm\":%.3f,\"used\":%s}",
                first ? "" : ",", m->f->header.rank, m->f->header.pid, m->off[0], m->off[m->samples - 1],
                m->unc_ns, drift, m->used ? "true" : "false");
        first = false;
    }
    fprintf(o,
            "],\"unreadable_files\":%zu,\"incomplete_files\":%zu,\"messages_without_recorded_peer\":%" PRIu64
            ",\"slices_on_overlap_lanes\":%" PRIu64 "},\n",
            set->unreadable, set->incomplete, x->unmatched_messages, x->lane_moves);
}

static int by_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Splits the items into `parts` files by time (quantiles of the start times): a slice goes with
 * its start, so each file's slices still nest. Returns the boundaries (parts + 1 of them). */
static int64_t *split(struct exporter *x, uint32_t parts)
{
    int64_t *bounds = malloc(sizeof *bounds * (parts + 1));
    int64_t *ts = malloc(sizeof *ts * (x->nitems ? x->nitems : 1));
    if (!bounds || !ts) {
        fprintf(stderr, "sluice-trace perfetto: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < x->nitems; i++)
        ts[i] = x->items[i].ts;
    qsort(ts, x->nitems, sizeof *ts, by_int64);
    bounds[0] = INT64_MIN;
    bounds[parts] = INT64_MAX;
    for (uint32_t k = 1; k < parts; k++)
        bounds[k] = ts[(size_t)k * x->nitems / parts];
    free(ts);
    for (size_t i = 0; i < x->nitems; i++) {
        uint32_t k = 0;
        while (k + 1 < parts && x->items[i].ts >= bounds[k + 1])
            k++;
        x->items[i].part = k;
    }
    return bounds;
}

/* OUT.json, or OUT-K.json for part K of several. */
static void part_name(const char *out, uint32_t k, uint32_t parts, char *buf, size_t len)
{
    size_t n = strlen(out);
    size_t stem = n > 5 && strcmp(out + n - 5, ".json") == 0 ? n - 5 : n;
    if (parts == 1)
        snprintf(buf, len, "%s", out);
    else
        snprintf(buf, len, "%.*s-%u.json", (int)stem, out, k + 1);
}

static int export_set(const char *out, const struct trace_set *set, enum timeline_clock clock,
                      size_t max_events)
{
    struct exporter x = {.set = set, .next_synth = SYNTH_TID};
    timeline_init_clock(&x.tl, set, clock);
    collect(&x);
    match_messages(&x);
    match_dag(&x);
    /* Flows point at items by index: sort a copy of the order and remap them. */
    struct item *sorted = malloc(sizeof *sorted * (x.nitems ? x.nitems : 1));
    size_t *where = malloc(sizeof *where * (x.nitems ? x.nitems : 1));
    if (!sorted || !where) {
        fprintf(stderr, "sluice-trace perfetto: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < x.nitems; i++)
        x.items[i].lane = (int)i; /* carries the old index through the sort */
    memcpy(sorted, x.items, sizeof *sorted * x.nitems);
    qsort(sorted, x.nitems, sizeof *sorted, by_track_time);
    for (size_t i = 0; i < x.nitems; i++) {
        where[sorted[i].lane] = i;
        sorted[i].lane = 0;
    }
    for (size_t i = 0; i < x.nflows; i++) {
        x.flows[i].from = where[x.flows[i].from];
        x.flows[i].to = where[x.flows[i].to];
    }
    free(x.items);
    x.items = sorted;
    assign_lanes(&x);
    bool to_stdout = strcmp(out, "-") == 0;
    uint32_t parts =
        to_stdout || x.nitems <= max_events ? 1 : (uint32_t)((x.nitems + max_events - 1) / max_events);
    int64_t *bounds = split(&x, parts);
    size_t crossing = 0;
    for (size_t i = 0; i < x.nflows; i++)
        crossing += x.items[x.flows[i].from].part != x.items[x.flows[i].to].part;
    int status = 0;
    for (uint32_t k = 0; k < parts && status == 0; k++) {
        char name[4096];
        part_name(out, k, parts, name, sizeof name);
        FILE *o = to_stdout ? stdout : fopen(name, "w");
        if (!o) {
            perror(name);
            status = 1;
            break;
        }
        fputs("{\"displayTimeUnit\":\"ns\",", o);
        put_metadata(o, &x, k, parts, crossing);
        fputs("\"traceEvents\":[\n", o);
        put_processes(o, &x);
        for (size_t i = 0; i < x.nitems; i++)
            if (x.items[i].part == k)
                put_item(o, &x, &x.items[i]);
        put_flows(o, &x, k);
        put_counters(o, &x, bounds[k], bounds[k + 1]);
        fputs("\n]}\n", o);
        if (o != stdout && fclose(o) != 0) {
            perror(name);
            status = 1;
        }
        if (parts > 1)
            fprintf(stderr, "sluice-trace perfetto: %s (part %u of %u)\n", name, k + 1, parts);
    }
    free(bounds);
    for (size_t i = 0; i < x.ntracks; i++)
        for (int l = 0; l < MAX_LANES; l++)
            free(x.tracks[i].stack[l]);
    free(x.tracks);
    for (size_t i = 0; i < set->nfiles; i++)
        free(x.base[i]);
    free(x.base);
    free(x.items);
    free(x.flows);
    timeline_free(&x.tl);
    free(where);
    return status;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: sluice-trace perfetto OUT.json DIR|FILE...   (also: -o OUT.json; alias: chrome)\n"
            "  Writes one trace-event JSON file for every rank (open it in ui.perfetto.dev or\n"
            "  chrome://tracing): a process per rank, a track per thread named by its role, per\n"
            "  OpenCL device, for checkpoint commits and DAG commands; arrows for messages and\n"
            "  DAG dependencies; counters for staged bytes. '-' writes to stdout.\n"
            "  --clock auto|sync|wall  how ranks are aligned: auto (default) by the ping-pong samples\n"
            "             for ranks on other hosts than rank 0, sync by them for every rank, wall by each\n"
            "             process's CLOCK_REALTIME only\n");
}

int perfetto_main(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"clock", required_argument, NULL, 'c'},
                                         {"max-events", required_argument, NULL, 'm'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    enum timeline_clock clock = TL_CLOCK_AUTO;
    size_t max_events = 2000000;
    const char *out_path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:c:m:h", opts, NULL)) != -1) {
        if (c == 'o') {
            out_path = optarg;
        } else if (c == 'm') {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (*optarg == '-' || *end || v < 1) {
                fprintf(stderr, "sluice-trace perfetto: --max-events wants a positive number, not '%s'\n",
                        optarg);
                return 2;
            }
            max_events = (size_t)v;
        } else if (c == 'c') {
            if (strcmp(optarg, "auto") == 0)
                clock = TL_CLOCK_AUTO;
            else if (strcmp(optarg, "sync") == 0)
                clock = TL_CLOCK_SYNC;
            else if (strcmp(optarg, "wall") == 0)
                clock = TL_CLOCK_WALL;
            else {
                fprintf(stderr, "sluice-trace perfetto: --clock wants auto, sync or wall, not '%s'\n",
                        optarg);
                return 2;
            }
        } else {
            return trace_opt_help(c, usage);
        }
    }
    /* The positional form: the first argument ending in .json is the output. */
    if (!out_path && optind < argc) {
        size_t n = strlen(argv[optind]);
        if ((n > 5 && strcmp(argv[optind] + n - 5, ".json") == 0) || strcmp(argv[optind], "-") == 0)
            out_path = argv[optind++];
    }
    if (trace_args_missing(argc - optind, 1, argv[0], "no trace folder or file given", usage))
        return 2;
    struct trace_set set;
    if (trace_set_open(&set, argv + optind, argc - optind, "perfetto", stderr) != 0)
        return 1;
    int status = export_set(out_path ? out_path : "-", &set, clock, max_events);
    if (set.unreadable || set.incomplete)
        status = 1;
    trace_set_free(&set);
    return status;
}
