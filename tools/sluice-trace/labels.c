/* SPDX-License-Identifier: MIT */
/* See labels.h. */
#include "labels.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the label ends: at " (" or at ": " (the older "kind: 1 read hit, 2 ..." form). */
static const char *label_end(const char *meaning)
{
    const char *paren = strstr(meaning, " ("), *colon = strstr(meaning, ": ");
    if (paren && (!colon || paren < colon))
        return paren;
    return colon ? colon : meaning + strlen(meaning);
}

void label_of(const char *meaning, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)(label_end(meaning) - meaning), meaning);
}

const char *label_enum_value(const char *meaning, uint64_t value, char *buf, size_t len)
{
    const char *p = label_end(meaning);
    if (*p == '\0')
        return NULL;
    bool paren = p[1] == '(';
    p += 2;
    const char *close = paren ? strchr(p, ')') : p + strlen(p);
    if (!close)
        return NULL;
    /* Every item must be "digits name"; anything else ("string id", "ns", "bits: ...") is
     * not an enumeration. */
    const char *found = NULL;
    size_t found_len = 0;
    while (p < close) {
        if (!isdigit((unsigned char)*p))
            return NULL;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (*end != ' ')
            return NULL;
        const char *name = end + 1;
        const char *comma = memchr(name, ',', (size_t)(close - name));
        const char *stop = comma ? comma : close;
        if (stop == name)
            return NULL;
        if (v == value) {
            found = name;
            found_len = (size_t)(stop - name);
        }
        p = comma ? comma + 2 : close;
    }
    if (!found)
        return NULL;
    snprintf(buf, len, "%.*s", (int)found_len, found);
    return buf;
}
