/* SPDX-License-Identifier: MIT */
/* `sluice-trace perfetto OUT.json DIR|FILE...` (alias `chrome`): one Perfetto / Chrome
 * trace-event JSON file for every rank of a run. */
#ifndef SLUICE_TOOLS_SLUICE_TRACE_PERFETTO_H
#define SLUICE_TOOLS_SLUICE_TRACE_PERFETTO_H
int perfetto_main(int argc, char **argv);
#endif
