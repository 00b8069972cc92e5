/* SPDX-License-Identifier: MIT */
/* What a node's watcher (node_helper.c) and `sluice --watch-nodes` (job_watch.c) say to each
 * other over one TCP connection per node (runtime/mpi/node_report.h says why):
 *   watcher -> wrapper  "sluice-node TOKEN HOST RANKS\n"  once connected (RANKS: "1,4")
 *   watcher -> wrapper  "died RANK PID MS\n"              a rank's process ended before it marked
 *                                                        its MPI_Finalize (MS: the watcher's
 *                                                        wall clock when it saw it, milliseconds)
 *   watcher -> wrapper  "aborted RANK PID MS\n"           the same, for a rank that called MPI_Abort
 *   watcher -> wrapper  "end\n"                           once every rank of its node ended
 * A connection that closes after the first line and without "end" is a node whose processes all
 * died. SLUICE_NODE_REPORT, set by the wrapper: "ADDRESS[,ADDRESS...]:PORT:TOKEN:LAUNCHER". */
#ifndef SLUICE_TOOLS_SLUICE_NODE_REPORT_WIRE_H
#define SLUICE_TOOLS_SLUICE_NODE_REPORT_WIRE_H

#define NODE_REPORT_HELLO "sluice-node"
#define NODE_REPORT_END "end"
#define NODE_REPORT_DIED "died"
#define NODE_REPORT_ABORTED "aborted"
#define NODE_REPORT_LINE_MAX 8192 /* the first line: a node of 1,000 ranks fits */

/* The wrapper's mode: runs cmd (a launcher command line) and returns the status to exit with. */
int job_watch_main(char **cmd);
/* The watcher's mode (`sluice --node-helper VALUE HOST RANKS PIDS`, started by the library). */
int node_helper_main(int argc, char **argv);

#endif
