/* SPDX-License-Identifier: MIT */
/* sluice_trace_mark() from the public API (sluice.h): a labelled instant in the trace. */
#include "common/export.h"
#include "sluice.h"
#include "trace/trace.h"

SLUICE_EXPORT void sluice_trace_mark(const char *label)
{
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_MARK, 0, sluice_now_ns(), 0, sluice_trace_string(label), 0, 0);
}
