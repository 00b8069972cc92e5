/* SPDX-License-Identifier: MIT */
/* `sluice-trace dsm`: the software DSM of a run (docs/TRACE.md). */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_DSM_H
#define SLUICE_TOOLS_SLUICE_TRACE_DSM_H

int dsm_main(int argc, char **argv);

#endif
