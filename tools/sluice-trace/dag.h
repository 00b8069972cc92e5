/* SPDX-License-Identifier: MIT */
/* `sluice-trace dag [--from ID] [--to ID] OUT.dot|OUT.svg DIR|FILE...`: the distributed OpenCL
 * command DAG as Graphviz. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_DAG_H
#define SLUICE_TOOLS_SLUICE_TRACE_DAG_H
int dag_main(int argc, char **argv);
#endif
