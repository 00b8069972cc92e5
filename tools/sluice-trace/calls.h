/* SPDX-License-Identifier: MIT */
/* `sluice-trace calls [--top N] [--no-symbols] [--all] DIR|FILE...`: intercepted calls by call site. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_CALLS_H
#define SLUICE_TOOLS_SLUICE_TRACE_CALLS_H
int calls_main(int argc, char **argv);
#endif
