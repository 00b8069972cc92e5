/* SPDX-License-Identifier: MIT */
/* The kinds of command of rank 0's backend (dist_cmds.def): a call site names one kind, and its
 * wire operation, OpenCL command type, DAG node kind and trace direction come from here. */
#ifndef SLUICE_CL_RANK0_DIST_CMDS_H
#define SLUICE_CL_RANK0_DIST_CMDS_H

#include <CL/cl.h>

#include "cl/rank0/dag.h"
#include "cl/serve/remote_proto.h"

typedef enum {
#define SLUICE_DIST_CMD(id, op, type, dag, dir) DIST_CMD_##id,
#include "cl/rank0/dist_cmds.def"
#undef SLUICE_DIST_CMD
    DIST_CMD_COUNT
} dist_cmd_kind;

/* The direction of CL_DIST_DATA records (trace/events.def). */
enum {
    DIST_DATA_NONE = -1,
    DIST_DATA_SENT = 0,
    DIST_DATA_RECEIVED = 1,
    DIST_DATA_BCAST = 2,
    DIST_DATA_ALLGATHER = 5 /* among serving ranks, started by rank 0, which sends none of it */
};

struct dist_cmd_info {
    uint32_t op; /* SLUICE_REMOTE_CMD_* */
    cl_command_type type;
    sluice_dag_kind dag;
    int dir; /* DIST_DATA_* */
};

static inline const struct dist_cmd_info *dist_cmd_info(dist_cmd_kind kind)
{
    static const struct dist_cmd_info table[DIST_CMD_COUNT] = {
#define SLUICE_DIST_CMD(id, op, type, dag, dir)                                                              \
    [DIST_CMD_##id] = {SLUICE_REMOTE_##op, (cl_command_type)(type), SLUICE_DAG_##dag, DIST_DATA_##dir},
#include "cl/rank0/dist_cmds.def"
#undef SLUICE_DIST_CMD
    };
    return &table[kind];
}

#endif
