/* SPDX-License-Identifier: MIT */
/* `sluice-trace heatmap [--csv] OUT DIR|FILE...`: bytes rank to rank by purpose, and I/O bytes
 * per rank over time. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_HEATMAP_H
#define SLUICE_TOOLS_SLUICE_TRACE_HEATMAP_H
int heatmap_main(int argc, char **argv);
#endif
