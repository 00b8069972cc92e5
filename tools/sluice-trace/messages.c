/* SPDX-License-Identifier: MIT */
/* See messages.h. */
#include "messages.h"

#include <stdlib.h>
#include <string.h>

#include "mpi/tags.h"

/* The DSM's tag on its own communicator (DSM_TAG, runtime/dsm/dsm.h); no range of sluice's
 * communicator (tags.def) starts this low. */
#define DSM_MSG_TAG 7

const char *msg_purpose_name(enum msg_purpose p)
{
    static const char *const names[MSG_NPURPOSES] = {"checkpoint shuffle", "OpenCL data", "control", "DSM",
                                                     "other"};
    return p < MSG_NPURPOSES ? names[p] : "?";
}

static int in_range(uint64_t tag, int first, int count)
{
    return tag >= (uint64_t)first && tag < (uint64_t)first + (uint64_t)count;
}

enum msg_purpose msg_purpose_of_tag(uint64_t tag)
{
    if (in_range(tag, SLUICE_TAG_REMOTE_DATA, SLUICE_TAG_REMOTE_DATA_COUNT))
        return MSG_OPENCL;
    if (in_range(tag, SLUICE_TAG_REMOTE_CTRL, SLUICE_TAG_REMOTE_CTRL_COUNT) ||
        in_range(tag, SLUICE_TAG_COMMIT, SLUICE_TAG_COMMIT_COUNT))
        return MSG_CONTROL;
    if (tag == DSM_MSG_TAG)
        return MSG_DSM;
    return MSG_OTHER;
}

struct list {
    struct message *v;
    size_t n, cap;
};

static int push(struct list *l, struct message m)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct message *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = m;
    return 0;
}

static int by_key_time(const void *a, const void *b)
{
    const struct message *p = a, *q = b;
    if (p->purpose != q->purpose)
        return p->purpose < q->purpose ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->tag != q->tag)
        return p->tag < q->tag ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes < q->bytes ? -1 : 1;
    return (p->t_ns > q->t_ns) - (p->t_ns < q->t_ns);
}

static int same_key(const struct message *p, const struct message *q)
{
    return p->purpose == q->purpose && p->src == q->src && p->dst == q->dst && p->tag == q->tag &&
           p->bytes == q->bytes;
}

static int by_time(const void *a, const void *b)
{
    const struct message *p = a, *q = b;
    return (p->t_ns > q->t_ns) - (p->t_ns < q->t_ns);
}

int messages_collect(const struct trace_set *set, const struct timeline *tl, struct message **out, size_t *n)
{
    struct list all = {0}, sends = {0}, recvs = {0};
    int rc = 0;
    for (size_t i = 0; i < set->nfiles && rc == 0; i++) {
        const struct sluice_trace_file *f = set->files[i];
        int k_shuffle = trace_kind_number(f, "COMMIT_SHUFFLE");
        int k_shuffle_recv = trace_kind_number(f, "COMMIT_SHUFFLE_RECV");
        int k_send[2] = {trace_kind_number(f, "MPI_SEND"), trace_kind_number(f, "MSG_SEND")};
        int k_recv[2] = {trace_kind_number(f, "MPI_RECV"), trace_kind_number(f, "MSG_RECV")};
        int me = f->header.rank;
        for (size_t t = 0; t < f->nthreads && rc == 0; t++) {
            const struct sluice_trace_rthread *r = &f->threads[t];
            for (uint64_t e = 0; e < r->info.events && rc == 0; e++) {
                const struct sluice_tf_event *ev = &r->events[e];
                struct msg_end here = {f, r, e};
                int64_t ts = timeline_ns(tl, f, ev->t_ns);
                int k = (int)ev->kind;
                if (k < 0 || (k != k_shuffle && k != k_shuffle_recv && k != k_send[0] && k != k_send[1] &&
                              k != k_recv[0] && k != k_recv[1]))
                    continue;
                /* A shuffle piece's tag is its message id (the commit's tag and the piece). */
                enum msg_purpose p =
                    k == k_shuffle || k == k_shuffle_recv ? MSG_SHUFFLE : msg_purpose_of_tag(ev->c);
                if (k == k_shuffle || k == k_send[0] || k == k_send[1])
                    rc = push(&sends, (struct message){me, (int)ev->a, ev->b, ev->c, p, ts, here, {0}});
                else
                    rc = push(&recvs, (struct message){(int)ev->a, me, ev->b, ev->c, p, ts, {0}, here});
            }
        }
    }
    if (rc == 0) {
        if (sends.n > 1)
            qsort(sends.v, sends.n, sizeof *sends.v, by_key_time);
        if (recvs.n > 1)
            qsort(recvs.v, recvs.n, sizeof *recvs.v, by_key_time);
        size_t i = 0, j = 0;
        while (rc == 0 && (i < sends.n || j < recvs.n)) {
            int c = i == sends.n ? 1 : j == recvs.n ? -1 : 0;
            if (c == 0 && !same_key(&sends.v[i], &recvs.v[j])) {
                struct message a = sends.v[i], b = recvs.v[j];
                a.t_ns = b.t_ns = 0;
                c = by_key_time(&a, &b);
            }
            if (c < 0) {
                rc = push(&all, sends.v[i++]);
            } else if (c > 0) {
                rc = push(&all, recvs.v[j++]);
            } else {
                struct message m = sends.v[i++];
                m.recv = recvs.v[j++].recv;
                rc = push(&all, m);
            }
        }
    }
    free(sends.v);
    free(recvs.v);
    if (rc != 0) {
        free(all.v);
        return -1;
    }
    if (all.n > 1)
        qsort(all.v, all.n, sizeof *all.v, by_time);
    *out = all.v;
    *n = all.n;
    return 0;
}
