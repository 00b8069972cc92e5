/* SPDX-License-Identifier: MIT */
/* `sluice-trace io [--mtbf T] [--cost S] DIR|FILE...`: per checkpoint set and version what the
 * commit did on the file system and what it cost, and the checkpoint interval it implies. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_IO_H
#define SLUICE_TOOLS_SLUICE_TRACE_IO_H
int io_main(int argc, char **argv);
#endif
