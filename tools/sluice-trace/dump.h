/* SPDX-License-Identifier: MIT */
/* `sluice-trace dump DIR|FILE...` */
#ifndef SLUICE_TRACE_TOOL_DUMP_H
#define SLUICE_TRACE_TOOL_DUMP_H
int dump_main(int argc, char **argv);
#endif
