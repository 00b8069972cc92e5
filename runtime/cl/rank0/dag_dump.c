/* SPDX-License-Identifier: MIT */
/* Graphviz DOT view of the live command DAG, for debugging a schedule by eye:
 *   sluice_dag_format_dot(dag, buf, len)  ->  dot -Tsvg dag.dot > dag.svg
 * Ordering edges are solid (wait list blue, queue order black), data-only edges dashed grey;
 * the label says why (wait, queue, raw, war, waw). The trace gets the same facts per retired
 * node through sluice_dag_retire's callback. */
#include "cl/rank0/dag.h"

#include "common/strbuf.h"
#include <stdarg.h>
#include <stdio.h>

static const char *state_name(sluice_dag_state s)
{
    static const char *const names[] = {"pending", "ready", "running", "complete"};
    return (unsigned)s < 4 ? names[s] : "?";
}

static void why_text(struct sluice_strbuf *o, unsigned why)
{
    static const char *const names[] = {"wait", "queue", "raw", "war", "waw"};
    bool first = true;
    for (unsigned i = 0; i < 5; i++) {
        if (why & (1u << i)) {
            sluice_strbuf_put(o, "%s%s", first ? "" : ",", names[i]);
            first = false;
        }
    }
}

static void node_dot(const struct sluice_dag_node_info *n, void *ctx)
{
    struct sluice_strbuf *o = ctx;
    sluice_strbuf_put(o, "  n%llu [label=\"%s #%llu\\nrank %d dev %u q %llu\\n%s", (unsigned long long)n->id,
                      sluice_dag_kind_name(n->kind), (unsigned long long)n->id, n->rank, n->device,
                      (unsigned long long)n->queue, state_name(n->state));
    if (n->state == SLUICE_DAG_COMPLETE)
        sluice_strbuf_put(o, " %d\\n%llu..%llu", n->status, (unsigned long long)n->t_start,
                          (unsigned long long)n->t_end);
    sluice_strbuf_put(o, "\"%s];\n", n->failed_dep ? " color=red" : "");
    for (size_t i = 0; i < n->ndeps; i++) {
        const struct sluice_dag_dep *d = &n->deps[i];
        const char *style = (d->why & SLUICE_DAG_DEP_WAIT)    ? "color=blue"
                            : (d->why & SLUICE_DAG_DEP_QUEUE) ? "color=black"
                                                              : "style=dashed color=grey";
        sluice_strbuf_put(o, "  n%llu -> n%llu [%s label=\"", (unsigned long long)d->on,
                          (unsigned long long)n->id, style);
        why_text(o, d->why);
        sluice_strbuf_put(o, "\"];\n");
    }
}

size_t sluice_dag_format_dot(const struct sluice_dag *dag, char *buf, size_t len)
{
    struct sluice_strbuf o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    sluice_strbuf_put(&o, "digraph sluice_dag {\n  node [shape=box fontname=monospace];\n");
    sluice_dag_foreach(dag, node_dot, &o);
    sluice_strbuf_put(&o, "}\n");
    return o.used;
}
