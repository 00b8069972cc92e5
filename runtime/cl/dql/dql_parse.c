/* SPDX-License-Identifier: MIT */
/* DQL parser: recursive descent over the tokens, producing the query (selector, node list,
 * WHERE AST, ORDER BY keys). Attribute names, operators and values are checked here, so that a
 * query that parses can always be evaluated and every mistake is reported with its column.
 *
 *   query      = "SELECT" ( "ALL" | "TOP" number | "POS" number )
 *                [ "FROM" "NODE" number { "," number } ]
 *                [ "WHERE" or ] [ "ORDER" "BY" key { "," key } ] end
 *   or         = and { "OR" and }        and = not { "AND" not }
 *   not        = "NOT" not | "(" or ")" | comparison
 *   comparison = attribute op value | attribute "LIKE" text | boolean-attribute
 *   key        = attribute [ "ASC" | "DESC" ]
 */
#include "cl/dql/dql_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = {"SELECT", "ALL", "TOP", "POS",  "FROM", "NODE", "NODES", "WHERE",
                                       "ORDER",  "BY",  "ASC", "DESC", "AND",  "OR",   "NOT",   "LIKE"};

struct parser {
    const char *src;
    const struct dql_tokens *t;
    size_t i; /* current token */
    struct sluice_dql_query *q;
    size_t ast_cap;
    unsigned depth;
    bool failed;
    char *err;
    size_t errlen;
};

static const struct dql_token *peek(const struct parser *p)
{
    return &p->t->v[p->i];
}

static bool tok_is(const struct parser *p, const struct dql_token *tok, const char *kw)
{
    return tok->kind == DQL_TK_WORD && dql_word_is(p->src + tok->pos, tok->len, kw);
}

static bool is_keyword(const struct parser *p, const struct dql_token *tok)
{
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (tok_is(p, tok, keywords[i]))
            return true;
    return false;
}

/* How a token is named in a message: 'gpu', "a string", the end of the query. */
static const char *describe(const struct parser *p, const struct dql_token *tok, char *buf, size_t len)
{
    if (tok->kind == DQL_TK_END)
        return "the end of the query";
    int n = (int)(tok->len > 40 ? 40 : tok->len);
    const char *more = tok->len > 40 ? "..." : "";
    if (tok->kind == DQL_TK_STRING)
        snprintf(buf, len, "%.*s%s", n, p->src + tok->pos, more);
    else
        snprintf(buf, len, "'%.*s%s'", n, p->src + tok->pos, more);
    return buf;
}

/* Reports an error at the current token: "<what>, found <token>". */
static void fail_found(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_found(struct parser *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char what[256], tokbuf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const struct dql_token *tok = peek(p);
    dql_error_at(p->err, p->errlen, tok->pos, "%s, found %s", what, describe(p, tok, tokbuf, sizeof tokbuf));
}

static void fail_at(struct parser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    dql_error_at(p->err, p->errlen, pos, "%s", what);
}

/* The previous token's text, for "after 'X'" in messages. */
static int prev_len(const struct parser *p)
{
    return (int)(p->t->v[p->i - 1].len > 40 ? 40 : p->t->v[p->i - 1].len);
}
static const char *prev_text(const struct parser *p)
{
    return p->src + p->t->v[p->i - 1].pos;
}

static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            char ca = a[i - 1] | 0x20, cb = b[j - 1] | 0x20;
            size_t best = diag + (ca == cb ? 0 : 1);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = row[j];
            row[j] = best;
        }
    }
    return row[lb];
}

static void fail_unknown_attribute(struct parser *p, const struct dql_token *tok)
{
    char known[640];
    size_t off = 0;
    for (int i = 0; i < SLUICE_DQL_ATTR_COUNT && off < sizeof known; i++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? ", " : "",
                                sluice_dql_attrs[i].name);
    const char *best = NULL;
    size_t best_d = tok->len / 3 + 1;
    for (int i = 0; i < SLUICE_DQL_ATTR_COUNT; i++) {
        size_t d = edit_distance(p->src + tok->pos, tok->len, sluice_dql_attrs[i].name);
        if (d <= best_d && (best == NULL || d < best_d)) {
            best = sluice_dql_attrs[i].name;
            best_d = d;
        }
    }
    char hint[96] = "";
    if (best)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
    fail_at(p, tok->pos, "unknown attribute '%.*s'%s; known attributes: %s",
            (int)(tok->len > 40 ? 40 : tok->len), p->src + tok->pos, hint, known);
}

/* Reads an attribute name at the current token; -1 after reporting an error. */
static int parse_attribute(struct parser *p, const char *context)
{
    const struct dql_token *tok = peek(p);
    if (tok->kind != DQL_TK_WORD) {
        fail_found(p, "expected %s", context);
        return -1;
    }
    /* node and pos are attributes as well as keywords (FROM NODE, SELECT POS): here they can
     * only be attributes. */
    int a = sluice_dql_attr_lookup(p->src + tok->pos, tok->len);
    if (a < 0 && is_keyword(p, tok)) {
        fail_found(p, "expected %s", context);
        return -1;
    }
    if (a < 0) {
        fail_unknown_attribute(p, tok);
        return -1;
    }
    p->i++;
    return a;
}

static size_t new_node(struct parser *p, dql_node_kind kind)
{
    struct sluice_dql_query *q = p->q;
    if (q->nast == p->ast_cap) {
        size_t ncap = p->ast_cap ? p->ast_cap * 2 : 16;
        struct dql_node *v = realloc(q->ast, ncap * sizeof *v);
        if (v == NULL) {
            fail_at(p, peek(p)->pos, "out of memory");
            return DQL_NONE;
        }
        q->ast = v;
        p->ast_cap = ncap;
    }
    struct dql_node *n = &q->ast[q->nast];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->first = n->next = DQL_NONE;
    return q->nast++;
}

static const char *op_text(dql_op op)
{
    static const char *const text[] = {"=", "!=", "<", "<=", ">", ">=", "LIKE"};
    return text[op];
}

/* Checks the value token against the attribute's kind and stores it in node n. */
static void parse_value(struct parser *p, size_t n, int attr, dql_op op, size_t op_pos)
{
    const struct sluice_dql_attr_desc *d = &sluice_dql_attrs[attr];
    const struct dql_token *tok = peek(p);
    if (tok->kind == DQL_TK_WORD && is_keyword(p, tok)) {
        fail_found(p, "expected a value after '%s' (quote a value that is also a keyword)", op_text(op));
        return;
    }
    if (tok->kind != DQL_TK_WORD && tok->kind != DQL_TK_NUMBER && tok->kind != DQL_TK_STRING) {
        fail_found(p, "expected a value after '%s'", op_text(op));
        return;
    }
    struct dql_node *node = &p->q->ast[n];
    const char *text = tok->kind == DQL_TK_STRING ? tok->text : p->src + tok->pos;
    size_t len = tok->kind == DQL_TK_STRING ? strlen(tok->text) : tok->len;
    switch (d->kind) {
    case SLUICE_DQL_KIND_STR:
        if (op != DQL_OP_EQ && op != DQL_OP_NE && op != DQL_OP_LIKE) {
            fail_at(p, op_pos, "type mismatch: '%s' is text; compare it with =, != or LIKE, not '%s'",
                    d->name, op_text(op));
            return;
        }
        node->str = strndup(text, len);
        if (node->str == NULL)
            fail_at(p, tok->pos, "out of memory");
        break;
    case SLUICE_DQL_KIND_NUM:
    case SLUICE_DQL_KIND_SIZE:
    case SLUICE_DQL_KIND_COMPUTED:
        if (op == DQL_OP_LIKE) {
            fail_at(p, op_pos, "type mismatch: LIKE compares text, and '%s' is a number", d->name);
            return;
        }
        if (tok->kind != DQL_TK_NUMBER) {
            fail_found(p, "type mismatch: '%s' is a number; expected a number%s after '%s'", d->name,
                       d->kind == SLUICE_DQL_KIND_SIZE ? " or a size such as 4G or 512MiB" : "", op_text(op));
            return;
        }
        node->num = tok->number;
        break;
    case SLUICE_DQL_KIND_BOOL: {
        static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off",
                                                                                    "0"};
        bool found = false;
        if (op != DQL_OP_EQ && op != DQL_OP_NE) {
            fail_at(p, op_pos, "type mismatch: '%s' is true or false; compare it with = or !=, not '%s'",
                    d->name, op_text(op));
            return;
        }
        for (size_t i = 0; i < 4 && !found; i++) {
            if (dql_word_is(text, len, yes[i]))
                node->num = 1, found = true;
            else if (dql_word_is(text, len, no[i]))
                node->num = 0, found = true;
        }
        if (!found) {
            fail_found(p, "type mismatch: '%s' is true or false; expected true or false after '%s'", d->name,
                       op_text(op));
            return;
        }
        break;
    }
    case SLUICE_DQL_KIND_TYPE: {
        static const struct {
            const char *name;
            uint64_t bit;
        } types[] = {
            {"cpu", SLUICE_DQL_TYPE_CPU},
            {"gpu", SLUICE_DQL_TYPE_GPU},
            {"accelerator", SLUICE_DQL_TYPE_ACCELERATOR},
            {"custom", SLUICE_DQL_TYPE_CUSTOM},
            {"default", SLUICE_DQL_TYPE_DEFAULT},
        };
        if (op != DQL_OP_EQ && op != DQL_OP_NE) {
            fail_at(p, op_pos, "type mismatch: 'type' is a device type; compare it with = or !=, not '%s'",
                    op_text(op));
            return;
        }
        node->num = 0;
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (dql_word_is(text, len, types[i].name))
                node->num = types[i].bit;
        if (node->num == 0) {
            fail_found(p, "expected a device type (cpu, gpu, accelerator, custom or default) after '%s'",
                       op_text(op));
            return;
        }
        break;
    }
    }
    p->i++;
}

static size_t parse_or(struct parser *p);

static size_t parse_comparison(struct parser *p)
{
    int attr = parse_attribute(p, "a condition (an attribute name, NOT or '(')");
    if (attr < 0)
        return DQL_NONE;
    const struct dql_token *tok = peek(p);
    size_t n;
    if (tok->kind == DQL_TK_OP || tok_is(p, tok, "LIKE")) {
        dql_op op = tok->kind == DQL_TK_OP ? tok->op : DQL_OP_LIKE;
        size_t op_pos = tok->pos;
        p->i++;
        n = new_node(p, DQL_N_CMP);
        if (n == DQL_NONE)
            return DQL_NONE;
        p->q->ast[n].attr = attr;
        p->q->ast[n].op = op;
        parse_value(p, n, attr, op, op_pos);
    } else if (sluice_dql_attrs[attr].kind == SLUICE_DQL_KIND_BOOL) {
        /* "WHERE available AND fp64": a boolean attribute alone is a condition. */
        n = new_node(p, DQL_N_TRUTH);
        if (n != DQL_NONE)
            p->q->ast[n].attr = attr;
    } else {
        fail_found(p, "expected a comparison operator (= != < <= > >= LIKE) after '%.*s'", prev_len(p),
                   prev_text(p));
        return DQL_NONE;
    }
    return p->failed ? DQL_NONE : n;
}

static size_t parse_not(struct parser *p)
{
    const struct dql_token *tok = peek(p);
    bool nests = tok_is(p, tok, "NOT") || tok->kind == DQL_TK_LPAREN;
    if (nests && ++p->depth > SLUICE_DQL_MAX_DEPTH) {
        fail_at(p, tok->pos, "conditions are nested deeper than %d levels of parentheses and NOT",
                SLUICE_DQL_MAX_DEPTH);
        return DQL_NONE;
    }
    size_t n;
    if (tok_is(p, tok, "NOT")) {
        p->i++;
        size_t child = parse_not(p);
        if (child == DQL_NONE)
            return DQL_NONE;
        n = new_node(p, DQL_N_NOT);
        if (n == DQL_NONE)
            return DQL_NONE;
        p->q->ast[n].first = child;
    } else if (tok->kind == DQL_TK_LPAREN) {
        size_t open = tok->pos;
        p->i++;
        n = parse_or(p);
        if (n == DQL_NONE)
            return DQL_NONE;
        if (peek(p)->kind != DQL_TK_RPAREN) {
            char what[96];
            snprintf(what, sizeof what, "expected AND, OR or ')' to close the '(' of column %zu", open + 1);
            fail_found(p, "%s", what);
            return DQL_NONE;
        }
        p->i++;
    } else {
        n = parse_comparison(p);
    }
    if (nests)
        p->depth--;
    return n;
}

/* and = not { "AND" not }, or = and { "OR" and }: one n-ary node per chain. */
static size_t parse_chain(struct parser *p, const char *word, dql_node_kind kind,
                          size_t (*sub)(struct parser *))
{
    size_t first = sub(p);
    if (first == DQL_NONE || !tok_is(p, peek(p), word))
        return first;
    size_t n = new_node(p, kind);
    if (n == DQL_NONE)
        return DQL_NONE;
    p->q->ast[n].first = first;
    size_t last = first;
    while (tok_is(p, peek(p), word)) {
        p->i++;
        size_t child = sub(p);
        if (child == DQL_NONE)
            return DQL_NONE;
        p->q->ast[last].next = child;
        last = child;
    }
    return n;
}

static size_t parse_and(struct parser *p)
{
    return parse_chain(p, "AND", DQL_N_AND, parse_not);
}
static size_t parse_or(struct parser *p)
{
    return parse_chain(p, "OR", DQL_N_OR, parse_and);
}

static void parse_selector(struct parser *p)
{
    const struct dql_token *tok = peek(p);
    if (tok_is(p, tok, "ALL")) {
        p->q->select = DQL_SELECT_ALL;
        p->i++;
        return;
    }
    bool top = tok_is(p, tok, "TOP");
    if (!top && !tok_is(p, tok, "POS")) {
        fail_found(p, "expected ALL, TOP k or POS i after SELECT");
        return;
    }
    p->i++;
    if (peek(p)->kind != DQL_TK_NUMBER) {
        fail_found(p, "expected a number after %s", top ? "TOP" : "POS");
        return;
    }
    p->q->select = top ? DQL_SELECT_TOP : DQL_SELECT_POS;
    p->q->select_arg = peek(p)->number;
    if (top && p->q->select_arg == 0) {
        fail_at(p, peek(p)->pos, "TOP needs a count of at least 1, found 0");
        return;
    }
    p->i++;
}

static void parse_nodes(struct parser *p)
{
    const struct dql_token *tok = peek(p);
    if (!tok_is(p, tok, "NODE") && !tok_is(p, tok, "NODES")) {
        fail_found(p, "expected NODE after FROM");
        return;
    }
    p->i++;
    size_t cap = 0;
    for (;;) {
        if (peek(p)->kind != DQL_TK_NUMBER) {
            fail_found(p, "expected a node number after '%.*s'", prev_len(p), prev_text(p));
            return;
        }
        if (p->q->nnodes == cap) {
            cap = cap ? cap * 2 : 4;
            uint64_t *v = realloc(p->q->nodes, cap * sizeof *v);
            if (v == NULL) {
                fail_at(p, peek(p)->pos, "out of memory");
                return;
            }
            p->q->nodes = v;
        }
        p->q->nodes[p->q->nnodes++] = peek(p)->number;
        p->i++;
        if (peek(p)->kind != DQL_TK_COMMA)
            return;
        p->i++;
    }
}

static void parse_order(struct parser *p)
{
    if (!tok_is(p, peek(p), "BY")) {
        fail_found(p, "expected BY after ORDER");
        return;
    }
    p->i++;
    size_t cap = 0;
    for (;;) {
        int attr =
            parse_attribute(p, p->q->norder ? "an attribute after ','" : "an attribute after ORDER BY");
        if (attr < 0)
            return;
        if (p->q->norder == cap) {
            cap = cap ? cap * 2 : 4;
            struct dql_order_key *v = realloc(p->q->order, cap * sizeof *v);
            if (v == NULL) {
                fail_at(p, peek(p)->pos, "out of memory");
                return;
            }
            p->q->order = v;
        }
        struct dql_order_key *key = &p->q->order[p->q->norder++];
        key->attr = attr;
        key->descending = false;
        if (tok_is(p, peek(p), "ASC")) {
            p->i++;
        } else if (tok_is(p, peek(p), "DESC")) {
            key->descending = true;
            p->i++;
        }
        if (peek(p)->kind != DQL_TK_COMMA)
            return;
        p->i++;
    }
}

static void parse_query(struct parser *p)
{
    if (peek(p)->kind == DQL_TK_END && p->i == 0) {
        fail_at(p, 0, "the query is empty; it starts with SELECT (for example SELECT ALL WHERE type = gpu)");
        return;
    }
    if (!tok_is(p, peek(p), "SELECT")) {
        fail_found(p, "expected SELECT at the start of the query");
        return;
    }
    p->i++;
    parse_selector(p);
    /* Each clause is optional but they come in this order; the message lists what may follow. */
    if (!p->failed && tok_is(p, peek(p), "FROM")) {
        p->i++;
        parse_nodes(p);
    }
    bool where = false;
    if (!p->failed && tok_is(p, peek(p), "WHERE")) {
        p->i++;
        where = true;
        p->q->root = parse_or(p);
    }
    bool order = false;
    if (!p->failed && tok_is(p, peek(p), "ORDER")) {
        p->i++;
        order = true;
        parse_order(p);
    }
    if (p->failed || peek(p)->kind == DQL_TK_END)
        return;
    if (order)
        fail_found(p, "expected ',' or the end of the query after the ORDER BY list");
    else if (where)
        fail_found(p, "expected AND, OR, ORDER BY or the end of the query");
    else
        fail_found(p, "expected FROM NODE, WHERE, ORDER BY or the end of the query");
}

int sluice_dql_parse(const char *text, struct sluice_dql_query **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    if (text == NULL)
        text = "";
    size_t len = strnlen(text, SLUICE_DQL_MAX_LENGTH + 1);
    if (len > SLUICE_DQL_MAX_LENGTH) {
        dql_error_at(err, errlen, SLUICE_DQL_MAX_LENGTH, "the query is longer than %d bytes",
                     SLUICE_DQL_MAX_LENGTH);
        return -1;
    }
    struct dql_tokens toks;
    if (dql_tokenize(text, &toks, err, errlen) != 0)
        return -1;
    struct sluice_dql_query *q = calloc(1, sizeof *q);
    if (q == NULL) {
        dql_tokens_free(&toks);
        dql_error_at(err, errlen, 0, "out of memory");
        return -1;
    }
    q->root = DQL_NONE;
    struct parser p = {.src = text, .t = &toks, .q = q, .err = err, .errlen = errlen};
    parse_query(&p);
    dql_tokens_free(&toks);
    if (p.failed) {
        sluice_dql_free(q);
        return -1;
    }
    *out = q;
    return 0;
}

bool sluice_dql_blank(const char *text)
{
    if (text == NULL)
        return true;
    for (; *text; text++)
        if (*text != ' ' && *text != '\t' && *text != '\n' && *text != '\r')
            return false;
    return true;
}

void sluice_dql_free(struct sluice_dql_query *q)
{
    if (q == NULL)
        return;
    for (size_t i = 0; i < q->nast; i++)
        free(q->ast[i].str);
    free(q->ast);
    free(q->nodes);
    free(q->order);
    free(q);
}
