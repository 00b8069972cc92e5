/* SPDX-License-Identifier: MIT */
/* DQL tokenizer: splits a query into words, numbers (with size suffixes), quoted strings,
 * operators, parentheses and commas. Every byte is checked here, so the parser only ever sees
 * well-formed tokens and hostile input (control bytes, non-ASCII outside quotes, unterminated
 * quotes, huge numbers) ends with a message naming the column. */
#include "cl/dql/dql_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_word_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Bytes that continue a bare word: device names such as "cpu-haswell" or versions such as
 * "3.0" can then be written without quotes. */
static bool is_word_char(unsigned char c)
{
    return is_word_start(c) || is_digit(c) || c == '-' || c == '.';
}

static int push(struct dql_tokens *t, size_t *cap, struct dql_token tok)
{
    if (t->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct dql_token *v = realloc(t->v, ncap * sizeof *v);
        if (v == NULL)
            return -1;
        t->v = v;
        *cap = ncap;
    }
    t->v[t->n++] = tok;
    return 0;
}

/* Size suffixes are binary, as everywhere in sluice (SLUICE_STAGE_LIMIT=4G): K = KB = KiB = 1024. */
static int size_multiplier(const char *s, size_t len, uint64_t *mult)
{
    static const struct {
        const char *suffix;
        unsigned shift;
    } units[] = {
        {"", 0},     {"B", 0},  {"K", 10},  {"KB", 10},  {"KiB", 10}, {"M", 20},  {"MB", 20},
        {"MiB", 20}, {"G", 30}, {"GB", 30}, {"GiB", 30}, {"T", 40},   {"TB", 40}, {"TiB", 40},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (dql_word_is(s, len, units[i].suffix)) {
            *mult = 1ULL << units[i].shift;
            return 0;
        }
    }
    return -1;
}

/* A run starting with a digit: a number if it is digits plus a known size suffix, otherwise a
 * bare word ("3.0", "2nd"). */
static int lex_number_or_word(const char *src, size_t pos, struct dql_token *tok, char *err, size_t errlen)
{
    size_t end = pos;
    while (is_word_char((unsigned char)src[end]))
        end++;
    size_t digits = pos;
    while (digits < end && is_digit((unsigned char)src[digits]))
        digits++;
    tok->pos = pos;
    tok->len = end - pos;
    uint64_t mult;
    if (size_multiplier(src + digits, end - digits, &mult) != 0) {
        tok->kind = DQL_TK_WORD;
        return 0;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (size_t i = pos; i < digits; i++) {
        unsigned d = (unsigned)(src[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            v = v * 10 + d;
    }
    if (!overflow && v > UINT64_MAX / mult)
        overflow = true;
    if (overflow) {
        dql_error_at(err, errlen, pos, "the number '%.*s' is too large (the largest is 18446744073709551615)",
                     (int)(tok->len > 40 ? 40 : tok->len), src + pos);
        return -1;
    }
    tok->kind = DQL_TK_NUMBER;
    tok->number = v * mult;
    return 0;
}

static int lex_string(const char *src, size_t pos, struct dql_token *tok, char *err, size_t errlen)
{
    char quote = src[pos];
    size_t i = pos + 1, n = 0;
    /* First pass: find the end and check the bytes; second pass: copy without the escapes. */
    for (;;) {
        unsigned char c = (unsigned char)src[i];
        if (c == '\0') {
            dql_error_at(err, errlen, pos, "unterminated string: the quote %c opened here is never closed",
                         quote);
            return -1;
        }
        if (c < 0x20 || c == 0x7f) {
            dql_error_at(err, errlen, i, "control byte 0x%02x inside a string", c);
            return -1;
        }
        if (c == (unsigned char)quote) {
            if (src[i + 1] == quote) {
                i += 2;
                n++;
                continue;
            }
            break;
        }
        i++;
        n++;
    }
    char *text = malloc(n + 1);
    if (text == NULL) {
        dql_error_at(err, errlen, pos, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t j = pos + 1; j < i; j++) {
        text[k++] = src[j];
        if (src[j] == quote)
            j++; /* skip the second quote of a doubled pair */
    }
    text[k] = '\0';
    tok->kind = DQL_TK_STRING;
    tok->pos = pos;
    tok->len = i + 1 - pos;
    tok->text = text;
    return 0;
}

static int lex_operator(const char *src, size_t pos, struct dql_token *tok, char *err, size_t errlen)
{
    static const struct {
        const char *text;
        dql_op op;
    } ops[] = {
        {"==", DQL_OP_EQ}, {"!=", DQL_OP_NE}, {"<>", DQL_OP_NE}, {"<=", DQL_OP_LE},
        {">=", DQL_OP_GE}, {"=", DQL_OP_EQ},  {"<", DQL_OP_LT},  {">", DQL_OP_GT},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t len = strlen(ops[i].text);
        if (strncmp(src + pos, ops[i].text, len) == 0) {
            tok->kind = DQL_TK_OP;
            tok->pos = pos;
            tok->len = len;
            tok->op = ops[i].op;
            return 0;
        }
    }
    dql_error_at(err, errlen, pos, "'!' must be followed by '=' (use NOT to negate a condition)");
    return -1;
}

int dql_tokenize(const char *src, struct dql_tokens *out, char *err, size_t errlen)
{
    size_t cap = 0, pos = 0;
    out->v = NULL;
    out->n = 0;
    for (;;) {
        unsigned char c = (unsigned char)src[pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            pos++;
            continue;
        }
        struct dql_token tok = {.pos = pos};
        int rc = 0;
        if (c == '\0') {
            tok.kind = DQL_TK_END;
        } else if (is_word_start(c)) {
            tok.kind = DQL_TK_WORD;
            while (is_word_char((unsigned char)src[pos + tok.len]))
                tok.len++;
        } else if (is_digit(c)) {
            rc = lex_number_or_word(src, pos, &tok, err, errlen);
        } else if (c == '\'' || c == '"') {
            rc = lex_string(src, pos, &tok, err, errlen);
        } else if (c == '=' || c == '!' || c == '<' || c == '>') {
            rc = lex_operator(src, pos, &tok, err, errlen);
        } else if (c == '(' || c == ')' || c == ',') {
            tok.kind = c == '(' ? DQL_TK_LPAREN : c == ')' ? DQL_TK_RPAREN : DQL_TK_COMMA;
            tok.len = 1;
        } else if (c >= 0x80) {
            dql_error_at(err, errlen, pos,
                         "unexpected byte 0x%02x: outside quotes a query is ASCII (quote non-ASCII text)", c);
            rc = -1;
        } else if (c < 0x20 || c == 0x7f) {
            dql_error_at(err, errlen, pos, "unexpected control byte 0x%02x", c);
            rc = -1;
        } else {
            dql_error_at(err, errlen, pos, "unexpected character '%c'", c);
            rc = -1;
        }
        if (rc == 0 && push(out, &cap, tok) != 0) {
            free(tok.text);
            dql_error_at(err, errlen, pos, "out of memory");
            rc = -1;
        }
        if (rc != 0) {
            dql_tokens_free(out);
            return -1;
        }
        if (tok.kind == DQL_TK_END)
            return 0;
        pos += tok.len;
    }
}

void dql_tokens_free(struct dql_tokens *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    free(t->v);
    t->v = NULL;
    t->n = 0;
}
