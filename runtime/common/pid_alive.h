/* SPDX-License-Identifier: MIT */
/* Whether the process that wrote something (a staged member's sidecar, a node-local record, an
 * exec mark) still runs. kill(pid, 0) alone is not enough: a killed process stays in the process
 * table, and answers kill(pid, 0), until its parent reaps it (a rank killed with its mpiexec is
 * reaped by a launcher that may take its time); and pid_max is often 32768, so a pid comes back
 * for another process. One check for every reader, never through the calls sluice wraps. */
#ifndef SLUICE_COMMON_PID_ALIVE_H
#define SLUICE_COMMON_PID_ALIVE_H

#include <stdbool.h>
#include <stdint.h>

/* Does `pid` run (exists, not a zombie, ours or another user's), as the process that was running
 * at wall-clock time `seen_ns` (CLOCK_REALTIME ns; 0: any process with that pid)? A process
 * that started after seen_ns holds a reused pid. Unknown start time or state: it runs. */
bool sluice_pid_running(long pid, int64_t seen_ns);

#endif
