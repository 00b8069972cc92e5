/* SPDX-License-Identifier: MIT */
/* `sluice-trace dump DIR|FILE...` */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_DUMP_H
#define SLUICE_TOOLS_SLUICE_TRACE_DUMP_H
int dump_main(int argc, char **argv);
#endif
