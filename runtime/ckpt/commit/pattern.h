/* SPDX-License-Identifier: MIT */
/* Which paths checkpoint capture takes over: the SLUICE_CAPTURE patterns, precompiled.
 *
 * A pattern is an fnmatch glob (FNM_PATHNAME: '*' never crosses '/') with one or more "%r"
 * (at most SLUICE_PATTERN_RANKS), each of which matches a rank number: a run of decimal digits
 * (zero padding allowed, at most 18 digits, value at most INT_MAX). All "%r" of a name must
 * carry the same number, padded or not ("%r/out.%r" takes "3/out.00000003", not
 * "3/out.00000004"). Relative patterns are made absolute against the working directory at
 * start. A match yields the rank and the set key: the absolute path with every rank digit
 * run replaced by "%r". When several splits are possible the leftmost, longest digit run wins
 * ("ckpt*%r" on "ckpt12" is rank 12).
 *
 * Pure code (util): no interposition, no syscalls in the matcher, so wrappers call it on
 * every open() and unit tests call it directly. The cost on a path that cannot match is a
 * digit scan and one memcmp per pattern (the literal tail), which is what keeps pass-through
 * open() under a microsecond. */
#ifndef SLUICE_CKPT_COMMIT_PATTERN_H
#define SLUICE_CKPT_COMMIT_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_PATTERN_MAX 64
#define SLUICE_RANK_DIGITS_MAX 18
#define SLUICE_PATTERN_RANKS 8 /* "%r" per pattern */

/* A glob cut at its "%r": seg[0] %r seg[1] ... %r seg[n-1] (n >= 2). */
struct sluice_pattern_segs {
    char *seg[SLUICE_PATTERN_RANKS + 1];
    int n;
};

struct sluice_pattern {
    struct sluice_pattern_segs member; /* the whole pattern */
    /* The pattern cut at each '/' after its first %r: the per-rank folders ("/run/rank%r" and
     * "/run/rank%r/sub" for "/run/rank%r/sub/ckpt.dat"). */
    struct sluice_pattern_segs *dirs;
    int n_dirs;
    char *head_glob;      /* absolute glob before the first %r, e.g. "/run/rank_" */
    char *tail_glob;      /* glob after the last %r, e.g. ".bin" or "/ckpt.dat" */
    const char *lit_head; /* literal start of head_glob (before its first metacharacter) */
    size_t lit_head_len;
    const char *lit_tail; /* literal end of tail_glob (after its last metacharacter) */
    size_t lit_tail_len;
    bool rank_in_dir; /* a %r lies in a directory component: per-rank directories are virtual */
    /* For the fast filter when the last component holds exactly one %r: the literal text of that
     * component before it (NULL if it holds a metacharacter); and whether the tail is entirely
     * literal (so a digit must sit right before it). */
    const char *base_head;
    size_t base_head_len;
    bool tail_literal;
};

struct sluice_pattern_set {
    int count;
    bool any_rank_in_dir;
    struct sluice_pattern pat[SLUICE_PATTERN_MAX];
};

/* Compiles a colon-separated list. `cwd` (absolute) resolves relative patterns. Returns 0, or -1
 * with one line naming the bad pattern in err. An empty spec gives an empty set. */
int sluice_pattern_compile(struct sluice_pattern_set *set, const char *spec, const char *cwd, char *err,
                           size_t errlen);
void sluice_pattern_free(struct sluice_pattern_set *set);

/* Quick rejection on the path as the program wrote it (relative or absolute, not normalized):
 * false means "certainly not captured". cwd_has_digit: the cwd contains a decimal digit. */
bool sluice_pattern_may_match(const struct sluice_pattern_set *set, const char *path, bool cwd_has_digit);

/* Full match of an absolute, normalized path. Returns true and fills *rank and key (if not
 * NULL; keylen must hold the path plus one byte per %r plus one) on a match. */
bool sluice_pattern_match(const struct sluice_pattern_set *set, const char *abspath, int *rank, char *key,
                          size_t keylen);

/* True if `abspath` names a per-rank directory of a pattern whose %r is in a directory
 * component ("/run/rank3" or "/run/rank3/sub" for "/run/rank%r/sub/ckpt.dat"). */
bool sluice_pattern_match_dir(const struct sluice_pattern_set *set, const char *abspath, int *rank);

/* True if directory `absdir` may directly hold members or per-rank directories of a pattern
 * (the folder part of the pattern before its %r component matches it). */
bool sluice_pattern_match_parent(const struct sluice_pattern_set *set, const char *absdir);

/* Joins cwd and path and normalizes lexically ("//", "/./", "/x/.."); no syscalls, symlinks
 * are not resolved. Returns the length, or -1 if the result does not fit in cap. */
int sluice_path_absolute(const char *cwd, const char *path, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
