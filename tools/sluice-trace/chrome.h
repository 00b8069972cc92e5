/* SPDX-License-Identifier: MIT */
/* `sluice-trace chrome DIR|FILE... [-o OUT]`: Chrome trace-event JSON for Perfetto / chrome://tracing. */
#ifndef SLUICE_TRACE_TOOL_CHROME_H
#define SLUICE_TRACE_TOOL_CHROME_H
int chrome_main(int argc, char **argv);
#endif
