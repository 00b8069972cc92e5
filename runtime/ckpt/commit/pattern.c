/* SPDX-License-Identifier: MIT */
/* SLUICE_CAPTURE pattern matcher (see pattern.h). Each pattern is split at its "%r" into a head
 * glob and a tail glob; a path matches if some run of digits in it can be the rank with the
 * text before it matching the head and the text after it matching the tail. */
#include "ckpt/commit/pattern.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_meta(char c)
{
    return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\';
}
static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int sluice_path_absolute(const char *cwd, const char *path, char *out, size_t cap)
{
    size_t o = 0;
    if (cap < 2)
        return -1;
    /* Start from cwd (already absolute and normalized by the caller's contract, but run it
     * through the same component loop so that a sloppy cwd is harmless). */
    const char *srcs[2] = {path[0] == '/' ? NULL : cwd, path};
    for (int s = 0; s < 2; s++) {
        const char *p = srcs[s];
        if (p == NULL)
            continue;
        while (*p) {
            while (*p == '/')
                p++;
            if (!*p)
                break;
            const char *c = p;
            while (*p && *p != '/')
                p++;
            size_t n = (size_t)(p - c);
            if (n == 1 && c[0] == '.')
                continue;
            if (n == 2 && c[0] == '.' && c[1] == '.') {
                while (o > 0 && out[o - 1] != '/')
                    o--;
                if (o > 0)
                    o--; /* drop the '/' too; the root stays implicit */
                continue;
            }
            if (o + 1 + n + 1 > cap)
                return -1;
            out[o++] = '/';
            memcpy(out + o, c, n);
            o += n;
        }
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return (int)o;
}

static int add_pattern(struct sluice_pattern_set *set, const char *pat, size_t len, const char *cwd,
                       char *err, size_t errlen)
{
    if (set->count >= SLUICE_PATTERN_MAX) {
        snprintf(err, errlen, "SLUICE_CAPTURE: more than %d patterns", SLUICE_PATTERN_MAX);
        return -1;
    }
    char raw[PATH_MAX], abs[PATH_MAX];
    if (len >= sizeof raw) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern longer than %d bytes", PATH_MAX - 1);
        return -1;
    }
    memcpy(raw, pat, len);
    raw[len] = '\0';
    const char *r = strstr(raw, "%r");
    if (r == NULL || strstr(r + 2, "%r") != NULL) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' must contain %%r exactly once", raw);
        return -1;
    }
    if (sluice_path_absolute(cwd, raw, abs, sizeof abs) < 0) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' is too long once made absolute", raw);
        return -1;
    }
    r = strstr(abs, "%r");
    if (r == NULL) { /* normalization ate the component holding %r ("x%r/..") */
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' has %%r in a component removed by '..'", raw);
        return -1;
    }
    struct sluice_pattern *p = &set->pat[set->count];
    size_t hl = (size_t)(r - abs);
    p->head_glob = strndup(abs, hl);
    p->tail_glob = strdup(r + 2);
    if (p->head_glob == NULL || p->tail_glob == NULL) {
        free(p->head_glob);
        free(p->tail_glob);
        snprintf(err, errlen, "SLUICE_CAPTURE: out of memory");
        return -1;
    }
    size_t h = 0;
    while (h < hl && !is_meta(p->head_glob[h]))
        h++;
    p->lit_head = p->head_glob;
    p->lit_head_len = h;
    size_t tl = strlen(p->tail_glob), t = tl;
    while (t > 0 && !is_meta(p->tail_glob[t - 1]))
        t--;
    p->lit_tail = p->tail_glob + t;
    p->lit_tail_len = tl - t;
    p->rank_in_dir = strchr(p->tail_glob, '/') != NULL;
    p->tail_literal = t == 0;
    const char *slash = strrchr(p->head_glob, '/');
    const char *base = slash ? slash + 1 : p->head_glob;
    bool base_literal = true;
    for (const char *c = base; *c; c++)
        base_literal &= !is_meta(*c);
    if (base_literal && !p->rank_in_dir) {
        p->base_head = base;
        p->base_head_len = strlen(base);
    }
    set->any_rank_in_dir |= p->rank_in_dir;
    set->count++;
    return 0;
}

int sluice_pattern_compile(struct sluice_pattern_set *set, const char *spec, const char *cwd, char *err,
                           size_t errlen)
{
    memset(set, 0, sizeof *set);
    if (spec == NULL || *spec == '\0')
        return 0;
    const char *p = spec;
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == 0) {
            snprintf(err, errlen, "SLUICE_CAPTURE: empty pattern in '%s'", spec);
            sluice_pattern_free(set);
            return -1;
        }
        if (add_pattern(set, p, len, cwd, err, errlen) != 0) {
            sluice_pattern_free(set);
            return -1;
        }
        if (!colon)
            return 0;
        p = colon + 1;
    }
}

void sluice_pattern_free(struct sluice_pattern_set *set)
{
    for (int i = 0; i < set->count; i++) {
        free(set->pat[i].head_glob);
        free(set->pat[i].tail_glob);
    }
    memset(set, 0, sizeof *set);
}

bool sluice_pattern_may_match(const struct sluice_pattern_set *set, const char *path, bool cwd_has_digit)
{
    if (set->count == 0)
        return false;
    size_t len = 0;
    bool digit = false;
    for (const char *s = path; *s; s++, len++)
        digit |= is_digit(*s);
    if (!digit) {
        /* The rank can only come from the cwd; then the tail may span cwd and path, so the
         * text filters below do not apply. */
        return cwd_has_digit && path[0] != '/';
    }
    /* The end of the path is the end of the normalized absolute path unless the path ends in
     * '/', "." or ".." components; then let the full match decide. */
    if (len == 0 || path[len - 1] == '/' || path[len - 1] == '.')
        return true;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t base_len = len - (size_t)(base - path);
    for (int i = 0; i < set->count; i++) {
        const struct sluice_pattern *p = &set->pat[i];
        if (p->lit_tail_len > len || memcmp(path + len - p->lit_tail_len, p->lit_tail, p->lit_tail_len) != 0)
            continue;
        if (p->tail_literal && (len == p->lit_tail_len || !is_digit(path[len - p->lit_tail_len - 1])))
            continue;
        if (p->base_head != NULL &&
            (base_len < p->base_head_len || memcmp(base, p->base_head, p->base_head_len) != 0))
            continue;
        return true;
    }
    return false;
}

/* fnmatch on a slice of `s` (copied to make it a C string). */
static bool glob_slice(const char *glob, const char *s, size_t n)
{
    char buf[PATH_MAX];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return fnmatch(glob, buf, FNM_PATHNAME) == 0;
}

/* Parses digits [i, j) as a rank: at most SLUICE_RANK_DIGITS_MAX digits, value <= INT_MAX. */
static bool rank_value(const char *s, size_t i, size_t j, int *rank)
{
    if (j - i > SLUICE_RANK_DIGITS_MAX)
        return false;
    long long v = 0;
    for (size_t k = i; k < j; k++) {
        v = v * 10 + (s[k] - '0');
        if (v > INT_MAX)
            return false;
    }
    *rank = (int)v;
    return true;
}

/* Tries every digit run of `path` against pattern p; `tail_ok` decides the part after the run.
 * The run ends where the digits end or earlier (the tail glob may start with a digit); starts
 * are tried left to right, ends longest first. */
typedef bool (*tail_check)(const struct sluice_pattern *p, const char *tail);

static bool match_one(const struct sluice_pattern *p, const char *path, size_t len, tail_check ok, int *rank,
                      size_t *at, size_t *end)
{
    if (len < p->lit_head_len || memcmp(path, p->lit_head, p->lit_head_len) != 0)
        return false;
    for (size_t i = p->lit_head_len; i < len; i++) {
        if (!is_digit(path[i]))
            continue;
        size_t run_end = i;
        while (run_end < len && is_digit(path[run_end]))
            run_end++;
        if (!glob_slice(p->head_glob, path, i))
            continue;
        size_t jmax = run_end - i > SLUICE_RANK_DIGITS_MAX ? i + SLUICE_RANK_DIGITS_MAX : run_end;
        for (size_t j = jmax; j > i; j--) {
            int r;
            if (rank_value(path, i, j, &r) && ok(p, path + j)) {
                *rank = r;
                *at = i;
                *end = j;
                return true;
            }
        }
    }
    return false;
}

static bool tail_is_member(const struct sluice_pattern *p, const char *tail)
{
    size_t tl = strlen(tail);
    if (tl < p->lit_tail_len || memcmp(tail + tl - p->lit_tail_len, p->lit_tail, p->lit_tail_len) != 0)
        return false;
    return fnmatch(p->tail_glob, tail, FNM_PATHNAME) == 0;
}

/* The tail of a per-rank directory: a whole-component prefix of the tail glob, e.g. "" or
 * "/sub" for "/sub/ckpt.dat". */
static bool tail_is_dir(const struct sluice_pattern *p, const char *tail)
{
    if (!p->rank_in_dir)
        return false;
    const char *g = p->tail_glob;
    for (const char *slash = strchr(g, '/'); slash; slash = strchr(slash + 1, '/')) {
        char sub[PATH_MAX];
        size_t n = (size_t)(slash - g);
        if (n >= sizeof sub)
            return false;
        memcpy(sub, g, n);
        sub[n] = '\0';
        if (fnmatch(sub, tail, FNM_PATHNAME) == 0)
            return true;
    }
    return false;
}

bool sluice_pattern_match(const struct sluice_pattern_set *set, const char *abspath, int *rank, char *key,
                          size_t keylen)
{
    size_t len = strlen(abspath);
    for (int i = 0; i < set->count; i++) {
        int r;
        size_t at, end;
        if (!match_one(&set->pat[i], abspath, len, tail_is_member, &r, &at, &end))
            continue;
        if (key != NULL) {
            if (len - (end - at) + 3 > keylen)
                return false;
            memcpy(key, abspath, at);
            memcpy(key + at, "%r", 2);
            strcpy(key + at + 2, abspath + end);
        }
        if (rank)
            *rank = r;
        return true;
    }
    return false;
}

bool sluice_pattern_match_dir(const struct sluice_pattern_set *set, const char *abspath, int *rank)
{
    if (!set->any_rank_in_dir)
        return false;
    size_t len = strlen(abspath);
    for (int i = 0; i < set->count; i++) {
        int r;
        size_t at, end;
        if (set->pat[i].rank_in_dir && match_one(&set->pat[i], abspath, len, tail_is_dir, &r, &at, &end)) {
            if (rank)
                *rank = r;
            return true;
        }
    }
    return false;
}

bool sluice_pattern_match_parent(const struct sluice_pattern_set *set, const char *absdir)
{
    for (int i = 0; i < set->count; i++) {
        const char *h = set->pat[i].head_glob;
        const char *slash = strrchr(h, '/');
        if (slash == NULL)
            continue;
        char dir[PATH_MAX];
        size_t n = slash == h ? 1 : (size_t)(slash - h);
        if (n >= sizeof dir)
            continue;
        memcpy(dir, h, n);
        dir[n] = '\0';
        if (fnmatch(dir, absdir, FNM_PATHNAME) == 0)
            return true;
    }
    return false;
}
