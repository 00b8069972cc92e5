/* SPDX-License-Identifier: MIT */
/* `sluice-trace whatif [model options] DIR|FILE...`: the run's checkpoint I/O replayed through a
 * model of a parallel file system, file-per-process against the sluice container. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_WHATIF_H
#define SLUICE_TOOLS_SLUICE_TRACE_WHATIF_H
int whatif_main(int argc, char **argv);
#endif
