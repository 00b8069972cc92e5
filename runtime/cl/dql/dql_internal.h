/* SPDX-License-Identifier: MIT */
/* DQL internals shared by the tokenizer, the parser and the evaluator: tokens and the AST.
 * Not part of the contract with the runtime (that is dql.h). */
#ifndef SLUICE_CL_DQL_DQL_INTERNAL_H
#define SLUICE_CL_DQL_DQL_INTERNAL_H

#include "cl/dql/dql.h"

#include <stdarg.h>

typedef enum {
    DQL_TK_END,    /* end of the query */
    DQL_TK_WORD,   /* a bare word: keyword, attribute name or unquoted value */
    DQL_TK_NUMBER, /* digits with an optional size suffix (4G, 512MiB) */
    DQL_TK_STRING, /* '...' or "..." (a doubled quote stands for one) */
    DQL_TK_OP,     /* = != <> < <= > >= */
    DQL_TK_LPAREN,
    DQL_TK_RPAREN,
    DQL_TK_COMMA,
} dql_token_kind;

typedef enum { DQL_OP_EQ, DQL_OP_NE, DQL_OP_LT, DQL_OP_LE, DQL_OP_GT, DQL_OP_GE, DQL_OP_LIKE } dql_op;

struct dql_token {
    dql_token_kind kind;
    size_t pos;      /* byte offset in the query; the column is pos + 1 */
    size_t len;      /* bytes of source text */
    uint64_t number; /* DQL_TK_NUMBER */
    dql_op op;       /* DQL_TK_OP */
    char *text;      /* DQL_TK_STRING: the unquoted value (owned by the token list) */
};

struct dql_tokens {
    struct dql_token *v;
    size_t n;
};

/* Splits `src` into tokens (the last one is DQL_TK_END). On error returns -1 with the message
 * in err ("column C: ..."). */
int dql_tokenize(const char *src, struct dql_tokens *out, char *err, size_t errlen);
void dql_tokens_free(struct dql_tokens *t);

/* AST of the WHERE clause. AND and OR are n-ary (children chained through `next`), so a long
 * chain of ORs is one wide node, not a deep tree: evaluation recursion is bounded by the
 * nesting depth, which the parser limits. Nodes live in one array, linked by index. */
typedef enum { DQL_N_OR, DQL_N_AND, DQL_N_NOT, DQL_N_CMP, DQL_N_TRUTH } dql_node_kind;

#define DQL_NONE ((size_t)-1)

struct dql_node {
    dql_node_kind kind;
    size_t first; /* OR, AND, NOT: first child */
    size_t next;  /* next sibling */
    /* CMP and TRUTH */
    int attr;
    dql_op op;
    uint64_t num; /* NUM, SIZE, BOOL (0/1), TYPE (bits) */
    char *str;    /* STR (owned) */
};

typedef enum { DQL_SELECT_ALL, DQL_SELECT_TOP, DQL_SELECT_POS } dql_select_kind;

struct dql_order_key {
    int attr;
    bool descending;
};

struct sluice_dql_query {
    dql_select_kind select;
    uint64_t select_arg; /* k of TOP, i of POS */
    uint64_t *nodes;     /* FROM NODE list */
    size_t nnodes;       /* 0: every node */
    struct dql_node *ast;
    size_t nast;
    size_t root; /* DQL_NONE: no WHERE */
    struct dql_order_key *order;
    size_t norder;
};

/* Formats "column C: " + fmt into err. */
void dql_error_at(char *err, size_t errlen, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Case-insensitive ASCII comparison of a counted string with a NUL-terminated one. */
bool dql_word_is(const char *s, size_t len, const char *word);

#endif
