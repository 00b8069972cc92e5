/* SPDX-License-Identifier: MIT */
/* See labels.h. */
#include "labels.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void label_of(const char *meaning, char *buf, size_t len)
{
    const char *paren = strstr(meaning, " (");
    size_t n = paren ? (size_t)(paren - meaning) : strlen(meaning);
    snprintf(buf, len, "%.*s", (int)n, meaning);
}

const char *label_enum_value(const char *meaning, uint64_t value, char *buf, size_t len)
{
    const char *p = strstr(meaning, " (");
    if (!p)
        return NULL;
    p += 2;
    const char *close = strchr(p, ')');
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
