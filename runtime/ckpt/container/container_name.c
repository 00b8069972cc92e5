/* SPDX-License-Identifier: MIT */
/* Container names (container.h describes the mapping): set key -> container path, its
 * temporary name while a new version is written, and how a name is recognised. Purely
 * lexical, so every rank and every later job agrees on the name whatever exists on disk. */
#include "ckpt/container/container_internal.h"
#include "common/hash.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

/* Longest encoded final component we emit: leaves room for ".<name>.tmp.<20 digits>". */
#define NAME_LIMIT 225
#define NAME_KEEP 200

/* Position of the '/' that ends D (the last '/' before the first "%r"), or -1. */
static long split_point(const char *key)
{
    const char *r = strstr(key, "%r");
    if (!r || key[0] != '/')
        return -1;
    for (const char *p = r; p >= key; p--)
        if (*p == '/')
            return p - key;
    return -1;
}

int sluice_container_dir(const char *set_key, char *out, size_t outlen)
{
    size_t klen = strlen(set_key);
    long cut = split_point(set_key);
    if (cut < 0 || !sluice_container_key_ok(set_key, klen))
        return -EINVAL;
    size_t dlen = cut == 0 ? 1 : (size_t)cut; /* "/ckpt.%r" lives in "/" */
    if (dlen + 1 > outlen)
        return -ENAMETOOLONG;
    memcpy(out, set_key, dlen);
    out[dlen] = 0;
    return 0;
}

int sluice_container_name(const char *set_key, char *out, size_t outlen)
{
    size_t klen = strlen(set_key);
    long cut = split_point(set_key);
    if (cut < 0 || !sluice_container_key_ok(set_key, klen))
        return -EINVAL;
    /* enc(R): every byte of R costs at most 2, plus the suffix. */
    char name[2 * SLUICE_CONTAINER_KEY_MAX + sizeof SLUICE_CONTAINER_SUFFIX];
    size_t n = 0;
    for (const char *p = set_key + cut + 1; *p; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            name[n++] = '@';
            name[n++] = 'r';
            p++;
        } else if (*p == '/') {
            name[n++] = '@';
            name[n++] = '_';
        } else if (*p == '@') {
            name[n++] = '@';
            name[n++] = '@';
        } else {
            name[n++] = *p;
        }
    }
    if (n + strlen(SLUICE_CONTAINER_SUFFIX) > NAME_LIMIT) {
        /* Too long for one directory entry: a readable prefix plus a hash of the whole key.
         * Do not end the prefix in the middle of an "@x" escape. */
        size_t keep = NAME_KEEP, ats = 0;
        for (size_t i = keep; i > 0 && name[i - 1] == '@'; i--)
            ats++;
        if (ats & 1)
            keep--;
        n = keep + (size_t)snprintf(name + keep, sizeof name - keep, "@h%016llx",
                                    (unsigned long long)sluice_fnv1a_str(set_key));
    }
    memcpy(name + n, SLUICE_CONTAINER_SUFFIX, sizeof SLUICE_CONTAINER_SUFFIX);
    n += strlen(SLUICE_CONTAINER_SUFFIX);
    size_t dlen = (size_t)cut; /* keeps the '/' out; D "/" name */
    if (dlen + 1 + n + 1 > outlen || dlen + 1 + n + 1 > PATH_MAX)
        return -ENAMETOOLONG;
    memcpy(out, set_key, dlen);
    out[dlen] = '/';
    memcpy(out + dlen + 1, name, n + 1);
    return 0;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int sluice_container_temp_name(const char *container_path, unsigned long token, char *out, size_t outlen)
{
    const char *base = base_of(container_path);
    size_t dlen = (size_t)(base - container_path);
    int n = snprintf(out, outlen, "%.*s.%s.tmp.%lu", (int)dlen, container_path, base, token);
    if (n < 0 || (size_t)n >= outlen)
        return -ENAMETOOLONG;
    return 0;
}

int sluice_container_damaged_name(const char *container_path, const char *tag, char *out, size_t outlen)
{
    const char *base = base_of(container_path);
    size_t dlen = (size_t)(base - container_path);
    int n = snprintf(out, outlen, "%.*s.%s.damaged-%s", (int)dlen, container_path, base, tag);
    if (n < 0 || (size_t)n >= outlen)
        return -ENAMETOOLONG;
    return 0;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
    size_t sl = strlen(suffix);
    return len >= sl && memcmp(s + len - sl, suffix, sl) == 0;
}

int sluice_container_is_temp_name(const char *path)
{
    const char *b = base_of(path);
    if (b[0] != '.')
        return 0;
    const char *t = strstr(b, SLUICE_CONTAINER_SUFFIX ".tmp.");
    if (!t)
        return 0;
    const char *d = t + strlen(SLUICE_CONTAINER_SUFFIX ".tmp.");
    if (!*d)
        return 0;
    for (; *d; d++)
        if (*d < '0' || *d > '9')
            return 0;
    return 1;
}

int sluice_container_is_name(const char *path)
{
    const char *b = base_of(path);
    size_t len = strlen(b);
    return len > strlen(SLUICE_CONTAINER_SUFFIX) && ends_with(b, len, SLUICE_CONTAINER_SUFFIX);
}

int sluice_container_is_reserved(const char *path)
{
    const char *b = base_of(path);
    size_t len = strlen(b);
    return sluice_container_is_name(path) || sluice_container_is_temp_name(path) ||
           (b[0] == '.' && ends_with(b, len, SLUICE_VDIR_MARKER_SUFFIX));
}
