/* SPDX-License-Identifier: MIT */
/* Names of payload words and of their values, read from the meanings in events.def:
 * "path (string id)" is labelled "path"; "direction (0 h2d, 1 d2h, 2 d2d)" is labelled
 * "direction" and its value 1 is named "d2h"; the older form "kind: 1 read hit, 2 read miss" is
 * read the same way. Shared by the exporters. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_LABELS_H
#define SLUICE_TOOLS_SLUICE_TRACE_LABELS_H

#include <stddef.h>
#include <stdint.h>

/* The label of a meaning: the text before " (" or ": ". */
void label_of(const char *meaning, char *buf, size_t len);
/* The name of `value` if the meaning enumerates its values as "(N name, M name, ...)",
 * else NULL. The name is written into buf. */
const char *label_enum_value(const char *meaning, uint64_t value, char *buf, size_t len);

#endif
