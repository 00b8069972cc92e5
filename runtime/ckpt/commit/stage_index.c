/* SPDX-License-Identifier: MIT */
/* The stage folder's index by member path (stage_index.h). Real libc calls only. */
#include "ckpt/commit/stage_index.h"

#include "ckpt/commit/stage.h"
#include "common/hash.h"
#include "common/private_dir.h"
#include "common/real.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int link_path(const char *path, char *out, size_t cap)
{
    const char *dir = sluice_stage_dir();
    if (!dir)
        return 0;
    int n = snprintf(out, cap, "%s/" SLUICE_STAGE_INDEX_PREFIX "%016llx", dir,
                     (unsigned long long)sluice_fnv1a_str(path));
    return n > 0 && (size_t)n < cap;
}

/* "m-<pid>-<seq>" of a sidecar path (its base name without the suffix), in out. */
static int member_base(const char *meta_path, char *out, size_t cap)
{
    const char *b = strrchr(meta_path, '/');
    b = b ? b + 1 : meta_path;
    size_t n = strlen(b), sl = strlen(SLUICE_STAGE_META_SUFFIX);
    if (n <= sl || n - sl >= cap || strcmp(b + n - sl, SLUICE_STAGE_META_SUFFIX) != 0)
        return 0;
    memcpy(out, b, n - sl);
    out[n - sl] = '\0';
    return 1;
}

void sluice_stage_index_set(const char *path, const char *meta_path)
{
    char lnk[PATH_MAX], tmp[PATH_MAX + 32], base[NAME_MAX + 1];
    if (!link_path(path, lnk, sizeof lnk) || !member_base(meta_path, base, sizeof base))
        return;
    /* A fresh name, then renamed over the old link: readers see the old or the new one. */
    snprintf(tmp, sizeof tmp, "%s.tmp%016llx", lnk, (unsigned long long)sluice_random_u64());
    if (SLUICE_REAL(symlink)(base, tmp) != 0)
        return;
    if (SLUICE_REAL(rename)(tmp, lnk) != 0)
        SLUICE_REAL(unlink)(tmp);
}

static int read_link(const char *lnk, char *base, size_t cap)
{
    ssize_t n = SLUICE_REAL(readlink)(lnk, base, cap - 1);
    if (n <= 0)
        return 0;
    base[n] = '\0';
    /* Only a member's name in this folder: never a path elsewhere. */
    return strncmp(base, "m-", 2) == 0 && strchr(base, '/') == NULL;
}

void sluice_stage_index_drop(const char *path, const char *meta_path)
{
    char lnk[PATH_MAX], cur[NAME_MAX + 1], mine[NAME_MAX + 1];
    if (!link_path(path, lnk, sizeof lnk) || !member_base(meta_path, mine, sizeof mine))
        return;
    if (read_link(lnk, cur, sizeof cur) && strcmp(cur, mine) == 0)
        SLUICE_REAL(unlink)(lnk);
}

int sluice_stage_index_get(const char *path, char *meta, size_t cap)
{
    char lnk[PATH_MAX], base[NAME_MAX + 1];
    if (!link_path(path, lnk, sizeof lnk) || !read_link(lnk, base, sizeof base))
        return 0;
    int n = snprintf(meta, cap, "%s/%s" SLUICE_STAGE_META_SUFFIX, sluice_stage_dir(), base);
    return n > 0 && (size_t)n < cap;
}
