/* SPDX-License-Identifier: MIT */
/* See json.h. */
#include "json.h"

#include <inttypes.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if s does not start one. Rejects
 * overlong forms, surrogates and code points above U+10FFFF (RFC 3629). */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0)
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (c == 0xe0 && s[1] < 0xa0)
        return 0; /* overlong */
    if (c == 0xed && s[1] > 0x9f)
        return 0; /* surrogate */
    if (c == 0xf0 && s[1] < 0x90)
        return 0; /* overlong */
    if (c == 0xf4 && s[1] > 0x8f)
        return 0; /* above U+10FFFF */
    return n;
}

void json_string(FILE *o, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', o);
    while (*s) {
        unsigned char c = *s;
        int n = utf8_len(s);
        if (n == 0) {
            fprintf(o, "\\\\x%02x", c);
            s++;
        } else if (c == '"' || c == '\\') {
            fprintf(o, "\\%c", c);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(o, "\\u%04x", c);
            s++;
        } else {
            fwrite(s, 1, (size_t)n, o);
            s += n;
        }
    }
    fputc('"', o);
}

void json_us(FILE *o, int64_t ns)
{
    uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(o, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", m / 1000, m % 1000);
}
