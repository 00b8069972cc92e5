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

/* Cuts glob[0, len) at its "%r" into segs (copies). 0, or -1 (out of memory). */
static int cut_segments(const char *glob, size_t len, struct sluice_pattern_segs *segs)
{
    memset(segs, 0, sizeof *segs);
    size_t from = 0;
    for (size_t i = 0; i <= len; i++) {
        bool rank = i + 1 < len && glob[i] == '%' && glob[i + 1] == 'r';
        if (!rank && i < len)
            continue;
        if ((segs->seg[segs->n++] = strndup(glob + from, i - from)) == NULL)
            return -1;
        from = i + 2;
        i++;
    }
    return 0;
}

static void free_segments(struct sluice_pattern_segs *segs)
{
    for (int i = 0; i < segs->n; i++)
        free(segs->seg[i]);
    segs->n = 0;
}

static int count_ranks(const char *s)
{
    int n = 0;
    for (const char *r = strstr(s, "%r"); r != NULL; r = strstr(r + 2, "%r"))
        n++;
    return n;
}

static void free_pattern(struct sluice_pattern *p)
{
    free_segments(&p->member);
    for (int i = 0; i < p->n_dirs; i++)
        free_segments(&p->dirs[i]);
    free(p->dirs);
    memset(p, 0, sizeof *p);
}

/* The per-rank folders of pattern `abs` (its prefixes ending before a '/' after the first %r). */
static int cut_dirs(struct sluice_pattern *p, const char *abs)
{
    const char *first = strstr(abs, "%r");
    for (const char *slash = strchr(first, '/'); slash; slash = strchr(slash + 1, '/')) {
        struct sluice_pattern_segs *d = realloc(p->dirs, (size_t)(p->n_dirs + 1) * sizeof *d);
        if (d == NULL)
            return -1;
        p->dirs = d;
        if (cut_segments(abs, (size_t)(slash - abs), &p->dirs[p->n_dirs++]) != 0)
            return -1;
    }
    return 0;
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
    int ranks = count_ranks(raw);
    if (ranks == 0) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' has no %%r where the rank number goes", raw);
        return -1;
    }
    if (ranks > SLUICE_PATTERN_RANKS) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' has more than %d %%r", raw, SLUICE_PATTERN_RANKS);
        return -1;
    }
    if (strstr(raw, "%r%r") != NULL) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' has two %%r with nothing between them", raw);
        return -1;
    }
    if (sluice_path_absolute(cwd, raw, abs, sizeof abs) < 0) {
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' is too long once made absolute", raw);
        return -1;
    }
    if (count_ranks(abs) != ranks) { /* normalization ate a component holding %r ("x%r/..") */
        snprintf(err, errlen, "SLUICE_CAPTURE: pattern '%s' has %%r in a component removed by '..'", raw);
        return -1;
    }
    struct sluice_pattern *p = &set->pat[set->count];
    memset(p, 0, sizeof *p);
    if (cut_segments(abs, strlen(abs), &p->member) != 0 || cut_dirs(p, abs) != 0) {
        free_pattern(p);
        snprintf(err, errlen, "SLUICE_CAPTURE: out of memory");
        return -1;
    }
    p->head_glob = p->member.seg[0];
    p->tail_glob = p->member.seg[p->member.n - 1];
    size_t hl = strlen(p->head_glob), h = 0;
    while (h < hl && !is_meta(p->head_glob[h]))
        h++;
    p->lit_head = p->head_glob;
    p->lit_head_len = h;
    size_t tl = strlen(p->tail_glob), t = tl;
    while (t > 0 && !is_meta(p->tail_glob[t - 1]))
        t--;
    p->lit_tail = p->tail_glob + t;
    p->lit_tail_len = tl - t;
    p->rank_in_dir = p->n_dirs > 0;
    p->tail_literal = t == 0;
    /* The last component's literal start, when that component holds exactly one %r: the text
     * between the last '/' and the last %r (the segment before the tail). */
    const char *before = p->member.seg[p->member.n - 2];
    const char *slash = strrchr(before, '/');
    bool one_in_last = strchr(p->tail_glob, '/') == NULL && (slash != NULL || p->member.n == 2);
    const char *base = slash ? slash + 1 : before;
    bool base_literal = true;
    for (const char *c = base; *c; c++)
        base_literal &= !is_meta(*c);
    if (base_literal && one_in_last) {
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
    /* Only what is used is written: the set's patterns are 11 KB of zeroed storage, whose pages
     * each process would fault in at start for nothing (each pattern is cleared as it is added). */
    set->count = 0;
    set->any_rank_in_dir = false;
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
    for (int i = 0; i < set->count; i++)
        free_pattern(&set->pat[i]);
    set->count = 0;
    set->any_rank_in_dir = false;
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

/* Where each rank run of a match lies. */
struct rank_spans {
    size_t at[SLUICE_PATTERN_RANKS], end[SLUICE_PATTERN_RANKS];
};

/* Matches path[pos, len) against segs->seg[i] %r seg[i+1] ... %r seg[n-1], every %r taking a
 * run of digits worth *rank (any value if !have, then set). Starts are tried left to right,
 * ends longest first (a segment may start with a digit, so a run may end before the digits
 * do). */
static bool match_from(const struct sluice_pattern_segs *segs, int i, const char *path, size_t pos,
                       size_t len, int *rank, bool have, struct rank_spans *sp)
{
    if (i == segs->n - 1)
        return glob_slice(segs->seg[i], path + pos, len - pos);
    for (size_t s = pos; s < len; s++) {
        if (!is_digit(path[s]))
            continue;
        size_t run_end = s;
        while (run_end < len && is_digit(path[run_end]))
            run_end++;
        if (!glob_slice(segs->seg[i], path + pos, s - pos))
            continue;
        size_t emax = run_end - s > SLUICE_RANK_DIGITS_MAX ? s + SLUICE_RANK_DIGITS_MAX : run_end;
        for (size_t e = emax; e > s; e--) {
            int r;
            if (!rank_value(path, s, e, &r) || (have && r != *rank))
                continue;
            int keep = *rank;
            *rank = r;
            if (match_from(segs, i + 1, path, e, len, rank, true, sp)) {
                sp->at[i] = s;
                sp->end[i] = e;
                return true;
            }
            *rank = keep;
        }
    }
    return false;
}

static bool match_segs(const struct sluice_pattern *p, const struct sluice_pattern_segs *segs,
                       const char *path, size_t len, int *rank, struct rank_spans *sp)
{
    if (len < p->lit_head_len || memcmp(path, p->lit_head, p->lit_head_len) != 0)
        return false;
    int r = 0;
    if (!match_from(segs, 0, path, 0, len, &r, false, sp))
        return false;
    *rank = r;
    return true;
}

bool sluice_pattern_match(const struct sluice_pattern_set *set, const char *abspath, int *rank, char *key,
                          size_t keylen)
{
    size_t len = strlen(abspath);
    for (int i = 0; i < set->count; i++) {
        const struct sluice_pattern *p = &set->pat[i];
        int r;
        struct rank_spans sp;
        if (len < p->lit_tail_len ||
            memcmp(abspath + len - p->lit_tail_len, p->lit_tail, p->lit_tail_len) != 0)
            continue;
        if (!match_segs(p, &p->member, abspath, len, &r, &sp))
            continue;
        if (key != NULL) {
            /* Every rank run becomes "%r" (2 bytes for at least 1 digit: never longer by more
             * than one byte per run). */
            size_t o = 0, from = 0;
            for (int k = 0; k < p->member.n - 1; k++) {
                size_t lit = sp.at[k] - from;
                if (o + lit + 2 >= keylen)
                    return false;
                memcpy(key + o, abspath + from, lit);
                memcpy(key + o + lit, "%r", 2);
                o += lit + 2;
                from = sp.end[k];
            }
            if (o + (len - from) + 1 > keylen)
                return false;
            memcpy(key + o, abspath + from, len - from + 1);
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
        const struct sluice_pattern *p = &set->pat[i];
        for (int d = 0; d < p->n_dirs; d++) {
            int r;
            struct rank_spans sp;
            if (match_segs(p, &p->dirs[d], abspath, len, &r, &sp)) {
                if (rank)
                    *rank = r;
                return true;
            }
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
