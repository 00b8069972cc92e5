/* SPDX-License-Identifier: MIT */
/* A bounded text builder: appends printf-style into a caller's buffer, never past its end, and
 * keeps counting what did not fit (so a caller can size a second attempt, as snprintf does). */
#ifndef SLUICE_COMMON_STRBUF_H
#define SLUICE_COMMON_STRBUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sluice_strbuf {
    char *buf;
    size_t len;  /* capacity of buf */
    size_t used; /* bytes produced so far, including those that did not fit */
};

void sluice_strbuf_put(struct sluice_strbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
