/* SPDX-License-Identifier: MIT */
/* `sluice-trace time [--csv] OUT DIR|FILE...`: each rank's time decomposition as stacked bars. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_TIMEPLOT_H
#define SLUICE_TOOLS_SLUICE_TRACE_TIMEPLOT_H
int time_main(int argc, char **argv);
#endif
