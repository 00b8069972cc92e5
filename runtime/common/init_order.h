/* SPDX-License-Identifier: MIT */
/* Constructor priorities of the library's parts. Constructors run in increasing order,
 * destructors in decreasing order, so at exit: OpenCL, then checkpoint commit, then the
 * progress thread, then MPI finalization, then the trace dump, then nothing. */
#ifndef SLUICE_COMMON_INIT_ORDER_H
#define SLUICE_COMMON_INIT_ORDER_H

#define SLUICE_PRIO_CONFIG 101   /* read and validate every SLUICE_* variable */
#define SLUICE_PRIO_TRACE 102    /* trace buffers, debug stream */
#define SLUICE_PRIO_MPI 103      /* launcher detection, rank/size; MPI itself is lazy */
#define SLUICE_PRIO_PROGRESS 104 /* progress thread (started on first use) */
#define SLUICE_PRIO_CKPT 110     /* capture patterns; at exit: commit everything staged */
#define SLUICE_PRIO_OPENCL 120   /* real OpenCL loader, distributed serving */

#endif
