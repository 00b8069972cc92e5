/* SPDX-License-Identifier: MIT */
/* JSON output helpers for the exporters: strings are always valid JSON and valid UTF-8, whatever
 * bytes a path or name holds (file names are bytes, not text). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_JSON_H
#define SLUICE_TOOLS_SLUICE_TRACE_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Writes `s` as a JSON string. Valid UTF-8 is copied; each byte that is not part of a valid
 * UTF-8 sequence is written as the six visible characters "\xNN" (an escaped backslash), so the
 * output parses and still shows which byte it was. */
void json_string(FILE *o, const char *s);
/* Nanoseconds as microseconds with three decimals, exactly (no floating point). */
void json_us(FILE *o, int64_t ns);

#endif
