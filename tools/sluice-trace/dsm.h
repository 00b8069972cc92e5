/* SPDX-License-Identifier: MIT */
/* `sluice-trace dsm`: the software DSM of a run (docs/TRACE.md). */
#ifndef SLUICE_TRACE_TOOL_DSM_H
#define SLUICE_TRACE_TOOL_DSM_H

int dsm_main(int argc, char **argv);

#endif
