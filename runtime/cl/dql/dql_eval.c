/* SPDX-License-Identifier: MIT */
/* DQL evaluator: applies a parsed query to a table of device descriptors, and prints a query
 * back in canonical form. Selection order: default order (node, then index), FROM NODE and
 * WHERE filter, ORDER BY sorts stably (so ties keep the default order), then ALL/TOP/POS. */
#include "cl/dql/dql_internal.h"

#include "common/strbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *field_str(const struct sluice_dql_device *d, int attr, size_t *len)
{
    const char *s = (const char *)d + sluice_dql_attrs[attr].offset;
    *len = strnlen(s, SLUICE_DQL_STR_MAX); /* the runtime may have filled every byte */
    return s;
}

static uint64_t field_num(const struct sluice_dql_device *d, int attr, size_t pos)
{
    const struct sluice_dql_attr_desc *a = &sluice_dql_attrs[attr];
    const char *base = (const char *)d + a->offset;
    switch (a->kind) {
    case SLUICE_DQL_KIND_BOOL:
        return *(const bool *)base ? 1 : 0;
    case SLUICE_DQL_KIND_COMPUTED:
        return pos; /* the only computed attribute is pos */
    default: {
        uint64_t v;
        memcpy(&v, base, sizeof v);
        return v;
    }
    }
}

static int fold(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* Case-insensitive glob with * and ?: the classic two-pointer match with one backtrack point,
 * O(len(s) * len(pattern)) at worst, so that hostile patterns ("*a*a*a*...") stay cheap. */
static bool glob_match(const char *pat, const char *s, size_t slen)
{
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    size_t plen = strlen(pat);
    while (si < slen) {
        if (pi < plen && (pat[pi] == '?' || fold((unsigned char)pat[pi]) == fold((unsigned char)s[si]))) {
            pi++;
            si++;
        } else if (pi < plen && pat[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < plen && pat[pi] == '*')
        pi++;
    return pi == plen;
}

static bool compare_num(uint64_t a, dql_op op, uint64_t b)
{
    switch (op) {
    case DQL_OP_EQ:
        return a == b;
    case DQL_OP_NE:
        return a != b;
    case DQL_OP_LT:
        return a < b;
    case DQL_OP_LE:
        return a <= b;
    case DQL_OP_GT:
        return a > b;
    case DQL_OP_GE:
        return a >= b;
    case DQL_OP_LIKE:
        return false; /* rejected by the parser */
    }
    return false;
}

static bool eval(const struct sluice_dql_query *q, size_t n, const struct sluice_dql_device *d, size_t pos)
{
    const struct dql_node *node = &q->ast[n];
    switch (node->kind) {
    case DQL_N_OR:
        for (size_t c = node->first; c != DQL_NONE; c = q->ast[c].next)
            if (eval(q, c, d, pos))
                return true;
        return false;
    case DQL_N_AND:
        for (size_t c = node->first; c != DQL_NONE; c = q->ast[c].next)
            if (!eval(q, c, d, pos))
                return false;
        return true;
    case DQL_N_NOT:
        return !eval(q, node->first, d, pos);
    case DQL_N_TRUTH:
        return field_num(d, node->attr, pos) != 0;
    case DQL_N_CMP:
        break;
    }
    const struct sluice_dql_attr_desc *a = &sluice_dql_attrs[node->attr];
    if (a->kind == SLUICE_DQL_KIND_STR) {
        size_t len;
        const char *s = field_str(d, node->attr, &len);
        if (node->op == DQL_OP_LIKE)
            return glob_match(node->str, s, len);
        bool eq = strlen(node->str) == len && strncasecmp(s, node->str, len) == 0;
        return node->op == DQL_OP_EQ ? eq : !eq;
    }
    if (a->kind == SLUICE_DQL_KIND_TYPE) {
        bool has = (field_num(d, node->attr, pos) & node->num) != 0;
        return node->op == DQL_OP_EQ ? has : !has;
    }
    return compare_num(field_num(d, node->attr, pos), node->op, node->num);
}

size_t sluice_dql_reads_cut(const struct sluice_dql_query *q, const struct sluice_dql_device *devs,
                            size_t ndevs, int *attr)
{
    uint32_t read = 0;
    for (size_t i = 0; i < q->nast; i++)
        if (q->ast[i].kind == DQL_N_CMP || q->ast[i].kind == DQL_N_TRUTH)
            read |= 1u << q->ast[i].attr;
    for (size_t k = 0; k < q->norder; k++)
        read |= 1u << q->order[k].attr;
    for (size_t i = 0; i < ndevs; i++)
        if (devs[i].cut & read) {
            *attr = __builtin_ctz(devs[i].cut & read);
            return i;
        }
    return ndevs;
}

bool sluice_dql_match(const struct sluice_dql_query *q, const struct sluice_dql_device *dev, size_t pos)
{
    return q->root == DQL_NONE || eval(q, q->root, dev, pos);
}

/* Sorting context: merge sort over indices, stable, with a comparator that sees the query. */
struct sort_ctx {
    const struct sluice_dql_query *q; /* NULL: default order */
    const struct sluice_dql_device *devs;
    const size_t *pos; /* default-order position of each device */
};

static int compare_devices(const struct sort_ctx *c, size_t x, size_t y)
{
    const struct sluice_dql_device *a = &c->devs[x], *b = &c->devs[y];
    if (c->q == NULL) {
        if (a->node != b->node)
            return a->node < b->node ? -1 : 1;
        if (a->index != b->index)
            return a->index < b->index ? -1 : 1;
        return 0;
    }
    for (size_t k = 0; k < c->q->norder; k++) {
        int attr = c->q->order[k].attr, r = 0;
        if (sluice_dql_attrs[attr].kind == SLUICE_DQL_KIND_STR) {
            size_t la, lb;
            const char *sa = field_str(a, attr, &la), *sb = field_str(b, attr, &lb);
            r = strncasecmp(sa, sb, la < lb ? la : lb);
            if (r == 0 && la != lb)
                r = la < lb ? -1 : 1;
        } else {
            uint64_t va = field_num(a, attr, c->pos[x]), vb = field_num(b, attr, c->pos[y]);
            r = va < vb ? -1 : va > vb ? 1 : 0;
        }
        if (r != 0)
            return c->q->order[k].descending ? -r : r;
    }
    return 0;
}

static void merge_sort(const struct sort_ctx *c, size_t *v, size_t *tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] =
                    compare_devices(c, v[j], v[i]) < 0 ? v[j++] : v[i++]; /* ties take the left: stable */
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
}

static bool on_listed_node(const struct sluice_dql_query *q, uint64_t node)
{
    if (q->nnodes == 0)
        return true;
    for (size_t i = 0; i < q->nnodes; i++)
        if (q->nodes[i] == node)
            return true;
    return false;
}

int sluice_dql_select(const struct sluice_dql_query *q, const struct sluice_dql_device *devs, size_t ndevs,
                      size_t *out, size_t *count)
{
    *count = 0;
    if (ndevs == 0)
        return 0;
    size_t *order = malloc(ndevs * sizeof *order), *tmp = malloc(ndevs * sizeof *tmp),
           *pos = malloc(ndevs * sizeof *pos);
    if (order == NULL || tmp == NULL || pos == NULL) {
        free(order), free(tmp), free(pos);
        return -1;
    }
    for (size_t i = 0; i < ndevs; i++)
        order[i] = i;
    struct sort_ctx c = {.q = NULL, .devs = devs, .pos = pos};
    merge_sort(&c, order, tmp, ndevs);
    for (size_t i = 0; i < ndevs; i++)
        pos[order[i]] = i;
    size_t n = 0;
    for (size_t i = 0; i < ndevs; i++) {
        size_t d = order[i];
        if (on_listed_node(q, devs[d].node) && sluice_dql_match(q, &devs[d], i))
            out[n++] = d;
    }
    if (q->norder > 0) {
        c.q = q;
        merge_sort(&c, out, tmp, n);
    }
    if (q->select == DQL_SELECT_TOP && n > q->select_arg) {
        n = (size_t)q->select_arg;
    } else if (q->select == DQL_SELECT_POS) {
        if (q->select_arg < n) {
            out[0] = out[q->select_arg];
            n = 1;
        } else {
            n = 0;
        }
    }
    *count = n;
    free(order), free(tmp), free(pos);
    return 0;
}

/* ---- canonical form ---------------------------------------------------------------------- */

static void put_quoted(struct sluice_strbuf *o, const char *s)
{
    sluice_strbuf_put(o, "'");
    for (; *s; s++) {
        if (*s == '\'')
            sluice_strbuf_put(o, "''");
        else
            sluice_strbuf_put(o, "%c", *s);
    }
    sluice_strbuf_put(o, "'");
}

static void format_node(const struct sluice_dql_query *q, size_t n, struct sluice_strbuf *o)
{
    static const char *const ops[] = {"=", "!=", "<", "<=", ">", ">=", "LIKE"};
    const struct dql_node *node = &q->ast[n];
    const struct sluice_dql_attr_desc *a = &sluice_dql_attrs[node->attr];
    switch (node->kind) {
    case DQL_N_OR:
    case DQL_N_AND:
        sluice_strbuf_put(o, "(");
        for (size_t c = node->first; c != DQL_NONE; c = q->ast[c].next) {
            if (c != node->first)
                sluice_strbuf_put(o, node->kind == DQL_N_OR ? " OR " : " AND ");
            format_node(q, c, o);
        }
        sluice_strbuf_put(o, ")");
        return;
    case DQL_N_NOT:
        sluice_strbuf_put(o, "NOT ");
        format_node(q, node->first, o);
        return;
    case DQL_N_TRUTH:
        sluice_strbuf_put(o, "%s", a->name);
        return;
    case DQL_N_CMP:
        break;
    }
    sluice_strbuf_put(o, "%s %s ", a->name, ops[node->op]);
    switch (a->kind) {
    case SLUICE_DQL_KIND_STR:
        put_quoted(o, node->str);
        break;
    case SLUICE_DQL_KIND_BOOL:
        sluice_strbuf_put(o, "%s", node->num ? "true" : "false");
        break;
    case SLUICE_DQL_KIND_TYPE:
        sluice_strbuf_put(o, "%s",
                          node->num == SLUICE_DQL_TYPE_CPU           ? "cpu"
                          : node->num == SLUICE_DQL_TYPE_GPU         ? "gpu"
                          : node->num == SLUICE_DQL_TYPE_ACCELERATOR ? "accelerator"
                          : node->num == SLUICE_DQL_TYPE_CUSTOM      ? "custom"
                                                                     : "default");
        break;
    default:
        sluice_strbuf_put(o, "%llu", (unsigned long long)node->num);
    }
}

size_t sluice_dql_format(const struct sluice_dql_query *q, char *buf, size_t len)
{
    struct sluice_strbuf o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    sluice_strbuf_put(&o, "SELECT ");
    if (q->select == DQL_SELECT_ALL)
        sluice_strbuf_put(&o, "ALL");
    else
        sluice_strbuf_put(&o, "%s %llu", q->select == DQL_SELECT_TOP ? "TOP" : "POS",
                          (unsigned long long)q->select_arg);
    for (size_t i = 0; i < q->nnodes; i++)
        sluice_strbuf_put(&o, "%s%llu", i ? ", " : " FROM NODE ", (unsigned long long)q->nodes[i]);
    if (q->root != DQL_NONE) {
        sluice_strbuf_put(&o, " WHERE ");
        format_node(q, q->root, &o);
    }
    for (size_t i = 0; i < q->norder; i++)
        sluice_strbuf_put(&o, "%s%s %s", i ? ", " : " ORDER BY ", sluice_dql_attrs[q->order[i].attr].name,
                          q->order[i].descending ? "DESC" : "ASC");
    return o.used;
}
