/* SPDX-License-Identifier: MIT */
/* See strbuf.h. */
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>

void sluice_strbuf_put(struct sluice_strbuf *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->used < o->len ? o->len - o->used : 0;
    int n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->used += (size_t)n;
}
