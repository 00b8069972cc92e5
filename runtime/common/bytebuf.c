/* SPDX-License-Identifier: MIT */
#include "common/bytebuf.h"

#include <stdlib.h>
#include <string.h>

static int make_room(struct sluice_bytebuf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return 1;
    if (!b->grow_max || b->len + n > b->grow_max)
        return 0;
    size_t cap = (b->cap ? b->cap * 2 : 4096) + n;
    if (cap > b->grow_max)
        cap = b->grow_max;
    unsigned char *p = realloc(b->p, cap);
    if (!p)
        return 0;
    b->p = p;
    b->cap = cap;
    return 1;
}

void sluice_bytebuf_put(struct sluice_bytebuf *b, const void *v, size_t n)
{
    if (b->bad || !make_room(b, n)) {
        b->bad = 1;
        return;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

void sluice_bytebuf_u32(struct sluice_bytebuf *b, uint32_t v)
{
    sluice_bytebuf_put(b, &v, sizeof v);
}

void sluice_bytebuf_u64(struct sluice_bytebuf *b, uint64_t v)
{
    sluice_bytebuf_put(b, &v, sizeof v);
}

void sluice_bytebuf_str(struct sluice_bytebuf *b, const char *s)
{
    size_t n = strlen(s);
    sluice_bytebuf_u32(b, (uint32_t)n);
    sluice_bytebuf_put(b, s, n);
}

void sluice_bytereader_get(struct sluice_bytereader *r, void *v, size_t n)
{
    if (r->bad || r->len - r->pos < n) {
        r->bad = 1;
        memset(v, 0, n);
        return;
    }
    memcpy(v, r->p + r->pos, n);
    r->pos += n;
}

uint32_t sluice_bytereader_u32(struct sluice_bytereader *r)
{
    uint32_t v;
    sluice_bytereader_get(r, &v, sizeof v);
    return v;
}

uint64_t sluice_bytereader_u64(struct sluice_bytereader *r)
{
    uint64_t v;
    sluice_bytereader_get(r, &v, sizeof v);
    return v;
}
