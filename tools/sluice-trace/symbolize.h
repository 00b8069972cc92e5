/* SPDX-License-Identifier: MIT */
/* Offline symbolization of recorded addresses with the module map of the trace file:
 * module + offset always, function and source line from addr2line (binutils) when asked
 * and available. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_SYMBOLIZE_H
#define SLUICE_TOOLS_SLUICE_TRACE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/reader.h"
#include "traceset.h"

/* "module+0xoffset" (module basename) or "0xaddress" if no module holds ip. */
void symbolize_module_offset(const struct sluice_trace_file *f, uint64_t ip, char *buf, size_t len);
/* Names every call-site frame of the set with one addr2line per module (fast on big traces);
 * symbolize_frame then answers from memory. */
void symbolize_batch(const struct trace_set *set);
/* "function at file:line (module+0xoffset)", degrading to the module form. */
void symbolize_frame(const struct sluice_trace_file *f, uint64_t ip, bool use_addr2line, char *buf,
                     size_t len);

#endif
