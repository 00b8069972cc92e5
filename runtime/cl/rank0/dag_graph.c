/* SPDX-License-Identifier: MIT */
/* The command DAG (dag.h): nodes in a hash table by id (uthash keeps insertion order, which is
 * id order), per-queue state for queue-order edges, per-buffer access records for data edges,
 * and an intrusive FIFO of ready nodes.
 *
 * Queue order follows the OpenCL 3.0 specification:
 *   - in an in-order queue each command depends on the previous command of the queue;
 *   - in an out-of-order queue a command depends only on its wait list and on the queue's last
 *     barrier; a barrier or marker with an empty wait list depends on every command enqueued
 *     since the previous barrier; later commands depend on a barrier but not on a marker.
 * Buffer records: each live access (node, range, mode) of a buffer. A write drops the records
 * it covers entirely: any later access that overlaps them overlaps the write too, and the
 * write already depends on them, so no ordering information is lost and the lists stay short. */
#include "cl/rank0/dag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (add_failed = true)
#include <uthash.h>

struct dag_node {
    uint64_t id;
    struct sluice_dag_node_info info; /* deps and access point into the arrays below */
    struct sluice_dag_dep *deps;
    size_t ndeps, capdeps;
    struct sluice_dag_access *access;
    uint64_t *succ; /* ordering successors still waiting on this node */
    size_t nsucc, capsucc;
    size_t pending; /* ordering dependencies not complete yet */
    struct dag_node *rprev, *rnext;
    UT_hash_handle hh;
};

struct dag_queue {
    uint64_t id;
    uint64_t last;    /* last command enqueued (0: none) */
    uint64_t barrier; /* last barrier (0: none) */
    uint64_t *since;  /* commands since the last barrier (out-of-order queues) */
    size_t nsince, capsince;
    UT_hash_handle hh;
};

struct dag_record {
    uint64_t node, offset, size;
    unsigned mode;
};

struct dag_buffer {
    uint64_t id;
    struct dag_record *v;
    size_t n, cap;
    UT_hash_handle hh;
};

struct sluice_dag {
    struct dag_node *nodes;
    struct dag_queue *queues;
    struct dag_buffer *buffers;
    uint64_t last_id;
    struct dag_node *ready_head, *ready_tail;
    size_t nready;
    uint64_t *scratch; /* ids returned by complete */
    size_t capscratch;
};

static const char *const kind_names[] = {
#define SLUICE_DAG_KIND(id, name, commands) name,
#include "cl/rank0/dag_kinds.def"
#undef SLUICE_DAG_KIND
};

const char *sluice_dag_kind_name(sluice_dag_kind kind)
{
    return (unsigned)kind < SLUICE_DAG_KIND_COUNT ? kind_names[kind] : "unknown";
}

int sluice_dag_dep_trace_kind(unsigned why)
{
    return (why & SLUICE_DAG_DEP_WAIT) ? 0 : (why & SLUICE_DAG_DEP_QUEUE) ? 1 : 2;
}

/* Grows *v (element size `sz`) so that it holds at least n+1 elements. */
static int reserve(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *nv = realloc(*v, ncap * sz);
    if (nv == NULL)
        return -ENOMEM;
    *v = nv;
    *cap = ncap;
    return 0;
}

struct sluice_dag *sluice_dag_create(void)
{
    return calloc(1, sizeof(struct sluice_dag));
}

static void free_node(struct dag_node *n)
{
    free(n->deps);
    free(n->access);
    free(n->succ);
    free(n);
}

void sluice_dag_destroy(struct sluice_dag *dag)
{
    if (dag == NULL)
        return;
    struct dag_node *n, *ntmp;
    HASH_ITER(hh, dag->nodes, n, ntmp)
    {
        HASH_DEL(dag->nodes, n);
        free_node(n);
    }
    struct dag_queue *q, *qtmp;
    HASH_ITER(hh, dag->queues, q, qtmp)
    {
        HASH_DEL(dag->queues, q);
        free(q->since);
        free(q);
    }
    struct dag_buffer *b, *btmp;
    HASH_ITER(hh, dag->buffers, b, btmp)
    {
        HASH_DEL(dag->buffers, b);
        free(b->v);
        free(b);
    }
    free(dag->scratch);
    free(dag);
}

static struct dag_node *find_node(const struct sluice_dag *dag, uint64_t id)
{
    struct dag_node *n = NULL;
    HASH_FIND(hh, dag->nodes, &id, sizeof id, n);
    return n;
}

static bool is_complete(const struct sluice_dag *dag, uint64_t id)
{
    const struct dag_node *n = find_node(dag, id);
    return n == NULL || n->info.state == SLUICE_DAG_COMPLETE; /* retired means complete */
}

static int add_dep(struct dag_node *n, uint64_t on, unsigned why)
{
    if (on == 0 || on == n->id)
        return 0;
    for (size_t i = 0; i < n->ndeps; i++) {
        if (n->deps[i].on == on) {
            n->deps[i].why |= why;
            return 0;
        }
    }
    if (reserve((void **)&n->deps, &n->capdeps, n->ndeps, sizeof *n->deps) != 0)
        return -ENOMEM;
    n->deps[n->ndeps++] = (struct sluice_dag_dep){on, why, false};
    return 0;
}

static void ready_push(struct sluice_dag *dag, struct dag_node *n)
{
    n->info.state = SLUICE_DAG_READY;
    n->rnext = NULL;
    n->rprev = dag->ready_tail;
    if (dag->ready_tail)
        dag->ready_tail->rnext = n;
    else
        dag->ready_head = n;
    dag->ready_tail = n;
    dag->nready++;
}

static void ready_remove(struct sluice_dag *dag, struct dag_node *n)
{
    if (n->rprev)
        n->rprev->rnext = n->rnext;
    else
        dag->ready_head = n->rnext;
    if (n->rnext)
        n->rnext->rprev = n->rprev;
    else
        dag->ready_tail = n->rprev;
    n->rprev = n->rnext = NULL;
    dag->nready--;
}

/* Drops ids that no longer matter for a future barrier (complete or retired). */
static void compact_since(struct sluice_dag *dag, struct dag_queue *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->nsince; i++)
        if (!is_complete(dag, q->since[i]))
            q->since[k++] = q->since[i];
    q->nsince = k;
}

static int queue_deps(struct sluice_dag *dag, struct dag_node *n, const struct sluice_dag_cmd *cmd)
{
    if (cmd->queue == 0)
        return 0;
    struct dag_queue *q = NULL;
    HASH_FIND(hh, dag->queues, &cmd->queue, sizeof cmd->queue, q);
    if (q == NULL) {
        q = calloc(1, sizeof *q);
        if (q == NULL)
            return -ENOMEM;
        q->id = cmd->queue;
        bool add_failed = false;
        HASH_ADD(hh, dag->queues, id, sizeof q->id, q);
        if (add_failed)
            return free(q), -ENOMEM;
    }
    bool sync = cmd->kind == SLUICE_DAG_BARRIER || cmd->kind == SLUICE_DAG_MARKER;
    int rc = 0;
    if (!cmd->out_of_order) {
        rc = add_dep(n, q->last, SLUICE_DAG_DEP_QUEUE);
    } else {
        rc = add_dep(n, q->barrier, SLUICE_DAG_DEP_QUEUE);
        if (sync && cmd->nwait == 0)
            for (size_t i = 0; i < q->nsince && rc == 0; i++)
                rc = add_dep(n, q->since[i], SLUICE_DAG_DEP_QUEUE);
    }
    if (rc != 0)
        return rc;
    q->last = cmd->id;
    if (cmd->kind == SLUICE_DAG_BARRIER) {
        q->barrier = cmd->id;
        q->nsince = 0;
    } else if (cmd->out_of_order) {
        if (q->nsince == q->capsince)
            compact_since(dag, q);
        if (reserve((void **)&q->since, &q->capsince, q->nsince, sizeof *q->since) != 0)
            return -ENOMEM;
        q->since[q->nsince++] = cmd->id;
    }
    return 0;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return alen && blen && a < b + blen && b < a + alen;
}

static int data_deps(struct sluice_dag *dag, struct dag_node *n, const struct sluice_dag_access *acc)
{
    if (acc->size == 0 || acc->mode == 0)
        return 0;
    struct dag_buffer *b = NULL;
    HASH_FIND(hh, dag->buffers, &acc->buffer, sizeof acc->buffer, b);
    if (b == NULL) {
        b = calloc(1, sizeof *b);
        if (b == NULL)
            return -ENOMEM;
        b->id = acc->buffer;
        bool add_failed = false;
        HASH_ADD(hh, dag->buffers, id, sizeof b->id, b);
        if (add_failed)
            return free(b), -ENOMEM;
    }
    bool writes = acc->mode & SLUICE_DAG_WRITES, reads = acc->mode & SLUICE_DAG_READS;
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct dag_record r = b->v[i];
        if (r.node != n->id && find_node(dag, r.node) == NULL)
            continue; /* retired: drop the record */
        if (r.node != n->id && overlaps(r.offset, r.size, acc->offset, acc->size)) {
            unsigned why = 0;
            if (reads && (r.mode & SLUICE_DAG_WRITES))
                why |= SLUICE_DAG_DEP_RAW;
            if (writes && (r.mode & SLUICE_DAG_WRITES))
                why |= SLUICE_DAG_DEP_WAW;
            if (writes && (r.mode & SLUICE_DAG_READS))
                why |= SLUICE_DAG_DEP_WAR;
            if (why && add_dep(n, r.node, why) != 0)
                return -ENOMEM;
        }
        bool covered = writes && r.node != n->id && r.offset >= acc->offset &&
                       r.offset + r.size <= acc->offset + acc->size;
        if (!covered)
            b->v[k++] = r;
    }
    b->n = k;
    if (reserve((void **)&b->v, &b->cap, b->n, sizeof *b->v) != 0)
        return -ENOMEM;
    b->v[b->n++] = (struct dag_record){n->id, acc->offset, acc->size, acc->mode};
    return 0;
}

static void fill_info(const struct dag_node *n, struct sluice_dag_node_info *info)
{
    *info = n->info;
    info->deps = n->deps;
    info->ndeps = n->ndeps;
    info->access = n->access;
}

int sluice_dag_add(struct sluice_dag *dag, const struct sluice_dag_cmd *cmd, uint64_t now,
                   struct sluice_dag_node_info *info)
{
    if (cmd->id <= dag->last_id || (unsigned)cmd->kind >= SLUICE_DAG_KIND_COUNT)
        return -EINVAL;
    for (size_t i = 0; i < cmd->nwait; i++)
        if (cmd->wait[i] == 0 || cmd->wait[i] > dag->last_id)
            return -EINVAL;
    struct dag_node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return -ENOMEM;
    n->id = cmd->id;
    n->info = (struct sluice_dag_node_info){
        .id = cmd->id,
        .queue = cmd->queue,
        .rank = cmd->rank,
        .device = cmd->device,
        .kind = cmd->kind,
        .state = SLUICE_DAG_PENDING,
        .t_enqueue = now,
        .naccess = cmd->naccess,
        .host_addr = cmd->host_addr,
        .host_size = cmd->host_size,
    };
    if (cmd->naccess) {
        n->access = malloc(cmd->naccess * sizeof *n->access);
        if (n->access == NULL)
            return free_node(n), -ENOMEM;
        memcpy(n->access, cmd->access, cmd->naccess * sizeof *n->access);
    }
    int rc = 0;
    for (size_t i = 0; i < cmd->nwait && rc == 0; i++)
        rc = add_dep(n, cmd->wait[i], SLUICE_DAG_DEP_WAIT);
    /* The DAG is updated in place from here on: the node is added before anything can fail
     * half-way, so that queue and buffer state never name a node that does not exist. */
    bool add_failed = false;
    HASH_ADD(hh, dag->nodes, id, sizeof n->id, n);
    if (add_failed || rc != 0) {
        if (!add_failed)
            HASH_DEL(dag->nodes, n);
        return free_node(n), -ENOMEM;
    }
    dag->last_id = cmd->id;
    if (rc == 0)
        rc = queue_deps(dag, n, cmd);
    for (size_t i = 0; i < cmd->naccess && rc == 0; i++)
        rc = data_deps(dag, n, &cmd->access[i]);
    /* Resolve: ordering deps on commands not complete yet gate readiness. */
    for (size_t i = 0; i < n->ndeps && rc == 0; i++) {
        struct dag_node *on = find_node(dag, n->deps[i].on);
        n->deps[i].satisfied = on == NULL || on->info.state == SLUICE_DAG_COMPLETE;
        if (!(n->deps[i].why & SLUICE_DAG_DEP_ORDERING))
            continue;
        if (on != NULL && on->info.status < 0)
            n->info.failed_dep = true;
        if (n->deps[i].satisfied)
            continue;
        rc = reserve((void **)&on->succ, &on->capsucc, on->nsucc, sizeof *on->succ);
        if (rc == 0) {
            on->succ[on->nsucc++] = n->id;
            n->pending++;
        }
    }
    /* Out of memory past this point leaves a node that waits on what it could record. */
    if (n->pending == 0)
        ready_push(dag, n);
    if (info)
        fill_info(n, info);
    return rc;
}

size_t sluice_dag_ready(const struct sluice_dag *dag, uint64_t *out, size_t max)
{
    size_t i = 0;
    for (const struct dag_node *n = dag->ready_head; n && i < max; n = n->rnext)
        out[i++] = n->id;
    return dag->nready;
}

int sluice_dag_dispatch(struct sluice_dag *dag, uint64_t id, uint64_t now)
{
    struct dag_node *n = find_node(dag, id);
    if (n == NULL)
        return -ENOENT;
    if (n->info.state != SLUICE_DAG_READY)
        return -EINVAL;
    ready_remove(dag, n);
    n->info.state = SLUICE_DAG_RUNNING;
    n->info.t_dispatch = now;
    return 0;
}

int sluice_dag_complete(struct sluice_dag *dag, uint64_t id, int status, uint64_t t_start, uint64_t t_end,
                        const uint64_t **ready, size_t *nready)
{
    *ready = NULL;
    *nready = 0;
    struct dag_node *n = find_node(dag, id);
    if (n == NULL)
        return -ENOENT;
    if (n->info.state != SLUICE_DAG_READY && n->info.state != SLUICE_DAG_RUNNING)
        return -EINVAL;
    if (n->info.state == SLUICE_DAG_READY)
        ready_remove(dag, n);
    n->info.state = SLUICE_DAG_COMPLETE;
    n->info.status = status;
    n->info.t_start = t_start;
    n->info.t_end = t_end;
    if (n->nsucc > dag->capscratch) {
        uint64_t *v = realloc(dag->scratch, n->nsucc * sizeof *v);
        if (v == NULL)
            return -ENOMEM; /* nothing changed for the successors: the call can be repeated */
        dag->scratch = v;
        dag->capscratch = n->nsucc;
    }
    size_t k = 0;
    for (size_t i = 0; i < n->nsucc; i++) {
        struct dag_node *s = find_node(dag, n->succ[i]);
        if (s == NULL || s->pending == 0)
            continue;
        if (status < 0)
            s->info.failed_dep = true;
        if (--s->pending == 0) {
            ready_push(dag, s);
            dag->scratch[k++] = s->id;
        }
    }
    free(n->succ);
    n->succ = NULL;
    n->nsucc = n->capsucc = 0;
    *ready = dag->scratch;
    *nready = k;
    return 0;
}

int sluice_dag_get(const struct sluice_dag *dag, uint64_t id, struct sluice_dag_node_info *info)
{
    const struct dag_node *n = find_node(dag, id);
    if (n == NULL)
        return -ENOENT;
    fill_info(n, info);
    return 0;
}

size_t sluice_dag_retire(struct sluice_dag *dag, void (*emit)(const struct sluice_dag_node_info *, void *),
                         void *ctx)
{
    size_t count = 0;
    struct dag_node *n, *tmp;
    HASH_ITER(hh, dag->nodes, n, tmp)
    {
        if (n->info.state != SLUICE_DAG_COMPLETE)
            continue;
        if (emit) {
            struct sluice_dag_node_info info;
            fill_info(n, &info);
            emit(&info, ctx);
        }
        HASH_DEL(dag->nodes, n);
        free_node(n);
        count++;
    }
    if (count == 0)
        return 0;
    /* Drop what referred to retired nodes, so that memory follows the live DAG. */
    struct dag_buffer *b, *btmp;
    HASH_ITER(hh, dag->buffers, b, btmp)
    {
        size_t k = 0;
        for (size_t i = 0; i < b->n; i++)
            if (find_node(dag, b->v[i].node))
                b->v[k++] = b->v[i];
        b->n = k;
        if (k == 0) {
            HASH_DEL(dag->buffers, b);
            free(b->v);
            free(b);
        }
    }
    struct dag_queue *q, *qtmp;
    HASH_ITER(hh, dag->queues, q, qtmp)
    compact_since(dag, q);
    return count;
}

void sluice_dag_foreach(const struct sluice_dag *dag, void (*fn)(const struct sluice_dag_node_info *, void *),
                        void *ctx)
{
    for (const struct dag_node *n = dag->nodes; n; n = n->hh.next) {
        struct sluice_dag_node_info info;
        fill_info(n, &info);
        fn(&info, ctx);
    }
}

size_t sluice_dag_size(const struct sluice_dag *dag)
{
    return HASH_COUNT(dag->nodes);
}
