/* SPDX-License-Identifier: MIT */
/* Array layouts: parser, printer and block geometry (container_array.h, docs/LAYOUT.md). */
#include "ckpt/container/container_array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* A decimal number of at most 18 digits, the whole of [s, e). */
static int number(const char *s, const char *e, uint64_t *out)
{
    uint64_t v = 0;
    if (s == e || e - s > 18)
        return -1;
    for (const char *p = s; p < e; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return 0;
}

/* "48x48x48" (or "auto" when allow_auto): the count of values, or -1. */
static int extents(const char *s, const char *e, uint64_t *v, int allow_auto)
{
    if (allow_auto && e - s == 4 && memcmp(s, "auto", 4) == 0)
        return 0;
    int n = 0;
    while (s < e) {
        const char *x = memchr(s, 'x', (size_t)(e - s));
        const char *t = x ? x : e;
        if (n == SLUICE_ARRAY_DIMS_MAX || number(s, t, &v[n]) || v[n] == 0)
            return -1;
        n++;
        s = x ? x + 1 : e;
        if (x && s == e)
            return -1;
    }
    return n ? n : -1;
}

static int dtype(const char *s, size_t len, struct sluice_array *a)
{
    static const char *const names[] = {"i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (len == 2 && memcmp(s, names[i], 2) == 0) {
            memcpy(a->dtype, names[i], 3);
            a->elem = (uint32_t)(names[i][1] - '0');
            return 0;
        }
    return -1;
}

static int key_is(const char *k, size_t klen, const char *want)
{
    return klen == strlen(want) && memcmp(k, want, klen) == 0;
}

/* One key=value of [k, e); 0 or -EINVAL. */
static int one(const char *k, const char *e, struct sluice_array *a, int *have, char *err, size_t errlen)
{
    const char *eq = memchr(k, '=', (size_t)(e - k));
    if (!eq)
        return fail(err, errlen, "'%.*s' is not key=value", (int)(e - k), k);
    size_t klen = (size_t)(eq - k);
    const char *v = eq + 1;
    uint64_t n = 0, ext[SLUICE_ARRAY_DIMS_MAX] = {0};
    int vl = (int)(e - v);
    if (key_is(k, klen, "header")) {
        if (number(v, e, &a->header) || a->header > (UINT64_C(1) << 40))
            return fail(err, errlen, "header=%.*s: want a byte count", vl, v);
    } else if (key_is(k, klen, "dtype")) {
        if (dtype(v, (size_t)vl, a))
            return fail(err, errlen, "dtype=%.*s: want i1 i2 i4 i8 u1 u2 u4 u8 f4 f8 (or size=N)", vl, v);
        *have |= 1;
    } else if (key_is(k, klen, "size")) {
        if (number(v, e, &n) || n == 0 || n > 64)
            return fail(err, errlen, "size=%.*s: want an element size of 1 to 64 bytes", vl, v);
        a->elem = (uint32_t)n;
        a->dtype[0] = 0;
        *have |= 1;
    } else if (key_is(k, klen, "shape")) {
        int nd = extents(v, e, a->shape, 0);
        if (nd <= 0)
            return fail(err, errlen, "shape=%.*s: want 1 to 3 positive extents such as 48x48x48", vl, v);
        a->ndims = nd;
        *have |= 2;
    } else if (key_is(k, klen, "grid")) {
        int nd = extents(v, e, ext, 1);
        if (nd < 0)
            return fail(err, errlen, "grid=%.*s: want auto or 1 to 3 positive counts such as 2x2x2", vl, v);
        for (int d = 0; d < SLUICE_ARRAY_DIMS_MAX; d++)
            a->grid[d] = d < nd && ext[d] <= UINT32_MAX ? (uint32_t)ext[d] : 0;
        if (nd > 0 && (a->grid[nd - 1] == 0 || (*have & 2 && nd != a->ndims)))
            return fail(err, errlen, "grid=%.*s: want as many counts as shape has extents", vl, v);
        *have |= 4;
    } else if (key_is(k, klen, "order")) {
        if (vl != 1 || (*v != 'C' && *v != 'F'))
            return fail(err, errlen, "order=%.*s: want C or F", vl, v);
        a->fortran = *v == 'F';
    } else if (key_is(k, klen, "nprocs")) {
        if (number(v, e, &n) || n == 0 || n > INT32_MAX)
            return fail(err, errlen, "nprocs=%.*s: want a rank count", vl, v);
        a->nprocs = (uint32_t)n;
    } else if (key_is(k, klen, "array")) {
        if (number(v, e, &a->array_offset))
            return fail(err, errlen, "array=%.*s: want an offset", vl, v);
    } else if (key_is(k, klen, "headers")) {
        if (number(v, e, &a->header_offset))
            return fail(err, errlen, "headers=%.*s: want an offset", vl, v);
    } else {
        return fail(err, errlen, "unknown key '%.*s' (header, dtype, size, shape, grid, order)", (int)klen,
                    k);
    }
    return 0;
}

int sluice_array_parse(const char *spec, struct sluice_array *out, char *err, size_t errlen)
{
    struct sluice_array a;
    memset(&a, 0, sizeof a);
    int have = 0;
    if (!spec || !*spec)
        return fail(err, errlen, "empty layout");
    if (strlen(spec) >= SLUICE_ARRAY_RECORD_MAX)
        return fail(err, errlen, "layout longer than %d bytes", SLUICE_ARRAY_RECORD_MAX - 1);
    for (const char *k = spec; *k;) {
        const char *e = strchr(k, ',');
        if (!e)
            e = k + strlen(k);
        int rc = one(k, e, &a, &have, err, errlen);
        if (rc)
            return rc;
        k = *e ? e + 1 : e;
    }
    if (!(have & 1))
        return fail(err, errlen, "no element type: give dtype=f8 (or i1..i8, u1..u8, f4) or size=N");
    if (!(have & 2))
        return fail(err, errlen, "no shape: give shape=NxMxK");
    for (int d = 0; a.grid[0] && d < a.ndims; d++)
        if (!a.grid[d])
            return fail(err, errlen, "grid has fewer counts than shape has extents");
    if (sluice_array_bytes(&a) == UINT64_MAX)
        return fail(err, errlen, "the array is larger than 2^62 bytes");
    *out = a;
    return 0;
}

static int put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*at < cap ? buf + *at : NULL, *at < cap ? cap - *at : 0, fmt, ap);
    va_end(ap);
    *at += n > 0 ? (size_t)n : 0;
    return *at < cap ? 0 : -ENOSPC;
}

static void put_extents(char *buf, size_t cap, size_t *at, const char *key, const uint64_t *v, int n)
{
    put(buf, cap, at, ",%s=", key);
    for (int d = 0; d < n; d++)
        put(buf, cap, at, d ? "x%llu" : "%llu", (unsigned long long)v[d]);
}

int sluice_array_format(const struct sluice_array *a, char *buf, size_t cap)
{
    size_t at = 0;
    put(buf, cap, &at, "header=%llu", (unsigned long long)a->header);
    if (a->dtype[0])
        put(buf, cap, &at, ",dtype=%s", a->dtype);
    else
        put(buf, cap, &at, ",size=%u", a->elem);
    put_extents(buf, cap, &at, "shape", a->shape, a->ndims);
    if (a->grid[0]) {
        uint64_t g[SLUICE_ARRAY_DIMS_MAX] = {a->grid[0], a->grid[1], a->grid[2]};
        put_extents(buf, cap, &at, "grid", g, a->ndims);
    } else {
        put(buf, cap, &at, ",grid=auto");
    }
    put(buf, cap, &at, ",order=%s", a->fortran ? "F" : "C");
    if (a->nprocs)
        put(buf, cap, &at, ",nprocs=%u,headers=%llu,array=%llu", a->nprocs,
            (unsigned long long)a->header_offset, (unsigned long long)a->array_offset);
    return at < cap ? (int)at : -ENOSPC;
}

/* Search over non-increasing factorizations: dims[i..] take the rest `n`, each at most `max`. */
static void search(uint32_t n, int i, int ndims, uint32_t max, uint32_t *cur, uint32_t *best,
                   uint32_t *spread)
{
    if (i == ndims - 1) {
        if (n > max)
            return;
        cur[i] = n;
        uint32_t s = cur[0] - n;
        if (s < *spread) {
            *spread = s;
            memcpy(best, cur, (size_t)ndims * sizeof *cur);
        }
        return;
    }
    for (uint32_t f = max < n ? max : n; f >= 1; f--) {
        if (n % f)
            continue;
        /* The remaining factors are at most f each: f^(left) must reach n / f. */
        uint64_t reach = 1;
        for (int k = i + 1; k < ndims && reach < n / f; k++)
            reach *= f;
        if (reach < n / f)
            break;
        cur[i] = f;
        search(n / f, i + 1, ndims, f, cur, best, spread);
    }
}

void sluice_array_dims_create(uint32_t nprocs, int ndims, uint32_t *dims)
{
    uint32_t cur[SLUICE_ARRAY_DIMS_MAX] = {0}, spread = UINT32_MAX;
    if (ndims < 1 || ndims > SLUICE_ARRAY_DIMS_MAX)
        return;
    for (int d = 0; d < ndims; d++)
        dims[d] = 1;
    if (nprocs == 0)
        return;
    dims[0] = nprocs; /* always a solution: nprocs x 1 x 1 */
    search(nprocs, 0, ndims, nprocs, cur, dims, &spread);
}

int sluice_array_grid(const struct sluice_array *a, uint32_t nprocs, uint32_t grid[SLUICE_ARRAY_DIMS_MAX],
                      char *err, size_t errlen)
{
    for (int d = 0; d < SLUICE_ARRAY_DIMS_MAX; d++)
        grid[d] = 1;
    if (nprocs == 0)
        return fail(err, errlen, "no ranks");
    if (!a->grid[0]) {
        sluice_array_dims_create(nprocs, a->ndims, grid);
        return 0;
    }
    uint64_t prod = 1;
    for (int d = 0; d < a->ndims; d++) {
        grid[d] = a->grid[d];
        prod *= a->grid[d];
    }
    if (prod != nprocs)
        return fail(err, errlen, "grid of %llu ranks for a job of %u", (unsigned long long)prod, nprocs);
    return 0;
}

/* Storage position i (0 slowest) holds dimension perm(i). */
static int perm(const struct sluice_array *a, int i)
{
    return a->fortran ? a->ndims - 1 - i : i;
}

void sluice_array_block(const struct sluice_array *a, const uint32_t grid[SLUICE_ARRAY_DIMS_MAX],
                        uint32_t rank, struct sluice_array_block *b)
{
    memset(b, 0, sizeof *b);
    /* Row-major Cartesian coordinates (MPI_Cart_create without reordering): the last grid
     * dimension varies fastest. */
    uint32_t r = rank;
    for (int d = a->ndims - 1; d >= 0; d--) {
        uint64_t p = grid[d], c = r % grid[d], N = a->shape[d];
        r /= grid[d];
        b->lo[d] = N * c / p;
        b->n[d] = N * (c + 1) / p - b->lo[d];
    }
    uint64_t rows = 1;
    for (int i = 0; i < a->ndims - 1; i++)
        rows *= b->n[perm(a, i)];
    uint64_t fast = b->n[perm(a, a->ndims - 1)];
    b->nrows = fast ? rows : 0;
    b->row_len = fast * a->elem;
}

uint64_t sluice_array_bytes(const struct sluice_array *a)
{
    uint64_t v = a->elem;
    for (int d = 0; d < a->ndims; d++) {
        if (a->shape[d] && v > (UINT64_C(1) << 62) / a->shape[d])
            return UINT64_MAX;
        v *= a->shape[d];
    }
    return v;
}

uint64_t sluice_array_member_bytes(const struct sluice_array *a, const struct sluice_array_block *b)
{
    return a->header + b->nrows * b->row_len;
}

uint64_t sluice_array_row_offset(const struct sluice_array *a, const struct sluice_array_block *b, uint64_t k)
{
    /* k counts rows over the slower storage positions, the last of them fastest. */
    uint64_t off = 0, stride = 1, idx[SLUICE_ARRAY_DIMS_MAX] = {0};
    for (int i = a->ndims - 2; i >= 0; i--) {
        uint64_t n = b->n[perm(a, i)];
        idx[i] = k % n;
        k /= n;
    }
    for (int i = a->ndims - 1; i >= 0; i--) {
        int d = perm(a, i);
        off += (b->lo[d] + (i == a->ndims - 1 ? 0 : idx[i])) * stride;
        stride *= a->shape[d];
    }
    return off * a->elem;
}
